"""Chapter 11's checker for the mean with a padding mask (exercise 11.2). The reference,
``_mean_pool``, repeats :mod:`attention_lib.pretrained`'s formula, as checkers sit below
that module; ``tests/test_pretrained.py`` checks that they agree.
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


def _unit(v, axis=-1):
    return v / np.linalg.norm(v, axis=axis, keepdims=True)


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
            if "Shape of weights" in str(fail):  # np.average(H, axis=1, weights=mask)
                raise Fail(
                    f"np.average wants weights of H's own shape (on {case}): use "
                    "weights=np.broadcast_to(mask[..., None], H.shape)."
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
        batch_mean = H[mask > 0].mean(axis=0)  # (d,): H[mask].mean(0), one for the batch
        if out.shape in ((3,), (2, 3)) and np.allclose(out, batch_mean, atol=ATOL):
            raise Fail(
                f"you took one mean over the real tokens of the whole batch (on {case}): "
                "average each sentence's own tokens, over axis 1."
            )
        expect_shape(out, (2, 3), case, " One vector of width d per sentence.")
        if np.isnan(out[0]).any():
            raise Fail(
                "sentence 1, which has no padding, came out nan (0 / 0): your sum counted "
                "no token. Is the mask the wrong way round? 1 marks a real token."
            )
        if np.allclose(out[0], H[0, 1:3].mean(axis=0), atol=ATOL):
            raise Fail(
                "sentence 1 left out its first and last tokens: [CLS] and [SEP] are real "
                "tokens, and this model averages them too. Use the mask as it is."
            )
        summed = (H * mask[..., None]).sum(axis=1)
        means = summed / mask.sum(axis=1, keepdims=True)
        if np.allclose(out[1], H[1, 2:].mean(axis=0), atol=ATOL):
            raise Fail(
                "sentence 2 came out as the mean of its 2 padding tokens: your mask is the "
                "wrong way round. 1 marks a real token, 0 padding."
            )
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
                H.sum(axis=1) / mask.sum(axis=1, keepdims=True),
                "you summed the padding too, then divided by the real count: multiply H "
                "by mask[..., None] before summing.",
            ),
            (
                summed / mask.sum(),
                "you divided by m.sum(), the real tokens of the whole batch: divide each "
                "sentence by its own count, m.sum(axis=1).",
            ),
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
            (
                (H[:, 1:] * mask[:, 1:, None]).sum(axis=1) / mask[:, 1:].sum(1, keepdims=True),
                "you left out token 0, [CLS] (H[:, 1:]): it is a real token, and this "
                "model averages it too.",
            ),
            (
                (H[:, 1:] * mask[:, 1:, None]).sum(axis=1) / mask.sum(1, keepdims=True),
                "your sum starts at token 1 (H[:, 1:]) but your count at token 0: an "
                "off-by-one. Sum from token 0, [CLS] included.",
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

        case = "the first case's 2 sentences with a bool mask, like model.run's pad_mask"
        try:
            out = cases.run(case, H, mask.astype(bool))
        except Fail as fail:
            if "numpy boolean" not in str(fail):  # subtract or negative: bool - bool, -mask
                raise
            raise Fail(
                f"NumPy cannot subtract or negate bools (on {case}): for the padding use "
                "~mask, or turn the mask into numbers first, mask.astype(float)."
            ) from None
        expect_shape(out, (2, 3), case)
        same(out, means, case)

    return verdict("mean_pool", fn, run)
