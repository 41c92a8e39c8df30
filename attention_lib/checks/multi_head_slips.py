"""Chapter 7 checker: slips in the multi-head loop that cold review 07_d found without a
named hint (``multi_head_mistakes.py`` adds them to its list; ``multi_head.py`` names a
list of unpacked pairs, heads summed, and the heads' weights concatenated)."""

from __future__ import annotations

import numpy as np

from ..core import attention_scores, scaled_dot_product_attention, softmax
from ..heads import merge_heads, multi_head_attention, split_heads
from .base import Fail, same
from .multi_head_blocks import square_block_slips
from .multi_head_merges import merge_slips, overlap_slips, swapped_kv_slips, value_block_slips
from .multi_head_torch import torch_layout_slips

#: The verdict for a list of (output, weights) pairs, one per head, never unpacked.
LIST_OF_PAIRS = (
    "your function returned a list of pairs (output, weights): "
    "al.scaled_dot_product_attention returns a pair, so unpack it, head_i, _ = "
    "al.scaled_dot_product_attention(...), then concatenate the heads and apply W_o."
)


#: The hint when no named slip fits the wrong values (review 07_p; review 07_t: neutral,
#: since a wrong value block or a short loop lands here too).
FALLBACK = (
    "No common slip matches: compare one head at a time with a hand computation, "
    "softmax(Q_i K_i^T / sqrt(d_k)) V_i with d_k = d_model // h, then the concatenation "
    "@ W_o."
)

#: The hint when every value is close but not equal (review 07_t: a float16 output).
PRECISION = (
    "Every value is within 0.01 of the reference: a precision or dtype problem? Keep "
    "float64 throughout (float16 keeps only about three digits)."
)


def matches(out, expected, case: str) -> None:
    """``same``, with a hint added when the values differ: precision if close, else neutral."""
    try:
        same(out, expected, case)
    except Fail as fail:
        same_shape = np.shape(out) == np.shape(expected)
        close = same_shape and np.allclose(out, expected, rtol=0, atol=1e-2)
        hint = PRECISION if close else FALLBACK
        raise Fail(f"{fail} {hint}") from None


def is_list_of_pairs(out) -> bool:
    """A list (or tuple) of (output, weights) pairs of arrays, one per head."""
    return (
        isinstance(out, list | tuple)
        and len(out) > 0
        and all(
            isinstance(x, tuple) and len(x) == 2 and all(isinstance(a, np.ndarray) for a in x)
            for x in out
        )
    )


def combined_hint(how: str) -> str:
    """Name the slip of adding the heads (or taking their mean) instead of concatenating."""
    return (
        f"You combined the heads by {how} them, which gives one (n, d_k) block. "
        "Concatenate them side by side instead, np.concatenate(heads, axis=-1), shape "
        "(n, h*d_k), then @ W_o."
    )


def one_block_hint(got, heads: np.ndarray) -> str:
    """Name a concatenation only d_k wide: the heads summed, averaged, or only the last kept."""
    if got is None or got.shape != heads[0].shape:
        return ""
    for combined, how in ((heads.sum(axis=0), "summing"), (heads.mean(axis=0), "averaging")):
        if np.allclose(got, combined):
            return combined_hint(how)
    if len(heads) > 1 and np.allclose(got, heads[-1]):  # review 07_jj: head overwritten
        return (
            "Your concatenation is d_k wide: did the loop keep only the last head? Append "
            "each head to a list, then np.concatenate(heads, axis=-1) @ W_o."
        )
    return ""


def weights_hint(got, maps: np.ndarray) -> str:
    """Name the heads' (n, n) weights laid side by side, ``got``, in place of their outputs."""
    want = merge_heads(maps)  # (n, h n)
    if got is None or got.shape != want.shape or not np.allclose(got, want):
        return ""
    return (
        f"Your concatenation has {want.shape[1]} columns, h x n: those are the heads' "
        "attention weights, (n, n) each. al.scaled_dot_product_attention returns (output, "
        "weights): keep the first, head_i, _ = al.scaled_dot_product_attention(...)."
    )


