"""Chapter 11's layer-norm checker (mean pooling: ``mean_pool.py``, re-exported here;
parameters: ``attention_params.py``). The reference repeats :mod:`attention_lib.pretrained`'s
formula, as checkers sit below that module; ``tests/test_pretrained.py`` checks they agree.
"""

from __future__ import annotations

import numpy as np

from .base import (
    ATOL,
    Cases,
    CheckResult,
    Fail,
    expect_shape,
    known_mistakes,
    same,
    verdict,
)
from .mean_pool import _mean_pool, check_mean_pool  # noqa: F401 - re-exported


def _layer_norm(x, gamma, beta, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gamma + beta


def _tokens_axis(fn) -> str:
    """Which axis a norm over the tokens used: 0 or -2 differ only on a batch, so ask again."""
    xb = np.random.default_rng(5).normal(size=(2, 3, 4))
    try:
        out = np.asarray(fn(xb.copy(), np.ones(4), np.zeros(4), 1e-12), dtype=float)
    except Exception:  # noqa: BLE001 - any error means the probe says nothing
        return "axis 0"
    for axis in (-2, 0):
        mu, var = xb.mean(axis=axis, keepdims=True), xb.var(axis=axis, keepdims=True)
        wrong = (xb - mu) / np.sqrt(var + 1e-12)
        if out.shape == wrong.shape and np.allclose(out, wrong, atol=ATOL):
            return f"axis={axis}"
    return "axis 0"


def _fixed_eps(x, gamma, beta, eps) -> tuple:
    """Known mistakes for an eps typed in (BERT's 1e-12, PyTorch's 1e-5, ...), not passed on.

    Only values whose result differs from the right one (beyond the checkers' tolerance)
    are listed, so a right answer never matches one of them.
    """
    right = _layer_norm(x, gamma, beta, eps)
    hint = (
        "you used a fixed eps ({fixed:g}), not the eps argument; pass the argument on, "
        f"sqrt(var + eps) (this case gives eps={eps:g})."
    )
    wrongs = []
    for fixed in (1e-12, 1e-6, 1e-5, 1e-3):
        wrong = _layer_norm(x, gamma, beta, fixed)
        if fixed != eps and not np.allclose(wrong, right, atol=ATOL):
            wrongs.append((wrong, hint.format(fixed=fixed)))
    return tuple(wrongs)


_TWO_D_ONLY = (
    "Layer norm must work for any number of leading axes: take each row's mean and "
    "variance along the last axis, x.mean(axis=-1, keepdims=True), with no loop over "
    "rows and no n, d = x.shape."
)


# --- Exercise: layer norm ------------------------------------------------------------------


def check_layer_norm(fn) -> CheckResult:
    """Check ``fn(x, gamma, beta, eps)``: normalise each row, then scale and shift."""

    def run(cases: Cases) -> None:
        rng = np.random.default_rng(11)
        x = rng.normal(loc=2.0, scale=3.0, size=(3, 6))  # 3 tokens, d_model = 6
        gamma = np.array([1.0, 2.0, 0.5, 1.5, 1.0, 3.0])
        beta = np.array([0.0, 1.0, -1.0, 0.5, 2.0, 0.0])
        eps = 1e-12
        case = "3 tokens of width 6"
        out = cases.run(case, x, gamma, beta, eps)
        expect_shape(out, x.shape, case, " Return one normalised row per token.")
        mu, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
        over_tokens = (x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + eps) * gamma + beta
        used = _tokens_axis(fn) if np.allclose(out, over_tokens, atol=ATOL) else "axis 0"
        known_mistakes(
            out,
            (
                over_tokens,
                f"you normalised each feature over the tokens ({used}). Layer norm "
                "normalises each token's own vector: the mean and variance of a row, axis=-1.",
            ),
            (
                (x - x.mean()) / np.sqrt(x.var() + eps) * gamma + beta,
                "one mean and variance over the whole array: layer norm uses each row's, axis=-1.",
            ),
            (
                (x - mu) / np.sqrt(var + eps) * beta + gamma,
                "gamma and beta are swapped: multiply by gamma (the scale), then add beta (shift).",
            ),
            (
                (x - mu) / x.std(axis=-1, ddof=1, keepdims=True) * gamma + beta,
                "you used the sample standard deviation (ddof=1). Layer norm divides by "
                "d_model, as np.var and np.std do by default.",
            ),
            (
                (x - mu) / (var + eps) * gamma + beta,
                "you divided by the variance; divide by its square root, sqrt(var + eps).",
            ),
            (
                x / np.sqrt(var + eps) * gamma + beta,
                "you forgot to subtract each row's mean before dividing.",
            ),
            (
                (x - mu) / np.sqrt(var + eps),
                "the rows have mean 0 and variance 1, but gamma and beta are ignored: "
                "multiply by gamma, then add beta.",
            ),
            (
                ((x - mu) / np.sqrt(var + eps) + beta) * gamma,
                "you added beta before multiplying by gamma; scale first, then shift.",
            ),
            (
                (x - mu) / np.sqrt(var + eps) * gamma,
                "you scaled by gamma but never shifted: add beta after multiplying, "
                "so each feature gets its own learned offset.",
            ),
            (
                (x - mu) / np.sqrt(var + eps) + beta,
                "you shifted by beta but never scaled: multiply by gamma first, then add beta.",
            ),
            (
                x / np.sqrt((x**2).mean(axis=-1, keepdims=True) + eps) * gamma + beta,
                "that is RMSNorm (LLaMA's norm): it divides by the root mean square and "
                "never subtracts the mean. Layer norm subtracts each row's mean first.",
            ),
            *_fixed_eps(x, gamma, beta, eps),  # 1e-3 differs here already (review 11_tt)
        )
        same(out, _layer_norm(x, gamma, beta, eps), case)

        case = "a batch of 2 sentences x 3 tokens x 4"
        xb = rng.normal(size=(2, 3, 4))
        try:
            out = cases.run(case, xb, np.ones(4), np.zeros(4), eps)
        except Fail as fail:  # n, d = x.shape, or x[i, j] in a double loop
            if "raised" not in str(fail):
                raise
            raise Fail(f"{fail} Your code handles 2-D input only. {_TWO_D_ONLY}") from None
        expect_shape(out, xb.shape, case, " Work along the last axis only.")
        mu1 = xb.mean(axis=1, keepdims=True)
        whole = (-2, -1)  # one mean per sentence: `for r in x` with r.mean() on a batch
        known_mistakes(
            out,
            (
                (xb - xb.mean(axis=whole, keepdims=True))
                / np.sqrt(xb.var(axis=whole, keepdims=True) + eps),
                f"right for 2-D input, wrong for a batch: each sentence got one mean and "
                f"variance (a loop over the first axis?). {_TWO_D_ONLY}",
            ),
            (
                (xb - mu1) / np.sqrt(xb.var(axis=1, keepdims=True) + eps),
                "right for one sentence, wrong for a batch: axis=1 is the tokens axis "
                "once a batch axis comes first. Use axis=-1 for any leading axes.",
            ),
            *_fixed_eps(xb, 1.0, 0.0, eps),
        )
        same(out, _layer_norm(xb, 1.0, 0.0, eps), case)

        case = "a row whose entries are all equal"
        flat = np.full((1, 4), 5.0)
        out = cases.run(case, flat, np.ones(4), np.full(4, 0.5), 1e-5)
        if not np.all(np.isfinite(out)):
            raise Fail(
                "a row of equal entries gave nan: its variance is 0. Add eps inside the "
                "square root, sqrt(var + eps)."
            )
        same(out, np.full((1, 4), 0.5), case)

        case = "tiny numbers with eps=1e-5"
        tiny = x * 1e-3  # variance about 1e-5, the size of eps: now eps matters
        out = cases.run(case, tiny, gamma, beta, 1e-5)
        var_tiny = tiny.var(axis=-1, keepdims=True)
        known_mistakes(
            out,
            (
                (tiny - tiny.mean(axis=-1, keepdims=True)) / (np.sqrt(var_tiny) + 1e-5) * gamma
                + beta,
                "eps is outside the square root: divide by sqrt(var + eps), not "
                "sqrt(var) + eps. It matters when the variance is as small as eps.",
            ),
            *_fixed_eps(tiny, gamma, beta, 1e-5),
        )
        same(out, _layer_norm(tiny, gamma, beta, 1e-5), case)

    return verdict("layer_norm", fn, run)
