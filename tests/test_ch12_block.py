"""Chapter 12's block checker both ways, and the rare inputs the KV and sampling checkers test."""

import numpy as np
import pytest

import attention_lib as al
from attention_lib import decoder
from attention_lib.checks import check_decoder_block, check_kv_step, check_sample
from attention_lib.layers import layer_norm


def mha(x, W_q, W_k, W_v, W_o, h, mask, join_t=True, w_o=True):
    """Multi-head attention with the heads split by hand, as Exercise 12.1 asks."""
    n, d = x.shape
    Q, K, V = ((x @ W).reshape(n, h, d // h).transpose(1, 0, 2) for W in (W_q, W_k, W_v))
    heads, weights = al.scaled_dot_product_attention(Q, K, V, mask)  # (h, n, d_k)
    joined = heads.transpose(1, 0, 2).reshape(n, d) if join_t else heads.reshape(n, d)
    return (joined @ W_o if w_o else joined), weights


def block(post=False, mask=True, res1=True, res2=True, ln2="ln2", eps=decoder.EPS, **slip):
    """A block answer; each keyword turns on one slip a learner makes."""

    def my_block(X, p, h):
        Ws = p["W_q"], p["W_k"], p["W_v"], p["W_o"]
        causal = al.causal_mask(X.shape[0]) if mask else None
        if slip.get("anti_causal"):
            causal = causal.T

        def ln(x, k):
            return layer_norm(x, p[f"{k}_gamma"], p[f"{k}_beta"], eps)

        def ffn(x):
            if slip.get("no_relu"):
                return (x @ p["W_1"] + p["b_1"]) @ p["W_2"] + p["b_2"]
            return decoder.feed_forward(x, p["W_1"], p["b_1"], p["W_2"], p["b_2"])

        if post:  # the original Transformer's order; post="ln1" or "ln2": that norm alone
            X1 = X + mha(X, *Ws, h, causal)[0]
            X1 = X1 if post == "ln2" else ln(X1, "ln1")
            return X1 + ffn(X1) if post == "ln1" else ln(X1 + ffn(X1), "ln2")
        a = X if slip.get("no_ln1") else ln(X, "ln1")
        from_ln = slip.get("residual_from_ln") or slip.get("both_from_ln")
        start = a if from_ln else X if res1 else 0
        heads = {k: slip[k] for k in ("join_t", "w_o") if k in slip}
        X1 = start + mha(a, *Ws, h, causal, **heads)[0]
        if slip.get("no_ffn"):
            return X1
        if slip.get("no_index"):  # forgot [0]: X + (output, weights)
            return X + mha(a, *Ws, h, causal)
        b = X1 if slip.get("no_ln2") else ln(X if slip.get("parallel") else X1, ln2)
        b = a if slip.get("ffn_reads_ln1") else b
        from_ln2 = slip.get("residual2_from_ln") or slip.get("both_from_ln")
        X2 = (b if from_ln2 else X1 if res2 else 0) + ffn(b)
        if slip.get("pair"):
            return X2, None
        return ln(X2, "lnf") if slip.get("final_ln") else X2

    return my_block


def library_block(X, p, h):  # right values, but the exercise rules the call out
    a = layer_norm(X, p["ln1_gamma"], p["ln1_beta"], decoder.EPS)
    Ws = p["W_q"], p["W_k"], p["W_v"], p["W_o"]
    X1 = X + al.multi_head_attention(a, *Ws, h, al.causal_mask(len(X)))[0]
    b = layer_norm(X1, p["ln2_gamma"], p["ln2_beta"], decoder.EPS)
    return X1 + decoder.feed_forward(b, p["W_1"], p["b_1"], p["W_2"], p["b_2"])


def after_add(where):
    """Pre-LN, plus a layer norm after the add: after sub-layer 1, 2 or both (review 12m)."""

    def my_block(X, p, h):
        def ln(x, k):
            return layer_norm(x, p[f"ln{k}_gamma"], p[f"ln{k}_beta"], decoder.EPS)

        Ws = p["W_q"], p["W_k"], p["W_v"], p["W_o"]
        X1 = X + mha(ln(X, 1), *Ws, h, al.causal_mask(len(X)))[0]
        X1 = ln(X1, 1) if where in (1, 3) else X1
        b = ln(X1, 2)
        X2 = X1 + decoder.feed_forward(b, p["W_1"], p["b_1"], p["W_2"], p["b_2"])
        return ln(X2, 2) if where in (2, 3) else X2

    return my_block


def by_hand(split, join_t=True):
    """Exercise 12.1 as the page asks: heads split by hand, with ``split`` cutting them."""

    def my_block(X, p, h):
        n, d = X.shape
        a = layer_norm(X, p["ln1_gamma"], p["ln1_beta"], decoder.EPS)
        Q, K, V = (split(a @ p[w], n, h, d // h) for w in ("W_q", "W_k", "W_v"))
        heads, _ = al.scaled_dot_product_attention(Q, K, V, al.causal_mask(n))
        X1 = X + (heads.transpose(1, 0, 2) if join_t else heads).reshape(n, d) @ p["W_o"]
        b = layer_norm(X1, p["ln2_gamma"], p["ln2_beta"], decoder.EPS)
        return X1 + decoder.feed_forward(b, p["W_1"], p["b_1"], p["W_2"], p["b_2"])

    return my_block


@pytest.mark.parametrize(
    ("fn", "status", "hint"),
    [
        (block(), "PASS", "all 3 cases"),
        (by_hand(lambda M, n, h, d_k: M.reshape(n, h, d_k).transpose(1, 0, 2)), "PASS", "all 3"),
        (by_hand(lambda M, n, h, d_k: M.reshape(h, n, d_k)), "FAIL", "fills head 0 with"),
        (  # split and joined without a transpose: each reshape undoes the other, still wrong
            by_hand(lambda M, n, h, d_k: M.reshape(h, n, d_k), join_t=False),
            "FAIL",
            "fills head 0 with",
        ),
        (
            by_hand(lambda M, n, h, d_k: M.reshape(n, d_k, h).transpose(2, 0, 1)),
            "FAIL",
            "gives head i every h-th column",
        ),
        (block(post=True), "FAIL", "post-LN block"),
        (block(post="ln1"), "FAIL", "chapter 11's post-LN block"),
        (block(post="ln2"), "FAIL", "chapter 11's post-LN block"),
        *[(after_add(w), "FAIL", "normalised after the add") for w in (1, 2, 3)],
        (block(mask=False), "FAIL", "pass the causal mask"),
        (block(res1=False), "FAIL", "attention sub-layer has no residual"),
        (block(res2=False), "FAIL", "feed-forward sub-layer has no residual"),
        (block(res1=False, res2=False), "FAIL", "neither sub-layer has its residual"),
        (block(residual_from_ln=True), "FAIL", "started from the normalised LN1(X)"),
        (block(both_from_ln=True), "FAIL", "started from the normalised LN1(X)"),
        (block(residual2_from_ln=True), "FAIL", "started from the normalised LN2(X1)"),
        (block(anti_causal=True), "FAIL", "the mask is transposed"),
        (block(no_ffn=True), "FAIL", "the block stops after attention"),
        (block(no_index=True), "FAIL", "take the output with [0]"),
        (block(no_ln1=True), "FAIL", "attention got X itself"),
        (block(no_ln2=True), "FAIL", "feed-forward network got X1 itself"),
        (block(ln2="ln1"), "FAIL", "both sub-layers used ln1's"),
        (block(final_ln=True), "FAIL", "final layer norm, lnf, inside the block"),
        (block(parallel=True), "FAIL", "read LN2(X), the block's input"),
        (block(ffn_reads_ln1=True), "FAIL", "read LN1(X), attention's input"),
        (block(eps=1e-12), "FAIL", "decoder.EPS (1e-5)"),
        (block(pair=True), "FAIL", "returned or added a tuple"),
        (block(join_t=False), "FAIL", "the heads are joined wrongly"),
        (block(w_o=False), "FAIL", "apply W_o to them first"),
        (block(no_relu=True), "FAIL", "has no ReLU"),
        (library_block, "FAIL", "calls multi_head_attention, which this exercise rules out"),
        (
            lambda X, p, h: decoder.decoder_block(X, p, h, al.causal_mask(len(X)))[0],
            "FAIL",
            "calls decoder_block",
        ),
        (lambda X, p, h: X, "FAIL", "you returned X unchanged"),
        (
            lambda X, p, h: mha(  # split by hand: MHA(LN1(X)) and nothing more
                layer_norm(X, p["ln1_gamma"], p["ln1_beta"], decoder.EPS),
                *(p[w] for w in ("W_q", "W_k", "W_v", "W_o")),
                h,
                al.causal_mask(len(X)),
            )[0],
            "FAIL",
            "the attention output alone",
        ),
        (lambda X, p, h: X[:, :-1], "FAIL", "keeps every token's width"),
    ],
)
def test_block_checker_both_ways(fn, status, hint, capsys):
    result = check_decoder_block(fn)
    line = capsys.readouterr().out
    assert result.status == status and hint in line, line


def _parts(p):
    """The block's two layer norms and its FFN, as a slip written by hand would call them."""

    def ln(x, k):
        return layer_norm(x, p[f"ln{k}_gamma"], p[f"ln{k}_beta"], decoder.EPS)

    def ffn(x):
        return decoder.feed_forward(x, p["W_1"], p["b_1"], p["W_2"], p["b_2"])

    return ln, ffn


def slip_12t(kind):
    """Review 12t: slips the block checker had met with only a generic difference."""

    def my_block(X, p, h):
        ln, ffn = _parts(p)
        n, Ws = len(X), (p["W_q"], p["W_k"], p["W_v"], p["W_o"])
        strict = np.tril(al.causal_mask(n), -1)  # each token hidden from itself
        if kind == "post":  # LN after each add, and LN2 before the FFN as well
            X1 = ln(X + mha(X, *Ws, h, al.causal_mask(n))[0], 1)
            return ln(X1 + ffn(ln(X1, 2)), 2)
        if kind == "strict_self_at_0":  # token 0 keeps itself, or it sees nothing
            strict[0, 0] = True
        if kind == "strict_by_hand":  # filled with -1e9: token 0 weighs all keys alike
            a = ln(X, 1)
            Q, K, V = ((a @ W).reshape(n, h, -1).transpose(1, 0, 2) for W in Ws[:3])
            s = np.where(strict, Q @ K.transpose(0, 2, 1) / np.sqrt(Q.shape[-1]), -1e9)
            X1 = X + (al.softmax(s) @ V).transpose(1, 0, 2).reshape(n, -1) @ Ws[3]
            return X1 + ffn(ln(X1, 2))
        first, second = (2, 1) if kind == "swapped" else (1, 2)
        mask = al.causal_mask(n) if kind == "swapped" else strict
        X1 = X + mha(ln(X, first), *Ws, h, mask)[0]
        return X1 + ffn(ln(X1, second))

    return my_block


def slip_12x(kind):
    """Review 12x: LN1 both before attention and after its add; the FFN reading raw X."""

    def my_block(X, p, h):
        ln, ffn = _parts(p)
        Ws = p["W_q"], p["W_k"], p["W_v"], p["W_o"]
        X1 = X + mha(ln(X, 1), *Ws, h, al.causal_mask(len(X)))[0]
        if kind == "ffn_on_X":
            return X1 + ffn(X)
        X1 = ln(X1, 1)  # then chapter 11's order: normalise after each add
        return ln(X1 + ffn(X1), 2) if kind == "post" else X1 + ffn(X1)

    return my_block


@pytest.mark.parametrize(
    ("slip", "kind", "hint"),
    [
        (slip_12t, "post", "chapter 11's post-LN block"),
        (slip_12t, "strict", "your mask hides each token from itself"),  # row 0 sees no key
        (slip_12t, "strict_self_at_0", "your mask hides each token from itself"),
        (slip_12t, "strict_by_hand", "your mask hides each token from itself"),
        (slip_12t, "swapped", "LN1 and LN2 are swapped"),
        (slip_12x, "post", "normalised after the add, as chapter 11"),
        (slip_12x, "post_no_ln2", "normalised after the add, as chapter 11"),
        (slip_12x, "ffn_on_X", "the feed-forward network read X, the block's input"),
    ],
)
def test_block_checker_names_the_reviews_slips(slip, kind, hint, capsys):
    result = check_decoder_block(slip(kind))
    line = capsys.readouterr().out
    assert result.status == "FAIL" and hint in line, line


def test_block_checker_gives_each_call_its_own_copy_of_the_weights(capsys):
    def spoils_weights(X, p, h):
        out = block()(X, p, h)
        p["W_q"] *= 0  # the reference, computed after this call, must not see it
        return out

    assert check_decoder_block(spoils_weights).passed, capsys.readouterr().out


@pytest.mark.parametrize("heads", [1, 4])
def test_block_checker_names_a_hard_coded_h(heads, capsys):  # review 12y
    result = check_decoder_block(lambda X, p, h: block()(X, p, heads))
    line = capsys.readouterr().out
    assert result.status == "FAIL" and "use the h it was given" in line, line


def kv_step(q, K, V, k, v, stable=True):
    K, V = np.concatenate([K, k[:, None]], axis=1), np.concatenate([V, v[:, None]], axis=1)
    scores = np.einsum("hd,htd->ht", q, K) / np.sqrt(q.shape[-1])  # (h, t + 1)
    if stable:
        return np.einsum("ht,htd->hd", al.softmax(scores), V)
    e = np.exp(scores)
    return np.einsum("ht,htd->hd", e / e.sum(axis=-1, keepdims=True), V)


def sample(logits, T, u, at_or_beyond=False, stable=True):
    z = logits / T
    p = al.softmax(z) if stable else np.exp(z) / np.exp(z).sum()
    ends = np.cumsum(p)
    ends[-1] = 1.0
    return int(np.argmax(ends >= u if at_or_beyond else ends > u))


@pytest.mark.parametrize(
    ("checker", "fn", "hint"),
    [
        (check_kv_step, lambda *a: kv_step(*a, stable=False), "np.exp(1000) overflows"),
        (check_sample, lambda *a: sample(*a, at_or_beyond=True), "ends >= u"),
        (check_sample, lambda *a: float(sample(*a)), "as a float"),
        (check_sample, lambda *a: sample(*a, stable=False), "np.exp(800) overflows"),
        (
            check_sample,
            lambda logits, T, u: min(
                int(np.searchsorted(np.cumsum(al.softmax(logits / T)), u)), len(logits) - 1
            ),
            "searchsorted's side='left'",
        ),
    ],
)
def test_rare_inputs_catch_unstable_and_boundary_slips(checker, fn, hint, capsys):
    result = checker(fn)
    line = capsys.readouterr().out
    assert result.status == "FAIL" and hint in line, line
    assert checker(kv_step if checker is check_kv_step else sample).passed


def scores_by_hand(X, p, h, divide_by="d_k", fill=-1e9, axis=-1):
    """Exercise 12.1 with the scores, mask and softmax written out; three slips to choose."""
    n, d = X.shape
    a = layer_norm(X, p["ln1_gamma"], p["ln1_beta"], decoder.EPS)
    Q, K, V = ((a @ p[w]).reshape(n, h, d // h).transpose(1, 0, 2) for w in ("W_q", "W_k", "W_v"))
    width = {"d_k": d // h, "d_model": d, "none": 1, "d_k, not its root": (d // h) ** 2}[divide_by]
    scores = Q @ K.transpose(0, 2, 1) / np.sqrt(width)  # (h, n, n)
    weights = al.softmax(np.where(al.causal_mask(n), scores, fill), axis=axis)
    X1 = X + (weights @ V).transpose(1, 0, 2).reshape(n, d) @ p["W_o"]
    b = layer_norm(X1, p["ln2_gamma"], p["ln2_beta"], decoder.EPS)
    return X1 + decoder.feed_forward(b, p["W_1"], p["b_1"], p["W_2"], p["b_2"])


@pytest.mark.parametrize(
    ("kw", "status", "hint"),
    [
        ({}, "PASS", "PASS"),
        ({"divide_by": "none"}, "FAIL", "the scores were not scaled: divide Q K^T by sqrt(d_k)"),
        ({"divide_by": "d_model"}, "FAIL", "divided by sqrt(d_model)"),
        ({"divide_by": "d_k, not its root"}, "FAIL", "divided by d_k: divide Q K^T by its square"),
        ({"axis": -2}, "FAIL", "the softmax ran down each column, over the queries"),
        ({"axis": 1}, "FAIL", "the softmax ran down each column, over the queries"),
        ({"fill": -np.inf}, "FAIL", "pass the boolean mask to al.scaled_dot_product_attention"),
    ],
)
def test_block_checker_on_scores_written_by_hand(kw, status, hint, capsys):
    result = check_decoder_block(lambda X, p, h: scores_by_hand(X, p, h, **kw))
    line = capsys.readouterr().out
    assert result.status == status and hint in line, line


def bare_layer_norm(X, p, h):
    """Exercise 12.1 with layer norm written by hand: no gamma, no beta, no eps."""

    def norm(x):
        return (x - x.mean(-1, keepdims=True)) / x.std(-1, keepdims=True)

    n, d = X.shape
    X1 = X + mha(norm(X), p["W_q"], p["W_k"], p["W_v"], p["W_o"], h, al.causal_mask(n))[0]
    return X1 + decoder.feed_forward(norm(X1), p["W_1"], p["b_1"], p["W_2"], p["b_2"])


@pytest.mark.parametrize(
    ("fn", "hint"),
    [
        (lambda X, p, h: scores_by_hand(X, p, h, fill=0.0), "Masked scores must be -inf, not 0"),
        (bare_layer_norm, "left out the learned scale and shift"),
    ],
)
def test_block_checker_names_a_zero_mask_and_a_bare_layer_norm(fn, hint, capsys):
    result = check_decoder_block(fn)
    line = capsys.readouterr().out
    assert result.status == "FAIL" and hint in line, line


def slip_12qq(kind):
    """Review 12_qq: three slips the block checker had met with only a generic difference."""

    def my_block(X, p, h):
        n, d = X.shape
        ln1 = "ln2" if kind == "ln2_for_ln1" else "ln1"  # LN2's gamma and beta, used twice
        a = layer_norm(X, p[f"{ln1}_gamma"], p[f"{ln1}_beta"], decoder.EPS)
        Q, K, V = (
            (a @ p[w]).reshape(n, h, d // h).transpose(1, 0, 2) for w in ("W_q", "W_k", "W_v")
        )
        divisor = d if kind == "divide_by_d" else np.sqrt(d // h)  # d_model, not sqrt(d_k)
        scores = np.where(al.causal_mask(n), Q @ K.transpose(0, 2, 1) / divisor, -1e9)
        heads = al.softmax(scores) @ V  # (h, n, d_k)
        order = (2, 1, 0) if kind == "join_210" else (1, 0, 2)
        X1 = X + heads.transpose(order).reshape(n, d) @ p["W_o"]
        b = layer_norm(X1, p["ln2_gamma"], p["ln2_beta"], decoder.EPS)
        return X1 + decoder.feed_forward(b, p["W_1"], p["b_1"], p["W_2"], p["b_2"])

    return my_block


@pytest.mark.parametrize(
    ("kind", "status", "hint"),
    [
        ("none", "PASS", "all 3 cases"),
        ("ln2_for_ln1", "FAIL", "attention's layer norm used ln2's scale and shift"),
        ("join_210", "FAIL", "heads.transpose(2, 1, 0) gives (d_k, n, h)"),
        ("divide_by_d", "FAIL", "the scores were divided by d_model: divide Q K^T by sqrt(d_k)"),
    ],
)
def test_block_checker_names_review_12qq_slips(kind, status, hint, capsys):
    result = check_decoder_block(slip_12qq(kind))
    line = capsys.readouterr().out
    assert result.status == status and hint in line, line
