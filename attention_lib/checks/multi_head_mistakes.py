"""Chapter 7 checker: the usual wrong answers to the multi-head loop, each with its hint."""

from __future__ import annotations

import contextlib
import io

import numpy as np

from ..core import attention_scores, scaled_dot_product_attention, softmax
from ..heads import merge_heads, multi_head_attention, split_heads
from .multi_head_slips import review_slips


def _multi_head_mistakes(X, W_q, W_k, W_v, W_o, h: int) -> list[tuple]:
    """The usual wrong answers for these inputs, each with its hint."""
    d_model = X.shape[-1]
    d_k = d_model // h
    Q, K, V = (split_heads(X @ W, h) for W in (W_q, W_k, W_v))  # (h, n, d_k) each

    def heads_then_wo(scale=None, axis=-1, keys_first=False) -> np.ndarray:
        s = 1 / np.sqrt(d_k) if scale is None else scale
        scores = attention_scores(K, Q) if keys_first else attention_scores(Q, K)  # (h, n, n)
        weights = softmax(scores * s, axis=axis)  # (h, n, n)
        return merge_heads(weights @ V) @ W_o  # (n, d_model)

    def merged_by_reshape() -> np.ndarray:  # np.array(heads).reshape(n, -1): tokens mixed
        heads, _ = scaled_dot_product_attention(Q, K, V)  # (h, n, d_k)
        return heads.reshape(X.shape[-2], d_model) @ W_o

    def interleaved() -> np.ndarray:
        Qi, Ki, Vi = (np.stack([(X @ W)[:, i::h] for i in range(h)]) for W in (W_q, W_k, W_v))
        heads, _ = scaled_dot_product_attention(Qi, Ki, Vi)  # (h, n, d_k)
        return merge_heads(heads) @ W_o

    def no_transpose(concatenated=False) -> np.ndarray:  # the reshape trap, batched or looped
        n = X.shape[-2]
        Qm, Km, Vm = ((X @ W).reshape(h, n, d_k) for W in (W_q, W_k, W_v))  # tokens mixed
        heads, _ = scaled_dot_product_attention(Qm, Km, Vm)
        return (merge_heads(heads) if concatenated else heads.reshape(n, d_model)) @ W_o

    mistakes = [
        (
            merge_heads(scaled_dot_product_attention(Q, K, V)[0]),
            "that is the concatenation of the heads, before the last step: multiply it "
            "by W_o, which mixes what the heads found.",
        ),
        (
            heads_then_wo(scale=1 / np.sqrt(d_model)),
            f"you scaled by 1/sqrt(d_model) = 1/sqrt({d_model}). Each head compares "
            f"vectors of width d_k = d_model / h = {d_k}: scale by 1/sqrt(d_k).",
        ),
        (
            heads_then_wo(scale=1.0),
            "the scores were not scaled: divide each head's Q_i K_iᵀ by sqrt(d_k).",
        ),
        (
            heads_then_wo(axis=-2),
            "softmax ran over the wrong axis: each query's row of weights (the last "
            "axis, over the keys) must sum to 1, not each column.",
        ),
        *(
            (
                no_transpose(concatenated),
                "the heads mix tokens: reshaping X @ W_q straight to (h, n, d_k) puts "
                "numbers from different tokens in one row. Each head takes a block of "
                "columns of the projections, X @ W_q[:, i*d_k:(i+1)*d_k], for every token.",
            )
            for concatenated in (False, True)
        ),
        (
            merged_by_reshape(),
            "reshape does not concatenate: np.array(heads).reshape(n, -1) fills the first "
            "rows with one head's numbers for several tokens, mixing tokens. Lay the heads "
            "side by side: np.concatenate(heads, axis=-1).",
        ),
        (
            interleaved(),
            "each head took every h-th column (i, i+h, i+2h, ...). The head at index i "
            "owns one block of neighbouring columns, i*d_k to (i+1)*d_k, as split_heads "
            "cuts them.",
        ),
    ]

    mistakes.append(
        (
            heads_then_wo(scale=1 / d_k),
            f"the scores were divided by d_k = {d_k}: divide by sqrt(d_k), once "
            "(al.scaled_dot_product_attention already does).",
        )
    )
    mistakes.append(
        (
            heads_then_wo(keys_first=True),
            "the scores are transposed: K_i Q_iᵀ puts the keys on the rows. Use "
            "Q_i K_iᵀ, so that each query's row holds its scores over the keys.",
        )
    )
    mistakes.append(
        (
            merge_heads(scaled_dot_product_attention(Q, K, V)[0]) @ W_o.T,
            "you multiplied by W_o.T: the concatenation (n, h*d_k) times W_o, shape "
            "(h*d_k, d_model), needs W_o as it is, with no transpose.",
        )
    )

    def head_0_everywhere() -> np.ndarray:  # every head reads columns 0 to d_k
        first = slice(0, d_k)
        head, _ = scaled_dot_product_attention(
            X @ W_q[:, first], X @ W_k[:, first], X @ W_v[:, first]
        )
        return np.concatenate([head] * h, axis=-1) @ W_o

    if h > 1:
        mistakes.append(
            (
                head_0_everywhere(),
                "every head used the first block of columns, 0 to d_k: the head at index i "
                "owns columns i*d_k to (i+1)*d_k. Does your slice use the loop's i?",
            )
        )

    def row_blocks() -> np.ndarray:  # head i reads only input features i*d_k to (i+1)*d_k
        blocks = [slice(i * d_k, (i + 1) * d_k) for i in range(h)]
        Qr, Kr, Vr = (np.stack([X[:, c] @ W[c, c] for c in blocks]) for W in (W_q, W_k, W_v))
        return merge_heads(scaled_dot_product_attention(Qr, Kr, Vr)[0]) @ W_o

    mistakes.append(
        (
            row_blocks(),
            "each head read only its own block of input features (rows of W_q, W_k, "
            "W_v). A head sees the whole token vector: it owns a block of *columns*, "
            "Q_i = X @ W_q[:, i*d_k:(i+1)*d_k].",
        )
    )

    def block_diagonal() -> np.ndarray:  # head i @ W_o[c, c]: each head kept to its columns
        blocks = [slice(i * d_k, (i + 1) * d_k) for i in range(h)]
        heads, _ = scaled_dot_product_attention(Q, K, V)  # (h, n, d_k)
        return np.concatenate([heads[i] @ W_o[c, c] for i, c in enumerate(blocks)], axis=-1)

    if h > 1:
        mistakes.append(
            (
                block_diagonal(),
                "each head was multiplied by its own square block W_o[c, c], so it only "
                "writes its own columns. W_o mixes all heads: multiply the concatenation "
                "by the whole W_o (each output column reads every head).",
            )
        )
        mistakes.append(
            (
                heads_then_wo() / h,
                f"your output is 1/{h} of the right one: you averaged the heads. Their "
                "results are laid side by side (concatenated) before W_o, so every head "
                "counts in full.",
            )
        )
        mistakes.append(
            (
                multi_head_attention(X, W_q, W_k, W_v, W_o, h=1)[0],
                f"this is one head of full width: h = {h} was ignored. Split Q, K and V "
                "into h heads and attend in each one separately.",
            )
        )

    def fixed_width(width: int) -> np.ndarray | None:  # d_k typed in as a number
        heads = []
        for i in range(h):
            c = slice(i * width, (i + 1) * width)  # past d_model, NumPy gives empty blocks
            Q_i, K_i, V_i = X @ W_q[:, c], X @ W_k[:, c], X @ W_v[:, c]  # (n, <= width)
            weights = softmax(Q_i @ K_i.swapaxes(-1, -2) / np.sqrt(width))  # (n, n)
            heads.append(weights @ V_i)
        concat = np.concatenate(heads, axis=-1)  # (n, ?)
        return concat @ W_o if concat.shape[-1] == W_o.shape[0] else None

    for width in (1, 2, 4, 8, 16, 32, 64):
        wrong = fixed_width(width) if width != d_k else None
        if wrong is not None:
            axis = (  # d_k = X.shape[0] // h gives this width too: name both slips
                f", or X.shape[0] // h (n = {X.shape[-2]} counts the tokens)"
                if width == X.shape[-2] // h
                else ""
            )
            mistakes.append(
                (
                    wrong,
                    f"this is what d_k = {width} gives, but here d_k = {d_k}. Is d_k a fixed "
                    f"number in your code{axis}? Take it from W_q: d_k = W_q.shape[1] // h.",
                )
            )

    def heads_of(values: np.ndarray) -> np.ndarray:  # (h, n, d_k): softmax(Q K^T / sqrt) @ ...
        return softmax(attention_scores(Q, K) / np.sqrt(d_k)) @ values

    def features_compared() -> np.ndarray:  # Q_i^T K_i: (d_k, d_k), features not tokens
        weights = softmax(Q.swapaxes(-1, -2) @ K / np.sqrt(d_k))  # (h, d_k, d_k)
        return merge_heads(V @ weights) @ W_o

    mistakes.append(
        (
            merge_heads(heads_of(K)) @ W_o,
            "each head blended its keys: weights @ K_i. The weights pick how much of each "
            "token to take; what they blend is the values, weights @ V_i.",
        )
    )
    mistakes.append(
        (
            merge_heads(heads_of(split_heads(X, h))) @ W_o,
            "each head blended the token vectors themselves, X[:, cols]: W_v was left out. "
            "A head blends its values, V_i = X @ W_v[:, cols].",
        )
    )
    mistakes.append(
        (
            features_compared(),
            "your scores are Q_iᵀ K_i, shape (d_k, d_k): they compare features, not "
            "tokens. A head's scores are Q_i K_iᵀ, shape (n, n), one row per query token.",
        )
    )
    if h > 1:
        heads = heads_of(V)  # (h, n, d_k), right
        for combined, how in ((heads.sum(axis=0), "summing"), (heads.mean(axis=0), "averaging")):
            mistakes.append(
                (
                    combined @ W_o[:d_k],
                    f"every head met the same first d_k rows of W_o, W_o[:d_k] (or you "
                    f"combined the heads by {how} them first). Head i owns its own block of "
                    "rows, W_o[i*d_k:(i+1)*d_k]: sum head_i @ that block, or concatenate the "
                    "heads, np.concatenate(heads, axis=-1), then @ W_o.",
                )
            )
        mistakes.append(
            (
                merge_heads(heads[::-1]) @ W_o,
                "the heads came out in reverse order: the concatenation must start with the "
                "head at index 0, the one that owns columns 0 to d_k, and end with the last.",
            )
        )
        for shift in (1, -1):  # head i read block i + 1 (or i - 1), wrapped around
            mistakes.append(
                (
                    merge_heads(np.roll(heads, -shift, axis=0)) @ W_o,
                    f"block i of your concatenation holds the head at index i "
                    f"{'+' if shift > 0 else '-'} 1 (wrapping around at the ends). The head "
                    "at index i owns columns i*d_k to (i+1)*d_k and comes i-th: check where "
                    "your slice starts and the order you concatenate in.",
                )
            )
        mistakes.append(
            (
                merge_heads(np.concatenate([heads[:-1], heads[-2:-1]])) @ W_o,
                f"the last block of your concatenation repeats the head before it: head {h} "
                f"of {h} was never computed. Does the loop run over every head, range(h)?",
            )
        )
        mistakes.append(
            (
                merge_heads(heads[:-1]) @ W_o[: (h - 1) * d_k],
                f"the last head, head {h} of {h}, is missing from your output. Does the "
                "loop run over every head, range(h)?",
            )
        )

    return mistakes + review_slips(X, W_q, W_k, W_v, W_o, h)  # review 07_d


