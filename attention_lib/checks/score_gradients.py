r"""Chapter 10 checker: the gradients of the queries and keys, from that of the scores.

With :math:`S = Q K^\top s` and :math:`s = 1/\sqrt{d_k}`, the learner returns
:math:`dQ = s\, dS\, K` and :math:`dK = s\, dS^\top Q`. The usual slips each get their own
hint: the scale left out (of both, or of one), divided by :math:`d_k` or multiplied by
:math:`\sqrt{d_k}`, a count of keys or queries under the root, a width typed in (1/√16
or 1/2), a missing transpose, ``Q`` and ``K`` swapped, ``.T`` or a fixed axis list on a
batch, the pair returned as ``(dK, dQ)`` (at any scale), and a flipped sign.
"""

from __future__ import annotations

import numpy as np

from .base import (
    _LAST,  # the learner's answer with its dtype kind, as returned (before becoming floats)
    ATOL,
    BROADCAST_HINT,
    Cases,
    CheckResult,
    Fail,
    difference,
    known_mistakes,
    same,
    unseen_cases,
    verdict,
)

# --- Exercise: dQ and dK from the gradient of the scores ------------------------------------


def _grad_QK(Q, K, dS, *, scale=None, swap=False, transpose=True) -> np.ndarray:
    """dQ and dK of S = Q Kᵀ s, stacked along the rows: (..., n_q + n_k, d_k).

    The keywords build the usual slips: ``scale`` other than 1/sqrt(d_k), ``swap``
    (Q and K trade places), ``transpose=False`` (dS instead of dSᵀ for dK).
    """
    s = 1 / np.sqrt(K.shape[-1]) if scale is None else scale
    dS_T = np.swapaxes(dS, -1, -2) if transpose else dS
    dQ, dK = (s * (dS @ Q), s * (dS_T @ K)) if swap else (s * (dS @ K), s * (dS_T @ Q))
    return np.concatenate([dQ, dK], axis=-2)


def _slip(Q, K, dS, **slip):
    """:func:`_grad_QK` with a slip, or None where the slip's shapes do not fit."""
    try:
        return _grad_QK(Q, K, dS, **slip)
    except ValueError:
        return None


def _scale_used(fn):
    """The scale ``fn`` applies to dQ on a 3-wide probe, or None if that cannot be told.

    On a 4-wide case, 1/d_k and a hard-coded 1/√16 (the chapter's width) agree; the
    probe tells them apart.
    """
    rng = np.random.default_rng(0)
    Q, K, dS = rng.normal(size=(2, 3)), rng.normal(size=(2, 3)), rng.normal(size=(2, 2))
    try:
        dQ = np.asarray(fn(Q, K, dS)[0], dtype=float)
    except Exception:  # noqa: BLE001 - any failure means: no answer from the probe
        return None
    unscaled = dS @ K
    if dQ.shape != unscaled.shape:
        return None
    s = float(np.sum(dQ * unscaled) / np.sum(unscaled * unscaled))
    return s if np.allclose(dQ, s * unscaled, atol=ATOL) else None


_SWAPPED = "you returned (dK, dQ): the checker expects the pair in the order (dQ, dK)"


def _factor(got, right):
    """The number c with got = c * right, or None if there is none (or right is 0)."""
    norm = float(np.sum(right * right))
    if got.shape != right.shape or norm == 0:
        return None
    c = float(np.sum(got * right)) / norm
    return c if np.allclose(got, c * right, atol=ATOL) else None


def same_or_factor(out, right, case: str, formula: str) -> None:
    """``same``, but a constant factor (2x, 0.5x) or an integer dtype is named."""
    last, name = _LAST.get(), formula.split(" =")[0]
    if last and last[0] is out and last[1] in "iu" and not np.allclose(out, right, atol=ATOL):
        raise Fail(
            f"your array is integer (on {case}): each entry of {name} was cut to a whole "
            f"number. Keep {name} in floats: no int cast, no integer array to fill."
        )
    if np.shape(out) == np.shape(right) and not np.any(out) and np.any(right):
        raise Fail(f"{name} is all zeros (on {case}): did you return before computing it?")
    c = _factor(np.asarray(out, dtype=float), right)
    if c is not None and not np.isclose(c, 1):
        shown = f"{c:.3g}" if f"{c:.3g}" != "1" else f"{c:.6g}"  # 1.0001, not "1"
        raise Fail(
            f"yours is {shown} times the right answer (on {case}): {formula} has no constant "
            "factor. Look for a stray number multiplying or dividing it."
        )
    same(out, right, case)


def _hard_coded(scale: float) -> str:
    return (
        f"a hard-coded width: your scale is {scale:.3g} whatever the input; take d_k "
        "from the input, s = 1 / np.sqrt(K.shape[-1])."
    )


