"""Chapter 7 checker: multi-head attention from the library's pieces (splitting into heads is
in ``split_heads.py``, counting parameters in ``param_count.py``)."""

from __future__ import annotations

import contextlib
import io

import numpy as np

from ..core import scaled_dot_product_attention
from ..heads import merge_heads, multi_head_attention, split_heads
from . import multi_head_merges as merges
from .base import Cases, CheckResult, Fail, expect_shape, known_mistakes, verdict
from .multi_head_merges import softmax_slips, token_axis_hint, transposed_k_hint, wide_hint
from .multi_head_mistakes import _multi_head_mistakes, _row_slices
from .multi_head_slips import LIST_OF_PAIRS, is_list_of_pairs, matches, one_block_hint, weights_hint
from .names import calls_library


def _run_explained(cases: Cases, case: str, *args) -> np.ndarray:
    """Run one case; if the function raised, name the slips that make it raise."""
    try:
        return cases.run(case, *args)
    except Fail as fail:
        message = str(fail)
        # multi-head only (split_heads shares this): X[a:b] or W_q[a:b], rows not columns
        row_hint = _row_slices(cases.fn, *args) if len(args) == 6 else ""
        if row_hint:
            raise Fail(f"{message} {row_hint}") from None
        if len(args) == 6 and any(s in message for s in ("matmul", "aligned", "must share")):
            fn, X, h = cases.fn, args[0], args[-1]
            shape_hint = transposed_k_hint(message, X, h) or _wrong_concatenation(fn, *args)
            shape_hint = shape_hint or _untransposed_keys(fn, *args) or wide_hint(message, X, h)
            if shape_hint:
                raise Fail(f"{message} {shape_hint}") from None
        if ("float" in message and "integer" in message) or "slice indices must be" in message:
            raise Fail(
                f"{message} d_model / h is a float, and a shape or a slice needs a "
                "whole number: use d_k = d_model // h."
            ) from None
        if "inhomogeneous" in message or "with a sequence" in message:
            raise Fail(
                f"{message} al.scaled_dot_product_attention returns a pair (output, "
                "weights): unpack it, head_i, _ = al.scaled_dot_product_attention(...)."
            ) from None
        if "cannot reshape" in message or "is empty" in message:
            # split_heads(X, h) has no W_q: its d_k comes from X
            source = "W_q, d_k = W_q.shape[1]" if len(args) == 6 else "X, d_k = X.shape[-1]"
            raise Fail(
                f"{message} Is d_k a fixed number in your code? Work it out from {source} "
                "// h, so that every width and every h works."
            ) from None
        raise


