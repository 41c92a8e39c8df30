r"""Chapter 10 checker: the whole backward pass of attention, put together by the learner.

The learner's ``fn(Q, K, V, dOut)`` returns ``(dQ, dK, dV)``, built from the pieces of
the chapter's exercises: :math:`dV = A^\top dO`, :math:`dA = dO\,V^\top`, :math:`dS` by
the softmax backward pass, then :math:`dQ = s\,dS\,K` and :math:`dK = s\,dS^\top Q`.
The hints compare the three gradients one by one, so they name the piece that is wrong.
"""

from __future__ import annotations

import traceback
from pathlib import Path

import numpy as np

from ..backward import attention_backward as _reference
from ..core import scaled_dot_product_attention
from .backward_scale import twice_or_typed, typed_slips
from .base import ATOL, BROADCAST_HINT, Cases, CheckResult, Fail, difference, unseen_cases, verdict
from .learning import _row_mistakes
from .names import calls_library, reaches

_NAMES = ("dQ", "dK", "dV")


def _flat(grads) -> np.ndarray:
    """The three gradients as one flat array: what the checker compares."""
    return np.concatenate([np.ravel(g) for g in grads])


def _close(a, b) -> bool:
    return np.shape(a) == np.shape(b) and np.allclose(a, b, atol=ATOL)


_TWICE = (
    "dQ and dK are scaled twice, by 1 / d_k: the scale 1 / √d_k of "
    "S = Q Kᵀ / √d_k enters once. Apply it in my_grad_QK or outside it, not both."
)

_COLUMNS = (  # a sum down the columns of A * dA; with one query it is the diagonal of J
    "dS sums A * dA down the columns (axis=-2): each row of A is its own softmax, "
    "so sum along the last axis.",
    "dS = A (1 - A) dA, only the diagonal of the Jacobian; with one query, a sum down "
    "the columns (axis=-2) gives it too. Subtract sum(A * dA) along the last axis.",
)


def _pieces(Q, K, V, dOut) -> dict:
    """The right gradients and the usual wrong dQ, dK pairs, each with its hint."""
    _, A = scaled_dot_product_attention(Q, K, V)
    s = 1 / np.sqrt(K.shape[-1])
    dA = dOut @ np.swapaxes(V, -1, -2)  # (..., n_q, n_k)

    def qk(dS, scale=s):
        return scale * (dS @ K), scale * (np.swapaxes(dS, -1, -2) @ Q)

    def softmax_step(P):  # the right step 2, with P in place of A
        return P * (dA - np.sum(P * dA, axis=-1, keepdims=True))

    S = Q @ np.swapaxes(K, -1, -2)  # the scores, before the scale
    scores = (
        "dQ and dK come from the scores S, not the weights: the softmax step needs "
        "A = softmax(S), the A that al.scaled_dot_product_attention returns."
    )

    slips = [
        (
            qk(A * dA),
            "dQ and dK miss the row sum of the softmax step: every entry of dS is "
            "p_j (dA_j - sum_i p_i dA_i). Check my_softmax_backward.",
        ),
        (
            qk(dA),
            "dQ and dK skip the softmax step: dS = my_softmax_backward(A, dA), not dA itself.",
        ),
        (
            qk(A * (dA - np.sum(A * dA, axis=-1, keepdims=True)), scale=1.0),
            "dQ and dK are √d_k times too large: the scores are divided by √d_k, so "
            "my_grad_QK needs the scale too.",
        ),
        (qk(softmax_step(A), scale=s * s), _TWICE),
        (
            qk(softmax_step(A), scale=1 / np.sqrt(V.shape[-1])),
            "dQ and dK are scaled by 1/√d_v: the scores are divided by √d_k, the width "
            "of Q and K, so s = 1 / np.sqrt(K.shape[-1]).",
        ),
        (qk(softmax_step(s * S)), scores),
        (qk(softmax_step(S)), scores),
        (qk(A * (dA - np.sum(A * dA, axis=-2, keepdims=True))), _COLUMNS[Q.shape[-2] == 1]),
    ]
    # the softmax exercise's own diagnoses, with p = A and dp = dA
    step_2 = "dQ and dK are off in step 2, dS = my_softmax_backward(A, dA), with p = A, dp = dA:"
    slips += [(qk(wrong), f"{step_2} {hint}") for wrong, hint in _row_mistakes(A, dA)]
    # review 10_qq: a scale typed in (0.5 passed where every case had d_k = 4)
    slips += typed_slips(lambda scale: qk(softmax_step(A), scale=scale), K.shape[-1])
    return {"right": _reference(Q, K, V, dOut), "slips": slips}


