"""Chapter 11 checker: does an answer that passed leave ``b_k`` out?

``b_k`` adds the same number, ``q . b_k``, to every score in query ``q``'s row, and softmax
ignores such a shift, so an answer without ``b_k`` passes. The checker then adds a note. It
cannot tell from the output alone, nor from whether ``layer.b_k`` was read (a learner may read
it and then drop it), so it asks once more with a ``b_k`` of NaN: any use of ``b_k`` spreads
the NaN (or raises), while an answer without it stays finite and right.
"""

from __future__ import annotations

import contextlib
import io
import warnings

import numpy as np


def skips_b_k(fn, wrap, layer, reference) -> bool:
    """True if ``fn(X, layer, h)`` gives the right output when ``b_k`` is NaN.

    ``wrap`` builds the layer the learner gets from its eight arrays; ``reference(X, layer,
    h)`` is the right answer (which does not depend on ``b_k``).
    """
    X = np.random.default_rng(13).normal(size=(4, len(layer.W_q)))  # (n, d_model)
    nan_b_k = layer._replace(b_k=np.full_like(layer.b_k, np.nan))
    quiet = contextlib.redirect_stdout(io.StringIO())  # the learner's prints, a 2nd time
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings(), quiet:
            warnings.simplefilter("ignore")
            out = np.asarray(fn(X, wrap(*(a.copy() for a in nan_b_k)), 2), dtype=float)
    except (Exception, SystemExit):  # noqa: BLE001 - NaN made it raise: it used b_k
        return False
    right = reference(X, layer, 2)
    return out.shape == right.shape and bool(np.isfinite(out).all() and np.allclose(out, right))
