"""Chapter 7 checker: wrong ways to merge the heads back into one (n, d_model) array.

Kept apart from ``multi_head_mistakes.py``, which lists the slips before the merge.
"""

from __future__ import annotations

import numpy as np


def merge_slips(heads: np.ndarray, W_o: np.ndarray) -> list[tuple]:
    """Merges of the right heads, (h, n, d_k), that put their columns in the wrong place."""
    h, n, _ = heads.shape
    if h < 2:
        return []
    # np.stack(heads, axis=-1).reshape(n, -1): (n, d_k, h), so column j*h + i is head i's j
    interleaved = np.stack(list(heads), axis=-1).reshape(n, -1)
    return [
        (
            interleaved @ W_o,
            "stacking the heads on a new last axis, np.stack(heads, axis=-1), then "
            "reshaping interleaves them: column 0 of every head first, then column 1. "
            "Concatenate instead, np.concatenate(heads, axis=-1), so head i keeps its "
            "block of d_k columns.",
        )
    ]