_LIBRARY = (str(Path(np.__file__).parent), str(Path(__file__).parents[1]))


def _matmul_hint(err) -> str:
    """Name the learner's line where a product crashed, and the shapes each product needs."""
    frames = traceback.extract_tb(err.__traceback__) if err is not None else []
    theirs = [f for f in frames if not f.filename.startswith(_LIBRARY)]
    where = f" It crashed at `{theirs[-1].line}`." if theirs and theirs[-1].line else ""
    return (
        f"{where} Each product needs matching inner sizes: dV = Aᵀ @ dOut is "
        "(..., n_k, n_q) @ (..., n_q, d_v); dA = dOut @ Vᵀ is (..., n_q, d_v) @ "
        "(..., d_v, n_k); dQ = dS @ K and dK = dSᵀ @ Q. Transpose the last two axes, "
        "np.swapaxes(V, -1, -2): V.T reverses the batch axis too."
    )


def _lost_keepdims(err, Q, K) -> bool:
    """Whether a row sum lost its axis: (..., n_q) against A's (..., n_q, n_k).

    It then fails to broadcast, or broadcasts to (..., n_q, n_q, n_k) and crashes in a
    later product: this looks for such an array among the learner's variables."""
    if err is None:
        return False
    rows = (*Q.shape[:-1], K.shape[-2])  # the shape of A
    sums = rows[:-1]  # a row sum without keepdims=True
    said = str(err).replace(" ", "")
    if "broadcast" in said and all(str(x).replace(" ", "") in said for x in (rows, sums)):
        return True
    try:
        spread = np.broadcast_shapes(rows, sums)
    except ValueError:
        return False
    for frame, _ in traceback.walk_tb(err.__traceback__):
        if frame.f_code.co_filename.startswith(_LIBRARY):
            continue
        values = frame.f_locals.values()
        if any(isinstance(v, np.ndarray) and v.shape == spread for v in values):
            return True
    return False


_KEEPDIMS_HINT = (
    " A row sum lost its axis: np.sum(A * dA, axis=-1) has shape (..., n_q), so subtracting "
    "it from dA, (..., n_q, n_k), broadcasts the wrong way or fails. Add keepdims=True, or "
    "call my_softmax_backward(A, dA)."
)


