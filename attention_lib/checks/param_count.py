"""Chapter 7 checker: how many parameters multi-head attention holds."""

from __future__ import annotations

import numpy as np

from ..heads import multi_head_attention
from .base import (
    CheckResult,
    check_number,
)

#: The tokens of the chapter's shape tracer, whose multiply-adds the cost section totals.
_TRACED_TOKENS = 6

# --- Exercise: how many parameters? --------------------------------------------------------


def check_param_count(answer, d_model: int = 32, h: int = 8) -> CheckResult:
    """Check a predicted number of learned numbers in ``W_q, W_k, W_v, W_o`` (no biases).

    The expected count is read off the four ``(d_model, d_model)`` matrices that
    :func:`multi_head_attention` takes; it does not depend on ``h``.
    """
    Ws = [np.zeros((d_model, d_model)) for _ in range(4)]  # W_q, W_k, W_v, W_o
    multi_head_attention(np.zeros((1, d_model)), *Ws, h=h)  # these shapes are the contract
    expected = sum(W.size for W in Ws)
    d_k = d_model // h
    per_matrix = d_model * d_model
    mistakes = (
        (3 * per_matrix, "you counted W_q, W_k and W_v but forgot W_o, the output projection."),
        (
            h * expected,
            f"you multiplied by h = {h}. The heads do not have matrices of their own: "
            f"each head uses a d_k = {d_k}-wide slice of the same four matrices.",
        ),
        (
            4 * d_model * d_k,
            f"that is 4 x {d_model} x {d_k} (a {d_model} x {d_k} slice per matrix) or "
            f"{h} x 4 x {d_k} x {d_k} (a {d_k} x {d_k} matrix per head and weight). Each "
            f"matrix is {d_model} x {d_model} whatever h is: the {h} slices of width "
            f"d_k = {d_k} sit side by side and fill it.",
        ),
        (per_matrix, "that is one matrix; there are four: W_q, W_k, W_v and W_o."),
        (
            2 * per_matrix,
            f"that is two of the four matrices, 2 x {d_model} x {d_model}. Count W_q, W_k, "
            "W_v and W_o.",
        ),
        (
            h * d_k * d_k,
            f"that is {h} x {d_k} x {d_k}: a {d_k} x {d_k} block per head, in one matrix. "
            f"Each head's slice is {d_model} x {d_k}, and there are four matrices of "
            f"{d_model} x {d_model}."
            + (
                f" Or 4 x {d_model}: four vectors of length {d_model}, the size of "
                "biases, which this layer does not have."
                if h * d_k * d_k == 4 * d_model
                else ""
            ),
        ),
        (expected + 4 * d_model, "that counts biases too; this layer has none."),
        (
            3 * per_matrix + d_model,
            f"that is three {d_model} x {d_model} matrices plus one bias vector of "
            f"{d_model}. This layer has no biases, and four matrices: W_q, W_k, W_v and W_o.",
        ),
        (
            2 * expected,
            f"that is twice the count, eight {d_model} x {d_model} matrices. There are "
            "four, W_q, W_k, W_v and W_o, and every head uses slices of them.",
        ),
        (
            d_model * expected,
            f"that is 4 x {d_model}^3, {d_model} times too many: each matrix holds "
            f"{d_model} x {d_model} = {per_matrix:,} numbers.",
        ),
        (
            4 * expected,
            f"that is 4 x 4 x {d_model} x {d_model}: you multiplied by 4 twice. The four "
            f"matrices hold {d_model} x {d_model} numbers each, so 4 x {d_model} x {d_model}.",
        ),
        *(
            (
                vectors * d_model,
                f"that is {vectors} x {d_model}: it counts only vectors of length {d_model}, "
                f"the size of biases, which this layer does not have. Count the matrices: "
                f"W_q, W_k, W_v and W_o are {d_model} x {d_model} each.",
            )
            for vectors in (4, 5)  # the four biases alone, or with one more
        ),
        (
            4 * _TRACED_TOKENS * per_matrix + 2 * _TRACED_TOKENS**2 * d_model,
            "that is the multiply-add count of the cost section, not the number of "
            "parameters: count the learned numbers in W_q, W_k, W_v and W_o.",
        ),
    )
    if d_model != 512:
        base = 4 * 512 * 512
        mistakes += (
            (
                base,
                f"that is the count for d_model = 512, the next question. Here d_model "
                f"= {d_model}: count four {d_model} x {d_model} matrices.",
            ),
        )
    return check_number("param_count", answer, expected, places=0, mistakes=mistakes)
