"""Chapter 12's block checker: the usual slips, each as the wrong answer it gives and a hint.

:func:`slips` builds every wrong answer for one case; :mod:`.block` names the first that
matches the learner's output.
"""

from __future__ import annotations

import functools

import numpy as np

from ..core import causal_mask, scaled_dot_product_attention, softmax
from ..decoder import EPS, feed_forward
from ..heads import multi_head_attention
from ..layers import layer_norm


def _parts(p: dict, h: int, mask=True, eps=EPS, anti=False, strict=False):
    """The four pieces a learner combines, so that each slip is written once below."""
    Ws = p["W_q"], p["W_k"], p["W_v"], p["W_o"]

    def ln(x, k):
        return layer_norm(x, p[f"ln{k}_gamma"], p[f"ln{k}_beta"], eps)

    def mha(x):
        m = causal_mask(x.shape[-2]) if mask else None
        if strict:  # below the diagonal only; token 0 keeps itself, or it sees nothing
            m = np.tril(m, -1)
            m[0, 0] = True
        return multi_head_attention(x, *Ws, h, m.T if anti else m)[0]

    def ffn(x):
        return feed_forward(x, p["W_1"], p["b_1"], p["W_2"], p["b_2"])

    return ln, mha, ffn


def _no_relu(x, p: dict) -> np.ndarray:
    return (x @ p["W_1"] + p["b_1"]) @ p["W_2"] + p["b_2"]


def slips(X, p: dict, h: int) -> list[tuple]:
    ln, mha, ffn = _parts(p, h)

    def pre_ln(X, ln=ln, mha=mha, ffn=ffn, ln2=2, ln1=1):
        X1 = X + mha(ln(X, ln1))
        return X1 + ffn(ln(X1, ln2))

    def by_hand(**kw):  # attention with the heads split by hand, one step done wrongly
        return pre_ln(X, mha=lambda x: _split_by_hand(x, p, h, **kw))

    a, X1 = ln(X, 1), X + mha(ln(X, 1))
    post_0, post_1 = X + mha(X), ln(X + mha(X), 1)  # post-LN: both norms, either alone
    b = ln(a + mha(a), 2)
    both = ln(X1, 1)  # normalised before the sub-layer and again after the add
    return [
        *[(w, _POST_LN) for w in (ln(post_1 + ffn(post_1), 2), ln(post_0 + ffn(post_0), 2))],
        (post_1 + ffn(post_1), _POST_LN),
        *[(w, _POST_LN) for w in (ln(post_1 + ffn(ln(post_1, 2)), 2), post_1 + ffn(ln(post_1, 2)))],
        *[(w, _AFTER_ADD) for w in (both + ffn(ln(both, 2)), ln(both + ffn(ln(both, 2)), 2))],
        *[(w, _AFTER_ADD) for w in (ln(both + ffn(both), 2), both + ffn(both))],  # review 12x
        (ln(pre_ln(X), 2), _AFTER_ADD),
        (pre_ln(X, mha=_parts(p, h, mask=False)[1]), _NO_MASK),
        (mha(ln(X, 1)) + ffn(ln(mha(ln(X, 1)), 2)), _NO_RESIDUAL_1),
        (ffn(ln(X1, 2)), _NO_RESIDUAL_2),
        (ffn(ln(mha(ln(X, 1)), 2)), _NO_RESIDUALS),
        (a + mha(a) + ffn(ln(a + mha(a), 2)), _RESIDUAL_FROM_LN),
        (b + ffn(b), _RESIDUAL_FROM_LN),
        (ln(X1, 2) + ffn(ln(X1, 2)), _RESIDUAL_FROM_LN_2),
        (pre_ln(X, mha=_parts(p, h, anti=True)[1]), _ANTI_CAUSAL),
        (pre_ln(X, mha=_parts(p, h, strict=True)[1]), STRICT_MASK),
        (by_hand(diag=False), STRICT_MASK),
        (pre_ln(X, ln1=2, ln2=1), _LN_SWAPPED),
        (X1, _NO_FFN),
        (mha(a), _ATTENTION_ALONE),
        (X1 + ffn(X1), _NO_LN_2),
        (X + mha(X) + ffn(ln(X + mha(X), 2)), _NO_LN_1),
        (pre_ln(X, ln2=1), _ONE_LN),
        (pre_ln(X, ln1=2), _LN2_FOR_LN1),
        (ln(pre_ln(X), "f"), _FINAL_LN),
        (X + mha(ln(X, 1)) + ffn(ln(X, 2)), _PARALLEL),
        (pre_ln(X, ln=_parts(p, h, eps=1e-12)[0]), _EPS),
        (by_hand(how="no_transpose"), _SPLIT_NO_TRANSPOSE),
        (by_hand(how="no_transpose", join="no_transpose"), _SPLIT_NO_TRANSPOSE),
        (by_hand(how="strided"), _SPLIT_STRIDED),
        (by_hand(join="no_transpose"), _JOIN),
        (by_hand(join="reversed"), _JOIN_REVERSED),
        (by_hand(W_o=False), _NO_W_O),
        (pre_ln(X, ffn=lambda x: _no_relu(x, p)), _NO_RELU),
        (X1 + ffn(ln(X, 1)), _FFN_LN_1),
        (X1 + ffn(X), _FFN_ON_X),
        (by_hand(scale=np.sqrt(X.shape[-1] / h)), _NO_SCALE),
        (by_hand(scale=h**-0.5), _SCALE_D_MODEL),
        (by_hand(scale=(X.shape[-1] / h) ** -0.5), _SCALE_D_K),
        (by_hand(scale=np.sqrt(X.shape[-1] / h) / X.shape[-1]), _SCALE_D),
        (by_hand(axis=-2), _QUERY_AXIS),
        (by_hand(fill=0.0), _MASK_ZERO),
        *[(pre_ln(X, ln=bare), _LN_BARE) for bare in _bare_norms(ln)],
        (X, _UNCHANGED),
    ]


