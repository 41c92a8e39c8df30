"""Chapter 4 checker helper: name the divisor behind scores that are all off by one factor.

Review 04ss: ``Q @ K.T / np.sqrt(d_k - 1)`` got only "check the divisor". Every score is
then off by the same factor, and the divisor used is √d_k over that factor. When its
square is a whole number, that number is compared with the sizes the learner could have
read from the shapes (d_k ± 1, Q.size, K.size) and named.
"""

from __future__ import annotations


def divisor_said(root: float, factor: float, n_q: int | None = None, n_k: int | None = None) -> str:
    """A sentence naming the divisor used, given √d_k and the factor every score is off by.

    ``root`` is the right divisor √d_k; ``factor`` is (learner's score) / (right score),
    so the learner divided by ``root / factor``. ``n_q`` and ``n_k`` name Q.size and K.size.
    """
    used = root / factor
    d_k = round(root**2)
    right = f"here √d_k = √{d_k} = {root:g}."
    square = used**2
    whole = round(square)
    if whole < 1 or abs(square - whole) > 1e-6 * square:  # not a root of a whole number
        return f"You divided by about {used:.4g}; {right}"
    names = {d_k - 1: "d_k − 1", d_k + 1: "d_k + 1"}
    if n_q:
        names[n_q * d_k] = f"n_q·d_k = {n_q}·{d_k}, Q.size"
    if n_k:
        names[n_k * d_k] = f"n_k·d_k = {n_k}·{d_k}, K.size"
    named = f", the root of {names[whole]}" if whole in names else ""
    return f"You divided by √{whole} = {used:.4g}{named}; {right}"
