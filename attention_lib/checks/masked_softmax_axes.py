"""Chapter 8 checker hints: a masked softmax whose max or sum lost ``keepdims``."""

from __future__ import annotations

import numpy as np


def _keepdims_mistakes(scores, full, case: str) -> list[tuple]:
    """A row's max or sum taken without keepdims=True: it lines up with the *last* axis."""
    logits = np.where(full, scores, -np.inf)
    if logits.ndim < 2 or logits.shape[-2] != logits.shape[-1]:
        return []  # (n_k,) has nothing to misalign; other shapes raise, and call() says why
    top = logits.max(axis=-1)  # (..., n_q): no keepdims
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    with np.errstate(all="ignore"):
        shifted = np.exp(logits - top)  # row maxima subtracted along the keys instead
        wrong_max = shifted / shifted.sum(axis=-1, keepdims=True)
        by_column = np.exp(logits - logits.max(axis=-2, keepdims=True))  # each key's max
        by_column /= by_column.sum(axis=-1, keepdims=True)
    return [
        (
            e / e.sum(axis=-1),
            f"each row was divided by the wrong sum (on {case}): e.sum(axis=-1) without "
            "keepdims=True has shape (..., n_q), so it lines up with the keys axis and key j "
            "is divided by row j's sum. Write e.sum(axis=-1, keepdims=True).",
        ),
        (
            wrong_max,
            f"the shift went down the wrong axis (on {case}): logits.max(axis=-1) without "
            "keepdims=True subtracts row j's maximum from key j of every row. Write "
            "logits.max(axis=-1, keepdims=True).",
        ),
        (
            by_column,
            f"the shift took each column's maximum (on {case}): max(axis=-2) or axis=0 runs "
            "over the queries, and a different shift per key changes the weights. Take each "
            "row's maximum over the keys: max(axis=-1, keepdims=True).",
        ),
    ]


def _lost_keepdims(out, scores, full) -> bool:
    """Whether ``out`` is the softmax with keepdims dropped from both the max and the sum: on
    square scores the (..., n_q) results line up with the keys and broadcast silently."""
    logits = np.where(full, scores, -np.inf)
    if logits.ndim < 2 or logits.shape[-2] != logits.shape[-1]:
        return False
    with np.errstate(all="ignore"):
        e = np.exp(logits - logits.max(axis=-1))
        slip = e / e.sum(axis=-1)
    return bool(np.allclose(out, slip, equal_nan=True))
