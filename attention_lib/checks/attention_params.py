"""Chapter 11 checker: how many numbers one attention block of the real model holds."""

from __future__ import annotations

import numbers
import re

import numpy as np

from .base import (
    CheckResult,
    check_number,
)

# --- Exercise: how many numbers in one attention block? ------------------------------------


def check_attention_params(
    answer, d_model: int = 384, h: int = 12, n_layers: int = 6, whole_model: int = 22_565_376
) -> CheckResult:
    """Check a predicted count of learned numbers in W_q, W_k, W_v, W_o and their biases.

    Each of the four projections is a ``(d_model, d_model)`` matrix plus a bias of
    ``d_model`` numbers; the count does not depend on ``h``. ``n_layers`` is the model's
    depth, only used to recognise a count of every layer's attention; ``whole_model``, the
    count ``model.n_params()`` prints (all-MiniLM-L6-v2's), to recognise that one.
    """
    matrix, bias = d_model * d_model, d_model
    expected = 4 * (matrix + bias)
    d_k = d_model // h
    mistakes = (
        (
            whole_model,
            "that is the whole model, word table included (model.n_params()); count "
            "only the four projections of one layer.",
        ),
        (
            4 * (d_model + 1) ** 2,
            f"(d_model + 1)^2 counts a bias row and a bias column: a projection is a "
            f"{d_model} x {d_model} matrix plus one bias of {d_model}, d_model^2 + d_model.",
        ),
        (
            4 * (matrix + d_k),
            f"each projection's bias has d_model = {d_model} numbers, one per output column, "
            f"not d_k = {d_k}.",
        ),
        (
            4 * matrix,
            "you counted the four matrices but not their biases: each has one "
            f"bias vector of d_model = {d_model} numbers.",
        ),
        (
            matrix + bias,
            f"that is one projection, {d_model} x {d_model} plus its bias; there are four "
            "(W_q, W_k, W_v and W_o): multiply by 4.",
        ),
        (4 * matrix + bias, "every projection has a bias of its own: four bias vectors."),
        (
            4 * matrix + 2 * bias,
            "you counted two biases; each of W_q, W_k, W_v and W_o has one, so count four.",
        ),
        (
            4 * matrix + 3 * bias,
            "you counted three biases; each of W_q, W_k, W_v and W_o has one, so count four.",
        ),
        (
            expected + 2 * d_model,
            "you added a layer norm's gamma and beta; they follow attention but are not "
            "part of the four projections.",
        ),
        (
            expected + 4 * d_model,
            "that is 4 x d_model too many: either two biases per projection (each has "
            "one), or you added both layer norms' gamma and beta, which are not part "
            "of the four projections.",
        ),
        (
            expected + 4 * d_model + 2 * d_model * 4 * d_model + 4 * d_model + d_model,
            "that is the whole layer, with the feed-forward network and both layer "
            "norms; count only W_q, W_k, W_v, W_o and their biases.",
        ),
        (
            2 * d_model * 4 * d_model + 4 * d_model + d_model,  # 1,181,568 here
            "that is the feed-forward network's count (W_1, W_2 and their biases); "
            "count only W_q, W_k, W_v, W_o and their biases.",
        ),
        (
            expected + 2 * d_model * 4 * d_model + 4 * d_model + d_model,  # 1,772,928
            "you added the feed-forward network (W_1, W_2 and their biases); count only "
            "W_q, W_k, W_v, W_o and their biases.",
        ),
        (3 * (matrix + bias), "you forgot W_o and its bias, the output projection."),
        (
            h * expected,
            f"you multiplied by h = {h}. The heads share the four matrices: each head "
            f"uses {d_k} columns of W_q, W_k, W_v and {d_k} rows of W_o.",
        ),
        (
            h * 4 * (d_k * d_k + d_k),
            f"that gives each head {d_k} x {d_k} matrices, but a head's slice of W_q, W_k "
            f"and W_v reads all {d_model} input numbers: {d_model} x {d_k}.",
        ),
        (
            whole_model + matrix + bias + 512,  # the Hugging Face page's 22.7 million
            "that is the Hugging Face page's count of the whole model, with an unused "
            "pooler and 512 stored position ids; count only the four projections of one "
            "layer.",
        ),
        (
            expected + matrix + bias,  # 739,200 here
            "you added the pooler, one more matrix and bias that this encoder never uses; "
            "count only W_q, W_k, W_v, W_o and their biases.",
        ),
        (4 * (d_model * d_k + d_k), f"that is one head's share; there are {h} heads."),
        (
            n_layers * expected,
            f"you counted all {n_layers} layers; the question asks for one.",
        ),
    )
    if isinstance(answer, str) and re.fullmatch(r"\s*\d{1,3}(,\d{3})+\s*", answer):  # "591,360"
        line = f"expected one number, got {answer!r}: remove the comma and quotes."
        result = CheckResult("attention_params", "FAIL", line)
        print(result.line)
        return result
    if isinstance(answer, np.ndarray) and answer.ndim == 0:  # np.array(591360.4)
        answer = answer[()]
    value = float(answer) if isinstance(answer, numbers.Real) else np.nan
    if np.isfinite(value) and abs(value - round(value)) > 1e-6:  # not float noise
        line = f"a count is a whole number; you gave {value!r}."  # unrounded: 591360.4
        result = CheckResult("attention_params", "FAIL", line)
        print(result.line)
        return result
    return check_number("attention_params", answer, expected, places=0, mistakes=mistakes)
