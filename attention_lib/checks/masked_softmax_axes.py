"""Chapter 8 checker hints: a max or sum that lost ``keepdims``, one shift for all rows,
scores scaled a second time."""

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


def _why_large(fn) -> str:
    """Why allowed scores near +-1000 gave nan: no shift, or one shift for all rows. A probe
    tells them apart: rows near 700 and -50 need no shift, but one of 701 underflows row 2."""
    try:
        with np.errstate(all="ignore"):
            probe = fn(np.array([[700.0, 701.0], [-50.0, -49.0]]), np.ones((2, 2), dtype=bool))
        one_shift = not np.all(np.isfinite(np.asarray(probe, dtype=float)))
    except Exception:  # noqa: BLE001 - a probe only chooses the hint; the case already failed
        one_shift = False
    if one_shift:
        return (
            "you shifted by one maximum for the whole array, so a row far below it "
            "(-1000 against 1001) underflows to 0 / 0. Shift by each row's own maximum "
            "(axis=-1, keepdims=True)."
        )
    return (
        "exp(1000) overflows to inf and exp(-1000) underflows to 0, so without "
        "the shift a row divides inf by inf or 0 by 0."
    )


def _rescaled_mistakes(out, scores, full, case: str) -> list[tuple]:
    """Scores scaled again (by 1 / sqrt(d_k), say): ``out`` is the masked softmax of
    ``c * scores``, with ``c`` fitted to the log-weights of the allowed keys."""
    s = np.broadcast_to(scores, full.shape)
    with np.errstate(all="ignore"):
        log_w = np.log(np.asarray(out, dtype=float))
        use = full & np.isfinite(log_w) & (np.abs(s) < 1e3)
        k = np.maximum(use.sum(axis=-1, keepdims=True), 1)
        ds = np.where(use, s - np.where(use, s, 0.0).sum(-1, keepdims=True) / k, 0.0)
        dl = np.where(use, log_w - np.where(use, log_w, 0.0).sum(-1, keepdims=True) / k, 0.0)
        c = (ds * dl).sum() / (ds * ds).sum()
        if not np.isfinite(c) or c <= 0 or np.isclose(c, 1.0):
            return []
        logits = np.where(full, c * s, -np.inf)
        e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return [
        (
            e / e.sum(axis=-1, keepdims=True),
            f"the weights are a softmax of the scores divided by {1 / c:.3g} (on {case}): "
            "the scores are already scaled, so do not divide by sqrt(d_k) again. Mask them "
            "and take the softmax as they are.",
        )
    ]