def _bare_norms(ln):
    """Layer norm written by hand without gamma and beta: for LN1 alone or both, eps or not."""

    def bare(x, k, eps, both):
        if k != 1 and not both:
            return ln(x, k)
        return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)

    return [
        functools.partial(bare, eps=eps, both=both) for eps in (0.0, EPS) for both in (False, True)
    ]


def _split_by_hand(
    x,
    p: dict,
    h: int,
    how="right",
    join="right",
    W_o=True,
    scale=1.0,
    axis=-1,
    fill=-1e9,
    diag=True,
):
    """Attention with the heads split by hand, one step of it done wrongly.

    ``scale`` multiplies the queries, so the scores are divided by sqrt(d_k) / scale;
    ``diag=False`` masks the diagonal too (filled with -1e9, token 0 weighs all keys alike)."""
    n, d = x.shape

    def split(M):  # (n, d) -> (h, n, d_k)
        if how == "no_transpose":
            return M.reshape(h, n, d // h)
        if how == "strided":
            return M.reshape(n, d // h, h).transpose(2, 0, 1)  # every h-th column
        return M.reshape(n, h, d // h).transpose(1, 0, 2)

    Q, K, V = (split(x @ p[w]) for w in ("W_q", "W_k", "W_v"))
    Q = Q * scale
    heads, _ = scaled_dot_product_attention(Q, K, V, causal_mask(n))
    if axis != -1 or fill != -1e9 or not diag:  # masked with fill, then a softmax along axis
        scores = Q @ K.transpose(0, 2, 1) / np.sqrt(d // h)
        seen = np.tril(causal_mask(n), 0 if diag else -1)
        heads = softmax(np.where(seen, scores, fill), axis=axis) @ V
    order = {"no_transpose": (0, 1, 2), "reversed": (2, 1, 0)}.get(join, (1, 0, 2))
    joined = heads.transpose(order).reshape(n, d)  # right: (n, h, d_k) -> (n, d)
    return joined @ p["W_o"] if W_o else joined


_POST_LN = (
    "your layer norm comes after a residual, LN(X + MHA(X)), as in chapter 11's post-LN block: "
    "here it comes *before* each sub-layer, X + MHA(LN1(X)), and the residual adds the raw X."
)
_AFTER_ADD = (
    "you normalised after the add, as chapter 11's encoder did; this decoder normalises "
    "before: X + MHA(LN1(X)), and the sum itself stays un-normalised."
)
_NO_MASK = (
    "every token saw the tokens after it: pass the causal mask, al.causal_mask(n) with n = "
    "X.shape[0], to the attention, or the model can read the word it must predict."
)
_NO_RESIDUAL_1 = (
    "the attention sub-layer has no residual: X1 = X + MHA(LN1(X)), so each token keeps its "
    "own vector and adds what attention found."
)
_NO_RESIDUAL_2 = (
    "the feed-forward sub-layer has no residual: return X1 + FFN(LN2(X1)), not FFN(...) alone."
)
_NO_RESIDUALS = "neither sub-layer has its residual: add X before the FFN, and X1 after it."
_RESIDUAL_FROM_LN = (
    "the residual started from the normalised LN1(X): add the sub-layer's output to the raw "
    "X, X + MHA(LN1(X)); layer norm only feeds the sub-layer."
)
_RESIDUAL_FROM_LN_2 = (
    "the second residual started from the normalised LN2(X1): return X1 + FFN(LN2(X1)); "
    "layer norm only feeds the sub-layer."
)
_ANTI_CAUSAL = (
    "the mask is transposed: each token saw itself and the tokens *after* it. "
    "al.causal_mask(n) as it is lets a token see itself and the tokens before it."
)
STRICT_MASK = (  # the block checker says it too, when a token is left no key at all
    "your mask hides each token from itself (np.tril with k=-1, or a strict <): a token may "
    "attend to itself and the tokens before it. al.causal_mask(n) keeps the diagonal."
)
_LN_SWAPPED = (
    "LN1 and LN2 are swapped: attention reads LN1(X), with p['ln1_gamma'] and "
    "p['ln1_beta']; the feed-forward network reads LN2(X1), with ln2's."
)
_NO_FFN = "the block stops after attention: add the feed-forward sub-layer, X1 + FFN(LN2(X1))."
_ATTENTION_ALONE = (
    "you returned the attention output alone (MHA(LN1(X))): add the residual, then LN2, "
    "the FFN and its residual."
)
_NO_LN_2 = "the feed-forward network got X1 itself: normalise it first, FFN(LN2(X1))."
_NO_LN_1 = "attention got X itself: normalise it first, MHA(LN1(X))."
_ONE_LN = (
    "both sub-layers used ln1's scale and shift: the second layer norm has its own, "
    "p['ln2_gamma'] and p['ln2_beta']."
)
_FINAL_LN = (
    "you applied the final layer norm, lnf, inside the block: it runs once, after the last "
    "block, just before W_out. Return X1 + FFN(LN2(X1))."
)
_PARALLEL = (
    "the feed-forward network read LN2(X), the block's input: it reads LN2(X1), the vector "
    "*after* attention's residual, so it can use what attention found."
)
_FFN_LN_1 = "the feed-forward network read LN1(X), attention's input: it reads LN2(X1)."
_FFN_ON_X = (
    "the feed-forward network read X, the block's input: it reads LN2(X1), the vector after "
    "attention's residual, normalised. Return X1 + FFN(LN2(X1))."
)
_UNCHANGED = "you returned X unchanged: return X1 + FFN(LN2(X1)), with X1 = X + MHA(LN1(X))."
_EPS = (
    "the layer norms used layer_norm's default eps (1e-12): the decoder uses decoder.EPS "
    "(1e-5), as GPT-2 does; pass it as the fourth argument."
)
_SPLIT_NO_TRANSPOSE = (
    "the heads are cut wrongly: (X @ W).reshape(h, n, d_k) fills head 0 with the first rows, "
    "not the first d_k columns. Reshape to (n, h, d_k), then move the head axis first: "
    ".transpose(1, 0, 2)."
)
_SPLIT_STRIDED = (
    "the heads are cut wrongly: reshape(n, d_k, h) gives head i every h-th column. Head i "
    "owns the d_k columns next to each other, i * d_k to (i + 1) * d_k: reshape(n, h, d_k)."
)
_JOIN = (
    "the heads are joined wrongly: heads.reshape(n, d) on (h, n, d_k) mixes tokens into "
    "rows. Move the token axis first, heads.transpose(1, 0, 2), then reshape(n, d)."
)
_NO_W_O = (
    "the joined heads went straight into the residual: apply W_o to them first, "
    "X + joined @ p['W_o'], so the heads' findings are mixed back into d_model."
)
_NO_RELU = (
    "the feed-forward network has no ReLU, so it is one linear map: use "
    "decoder.feed_forward, or max(0, x W_1 + b_1) W_2 + b_2."
)
_NO_SCALE = (
    "the scores were not scaled: divide Q K^T by sqrt(d_k), with d_k = d_model / h the "
    "width of one head (chapter 4), or let al.scaled_dot_product_attention do it."
)
_SCALE_D_MODEL = (
    "the scores were divided by sqrt(d_model): each head's dot products run over d_k = "
    "d_model / h entries, so divide by sqrt(d_k)."
)
_SCALE_D_K = "the scores were divided by d_k: divide Q K^T by its square root, sqrt(d_k)."
_SCALE_D = (
    "the scores were divided by d_model: divide Q K^T by sqrt(d_k), the square root of one "
    "head's width d_k = d_model / h."
)
_LN2_FOR_LN1 = (
    "attention's layer norm used ln2's scale and shift: LN1 has its own, p['ln1_gamma'] and "
    "p['ln1_beta']; ln2's belong to the norm before the FFN."
)
_JOIN_REVERSED = (
    "the heads are joined wrongly: heads.transpose(2, 1, 0) gives (d_k, n, h), which moves "
    "the width axis first. Move only the token axis first, heads.transpose(1, 0, 2), giving "
    "(n, h, d_k), then reshape(n, d)."
)
_MASK_ZERO = (
    "the masked scores were set to 0, and e^0 = 1, so each token still gave weight to the "
    "tokens after it. Masked scores must be -inf, not 0, so that their weight is 0. "
    "al.softmax refuses -inf: fill with -1e9, or pass the boolean mask to "
    "al.scaled_dot_product_attention."
)
_LN_BARE = (
    "your layer norm left out the learned scale and shift: after normalising, multiply by "
    "p['ln1_gamma'] and add p['ln1_beta'] (ln2's for the second), with eps decoder.EPS in "
    "the variance. layer_norm(x, gamma, beta, decoder.EPS) does all three."
)
_QUERY_AXIS = "the softmax ran down each column, over the queries: take it over the keys, axis=-1."
