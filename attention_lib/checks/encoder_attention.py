"""Chapter 11 checker: multi-head self-attention with biases, as the real model computes it.

The learner's function takes ``(X, layer, h)``: ``layer`` has the fields ``W_q``, ``b_q``,
``W_k``, ``b_k``, ``W_v``, ``b_v``, ``W_o``, ``b_o`` of one layer of
:mod:`attention_lib.pretrained` (matrices ``(d_model, d_model)``, biases ``(d_model,)``). The
reference is written out again here, because checkers sit below that module;
``tests/test_pretrained.py`` checks that the two agree on the real model.
"""

from __future__ import annotations

import contextlib
import io
from collections import namedtuple

import numpy as np

from ..core import softmax
from ..heads import merge_heads, split_heads
from .base import (
    BROADCAST_HINT,
    Cases,
    CheckResult,
    Fail,
    expect_shape,
    known_mistakes,
    same,
    verdict,
)
from .encoder_attention_bk import skips_b_k
from .encoder_attention_slips import broadcast_hint, glue_hint, slips

_Projections = namedtuple("_Projections", "W_q b_q W_k b_k W_v b_v W_o b_o")


def _attend(
    X,
    p,
    h,
    *,
    biases=True,
    b_o=True,
    W_o=True,
    scale=None,
    axis=-1,
    split=None,
    merge=None,
    skip=(),
    b_o_first=False,
    causal=False,
):
    """The reference, and the usual mistakes, one keyword each (``skip``: biases left out)."""
    split, merge = split or split_heads, merge or merge_heads
    use = {"b_q": biases, "b_k": biases, "b_v": biases} | {name: False for name in skip}
    Q, K, V = (
        X @ W + (getattr(p, b) if use[b] else 0)
        for W, b in ((p.W_q, "b_q"), (p.W_k, "b_k"), (p.W_v, "b_v"))
    )
    Q, K, V = split(Q, h), split(K, h), split(V, h)  # (..., h, n, d_k)
    d_k = Q.shape[-1] if scale is None else scale
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if causal:  # chapter 8's mask, wrongly kept: each token sees only those before it
        scores = np.where(np.triu(np.ones(scores.shape[-2:], bool), k=1), -1e9, scores)
    heads = softmax(scores, axis=axis) @ V
    out = merge(heads)  # (..., n, d_model)
    if b_o_first:  # the bias before the matrix: (heads + b_o) @ W_o
        return (out + p.b_o) @ p.W_o
    out = out @ p.W_o if W_o else out
    return out + p.b_o if b_o else out