def check_grad_QK(fn) -> CheckResult:
    r"""Check ``fn(Q, K, dS)`` returns ``(dQ, dK)``: :math:`s\,dS\,K` and :math:`s\,dS^\top Q`."""
    said = []  # what was wrong with the last pair, if its shapes did not fit

    def both(Q, K, dS):
        said.clear()
        out = fn(Q, K, dS)
        if out is None:
            return None
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            if isinstance(out, (tuple, list)):
                said.append(f"you returned {len(out)} values: return a pair (dQ, dK)")
            else:
                said.append(f"return a pair (dQ, dK), not {type(out).__name__}")
        else:
            dQ, dK = (np.asarray(o, dtype=float) for o in out)
            if Q.shape != K.shape and (dQ.shape, dK.shape) == (K.shape, Q.shape):
                said.append(_SWAPPED)
            for name, got, like in (("dQ", dQ, Q), ("dK", dK, K)):
                if got.shape != like.shape:
                    said.append(
                        f"{name} has shape {got.shape}, not the shape of {name[1]}, {like.shape}"
                    )
            if said[1:]:  # the swap says it all
                del said[1:]
            if not said:
                return np.concatenate([dQ, dK], axis=-2)
        return np.zeros((*Q.shape[:-2], Q.shape[-2] + K.shape[-2], Q.shape[-1]))

    def _over_d_k_hint(over_d_k, out, d_k: int) -> str:
        """Divided by d_k, or (where d_k = 4) a hard-coded √16? Probe only on a match."""
        matched = over_d_k is not None and over_d_k.shape == out.shape
        if matched and np.allclose(out, over_d_k, atol=ATOL) and d_k == 4:
            probed = _scale_used(fn)
            if probed is not None and not np.isclose(probed, 1 / 3):  # not 1/d_k at d_k = 3
                return _hard_coded(probed)
        return f"you divided by d_k = {d_k}; divide by its square root, √d_k = {np.sqrt(d_k):g}."

    def judge(out, Q, K, dS, case: str, hint: str = "") -> None:
        if said:
            raise Fail(f"{'; '.join(said)} (on {case}).{hint}")
        d_k = K.shape[-1]
        over_d_k = _slip(Q, K, dS, scale=1 / d_k)
        mistakes = [
            (
                _slip(Q, K, dS, scale=1.0),
                "you left out the scale: S = Q Kᵀ / √d_k, so "
                "both gradients carry the factor 1 / √d_k.",
            ),
            *(  # 1/√4 (the toy's width) and 1/√16 (the chapter's), typed in
                (_slip(Q, K, dS, scale=1 / np.sqrt(w)), _hard_coded(1 / np.sqrt(w)))
                for w in (4, 16)
                if w not in (d_k, d_k**2)  # right here, or the same as 1/d_k
            ),
            (over_d_k, _over_d_k_hint(over_d_k, out, d_k)),
            (
                _slip(Q, K, dS, scale=np.sqrt(d_k)),
                "you multiplied by √d_k; the scores are divided by it, and so are their gradients.",
            ),
            (
                _slip(Q, K, dS, scale=1 / np.sqrt(dS.shape[-1])) if dS.shape[-1] != d_k else None,
                f"you scaled by 1 / √n_k, with n_k = {dS.shape[-1]} keys; the scale is 1 / √d_k, "
                f"with d_k = K.shape[-1] = {d_k}, the width of a query and a key.",
            ),
            (
                _slip(Q, K, dS, scale=1 / np.sqrt(Q.shape[-2])) if Q.shape[-2] != d_k else None,
                f"you scaled by 1 / √n_q, with n_q = {Q.shape[-2]} queries; the scale is "
                f"1 / √d_k, with d_k = K.shape[-1] = {d_k}, the width of a query and a key.",
            ),
            (
                _slip(Q, K, dS, transpose=False),
                "dK uses dS without a transpose: key j was used by every query in column j of dS.",
            ),
            (
                _slip(Q, K, dS, swap=True),
                "Q and K are swapped: S_ij = s Q_i · K_j moves "
                "along Q_i at the rate s K_j, so dQ is built from K.",
            ),
        ]
        n_q, s = Q.shape[-2], 1 / np.sqrt(d_k)
        dQ, dK = s * (dS @ K), s * (np.swapaxes(dS, -1, -2) @ Q)
        got_dQ, got_dK = out[..., :n_q, :], out[..., n_q:, :]
        if dK.shape == dQ.shape:  # a square case: the pair can come back the wrong way
            c = _factor(got_dQ, dK)  # at any scale: the order is named first
            if c is not None and np.allclose(got_dK, c * dQ, atol=ATOL):
                rescaled = (
                    ""
                    if np.isclose(c, 1)
                    else f" Then check the scale: yours is {c:.3g} times the right one."
                )
                raise Fail(f"{_SWAPPED} (on {case}).{rescaled}")
        if all(
            _factor(g, r) is not None and _factor(g, r) < 0 for g, r in ((got_dQ, dQ), (got_dK, dK))
        ):
            raise Fail(
                f"dQ and dK both have the wrong sign (on {case}): S = s Q Kᵀ has no minus, "
                "so neither has its gradient. Look for a stray minus."
            )
        d_KT = s * (np.swapaxes(Q, -1, -2) @ dS)  # (..., d_k, n_k): the gradient of Kᵀ
        if d_KT.shape == dK.shape:
            mistakes.append(
                (
                    np.concatenate([dQ, d_KT], axis=-2),
                    "your dK is s Qᵀ dS, the gradient of Kᵀ: transpose it back.",
                )
            )
        if dS.shape[-1] == dS.shape[-2]:  # square: dS Kᵀ-like slips fit the shapes
            mistakes.append(
                (
                    np.concatenate([s * (np.swapaxes(dS, -1, -2) @ K), dK], axis=-2),
                    "dQ uses dS, not its transpose: query i's row of dS is row i of dQ.",
                )
            )
        known_mistakes(out, *((w, h) for w, h in mistakes if w is not None))
        for name, got, right, other in (
            ("dQ", got_dQ, dQ, ""),
            ("dK", got_dK, dK, "dQ is right; "),
        ):
            if not np.allclose(got, right, atol=ATOL):
                c = _factor(got, right)
                if c is not None and c < 0:
                    size = "" if np.isclose(c, -1) else f", and {-c:.3g} times the right size"
                    raise Fail(f"{other}your {name} has the wrong sign{size} (on {case}).")
                if np.allclose(got, right * s, atol=ATOL):  # this one scaled twice
                    raise Fail(
                        f"{other}your {name} is scaled twice, by 1 / d_k: the scale "
                        f"1 / √d_k of S = Q Kᵀ / √d_k enters once (on {case})."
                    )
                if np.allclose(got, right / s, atol=ATOL):  # this one left unscaled
                    raise Fail(
                        f"{other}your {name} is √d_k = {np.sqrt(d_k):g} times too large: "
                        f"it lacks the scale 1 / √d_k of S = Q Kᵀ / √d_k (on {case})."
                    )
                raise Fail(
                    f"{other}your {name} differs from the reference on {case}: "
                    f"{difference(got, right)}."
                )
        same(out, _grad_QK(Q, K, dS), case)

    def one(cases: Cases, case: str, Q, K, dS, hint: str) -> None:
        try:
            out = cases.run(case, Q, K, dS)
        except Fail as fail:
            if "your function raised" not in str(fail):
                raise
            raise Fail(str(fail).replace(BROADCAST_HINT, "") + hint) from None
        judge(out, Q, K, dS, case, hint)

    def run(cases: Cases) -> None:
        rng = np.random.default_rng(13)
        shapes = (
            ("Q, K and dS all of shape (4, 4)", (4, 4), (4, 4), (4, 4)),
            ("Q (2, 3), K (5, 3), dS (2, 5)", (2, 3), (5, 3), (2, 5)),
            ("a batch: Q (2, 3, 4), K (2, 5, 4), dS (2, 3, 5)", (2, 3, 4), (2, 5, 4), (2, 3, 5)),
            # np.transpose(dS, (0, 2, 1)) passes the case above, not this one (review 10_tt)
            (
                "two batch axes: Q (2, 2, 3, 4), K (2, 2, 5, 4)",
                (2, 2, 3, 4),
                (2, 2, 5, 4),
                (2, 2, 3, 5),
            ),
        )
        fit = (
            " Match the shapes: dS is (n_q, n_k), dQ must be (n_q, d_k) like Q "
            "and dK (n_k, d_k) like K."
        )
        batch = " With a batch, transpose only the last two axes: np.swapaxes(dS, -1, -2)."
        leading = (
            " The exercise allows any number of leading axes: an axis list such as "
            "np.transpose(dS, (0, 2, 1)) fits exactly three. Swap only the last two: "
            "np.swapaxes(dS, -1, -2)."
        )
        for (case, *sizes), hint in zip(shapes, ("", fit, batch, leading), strict=True):
            Q, K, dS = (rng.normal(size=size) for size in sizes)
            one(cases, case, Q, K, dS, hint)

    return verdict("grad_QK", both if callable(fn) else fn, run)


@unseen_cases("grad_QK")
def _unseen_grad_QK(rng):
    found = []
    for batch in ((), (int(rng.integers(2, 4)),)):
        n_q, n_k, d_k = (int(rng.integers(2, 6)) for _ in range(3))
        Q, K = rng.normal(size=(*batch, n_q, d_k)), rng.normal(size=(*batch, n_k, d_k))
        dS = rng.normal(size=(*batch, n_q, n_k))
        found.append((f"Q {Q.shape}, K {K.shape}", (Q, K, dS), _grad_QK(Q, K, dS)))
    return found
