r"""Chapter 10 checker helper: a scale typed in as a number, where 1 / √d_k belongs.

A learner who writes ``s = 0.5`` (1/√4, the width of the small test inputs) passes every
case where d_k = 4; ``s = 0.25`` (1/√16, the chapter's width) looks, at d_k = 4, exactly
like the scale applied twice (1/d_k). A case with another width catches the first, and a
probe at d_k = 9 tells the second apart from a scale computed from the input.
"""

from __future__ import annotations

import numpy as np

from ..backward import attention_backward as _reference
from .base import ATOL

WIDTHS = (4, 16)  # the test inputs' d_k, and the chapter's d_k = d_model


def typed_in(width: int, d_k: int) -> str:
    """The hint for a scale fixed at 1/√width, on a case whose own d_k differs."""
    s = 1 / np.sqrt(width)
    return (
        f"dQ and dK use a scale fixed at {s:g} = 1/√{width}, a typed-in width: here "
        f"d_k = {d_k}. Compute it from the input: s = 1 / np.sqrt(K.shape[-1])."
    )


def typed_slips(qk, d_k: int) -> list:
    """``(pair, hint)`` for each typed-in scale that differs here from 1/√d_k and 1/d_k.

    ``qk(scale=...)`` returns the right ``(dQ, dK)`` with that scale in place of 1/√d_k."""
    return [(qk(scale=1 / np.sqrt(w)), typed_in(w, d_k)) for w in WIDTHS if w not in (d_k, d_k**2)]


def probed_scale(fn) -> float | None:
    """The scale ``fn`` applies to dQ on a 9-wide probe (1/√9 is right), or None."""
    rng = np.random.default_rng(9)
    Q, K, V = rng.normal(size=(1, 2, 9)), rng.normal(size=(1, 3, 9)), rng.normal(size=(1, 3, 2))
    dOut = rng.normal(size=(1, 2, 2))
    try:
        dQ = np.asarray(fn(Q, K, V, dOut)[0], dtype=float)
    except Exception:  # noqa: BLE001 - any failure means: no answer from the probe
        return None
    right = _reference(Q, K, V, dOut)[0]
    norm = float(np.sum(right * right))
    if dQ.shape != right.shape or norm == 0:
        return None
    c = float(np.sum(dQ * right)) / norm  # dQ = c * right, if the slip is only a scale
    return c / 3 if np.allclose(dQ, c * right, atol=ATOL) else None


def twice_or_typed(fn, d_k: int, twice: str) -> str:
    """At d_k = 4, 1/d_k is also 1/√16 typed in: the probe tells which, else ``twice``."""
    if d_k == 4:
        s = probed_scale(fn)
        if s is not None and np.isclose(s, 0.25):
            return typed_in(16, d_k)
    return twice