def review_slips(X, W_q, W_k, W_v, W_o, h: int) -> list[tuple]:
    """Keys from W_q, h written in as 2, an int buffer for the heads and an output cast to
    int, each with its hint."""
    d_k = X.shape[-1] // h
    Q, V = split_heads(X @ W_q, h), split_heads(X @ W_v, h)  # (h, n, d_k) each
    queries_as_keys = softmax(attention_scores(Q, Q) / np.sqrt(d_k)) @ V
    slips = [
        (
            merge_heads(queries_as_keys) @ W_o,
            "your keys came from W_q, so each head compared queries with queries. Take the "
            "keys from W_k: K_i = X @ W_k[:, cols].",
        )
    ]
    if h != 2 and X.shape[-1] % 2 == 0:
        slips.append(
            (
                multi_head_attention(X, W_q, W_k, W_v, W_o, h=2)[0],
                f"this is what h = 2 gives, but this case has h = {h}. Is h = 2 written in "
                "your function? Use the h it is given.",
            )
        )
    heads, _ = scaled_dot_product_attention(Q, split_heads(X @ W_k, h), V)  # (h, n, d_k)
    slips.append(
        (
            np.trunc(merge_heads(heads)) @ W_o,
            "the heads lost their fractions before W_o: 0.25 became 0. Was the array you "
            "filled with the heads made with np.zeros(..., dtype=int)? Keep the float "
            "dtype: np.zeros((n, d_model)) is float.",
        )
    )
    slips.append(
        (
            np.trunc(multi_head_attention(X, W_q, W_k, W_v, W_o, h=h)[0]),
            "the right numbers without their fractions: the output was cast to int. Keep "
            "the float dtype: no astype(int), no int(...).",
        )
    )
    slips += _query_and_divisor_slips(X, W_q, W_k, W_v, W_o, h)  # review 07_ss
    slips += value_block_slips(X, W_q, W_k, W_v, W_o, h)  # review 07_hh
    slips += overlap_slips(X, W_q, W_k, W_v, W_o, h)  # review 07_ii
    slips += swapped_kv_slips(X, W_q, W_k, W_v, W_o, h)  # review 07_kk
    slips += square_block_slips(X, W_q, W_k, W_v, W_o, h)  # review 07_qq
    slips += torch_layout_slips(X, W_q, W_k, W_v, W_o, h)  # review 07_rr
    return slips + merge_slips(heads, W_o)  # review 07_x: the interleaved merge


def _query_and_divisor_slips(X, W_q, W_k, W_v, W_o, h: int) -> list[tuple]:
    """Review 07_ss: the weights blend the queries, or the scores are divided by sqrt(h),
    the number of heads, instead of sqrt(d_k); both got the neutral fallback before."""
    d_k = X.shape[-1] // h
    Q, K, V = (split_heads(X @ W, h) for W in (W_q, W_k, W_v))  # (h, n, d_k) each
    scores = attention_scores(Q, K)  # (h, n, n)
    blends_queries = softmax(scores / np.sqrt(d_k)) @ Q  # (h, n, d_k)
    by_heads = softmax(scores / np.sqrt(h)) @ V  # (h, n, d_k)
    return [
        (
            merge_heads(blends_queries) @ W_o,
            "each head blended its queries: weights @ Q_i. The queries only ask, to make "
            "the scores; what the weights blend is the values, weights @ V_i.",
        ),
        (
            merge_heads(by_heads) @ W_o,
            f"you scaled by 1/sqrt(h) = 1/sqrt({h}), the number of heads. The divisor "
            "comes from the width of the vectors a head compares, d_k = d_model // h = "
            f"{d_k}: scale by 1/sqrt(d_k).",
        ),
    ]
