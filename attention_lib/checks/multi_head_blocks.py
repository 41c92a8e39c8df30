"""Chapter 7 checker, review 07_qq: a d_k x d_k block of W_o applied to each head before
the concatenation (``multi_head_slips.review_slips`` adds these to its list; the head's
own diagonal block, W_o[c, c], is named in ``multi_head_mistakes.py``)."""

from __future__ import annotations

import numpy as np

from ..core import scaled_dot_product_attention
from ..heads import split_heads


def square_block_slips(X, W_q, W_k, W_v, W_o, h: int) -> list[tuple]:
    """Each head times a square block of W_o that is not its own diagonal block, then the
    products concatenated: the concatenation times a block-diagonal matrix."""
    d_k = X.shape[-1] // h
    if h == 1:  # the one block is the whole W_o: right
        return []
    heads, _ = scaled_dot_product_attention(*(split_heads(X @ W, h) for W in (W_q, W_k, W_v)))
    first = slice(0, d_k)
    blocks = [slice(i * d_k, (i + 1) * d_k) for i in range(h)]
    own_rows = [(c, first) for c in blocks]  # head i's rows, the first d_k columns
    own_cols = [(first, c) for c in blocks]  # the first d_k rows, head i's columns
    cases = (  # (rows, columns) of W_o that head i met
        ("W_o[:d_k, :d_k], the same top-left block for every head", [(first, first)] * h),
        ("W_o[i*d_k:(i+1)*d_k, :d_k], its rows but only the first d_k columns", own_rows),
        ("W_o[:d_k, i*d_k:(i+1)*d_k], the first d_k rows and its own columns", own_cols),
    )
    return [
        (
            np.concatenate([heads[i] @ W_o[r, c] for i, (r, c) in enumerate(rc)], axis=-1),
            f"each head was multiplied by a d_k x d_k block of W_o, {which}, before the "
            "concatenation. That is the concatenation times a block-diagonal matrix: output "
            "column j then reads only the head whose block holds j. W_o is (h*d_k, d_model) "
            "and mixes every head: concatenate first, then @ W_o (or sum head_i @ W_o[i*d_k:"
            "(i+1)*d_k], all d_model columns).",
        )
        for which, rc in cases
    ]