def _no_transpose(X, h):
    """Heads cut by a plain reshape, without moving the head axis: a scrambled split."""
    *batch, n, d = X.shape
    return X.reshape(*batch, h, n, d // h)


def _glue_by_reshape(heads):
    """Heads glued by a plain reshape, without moving the head axis back: scrambled rows."""
    *batch, h, n, d_k = heads.shape
    return heads.reshape(*batch, n, h * d_k)


class _Watched(_Projections):
    """The layer the learner gets: a missing field is named with what the layer holds."""

    def __getattr__(self, name):  # only for names the layer lacks, such as ln1_gamma
        raise AttributeError(
            f"this layer has no {name!r}: the exercise is attention only, so the layer holds "
            "just W_q, b_q, W_k, b_k, W_v, b_v, W_o and b_o (no layer norm, no feed-forward)."
        )


def _layer(rng, d: int) -> _Projections:
    mats = [rng.normal(scale=0.5, size=(d, d)) for _ in range(4)]
    biases = [rng.normal(scale=0.5, size=d) for _ in range(4)]
    return _Projections(*(a for pair in zip(mats, biases, strict=True) for a in pair))


#: The layer of every case, practice and unseen: the unseen cases' answers use it too.
LAYER = _layer(np.random.default_rng(11), 8)


def check_attention_with_biases(fn) -> CheckResult:
    """Check ``fn(X, layer, h)``: project with biases, attend in ``h`` heads, merge, then
    ``W_o`` and ``b_o``."""
    current = {}

    def learner(X, h):
        fresh = _Watched(*(a.copy() for a in current["layer"]))
        out = fn(X, fresh, h)
        kept = zip(fresh, current["layer"], strict=True)
        current["changed"] = any(not np.array_equal(a, b) for a, b in kept)
        current["pair"] = isinstance(out, tuple) and len(out) == 2
        return out

    def one(cases: Cases, case: str, X, layer, h, mistakes: bool) -> None:
        current["layer"] = layer
        try:
            out = cases.run(case, X, h)
        except Fail as fail:
            if current.get("pair"):
                raise Fail(
                    f"you returned two things (on {case}); return only the output."
                ) from None
            if "cannot reshape" in str(fail):  # on a batch: (n, h, d_k) for one sentence
                hint = _ONE_SENTENCE if X.ndim > 2 else _H_ARGUMENT.format(h=h)  # or h = 12
                raise Fail(f"{fail} {hint}") from None
            if X.ndim > 2 and "too many values to unpack" in str(fail):
                raise Fail(f"{fail} {_UNPACK}") from None
            if X.ndim > 2 and "raised" in str(fail):
                raise Fail(f"{fail} It must work for leading batch axes: {_BATCH}") from None
            if hint := glue_hint(str(fail), X.shape[-1], h):  # heads on the token axis
                raise Fail(f"{fail} {hint}") from None
            if any(w in str(fail) for w in ("can't set", "setter", "read-only")):  # b_q +=
                raise Fail(f"{fail} {_IN_PLACE}") from None
            if "broadcast" in str(fail):  # K.T on (h, n, d_k), or a bias after the cut
                hint = broadcast_hint(str(fail), X.shape[-1])
                raise Fail(str(fail).replace(BROADCAST_HINT, hint)) from None
            raise
        if current.get("pair"):
            raise Fail(f"you returned two things (on {case}); return only the output.")
        if current.get("changed"):
            raise Fail(
                f"your function changed the layer's arrays in place (on {case}); "
                "leave them as they are."
            )
        expect_shape(out, X.shape, case, " The output has one row of d_model numbers per token.")
        if mistakes:
            known_mistakes(out, *_mistakes(X, layer, h))
        same(out, _attend(X, layer, h), case)

    def run(cases: Cases) -> None:
        rng = np.random.default_rng(12)
        layer = LAYER
        X = rng.normal(size=(4, 8))
        one(cases, "4 tokens, d_model = 8, h = 2", X, layer, 2, True)
        one(cases, "the same layer with h = 4", X, layer, 4, True)
        batch = rng.normal(size=(2, 3, 8))
        one(cases, "a batch of 2 sentences of 3 tokens, h = 2", batch, layer, 2, True)

    with contextlib.redirect_stdout(io.StringIO()) as printed:  # the learner's prints too
        result = verdict("attention_with_biases", learner, run)
    text, line = printed.getvalue(), result.line
    if result.passed and skips_b_k(fn, _Watched, LAYER, _attend):  # read, maybe, but unused
        result.message += _NO_B_K
    print(text.removesuffix(line + "\n"), end="")  # what the learner's function printed
    print(result.line)
    return result


_NO_B_K = (
    " You left out b_k, and rightly pass: it adds q . b_k to every score in query q's row, "
    "and softmax ignores a shift of a whole row, so b_k changes no weight. The solution "
    "says why training leaves it near 0."
)
_H_ARGUMENT = (
    "Cut into the h heads the checker passes in (h = {h} here), not a fixed number such "
    "as the model's 12: h is your function's third argument."
)
_IN_PLACE = (
    "Don't change the layer's arrays in place (layer.b_q += ...): build new ones, "
    "Q = X @ layer.W_q + layer.b_q."
)
_W_O_T = "W_o is transposed: it is stored (d_in, d_out) like W_q, so write heads @ W_o, no .T."
_CAUSAL = "you added a causal mask: this encoder has none; each token sees those before and after."
_NO_W_O_B_O = "you merged the heads but never applied W_o and b_o."
_D_K = "you divided by d_k; each head divides by its square root, sqrt(d_k)."
_UNPACK = "X has a batch axis: use n, d = X.shape[-2:]."
_ONE_SENTENCE = (
    "Right for one sentence, wrong for a batch: your cut ignores the batch axis. Reshape "
    "(..., n, d_model) -> (..., n, h, d_k), keeping the leading axes, then swap axes -2, -3."
)
_SWAP_0_1 = "right for one sentence, wrong for a batch: swap axes -2 and -3, not 0 and 1."
_BATCH = (
    "transpose only the last two axes of K (np.swapaxes(K, -1, -2)) and reshape only the "
    "last axis, (..., n, d_model) -> (..., n, h, d_k)."
)


def _mistakes(X, p, h) -> tuple:
    d = X.shape[-1]
    flipped = p._replace(W_q=p.W_q.T, W_k=p.W_k.T, W_v=p.W_v.T, W_o=p.W_o.T)
    fixed = () if h == 2 else ((_attend(X, p, 2), "you used h = 2; use the argument h."),)
    return (
        *fixed,
        *_swapped_0_1(X, p, h),
        (
            _attend(X, p, h, biases=False, b_o=False),
            "you left out every bias: add b_q, b_k, b_v after the projections and b_o at the end.",
        ),
        (
            _attend(X, p, h, b_o=False),
            "the last step lacks its bias: merge the heads, multiply by W_o, then add b_o.",
        ),
        (
            _attend(X, p, h, biases=False),
            "Q, K and V need their biases: X @ W_q + b_q, and the same for K and V.",
        ),
        (
            _attend(X, p, h, W_o=False),
            "you merged the heads but never multiplied by W_o, which mixes them back "
            "to d_model numbers.",
        ),
        (
            _attend(X, p, h, b_o_first=True),
            "you added b_o before W_o: multiply the merged heads by W_o, then add b_o.",
        ),
        (
            _attend(X, flipped, h),
            "every matrix is transposed: these are stored (d_in, d_out), so write X @ W_q "
            "and heads @ W_o without .T (PyTorch's nn.Linear stores (out, in)).",
        ),
        (_attend(X, p._replace(W_o=p.W_o.T), h), _W_O_T),
        (_attend(X, p, h, causal=True), _CAUSAL),
        (_attend(X, p, h, W_o=False, b_o=False), _NO_W_O_B_O),
        (
            _attend(X, p, h, scale=1),
            "you did not scale the scores: divide Q K^T by sqrt(d_k) in each head.",
        ),
        (_attend(X, p, h, scale=(d // h) ** 2), _D_K),
        (
            _attend(X, p, h, scale=d),
            f"you divided by sqrt(d_model); each head divides by sqrt(d_k) = sqrt({d} / {h}).",
        ),
        (
            _attend(X, p, 1),
            f"that is one head of width d_model: split Q, K and V into h = {h} heads "
            "of d_k = d_model / h.",
        ),
        (
            _attend(X, p, h, axis=-2),
            "your softmax ran down the columns: each query's row of weights must sum "
            "to 1 (axis=-1).",
        ),
        (
            _attend(X, p, h, split=_no_transpose),
            "the heads are scrambled: a reshape to (h, n, d_k) mixes tokens; reshape to "
            "(..., n, h, d_k), then swap the token and head axes (np.swapaxes(A, -2, -3)).",
        ),
        (
            _attend(X, p, h, merge=_glue_by_reshape),
            "the heads are glued in a scrambled order: a reshape of (..., h, n, d_k) to "
            "(..., n, d_model) mixes tokens; first swap the head and token axes back "
            "(np.swapaxes(heads, -2, -3)), then reshape.",
        ),
        (
            _attend(X, p, h) + X,
            "you added the residual X to attention's output: the add belongs to the "
            "layer, not to attention, so return just merged heads @ W_o + b_o.",
        ),
        (_attend(X, p, h, skip=("b_q",)), "Q lacks its bias: Q = X @ W_q + b_q."),
        (_attend(X, p, h, skip=("b_v",)), "V lacks its bias: V = X @ W_v + b_v."),
        *slips(X, p, h),
    )


def _swapped_0_1(X, p, h) -> tuple:
    """On a batch only: heads cut or glued with np.swapaxes(A, 0, 1), right on (n, d)."""
    cut = lambda A, h: np.swapaxes(A.reshape(*A.shape[:-1], h, -1), 0, 1)  # noqa: E731
    glue = lambda a, b: lambda H: np.swapaxes(H, a, b).reshape(X.shape)  # noqa: E731
    splits = ((cut, glue(0, 1)), (cut, glue(-2, -3)), (None, glue(0, 1))) if X.ndim > 2 else ()
    return tuple((_attend(X, p, h, split=s, merge=m), _SWAP_0_1) for s, m in splits)