def _wrong_concatenation(fn, X, W_q, W_k, W_v, W_o, h) -> str:
    """Rerun ``fn`` with a W_o of the wrong height; the one that fits names the slip.

    The concatenation meets W_o last, so a concatenation of the wrong shape fails there
    with a bare NumPy message. A W_o whose height matches it lets the function finish;
    the probe W_o copies the concatenation into the output, so the shape and the numbers
    that come back tell the slips apart (a missing head from a width typed in as a number,
    or from head i multiplied by W_o's columns instead of its rows).
    """
    n, d_model = X.shape
    d_k = d_model // h
    heads, maps = scaled_dot_product_attention(*(split_heads(X @ W, h) for W in (W_q, W_k, W_v)))
    right = merge_heads(heads)  # (n, d_model): the concatenation the loop should build

    def run_with(probe: np.ndarray, ndim: int = 2):  # fn's output with this W_o, if it fits
        try:
            with contextlib.redirect_stdout(io.StringIO()), np.errstate(all="ignore"):
                out = fn(X.copy(), W_q.copy(), W_k.copy(), W_v.copy(), probe, h)
        except Exception:
            return None
        out = out[0] if isinstance(out, tuple) and len(out) == 2 else out
        out = np.asarray(out) if isinstance(out, np.ndarray | list) else None
        return None if out is None or out.ndim != ndim else out

    def concat_of(height: int):  # fn's concatenation, if a W_o of this height fits it
        out = run_with(np.eye(height, max(height, d_model)))  # copies the concatenation out
        return None if out is None else out[:, :height]

    # review 07_kk: np.stack(heads) @ W_o, named from the (h, n, d_model) it returns
    stacked = merges.stacked_hint(lambda probe: run_with(probe, 3), X, W_q, W_k, W_v, h)
    if hint := weights_hint(concat_of(h * n), maps) or stacked:  # sdpa(...)[1], or stacked
        return hint
    # The block form with W_o's columns, head_i @ W_o[:, c], fits a W_o of shape
    # (d_k, d_model): a random one, whose rows and columns differ, tells it apart.
    wide = np.random.default_rng(0).normal(size=(d_k, d_model))  # (d_k, d_model)
    got = run_with(wide) if h > 1 else None
    by_columns = sum(heads[i] @ wide[:, i * d_k : (i + 1) * d_k] for i in range(h))
    side_by_side = np.concatenate(
        [heads[i] @ wide[:, i * d_k : (i + 1) * d_k] for i in range(h)], axis=-1
    )  # the same slip, with the heads' products concatenated instead of summed
    if got is not None and any(
        got.shape == v.shape and np.allclose(got, v) for v in (by_columns, side_by_side)
    ):
        return (
            "You multiplied head i by a block of W_o's columns, W_o[:, c]. Head i owns a "
            "block of d_k rows of W_o: use W_o's rows for head i: W_o[c], shape (d_k, d_model)."
        )
    got = concat_of((h - 1) * d_k) if h > 1 else None
    if got is not None and got.shape[0] == n:
        mixer = np.random.default_rng(1).normal(size=((h - 1) * d_k, d_model))
        mixed = run_with(mixer)  # a missing head stays missing under any W_o
        kept = mixed is not None and mixed.shape == (n, d_model)
        for missing, rest in (("first", right[:, d_k:]), ("last", right[:, :-d_k])):
            if np.allclose(got, rest) and kept and np.allclose(mixed, rest @ mixer):
                loop = "range(1, h) skips it" if missing == "first" else "does it run to h"
                return (
                    f"Your concatenation has {(h - 1) * d_k} columns, d_model - d_k: the "
                    f"{missing} head is missing. Check the loop: {loop}? Use range(h)."
                )
    got = concat_of(d_k)
    if hint := one_block_hint(got, heads):  # summed, averaged, or the last head kept
        return hint
    if got is not None and got.shape[0] == h * n:
        return (
            f"Your concatenation has {h * n} rows, h x n: the heads were stacked under each "
            "other. Lay them side by side, np.concatenate(heads, axis=-1)."
        )
    if concat_of(h * d_model) is not None:
        return (
            f"Your concatenation has {h * d_model} columns, h x d_model: each head is "
            f"d_model wide, not d_k = {d_k}. Slice W_v too: V_i = X @ W_v[:, cols]."
        )

    def sliced(starts_and_widths) -> list:  # the heads of these column slices, side by side
        cols = [slice(start, start + width) for start, width in starts_and_widths]
        own = [len(range(d_model)[c]) for c in cols]  # a slice past the end is clipped
        scales = ([starts_and_widths[0][1]] * len(cols), [d_k] * len(cols), own)
        return [  # scaled by the typed width, by d_k, or by each slice's own width
            np.concatenate(
                [
                    _attend(X @ W_q[:, c], X @ W_k[:, c], X @ W_v[:, c], s)
                    for c, s in zip(cols, w, strict=True)
                ],
                -1,
            )
            for w in scales
        ]

    def fits(height: int, starts_and_widths) -> bool:  # fn's concatenation is one of these
        got = concat_of(height)
        return got is not None and any(
            got.shape == want.shape and np.allclose(got, want) for want in sliced(starts_and_widths)
        )

    for extra, word, step in ((h - 1, "wide", 1), (-h, "narrow", -1)):
        if fits(d_model + extra, [(i * d_k, d_k + step) for i in range(h)]):
            return (
                f"Your concatenation has {d_model + extra} columns, not d_model = {d_model}: "
                f"each head's slice is one column too {word}. The head at index i owns "
                "columns i*d_k:(i+1)*d_k (a slice stops before its end)."
            )
    for width in range(1, d_model + 1):  # d_k typed in as a number
        height = sum(len(range(d_model)[i * width : (i + 1) * width]) for i in range(h))
        if width != d_k and height and fits(height, [(i * width, width) for i in range(h)]):
            axis = (  # d_k = X.shape[0] // h gives this width too: name both slips
                f", or X.shape[0] // h (n = {X.shape[-2]} counts the tokens)"
                if width == X.shape[-2] // h
                else ""
            )
            return (
                f"Your heads are {width} column{'s' * (width != 1)} wide, but here d_k = "
                f"d_model // h = {d_model} // {h} = {d_k}. Is d_k a fixed number in your "
                f"code{axis}? Take it from W_q's width: d_k = W_q.shape[1] // h."
            )
    return ""


def _attend(Q: np.ndarray, K: np.ndarray, V: np.ndarray, width: int) -> np.ndarray:
    """One head, softmax(Q K^T / sqrt(width)) V, for a slice of any width (empty: empty)."""
    with np.errstate(all="ignore"):  # a slice of width 0 gives an empty head
        scores = Q @ K.swapaxes(-1, -2) / np.sqrt(max(width, 1))
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    return weights / weights.sum(-1, keepdims=True) @ V


