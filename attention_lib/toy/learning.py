r"""Chapter 10: a tiny attention layer that *learns* which noun "it" refers to.

The task is pronoun resolution, made small enough to train in a second. Every sentence
has 8 tokens and two nouns, one **singular** and one **plural**, and "it" always refers
to the singular one::

    the cake and the cookies and it was      ->  cake
    the cakes and the cookie and it was      ->  cookie

The model **copies** that noun into the position of "it": its answer is the noun whose
embedding has the largest dot product with the output at "it". Attention is needed and must
be learned: the embedding of "it" knows nothing about the sentence; either noun can
come first, so neither word nor position gives the answer away ("it" must look for
*singular*); and uniform attention gives the two mirror images above the *same* output.

Every word has a fixed random embedding (seeded): a noun is its word's vector plus a
shared "singular" or "plural" vector. Positions are chapter 1's sinusoidal encoding.
Only ``W_q``, ``W_k`` and ``W_v`` are learned, by plain gradient descent, with the
backward pass from :mod:`attention_lib.backward`.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import numpy as np

from ..backward import attention_backward
from ..core import positional_encoding, scaled_dot_product_attention, softmax

#: The nouns, singular: the answer is always one of these (the classes of the model).
NOUNS = ("cake", "pie", "cookie", "apple", "dog", "cat", "ball", "book")
#: The same nouns, plural: the distractors.
PLURALS = tuple(noun + "s" for noun in NOUNS)

#: Sentence templates of 8 tokens; ``N1`` and ``N2`` get the two nouns, in either order.
TEMPLATES = (
    ("the", "N1", "and", "the", "N2", "and", "it", "was"),
    ("I", "ate", "the", "N1", "and", "N2", "and", "it"),
    ("I", "saw", "N1", "near", "the", "N2", "so", "it"),
    ("the", "N1", "sat", "near", "the", "N2", "and", "it"),
    ("we", "liked", "the", "N1", "with", "N2", "it", "was"),
)
#: Every other word of the templates, "it" included.
WORDS = tuple(sorted({w for t in TEMPLATES for w in t} - {"N1", "N2"}))
#: The whole vocabulary: singular nouns, plural nouns, then the other words.
VOCAB = NOUNS + PLURALS + WORDS

N_TOKENS = 8  # tokens per sentence
D_MODEL = 16  # width of every vector; d_k = d_v = d_model (one head)


def _embedding_table(seed: int = 10) -> np.ndarray:
    rng = np.random.default_rng(seed)
    noun = rng.normal(size=(len(NOUNS), D_MODEL))  # what each noun means
    singular, plural = rng.normal(size=(2, D_MODEL))  # the grammatical number
    words = rng.normal(size=(len(WORDS), D_MODEL))
    return np.vstack([noun + singular, noun + plural, words])  # (len(VOCAB), d_model)


#: Fixed random embeddings, one row per word of :data:`VOCAB`, shape (37, 16).
EMBEDDINGS = _embedding_table()
#: The rows of the singular nouns, shape (8, 16): the model answers by comparing its
#: output with each of them (a "copy" readout with no weights of its own).
NOUN_EMBEDDINGS = EMBEDDINGS[: len(NOUNS)]
#: Sinusoidal positions added to every sentence, shape (8, 16).
POSITIONS = positional_encoding(N_TOKENS, D_MODEL)
for _array in (EMBEDDINGS, NOUN_EMBEDDINGS, POSITIONS):
    _array.setflags(write=False)


def embed(words) -> np.ndarray:
    """Embeddings of a list of words from :data:`VOCAB`, shape (len(words), 16), no positions."""
    if isinstance(words, str):
        raise TypeError(f"words must be a list of words such as {words.split()!r}")
    unknown = [w for w in words if w not in VOCAB]
    if unknown:
        raise ValueError(f"{unknown[0]!r} is not in the vocabulary; it has {VOCAB}")
    return EMBEDDINGS[[VOCAB.index(w) for w in words]]


class PronounData(NamedTuple):
    """A set of sentences and their answers; index ``m`` runs over sentences."""

    tokens: tuple  # m tuples of 8 words
    X: np.ndarray  # (m, 8, 16): embeddings + positions
    it: np.ndarray  # (m,): position of "it"
    target: np.ndarray  # (m,): index into NOUNS of the noun "it" refers to
    referent: np.ndarray  # (m,): position of that noun
    distractor: np.ndarray  # (m,): position of the plural noun


def _sentences(items: list) -> PronounData:
    tokens, referent, distractor, target = [], [], [], []
    for t, a, b, singular_first in items:
        first, second = (NOUNS[a], PLURALS[b]) if singular_first else (PLURALS[b], NOUNS[a])
        words = tuple({"N1": first, "N2": second}.get(w, w) for w in TEMPLATES[t])
        tokens.append(words)
        referent.append(words.index(NOUNS[a]))
        distractor.append(words.index(PLURALS[b]))
        target.append(a)
    X = np.stack([embed(words) for words in tokens]) + POSITIONS  # (m, 8, 16)
    it = np.array([words.index("it") for words in tokens])
    data = PronounData(tuple(tokens), X, it, *map(np.array, (target, referent, distractor)))
    for array in data[1:]:
        array.setflags(write=False)
    return data


def _all_items() -> list:
    """(template, singular noun, plural noun, singular first?) for every sentence (560)."""
    return [
        (t, a, b, singular_first)
        for t in range(len(TEMPLATES))
        for a in range(len(NOUNS))
        for b in range(len(NOUNS))
        if a != b
        for singular_first in (True, False)
    ]


def pronoun_data(n_train: int = 400, seed: int = 0) -> tuple[PronounData, PronounData]:
    """Every sentence the templates make (560), shuffled with ``seed`` and split in two.

    Returns ``(train, test)``: ``n_train`` sentences to learn from and the rest, which
    the model never sees while it learns. Each uses two different nouns.
    """
    items = _all_items()
    if not 0 < n_train < len(items):
        raise ValueError(f"n_train must be between 1 and {len(items) - 1}, got {n_train}")
    order = np.random.default_rng(seed).permutation(len(items))
    shuffled = [items[i] for i in order]
    return _sentences(shuffled[:n_train]), _sentences(shuffled[n_train:])


def held_out_data(*, template: int | None = None, answer: str | None = None):
    """Split every sentence by a rule instead of at random: ``(train, test)``.

    ``template`` (an index into :data:`TEMPLATES`): its 112 sentences are the test set,
    so the model is tested on a sentence frame it never saw. ``answer`` (a noun of
    :data:`NOUNS`): the 70 sentences in which "it" refers to that noun are the test set,
    so the right answer is a noun the model was never asked for. (Its singular word
    never appears in training, since a sentence's one singular noun is its answer; its
    plural still does, as a distractor.)
    """
    if (template is None) == (answer is None):
        raise ValueError("pass exactly one of template=... or answer=...")
    if template is not None:
        if template not in range(len(TEMPLATES)):
            raise ValueError(f"template must be 0 to {len(TEMPLATES) - 1}, got {template!r}")
        test = [item for item in _all_items() if item[0] == template]
    else:
        if answer not in NOUNS:
            raise ValueError(f"answer must be one of {NOUNS}, got {answer!r}")
        test = [item for item in _all_items() if NOUNS[item[1]] == answer]
    train = [item for item in _all_items() if item not in test]
    return _sentences(train), _sentences(test)


def init_weights(seed: int = 0, scale: float = 0.01, attention: bool = True) -> dict:
    """Small random ``W_q``, ``W_k``, ``W_v``, each (16, 16).

    With ``attention=False``, ``W_q`` and ``W_k`` start at exactly 0. Then every score is
    0, attention is uniform, and their gradients are exactly 0 too (``dQ = s dS K`` with
    ``K = 0``), so training never moves them: only ``W_v`` learns.
    """
    rng = np.random.default_rng(seed)
    weights = {
        name: rng.normal(scale=scale, size=(D_MODEL, D_MODEL)) for name in ("W_q", "W_k", "W_v")
    }
    if not attention:
        weights["W_q"][:] = weights["W_k"][:] = 0.0
    return weights


def forward(weights: dict, data: PronounData) -> tuple[np.ndarray, np.ndarray]:
    """Run the model: ``(logits, attention)``.

    Returns
    -------
    logits : ndarray of shape (m, 8)
        One score per noun of :data:`NOUNS`: the output at "it" dotted with each noun's
        embedding. The largest is the model's answer.
    attention : ndarray of shape (m, 8)
        The attention weights of "it" over the 8 tokens of each sentence.
    """
    logits, cache = _forward(weights, data)
    return logits, cache[-1][:, 0]


def _forward(weights: dict, data: PronounData):
    m = len(data.it)
    X_it = data.X[np.arange(m), data.it][:, None]  # (m, 1, d_model): only "it" asks
    Q = X_it @ weights["W_q"]  # (m, 1, d_k)
    K = data.X @ weights["W_k"]  # (m, n, d_k)
    V = data.X @ weights["W_v"]  # (m, n, d_v)
    out, A = scaled_dot_product_attention(Q, K, V)  # (m, 1, d_v), (m, 1, n)
    logits = out[:, 0] @ NOUN_EMBEDDINGS.T  # (m, d_v) @ (d_v, 8) -> (m, 8)
    return logits, (X_it, Q, K, V, A)


def loss_and_gradients(weights, data, backward=attention_backward):
    r"""Cross-entropy loss of the model and its gradient for each weight matrix.

    Notes
    -----
    With :math:`p = \operatorname{softmax}(\text{logits})` and one-hot targets :math:`y`,
    the loss is :math:`L = -\frac{1}{m}\sum \log p_{\text{target}}`, and the chain rule
    runs backwards: :math:`d\,\text{logits} = (p - y)/m`, :math:`dO = d\,\text{logits}\;
    E_{nouns}`, then ``backward`` (:func:`attention_backward` unless you pass another
    function with its signature, such as one with a deliberate slip) gives
    :math:`dQ, dK, dV`, and since :math:`Q = X W_q`, :math:`dW_q = \sum X^\top dQ`
    (likewise for ``W_k``, ``W_v``).
    """
    logits, (X_it, Q, K, V, _) = _forward(weights, data)  # the forward pass
    p, m = softmax(logits), len(data.it)  # p: (m, 8), one row per sentence
    loss = float(-np.log(p[np.arange(m), data.target]).mean())
    y = np.eye(len(NOUNS))[data.target]  # (m, 8): one-hot targets
    d_logits = (p - y) / m  # (m, 8)
    dOut = (d_logits @ NOUN_EMBEDDINGS)[:, None]  # (m, 8) @ (8, d) -> (m, 1, d)
    dQ, dK, dV = backward(Q, K, V, dOut)  # (m, 1, d), (m, 8, d), (m, 8, d)
    d = D_MODEL  # 16; reshape(-1, d) stacks all sentences, so @ sums over them
    grads = {
        "W_q": X_it.reshape(-1, d).T @ dQ.reshape(-1, d),  # (d, m) @ (m, d)
        "W_k": data.X.reshape(-1, d).T @ dK.reshape(-1, d),  # (d, 8m) @ (8m, d)
        "W_v": data.X.reshape(-1, d).T @ dV.reshape(-1, d),  # 8m: every token
    }
    return loss, grads


def accuracy(weights: dict, data: PronounData) -> float:
    """Share of sentences whose answer (largest logit) is the right noun."""
    logits, _ = forward(weights, data)
    return float(np.mean(logits.argmax(axis=-1) == data.target))


class TrainingRun(NamedTuple):
    """What :func:`train` records; the histories have one entry per step, 0 included."""

    weights: dict  # the final W_q, W_k, W_v
    loss: np.ndarray  # (steps + 1,) training loss
    train_accuracy: np.ndarray  # (steps + 1,)
    test_accuracy: np.ndarray  # (steps + 1,)
    snapshots: dict  # step -> copy of the weights at that step


class TrainingLog:
    """The bookkeeping of :func:`train`: losses and accuracies, weights at checkpoints."""

    def __init__(self, train_data: PronounData, test_data: PronounData, checkpoints=()):
        self.data, self.checkpoints, self.snapshots = (train_data, test_data), checkpoints, {}
        self.loss, self.train_accuracy, self.test_accuracy = [], [], []

    def record(self, step: int, loss: float, weights: dict) -> None:
        if step in self.checkpoints:
            self.snapshots[step] = {name: W.copy() for name, W in weights.items()}
        self.loss.append(loss)
        self.train_accuracy.append(accuracy(weights, self.data[0]))
        self.test_accuracy.append(accuracy(weights, self.data[1]))

    def run(self, weights: dict) -> TrainingRun:
        histories = (self.loss, self.train_accuracy, self.test_accuracy)
        return TrainingRun(weights, *map(np.array, histories), self.snapshots)


def train(
    train_data: PronounData,
    test_data: PronounData,
    *,
    steps: int = 150,
    lr: float = 0.05,
    seed: int = 0,
    attention: bool = True,
    checkpoints=(),
    start: dict | None = None,
    backward=attention_backward,
    gradients=None,
) -> TrainingRun:
    """Plain gradient descent from :func:`init_weights`: ``W <- W - lr * dL/dW``.

    Deterministic: the same arguments give the same numbers, run after run. The
    weights are copied at each step listed in ``checkpoints`` (0 is before training).
    ``start`` (``W_q``, ``W_k``, ``W_v``) replaces the random start, ``backward``
    :func:`attention_backward`, and ``gradients(weights, data)`` :func:`loss_and_gradients`.
    """
    if start is None:
        weights = init_weights(seed, attention=attention)
    else:
        weights = {name: np.array(start[name], dtype=float) for name in ("W_q", "W_k", "W_v")}
    gradients = gradients or partial(loss_and_gradients, backward=backward)  # backpropagation
    log = TrainingLog(train_data, test_data, checkpoints)
    for step in range(steps + 1):
        # run, score, trace back:
        loss, grads = gradients(weights, train_data)
        log.record(step, loss, weights)  # bookkeeping for the figures
        if step < steps:
            for name in weights:  # nudge every weight a small step downhill
                weights[name] -= lr * grads[name]
    return log.run(weights)
