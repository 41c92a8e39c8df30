"""Chapter 4: what the width ``d_k`` does to the scores of random queries and keys.

Each function runs one of the chapter's measurements over many random "sentences", so
that the chapter's cells show the idea and the numbers rather than the bookkeeping.
Queries and keys are standard normal, the unit-variance reference case; a seed makes
every run give the same numbers.
"""

from __future__ import annotations

import numpy as np

from ..backward import softmax_jacobian
from ..core import attention_scores, softmax
from ..validate import check_positive_int


def random_scores(d_ks, *, n: int = 16, sentences: int = 100, seed: int = 0):
    """Yield ``(d_k, raw)`` for each width: the raw scores ``Q Kᵀ`` of random sentences.

    Parameters
    ----------
    d_ks : sequence of int
        The widths, in order; one draw of ``sentences`` sentences each, from one generator.
    n : int, default 16
        Tokens per sentence (queries and keys alike).
    sentences : int, default 100
    seed : int, default 0

    Yields
    ------
    d_k : int
    raw : ndarray of shape (sentences, n, n)
    """
    n = check_positive_int(n, "n")
    sentences = check_positive_int(sentences, "sentences")
    widths = [check_positive_int(d_k, "each d_k") for d_k in d_ks]
    rng = np.random.default_rng(seed)
    for d_k in widths:
        Q, K = rng.normal(size=(2, sentences, n, d_k))  # (sentences, n, d_k) each
        yield d_k, attention_scores(Q, K)  # (sentences, n, n)


def sharpness(d_ks, *, n: int = 16, sentences: int = 100, seed: int = 0, scale=None) -> dict:
    """How peaky softmax rows are at each width, raw and scaled by ``1/sqrt(d_k)``.

    ``scale(d_k)`` replaces the factor ``1/sqrt(d_k)`` when given, e.g.
    ``scale=lambda d_k: 1 / d_k`` to divide by the width itself.

    Returns
    -------
    dict of str to ndarray of shape (len(d_ks),)
        ``raw_max`` and ``scaled_max``: the largest weight of a row, averaged over rows;
        ``raw_entropy`` and ``scaled_entropy``: the entropy of a row in nats, averaged.
    """
    if scale is None:
        scale = lambda d_k: 1 / np.sqrt(d_k)  # noqa: E731
    elif not callable(scale):
        raise TypeError(f"scale must be a function of d_k, such as np.sqrt; got {scale!r}")
    found = {key: [] for key in ("raw_max", "scaled_max", "raw_entropy", "scaled_entropy")}
    for d_k, raw in random_scores(d_ks, n=n, sentences=sentences, seed=seed):
        for name, logits in (("raw", raw), ("scaled", raw * scale(d_k))):
            w = softmax(logits)  # (sentences, n, n): one distribution per query
            found[f"{name}_max"].append(w.max(axis=-1).mean())
            logs = np.log(np.where(w > 0, w, 1.0))  # log 1 = 0 where a weight is 0
            found[f"{name}_entropy"].append(-(w * logs).sum(axis=-1).mean())
    return {key: np.array(values) for key, values in found.items()}


def gradient_sizes(d_ks, *, n: int = 16, sentences: int = 100, seed: int = 0):
    """How much gradient each softmax row passes back to the raw scores, at each width.

    The size of a row is the Frobenius norm of the softmax Jacobian ``d weights / d
    logits``. The scaled path feeds ``raw / sqrt(d_k)`` to softmax, so the chain rule
    multiplies its Jacobian by ``1/sqrt(d_k)``; both sizes are per *raw* score.

    Returns
    -------
    raw, scaled : ndarray of shape (len(d_ks), sentences * n)
        One size per width and row.
    committed : ndarray of shape (len(d_ks),)
        The share of raw rows with one weight above 0.99.
    """
    sizes = {"raw": [], "scaled": []}
    committed = []
    for d_k, raw in random_scores(d_ks, n=n, sentences=sentences, seed=seed):
        for name, c in (("raw", 1.0), ("scaled", 1 / np.sqrt(d_k))):
            w = softmax(c * raw).reshape(-1, raw.shape[-1])  # (rows, n): every row
            J = softmax_jacobian(w)  # (rows, n, n): d weights / d logits
            size = np.linalg.norm(J, axis=(-2, -1))  # (rows,): one size per row
            sizes[name].append(c * size)  # chain rule through c * raw
        committed.append((softmax(raw).max(axis=-1) > 0.99).mean())
    return np.array(sizes["raw"]), np.array(sizes["scaled"]), np.array(committed)


def nudged_rows(d_k: int, nudge: float, *, rows: int = 1000, n: int = 16, seed: int = 0):
    """Random rows of raw scores, and the same rows with each runner-up raised by ``nudge``.

    Returns
    -------
    raw, nudged : ndarray of shape (rows, n)
        One query against its own ``n`` keys per row.
    """
    d_k = check_positive_int(d_k, "d_k")
    rows = check_positive_int(rows, "rows")
    n = check_positive_int(n, "n")
    if n < 2:
        raise ValueError(f"a row needs a runner-up: n must be at least 2, got {n}")
    rng = np.random.default_rng(seed)
    Q = rng.normal(size=(rows, 1, d_k))  # one query per row...
    K = rng.normal(size=(rows, n, d_k))  # ...each with n keys of its own
    raw = attention_scores(Q, K)[:, 0]  # (rows, n)
    second = np.argsort(raw, axis=-1)[:, -2]  # each row's runner-up
    nudged = raw.copy()
    nudged[np.arange(rows), second] += nudge
    return raw, nudged
