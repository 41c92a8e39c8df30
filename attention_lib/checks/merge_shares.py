"""Chapter 9 merge checker: the slips that divide each block by its own ℓ before adding."""

from __future__ import annotations

import numpy as np


def divided_early(a, b, l_a, o_a, l_b, o_b) -> list[tuple[np.ndarray, str]]:
    """Each block normalised on its own, then added: wrong answers and what they mean.

    ``a`` and ``b`` are the factors e^(m_block - m) as (n_q, 1) columns, ``l_a``, ``l_b``
    the blocks' ℓ as columns and ``o_a``, ``o_b`` their (n_q, d_v) sums.
    """
    share = (
        "each block's share is its rescaled ℓ over the total, e^(m_block - m) ℓ_block / "
        "(e^(m_a - m) ℓ_a + e^(m_b - m) ℓ_b), not its factor alone: merge the sums, "
        "divide once at the end."
    )
    return [
        (
            o_a / l_a + o_b / l_b,
            "you divided each block by its own ℓ and added, so the weights sum to 2: "
            "merge the sums first, divide once at the end.",
        ),
        (
            a * o_a / l_a + b * o_b / l_b,
            f"you divided each block by its own ℓ, then added: {share}",
        ),
    ]