def _untransposed_keys(fn, X, W_q, W_k, W_v, W_o, h) -> str:
    """Name Q_i @ K_i (no transpose): rerun on square heads, n = d_k, where it runs."""
    d_k = X.shape[-1] // h
    rng = np.random.default_rng(2)
    Xs = rng.normal(size=(d_k, h * d_k))  # n = d_k tokens
    *Ws, Wo = (rng.normal(size=(h * d_k, h * d_k)) for _ in range(4))
    try:
        with contextlib.redirect_stdout(io.StringIO()), np.errstate(all="ignore"):
            out = fn(Xs, *Ws, Wo, h)
    except (Exception, SystemExit):  # even sys.exit() must not end the notebook
        return ""
    out = out[0] if isinstance(out, tuple) and len(out) == 2 else out
    Q, K, V = (split_heads(Xs @ W, h) for W in Ws)  # (h, n, d_k) each
    scores = Q @ K / np.sqrt(d_k)  # no transpose: runs only because n = d_k
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    wrong = merge_heads((weights / weights.sum(-1, keepdims=True)) @ V) @ Wo
    if np.shape(out) == wrong.shape and np.allclose(out, wrong):
        return (
            "Your scores look like Q_i @ K_i, without the transpose: a head's scores are "
            "Q_i @ K_i.T, shape (n, n), one dot product per query and key."
        )
    return ""


def _differ(reference: np.ndarray, *mistakes: tuple) -> list[tuple]:
    """Keep the mistakes that give a wrong answer here (with h = 1, some are harmless)."""
    return [
        (wrong, hint)
        for wrong, hint in mistakes
        if np.shape(wrong) != reference.shape or not np.allclose(wrong, reference)
    ]


# --- Exercise: multi-head attention from the library's pieces ------------------------------


def check_multi_head(fn) -> CheckResult:
    """Check ``fn(X, W_q, W_k, W_v, W_o, h)`` returns the output, shape (n, d_model).

    The exercise asks for the output only: a pair ``(output, weights)``, as the library
    returns, fails with that hint (even when its output is right).
    """

    banned = [name for name in _BANNED if fn is _LIBRARY[name] or calls_library(fn, name)]

    def run(cases: Cases) -> None:
        if banned:
            raise Fail(
                f"your function calls al.{banned[0]}, which this exercise rules out: loop "
                "over the heads, slice each head's block of columns of W_q, W_k and W_v, "
                "attend with al.scaled_dot_product_attention, then concatenate and apply W_o."
            )
        rng = np.random.default_rng(7)
        X = rng.normal(size=(5, 8))  # n = 5 tokens, d_model = 8
        Ws = rng.normal(scale=0.6, size=(4, 8, 8))  # W_q, W_k, W_v, W_o
        X12 = rng.normal(size=(5, 12))  # d_model = 12, h = 2: d_k = 6 is neither 2 nor h
        Ws12 = rng.normal(scale=0.5, size=(4, 12, 12))
        # h = 4 first (d_k = 3): at h = 2, heads shifted by one place are the heads reversed
        sizes = [(X12, Ws12, 4), (X12, Ws12, 2)] + [(X, Ws, h) for h in (2, 4, 1, 8)]
        for X, Ws, h in sizes:
            case = f"n = 5, d_model = {X.shape[-1]}, h={h}"
            try:
                out = _run_explained(cases, case, X, *Ws, h)
            except Fail:
                if pairs == ["list"]:  # a list of (output, weights) pairs came back
                    raise Fail(LIST_OF_PAIRS) from None
                raise
            if pairs == [True]:
                raise Fail(
                    "your function returned a pair (output, weights): this exercise asks for "
                    "the output only, shape (n, d_model). Return the output alone."
                )
            averaged = merges.averaged_hint(out, X, *Ws[:3], h)  # review 07_ll
            if stacked := token_axis_hint(out, *X.shape, h, case) or averaged:
                raise Fail(stacked)
            swapped = out.shape == X.shape[::-1]
            flipped = " Transposed? Your output has the axes swapped." if swapped else ""
            expect_shape(
                out,
                X.shape,
                case,
                f"{flipped} Return only the output (n, d_model): the heads concatenated, "
                "then @ W_o.",
            )
            expected = multi_head_attention(X, *Ws, h=h)[0]
            slips = _multi_head_mistakes(X, *Ws, h=h) + softmax_slips(X, *Ws, h)
            known_mistakes(out, *_differ(expected, *slips))
            matches(out, expected, case)  # no named slip: precision or a neutral hint

    pairs = []  # set when fn returned (output, weights), or a list of such pairs
    return verdict("multi_head", _output_only(fn, pairs), run)


#: What the loop exercise rules out (it may call scaled_dot_product_attention).
_LIBRARY = {
    "multi_head_attention": multi_head_attention,
    "split_heads": split_heads,
    "merge_heads": merge_heads,
}
_BANNED = tuple(_LIBRARY)


def _output_only(fn, pairs: list):
    """Unpack ``(output, weights)`` and note it in ``pairs``, so the verdict can name it."""
    if not callable(fn):
        return fn  # the verdict reports it

    def output(*args, **kwargs):
        out = fn(*args, **kwargs)
        if is_list_of_pairs(out):
            pairs[:] = ["list"]  # one (output, weights) per head, not unpacked
            return out
        if isinstance(out, tuple) and len(out) == 2:
            pairs[:] = [True]
            return out[0]
        return out

    return output