def _row_slices(fn, X, W_q, W_k, W_v, W_o, h) -> str:
    """Name X[a:b] (a block of tokens) or W_q[a:b] (a block of rows) for a head's slice:
    rerun with an X and W_q, W_k, W_v that note how they are indexed, since these slips
    fail with a bare NumPy message or on an empty head."""
    seen: set[str] = set()
    full = slice(None)

    class Noting(np.ndarray):  # an argument that notes a slice of its rows
        def __getitem__(self, key):
            rows = key[0] if isinstance(key, tuple) and all(k == full for k in key[1:]) else key
            if isinstance(rows, slice) and rows != full:
                seen.update(name for name, a in noted.items() if self is a)
            return np.asarray(super().__getitem__(key))

    args = dict(X=X, W_q=W_q, W_k=W_k, W_v=W_v, W_o=W_o)
    noted = {k: np.array(a, dtype=float).view(Noting) for k, a in args.items() if k != "W_o"}
    try:
        with contextlib.redirect_stdout(io.StringIO()), np.errstate(all="ignore"):
            fn(*noted.values(), np.array(W_o, dtype=float), h)
    except (Exception, SystemExit):  # the rerun fails too: only what it noted counts
        pass
    if "X" in seen:
        return (
            "You sliced X's rows, X[a:b]: those are tokens, not features. Every head sees "
            "all n tokens and owns a block of d_k columns of W_q, W_k and W_v: "
            "Q_i = X @ W_q[:, i*d_k:(i+1)*d_k]."
        )
    if not seen:
        return ""
    return (
        "You sliced a block of rows, W_q[a:b]. Head i owns a block of d_k columns of W_q, "
        "W_k and W_v: W_q[:, i*d_k:(i+1)*d_k], shape (d_model, d_k)."
    )