def check_attention_backward(fn) -> CheckResult:
    r"""Check ``fn(Q, K, V, dOut)`` returns ``(dQ, dK, dV)`` of scaled dot-product attention."""
    said = []  # what was wrong with the last answer's form, if anything

    def three(Q, K, V, dOut):
        said.clear()
        out = fn(Q, K, V, dOut)
        if out is None:
            return None
        if not isinstance(out, (tuple, list)) or len(out) != 3:
            if isinstance(out, (tuple, list)):
                said.append(f"you returned {len(out)} values: return (dQ, dK, dV)")
            else:
                said.append(f"return three gradients (dQ, dK, dV), not {type(out).__name__}")
            return np.zeros(Q.size + K.size + V.size)
        nones = [name for name, g in zip(_NAMES, out, strict=True) if g is None]
        if nones:  # a piece such as my_grad_V still returns None
            said.append(f"{', '.join(nones)} is None: does each piece return its result?")
            return np.zeros(Q.size + K.size + V.size)
        grads = [np.asarray(g, dtype=float) for g in out]
        for name, got, like in zip(_NAMES, grads, (Q, K, V), strict=True):
            if got.shape != like.shape:
                said.append(f"{name} has shape {got.shape}, not {like.shape}, that of {name[1]}")
        shapes = sorted(g.shape for g in grads) == sorted(x.shape for x in (Q, K, V))
        if said and shapes:  # the right shapes, in another order
            said.append("return them in the order (dQ, dK, dV)")
        return _flat(grads) if not said else np.zeros(Q.size + K.size + V.size)

    def judge(out, Q, K, V, dOut, case: str) -> None:
        if said:
            raise Fail(f"{'; '.join(said)} (on {case}).")
        sizes = np.cumsum([Q.size, K.size])
        got = [g.reshape(x.shape) for g, x in zip(np.split(out, sizes), (Q, K, V), strict=True)]
        known = _pieces(Q, K, V, dOut)
        right = known["right"]
        found = [
            next((n for n, r in zip(_NAMES, right, strict=True) if _close(g, r)), None) for g in got
        ]
        if None not in found and found != list(_NAMES):
            raise Fail(
                f"your three gradients are right, but you returned them as ({', '.join(found)}) "
                f"on {case}: return them in the order (dQ, dK, dV)."
            )
        if all(_close(g, -r) for g, r in zip(got, right, strict=True)):
            raise Fail(
                f"every gradient has the wrong sign (on {case}): dQ, dK and dV carry no minus. "
                "The step W - lr * dW adds it."
            )
        if not _close(got[2], right[2]):
            if _close(got[2], right[2] / np.sqrt(K.shape[-1])):
                raise Fail(
                    f"dV is 1/√d_k times too small (on {case}): the scale acts on the scores, "
                    "before softmax, and A already carries it, so dV = Aᵀ dOut has no scale."
                )
            raise Fail(
                f"dV differs from the reference on {case}: {difference(got[2], right[2])}. "
                "dV needs only A and dOut: check my_grad_V and the A you pass it."
            )
        if _close(got[0], right[0]) != _close(got[1], right[1]):
            wrong = 0 if not _close(got[0], right[0]) else 1
            raise Fail(
                f"dV and {_NAMES[1 - wrong]} are right, {_NAMES[wrong]} is not (on {case}): "
                "the error is in my_grad_QK."
            )
        if not _close(got[0], right[0]):
            for (dQ, dK), hint in known["slips"]:
                if _close(got[0], dQ) and _close(got[1], dK):
                    if hint == _TWICE:  # at d_k = 4, 1/d_k is also 1/√16 typed in
                        hint = twice_or_typed(fn, K.shape[-1], hint)
                    raise Fail(f"dV is right; {hint}")
            raise Fail(
                f"dV is right, dQ and dK are not (on {case}). Check the steps after dV "
                "in order: dA = dOut @ Vᵀ (swap the last two axes of V), then "
                "dS = my_softmax_backward(A, dA), then my_grad_QK(Q, K, dS)."
            )

    def run(cases: Cases) -> None:
        rng = np.random.default_rng(14)
        shapes = (
            ("one query per sentence, as in the model: Q (3, 1, 4), K and V (3, 5, 4)",
             (3, 1, 4), (3, 5, 4), (3, 5, 4)),
            ("a batch: Q (2, 3, 4), K (2, 5, 4), V (2, 5, 3)", (2, 3, 4), (2, 5, 4), (2, 5, 3)),
            ("another width, d_k = 5: Q (2, 3, 5), K (2, 6, 5), V (2, 6, 3)",
             (2, 3, 5), (2, 6, 5), (2, 6, 3)),
        )  # fmt: skip
        for case, *sizes in shapes:
            Q, K, V = (rng.normal(size=size) for size in sizes)
            dOut = rng.normal(size=(*Q.shape[:-1], V.shape[-1]))
            try:
                out = cases.run(case, Q, K, V, dOut)
            except Fail as fail:
                message = str(fail).replace(BROADCAST_HINT, "")
                if "NoneType" in message:
                    message += " Did one of your pieces return None? Finish the exercises above."
                if _lost_keepdims(fail.__context__, Q, K):
                    message += _KEEPDIMS_HINT
                elif "matmul" in message:  # the commonest: dA = dOut @ V, or V.T on a batch
                    message += _matmul_hint(fail.__context__)
                raise Fail(message) from None
            if calls_library(fn, "attention_backward") or reaches(fn, [_reference], Q, K, V, dOut):
                raise Fail(
                    "your function calls attention_backward, which the exercise rules out: "
                    "put it together from your own pieces."
                )
            judge(out, Q, K, V, dOut, case)

    return verdict("attention_backward", three if callable(fn) else fn, run)


@unseen_cases("attention_backward")
def _unseen_attention_backward(rng):
    found = []
    for n_q in (1, int(rng.integers(2, 5))):
        b, n_k, d_k, d_v = (int(rng.integers(2, 6)) for _ in range(4))
        Q, K, V = (rng.normal(size=(b, n, d)) for n, d in ((n_q, d_k), (n_k, d_k), (n_k, d_v)))
        dOut = rng.normal(size=(b, n_q, d_v))
        found.append(
            (f"Q {Q.shape}, V {V.shape}", (Q, K, V, dOut), _flat(_reference(Q, K, V, dOut)))
        )
    return found
