r"""Masks for batches of sentences of different lengths (chapter 8).

A batch stacks sentences into one array, so they must all have the same length ``n``.
Shorter sentences are filled up with **padding**: rows of zeros that stand for no word.
Padding must not take part in attention, or the short sentence's outputs change just
because it shares a batch with a long one. :func:`padding_mask` says which keys are
real; :func:`pad_batch` builds the padded batch and the lengths it needs.

The convention is the library's, and that of PyTorch's ``F.scaled_dot_product_attention``:
a boolean mask where ``True`` means "this query may attend to this key"
(``nn.MultiheadAttention`` and ``nn.Transformer`` use the opposite, True = blocked). With
heads, scores are ``(b, h, n, n)``: use ``padding_mask(...)[:, None]``, ``(b, 1, 1, n)``,
or the sentence axis lines up with the heads. The causal mask, :func:`attention_lib.causal_mask`,
lives in :mod:`attention_lib.core`; the two combine with ``&``.
"""

from __future__ import annotations

import numbers

import numpy as np

from .validate import as_float_array, check_positive_int


def padding_mask(lengths, n: int) -> np.ndarray:
    r"""Key-padding mask: in sentence ``b``, every query may attend to keys ``0..lengths[b]-1``.

    Parameters
    ----------
    lengths : sequence of int, length b
        The number of real (non-padding) tokens in each sentence of the batch, each
        between 1 and ``n``. The real tokens come first, the padding after them.
    n : int
        The padded length: every sentence in the batch has ``n`` positions.

    Returns
    -------
    mask : ndarray of bool, shape (b, 1, n)
        ``mask[b, 0, j]`` is True when position ``j`` of sentence ``b`` is a real token.

    Raises
    ------
    TypeError
        If ``n`` or a length is not a whole number (``5.0`` and ``True`` included).
    ValueError
        If ``lengths`` is empty or not 1-D, or a length is below 1 or above ``n``.

    Notes
    -----
    The mask only depends on the key :math:`j`, so it is stored once per sentence,
    with a middle axis of length 1:

    .. math:: M_{b,\,i,\,j} = [\, j < \ell_b \,] \quad \text{for every query } i

    Broadcasting against scores of shape ``(b, n_q, n_k)`` repeats that one row for
    every query, so the result is the mask of each sentence.
    :func:`attention_lib.multi_head_attention` takes the mask as it is (it adds the head
    axis itself); for split heads of shape ``(b, h, n, d_k)`` passed straight to
    :func:`attention_lib.scaled_dot_product_attention`, use ``mask[:, None]``, of shape
    ``(b, 1, 1, n)``.

    Why not a full ``(b, n, n)`` mask that also blocks the padded *queries*? Their rows
    would allow no key at all, and a row with no key has no attention weights (the
    library raises an error for it). With a key-padding mask the padded queries still
    attend to the real keys; their outputs are meaningless, and whatever comes next
    ignores them, exactly as it ignores the padding itself.
    """
    n = check_positive_int(n, "n")
    ell = _as_lengths(lengths)
    too_long = np.flatnonzero(ell > n)
    if too_long.size:
        b = int(too_long[0])
        raise ValueError(
            f"lengths[{b}] = {ell[b]} is longer than the padded length n = {n}; "
            "pad every sentence to at least its own length"
        )
    positions = np.arange(n)  # (n,): 0, 1, ..., n - 1
    real = positions < ell[:, None]  # (b, n): True on the real tokens
    return real[:, None, :]  # (b, 1, n): one row of keys, shared by every query


def _as_lengths(lengths) -> np.ndarray:
    """Return ``lengths`` as a 1-D int array of values >= 1, or raise a clear error."""
    if isinstance(lengths, numbers.Number) and not isinstance(lengths, (bool, np.bool_)):
        raise TypeError(
            f"lengths must be a list with one length per sentence, got the single number "
            f"{lengths!r}; for one sentence write [{lengths!r}]"
        )
    try:
        ell = np.asarray(lengths)
    except ValueError as err:  # ragged nested lists
        raise ValueError(f"lengths must be a flat list of whole numbers: {err}") from None
    if ell.dtype.kind not in "iu":
        example = ell.reshape(-1)[0] if ell.size else None
        raise TypeError(
            "lengths must be whole numbers (one token count per sentence), but they have "
            f"dtype {ell.dtype} (for example {example!r})"
        )
    if ell.ndim != 1 or ell.size == 0:
        raise ValueError(
            f"lengths must be a non-empty 1-D list, one length per sentence; got shape {ell.shape}"
        )
    too_short = np.flatnonzero(ell < 1)
    if too_short.size:
        b = int(too_short[0])
        raise ValueError(
            f"lengths[{b}] = {ell[b]}, but every sentence needs at least 1 real token: "
            "with none, its queries would have no key to attend to"
        )
    return ell.astype(np.int64)


def pad_batch(sequences, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Stack sentences of different lengths into one batch, padding each with zero rows.

    Parameters
    ----------
    sequences : sequence of array_like, each of shape (n_b, d)
        One matrix of token vectors per sentence; all must share the width ``d``.
    n : int, optional
        The padded length; defaults to the longest sentence. It may not be shorter.

    Returns
    -------
    batch : ndarray of shape (b, n, d)
        Sentence ``b`` fills rows ``0..n_b-1`` of ``batch[b]``; the rest is zeros.
    lengths : ndarray of int, shape (b,)
        ``n_b`` for each sentence: pass it to :func:`padding_mask`.

    Raises
    ------
    ValueError
        If there are no sentences, a sentence is not 2-D, the widths differ, or ``n`` is
        shorter than the longest sentence.
    """
    if isinstance(sequences, np.ndarray) or not hasattr(sequences, "__len__"):
        raise TypeError(
            "sequences must be a list of (n_b, d) matrices, one per sentence; got "
            f"{type(sequences).__name__}"
        )
    if len(sequences) == 0:
        raise ValueError("pad_batch needs at least one sentence")
    mats = [as_float_array(s, f"sequences[{b}]", min_ndim=2) for b, s in enumerate(sequences)]
    for b, M in enumerate(mats):
        if M.ndim != 2:
            raise ValueError(f"sequences[{b}] must be 2-D (tokens, features), got {M.shape}")
        if M.shape[1] != mats[0].shape[1]:
            raise ValueError(
                f"every sentence needs the same width d: sequences[0] has shape "
                f"{mats[0].shape}, sequences[{b}] has shape {M.shape}"
            )
    lengths = np.array([M.shape[0] for M in mats], dtype=np.int64)  # (b,)
    longest = int(lengths.max())
    n = longest if n is None else check_positive_int(n, "n")
    if n < longest:
        b = int(lengths.argmax())
        raise ValueError(
            f"n = {n} is shorter than sequences[{b}], which has {longest} tokens; "
            "padding can only lengthen a sentence"
        )
    dtype = np.result_type(*mats)
    batch = np.zeros((len(mats), n, mats[0].shape[1]), dtype=dtype)  # (b, n, d)
    for b, M in enumerate(mats):
        batch[b, : M.shape[0]] = M
    return batch, lengths
