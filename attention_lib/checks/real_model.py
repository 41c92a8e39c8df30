"""Chapter 11 checkers: layer norm and a mean with a padding mask (parameters: see
``attention_params.py``). The references repeat :mod:`attention_lib.pretrained`'s formulas,
as checkers sit below that module; ``tests/test_pretrained.py`` checks that they agree.
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


def _layer_norm(x, gamma, beta, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gamma + beta


def _mean_pool(H, mask):
    """The mean of each sentence's real tokens, before the model scales it to length 1."""
    m = mask[..., None]  # (B, n, 1)
    return (H * m).sum(axis=-2) / m.sum(axis=-2)  # (B, d)


def _flat_count(fn) -> bool:
    """Does ``fn`` divide the (B, d) sums by a (B,) count? Probed where d == B broadcasts."""
    H = np.arange(24.0).reshape(2, 4, 3)[..., :2]  # (2, 4, 2): d == B, so (B,) broadcasts
    mask = np.array([[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 0.0, 0.0]])
    try:
        out = np.asarray(fn(H, mask), dtype=float)
    except Exception:  # noqa: BLE001 - any error means the probe says nothing
        return False
    summed = (H * mask[..., None]).sum(axis=1)  # (2, 2)
    wrong = summed / mask.sum(axis=1)  # the count lines up with the features, not sentences
    return out.shape == wrong.shape and np.allclose(out, wrong, atol=ATOL)


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


def _unit(v, axis=-1):
    return v / np.linalg.norm(v, axis=axis, keepdims=True)


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
        )
        same(out, _layer_norm(x, gamma, beta, eps), case)

        case = "a batch of 2 sentences x 3 tokens x 4"
        xb = rng.normal(size=(2, 3, 4))
        out = cases.run(case, xb, np.ones(4), np.zeros(4), eps)
        expect_shape(out, xb.shape, case, " Work along the last axis only.")
        mu1 = xb.mean(axis=1, keepdims=True)
        known_mistakes(
            out,
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


# --- Exercise: mean pooling with a padding mask --------------------------------------------


def check_mean_pool(fn) -> CheckResult:
    """Check ``fn(H, mask)``: ``(B, n, d)`` and ``(B, n)`` 0/1 -> ``(B, d)`` masked means."""

    def run(cases: Cases) -> None:
        rng = np.random.default_rng(384)
        H = rng.normal(size=(2, 4, 3))  # 2 sentences, padded to 4 tokens, d = 3
        mask = np.array([[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 0.0, 0.0]])  # sentence 2 has 2
        case = "2 sentences of 4 and 2 tokens, padded to 4"
        try:
            out = cases.run(case, H, mask)
        except Fail as fail:
            if "IndexError" in str(fail) and "integer" in str(fail):
                raise Fail(
                    f"the mask cannot index H (on {case}): it holds the floats 0.0 and 1.0. "
                    "Use the mask as weights instead: mask[..., None] * H."
                ) from None
            if "broadcast" not in str(fail):
                raise
            if _flat_count(fn):
                raise Fail(
                    f"your count of real tokens has shape (B,) and cannot divide the (B, d) "
                    f"sums (on {case}): keep the count as (B, 1), m.sum(1, keepdims=True)."
                ) from None
            raise Fail(
                f"H {H.shape} and mask {mask.shape} do not line up (on {case}): the mask "
                "needs a last axis of size 1, mask[..., None] of shape (B, n, 1), to "
                "multiply every feature of a token."
            ) from None
        if out.shape == (2, 4):
            raise Fail(
                f"returned shape (2, 4), one number per token (on {case}). Average over "
                "the tokens (axis 1) so that each sentence keeps its d features."
            )
        expect_shape(out, (2, 3), case, " One vector of width d per sentence.")
        if np.isnan(out[0]).any():
            raise Fail(
                "sentence 1, which has no padding, came out nan (0 / 0): your sum counted "
                "no token. Is the mask the wrong way round? 1 marks a real token."
            )
        summed = (H * mask[..., None]).sum(axis=1)
        means = summed / mask.sum(axis=1, keepdims=True)
        known_mistakes(
            out,
            (
                H.mean(axis=1),
                "sentence 2 is wrong: the padding tokens count in your mean. Multiply by "
                "the mask before summing and divide by the number of real tokens.",
            ),
            (
                summed / H.shape[1],
                "sentence 2 is too short: you divided by n = 4, the padded length. "
                "Divide each sum by that sentence's number of real tokens, mask.sum(axis=1).",
            ),
            (summed, "you summed the real tokens but never divided by their number."),
            (
                _unit(means),
                "the mean is right, then scaled to length 1: this exercise asks for the "
                "mean itself (model.encode scales it afterwards).",
            ),
            (
                H[:, 0],
                "that is the first token, [CLS]: BERT's habit for a sentence vector. This "
                "model averages all real tokens instead.",
            ),
        )
        same(out, _mean_pool(H, mask), case)

        case = "3 sentences without padding"
        H3 = rng.normal(size=(3, 5, 4))
        out = cases.run(case, H3, np.ones((3, 5)))
        expect_shape(out, (3, 4), case)
        same(out, _mean_pool(H3, np.ones((3, 5))), case)

        case = "one sentence whose last 3 of 6 tokens are padding"
        H1 = rng.normal(size=(1, 6, 4))
        m1 = np.array([[1.0, 1.0, 1.0, 0.0, 0.0, 0.0]])
        out = cases.run(case, H1, m1)
        expect_shape(out, (1, 4), case)
        same(out, _mean_pool(H1, m1), case)

        case = "one sentence padded on the left: its first 2 of 5 tokens are padding"
        H2 = rng.normal(size=(1, 5, 4))
        m2 = np.array([[0.0, 0.0, 1.0, 1.0, 1.0]])
        out = cases.run(case, H2, m2)
        expect_shape(out, (1, 4), case)
        known_mistakes(
            out,
            (
                H2[:, :3].mean(axis=1),
                f"you averaged the first 3 tokens, which is right only when the padding "
                f"comes last; on {case}. Use the mask as weights, mask[..., None] * H.",
            ),
        )
        same(out, _mean_pool(H2, m2), case)

    return verdict("mean_pool", fn, run)
