"""The geometry behind chapter 6's hull figure: the convex hull of 2-D points, and whether
a point lies inside it. Public, so a notebook can assert what the figure shows.
"""

from __future__ import annotations

import numpy as np

from ..validate import as_float_array

_EPS = 1e-9


def convex_hull(points) -> np.ndarray:
    """Indices of the corners of the convex hull of 2-D points, counter-clockwise.

    Parameters
    ----------
    points : array_like of shape (m, 2)

    Returns
    -------
    ndarray of int, shape (c,)
        Corners only: a point in the middle of a straight edge is not a corner.

    Notes
    -----
    Andrew's monotone chain: sort the points by x (then y), build the lower and the
    upper chain, and drop every point where the chain does not turn left.
    """
    P = _points(points, "points")
    order = sorted(range(len(P)), key=lambda i: (P[i, 0], P[i, 1]))
    if np.allclose(P, P[order[0]]):
        return np.array([order[0]])

    def chain(indices):
        kept: list[int] = []
        for i in indices:
            while len(kept) >= 2 and _cross(P[kept[-2]], P[kept[-1]], P[i]) <= _EPS:
                kept.pop()
            kept.append(i)
        return kept[:-1]  # the last point starts the other chain

    return np.array(chain(order) + chain(order[::-1]))


def inside_hull(point, points) -> bool:
    """True if ``point`` lies inside the convex hull of ``points`` or on its boundary.

    Parameters
    ----------
    point : array_like of shape (2,)
    points : array_like of shape (m, 2)
    """
    p = as_float_array(point, "point")
    if p.shape != (2,):
        raise ValueError(f"point must have shape (2,), got shape {p.shape}")
    P = _points(points, "points")
    corners = P[convex_hull(P)]  # (c, 2), counter-clockwise
    if len(corners) < 3:  # a single point or a segment: test the distance to it
        a, b = corners[0], corners[-1]
        t = 0.0 if np.allclose(a, b) else np.clip((p - a) @ (b - a) / ((b - a) @ (b - a)), 0, 1)
        return bool(np.linalg.norm(a + t * (b - a) - p) <= 1e-7)
    edges = zip(corners, np.roll(corners, -1, axis=0), strict=True)
    return all(_cross(a, b, p) >= -1e-7 for a, b in edges)  # left of every edge, or on it


def _points(points, name: str) -> np.ndarray:
    P = as_float_array(points, name, min_ndim=2)
    if P.ndim != 2 or P.shape[1] != 2:
        raise ValueError(f"{name} must have shape (m, 2), got shape {P.shape}")
    return P


def _cross(o, a, b) -> float:
    """z of (a - o) x (b - o): positive when o -> a -> b turns left (counter-clockwise)."""
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))
