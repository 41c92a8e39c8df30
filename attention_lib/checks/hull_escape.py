"""Chapter 6 checker: a row of weights that sums to 1 yet blends to a point outside the
convex hull of the cards (it needs a weight below 0, which softmax never gives)."""

from __future__ import annotations

import numpy as np

from .base import CheckResult, fmt

_TAG = "hull escape"
_SUM_TOL = 1e-6  # "sums to 1", allowing for float noise in typed decimals
_OUT_TOL = 1e-7  # how far past the hull a blend must be to count as outside
_MARGIN = 0.01  # how far out a passing blend must be, so the escape shows on the page


def check_hull_escape(answer, points, *, tokens=None) -> CheckResult:
    """Check a row of weights ``answer`` that sums to 1 and puts ``answer @ points``
    outside the convex hull of the rows of ``points``.

    Parameters
    ----------
    answer : array_like of shape (n,)
        One weight per card (row of ``points``).
    points : array_like of shape (n, 2)
        The cards, in the two plotted dimensions.
    tokens : sequence of str, optional
        The cards' names, for the hints.

    Notes
    -----
    The hints name the usual slips: a point or a matrix in place of one row, the wrong
    number of weights, weights that escape only because they do not sum to 1 (like the
    doubled row), weights that are all 0 or more (a convex combination, so the blend
    stays inside), and a negative weight too small to push the blend out.
    """
    result = _judge(answer, points, tokens)
    print(result.line)
    return result


def _judge(answer, points, tokens) -> CheckResult:
    def fail(message: str) -> CheckResult:
        return CheckResult(_TAG, "FAIL", message)

    if answer is None:
        return CheckResult(_TAG, "TODO", "replace None with your weights, then run again.")
    try:
        P = np.asarray(points, dtype=float)
    except (TypeError, ValueError):
        P = np.empty((0,))
    if P.ndim != 2 or P.shape[1] != 2 or len(P) == 0:
        return fail(
            f"the cards P must have shape (n, 2), got shape {P.shape}: run the cell that makes P."
        )
    n = len(P)
    names = (
        list(tokens) if tokens is not None and len(tokens) == n else [f"card {j}" for j in range(n)]
    )
    if isinstance(answer, (str, bytes, dict, set)):
        return fail(f"expected {n} numbers, one weight per card, got {type(answer).__name__}.")
    try:
        w = np.asarray(answer, dtype=float)
    except (TypeError, ValueError):
        return fail(f"expected {n} numbers, one weight per card, got {answer!r:.60}.")
    if np.asarray(answer).dtype.kind == "b":
        return fail(f"expected {n} numbers, one weight per card, got True/False values.")
    if w.shape != (n,):
        if w.shape == (2,):
            hint = (
                "that looks like a point; give the weights instead, one per card "
                f"({n} numbers): the checker works out my_weights @ P itself."
            )
        elif w.ndim == 0:
            hint = f"expected {n} weights, one per card, got one number."
        elif w.ndim == 2:
            hint = f"expected one row of {n} weights, got shape {w.shape}."
        else:
            hint = f"expected {n} weights, one per card ({', '.join(names)}), got shape {w.shape}."
        return fail(hint)
    if not np.all(np.isfinite(w)):
        return fail("your weights hold nan or inf: give finite numbers.")
    blend, total = w @ P, w.sum()
    point = f"({blend[0]:.2f}, {blend[1]:.2f})"
    out = _outside(blend, P)
    if abs(total - 1) > _SUM_TOL:
        if out and w.min() < 0:  # the right idea already: only the sum is off
            return fail(f"your weights sum to {total:.4g}; make them sum to exactly 1.")
        if out and total > 1:
            return fail(
                f"your blend {point} escapes, but your weights sum to {total:.4g}, not 1, "
                "like the doubled row. Keep the sum at 1: what else can push a blend out?"
            )
        if out:
            return fail(
                f"weights must sum to 1, as softmax rows do; yours sum to {total:.4g}, "
                f"and that alone moves the blend to {point}."
            )
        return fail(
            f"your weights sum to {total:.4g}; make them sum to 1, as softmax rows do "
            f"(this blend stays inside, at {point})."
        )
    negative = [names[j] for j in np.flatnonzero(w < 0)]
    if not negative:
        return fail(
            f"all your weights are 0 or more and sum to 1: a convex combination, so the "
            f"blend {point} stays inside the hull, as every softmax row's does. Which kind "
            "of weight can softmax never give?"
        )
    who = ("weights on '" if len(negative) > 1 else "weight on '") + "', '".join(negative)
    if not out:
        return fail(
            f"your {who}' {'are' if len(negative) > 1 else 'is'} negative, yet the blend "
            f"{point} is still inside the hull. Push harder: more weight below 0, and "
            "more than 1 on a corner on the far side."
        )
    excess = _excess(blend, P)
    if excess <= _MARGIN:
        return fail(
            f"your blend {point} is only {excess:.1g} outside the hull: on the page it sits "
            f"on the hull's edge. Push it out by more than {_MARGIN}: more weight below 0."
        )
    line = (
        f"your weights sum to 1 and put the blend at {point}, outside the hull; the "
        f"negative {who}' did it (weights {fmt(w, 3)})."
    )
    return CheckResult(_TAG, "PASS", line)


def _outside(point: np.ndarray, P: np.ndarray) -> bool:
    """True if ``point`` lies outside the convex hull of the rows of ``P`` (2-D)."""
    return _excess(point, P) > _OUT_TOL


def _excess(point: np.ndarray, P: np.ndarray) -> float:
    """How far ``point`` lies beyond the convex hull of the rows of ``P`` (2-D); <= 0 inside.

    It is outside exactly when some direction ``u`` sees it beyond every card,
    ``u · point > max_j u · P_j``. The hull's edge normals are enough to find one; for a
    hull that is a segment, the direction along it; for a single point, towards ``point``.
    """
    pairs = (P[:, None, :] - P[None, :, :]).reshape(-1, 2)  # every pair's direction
    normals = pairs @ np.array([[0.0, 1.0], [-1.0, 0.0]])  # each turned a quarter
    dirs = np.concatenate([pairs, normals, point - P])
    length = np.linalg.norm(dirs, axis=1)
    dirs = dirs[length > 1e-12] / length[length > 1e-12, None]
    if len(dirs) == 0:  # the point is every card
        return 0.0
    return float(np.max(dirs @ point - (dirs @ P.T).max(axis=1)))


def _reference(points) -> np.ndarray:
    """A row that escapes: weight 2 on the corner farthest from the mean, less 1/n on
    every card (sum 1), which lands at twice that corner minus the mean card."""
    P = np.asarray(points, dtype=float)
    far = int(np.argmax(np.linalg.norm(P - P.mean(axis=0), axis=1)))
    return 2 * np.eye(len(P))[far] - np.full(len(P), 1 / len(P))
