"""Chapter 1's word embeddings: a small vocabulary in the toy's 4-d feature space.

The columns mean what :data:`FEATURES` says: **food**, **person**, **action** and
**pointer**. The eight words of the running example keep exactly their rows of
:data:`X` (those rows *are* the toy's meaning vectors), and a few more words are added
so that similarity has something to compare:

* "cake" and "pie" point the same way (both are food), "keyboard" points elsewhere;
* "The dog sat on the couch" and "The couch sat on the dog" use the same six words,
  so attention can be tested for what it does when only the order changes.

Four features are very few. "keyboard", "couch" and "sat" can only differ in how much
"action" and "person" they carry, so they end up close together: a real model has
hundreds of dimensions and room for "device" or "furniture". Every number has one
decimal, so any similarity can be worked out by hand.
"""

from __future__ import annotations

import numpy as np

from ..core import scaled_dot_product_attention
from ..validate import as_float_array
from .sentence import TOKENS, W_k, W_q, W_v, X

#: The words beyond the running example, with the reason for each number.
_MORE_WORDS = {
    # food person action pointer
    "pie": [0.9, 0.2, 0.0, 0.0],  # food; a trace of person: you call someone "sweetie pie"
    "keyboard": [0.0, 0.1, 0.5, 0.0],  # no food: mostly action (typing), a trace of person
    "dog": [0.0, 0.7, 0.2, 0.0],  # a someone rather than a something, who also runs about
    "couch": [0.0, 0.2, 0.3, 0.0],  # a thing people sit on: traces of person and action
    "sat": [0.0, 0.0, 0.9, 0.0],  # a verb, like "ate", with no food in it
    "on": [0.0, 0.0, 0.1, 0.4],  # a small linking word, like "and": mostly pointer
}

#: Every word that has an embedding: the 8 tokens of the running example first.
VOCAB = TOKENS + tuple(_MORE_WORDS)

#: The embedding table, shape (len(VOCAB), d_model) = (14, 4); row i belongs to VOCAB[i].
#: Its first 8 rows are toy.X: the running example's word embeddings, without positions.
EMBEDDINGS = np.vstack([X, np.array(list(_MORE_WORDS.values()))])

#: Two sentences with the same words in a different order.
DOG_SENTENCE = "The dog sat on the couch"
COUCH_SENTENCE = "The couch sat on the dog"
DOG_TOKENS = tuple(DOG_SENTENCE.split())
COUCH_TOKENS = tuple(COUCH_SENTENCE.split())

#: The reordering that turns the dog sentence into the couch sentence:
#: ``COUCH_TOKENS[i] == DOG_TOKENS[COUCH_ORDER[i]]``, so ``E_COUCH == E_DOG[COUCH_ORDER]``.
#: Only "dog" (position 1) and "couch" (position 5) swap places.
COUCH_ORDER = (0, 5, 2, 3, 4, 1)


def embed(tokens) -> np.ndarray:
    """Look up the embedding of each token: the word-embedding step of a Transformer.

    Parameters
    ----------
    tokens : sequence of str, length n
        Words from :data:`VOCAB`. A capital letter that is not in the table ("The") is
        looked up in lower case, so "The" and "the" share one embedding.

    Returns
    -------
    E : ndarray of shape (n, d_model) = (n, 4)
        Row ``i`` is the embedding of ``tokens[i]`` (a new, writable array).

    Raises
    ------
    TypeError
        If ``tokens`` is a single string instead of a sequence of words.
    ValueError
        If a word is not in :data:`VOCAB`, naming the word and the vocabulary.
    """
    if isinstance(tokens, str):
        raise TypeError(f"tokens must be a sequence of words such as {tokens.split()!r}")
    rows = []
    for token in tokens:
        word = token if token in VOCAB else str(token).lower()
        if word not in VOCAB:
            raise ValueError(f"{token!r} has no embedding; the vocabulary is {VOCAB}")
        rows.append(VOCAB.index(word))
    if not rows:
        raise ValueError("tokens is empty: embed needs at least one word")
    return EMBEDDINGS[rows]  # (n, 4); fancy indexing makes a copy


#: The word embeddings of the two sentences, shape (6, 4) each.
E_DOG = embed(DOG_TOKENS)
E_COUCH = embed(COUCH_TOKENS)

# One source of truth, as for the sentence: read-only, use .copy() to experiment.
for _array in (EMBEDDINGS, E_DOG, E_COUCH):
    _array.setflags(write=False)


def cosine_similarity(a, b) -> np.ndarray:
    r"""Cosine of the angle between vectors, along the last axis.

    Parameters
    ----------
    a, b : array_like of shape (..., d)
        Vectors to compare; leading dimensions broadcast, so one row against a table
        of rows gives one similarity per row.

    Returns
    -------
    ndarray of shape (...)
        1 for vectors pointing the same way, 0 for unrelated (perpendicular) vectors,
        -1 for opposite ones. A NumPy scalar for two 1-D vectors.

    Raises
    ------
    ValueError
        If the vectors have different lengths ``d`` or one of them is all zeros (a zero
        vector has no direction).

    Notes
    -----
    .. math:: \cos(a, b) = \frac{a \cdot b}{\lVert a \rVert \, \lVert b \rVert}

    Dividing by both lengths keeps only the direction: a word used twice as strongly
    points the same way and gets the same similarity.
    """
    a = as_float_array(a, "a", min_ndim=1)
    b = as_float_array(b, "b", min_ndim=1)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"a and b must have the same length d: a has shape {a.shape}, b has shape {b.shape}"
        )
    norm_a = np.linalg.norm(a, axis=-1)  # (...,)
    norm_b = np.linalg.norm(b, axis=-1)  # (...,)
    if np.any(norm_a == 0) or np.any(norm_b == 0):
        raise ValueError("a zero vector has no direction, so its cosine similarity is undefined")
    dot = np.sum(a * b, axis=-1)  # (...,)
    return dot / (norm_a * norm_b)


def similarity(word_a: str, word_b: str) -> float:
    """Cosine similarity of two words of :data:`VOCAB`, e.g. ``similarity("cake", "pie")``."""
    a, b = embed([word_a, word_b])
    return float(cosine_similarity(a, b))


def self_attention(X_in) -> tuple[np.ndarray, np.ndarray]:
    """Self-attention with the running example's projections, on any token vectors.

    Parameters
    ----------
    X_in : array_like of shape (..., n, 4)
        Token vectors in the toy's feature space, e.g. :data:`E_DOG` or
        ``E_DOG + positional_encoding(6, 4)``.

    Returns
    -------
    output : ndarray of shape (..., n, 4)
    weights : ndarray of shape (..., n, n)
        As :func:`attention_lib.scaled_dot_product_attention`, with
        ``Q, K, V = X_in @ W_q, X_in @ W_k, X_in @ W_v``.
    """
    X_in = as_float_array(X_in, "X", min_ndim=2)
    if X_in.shape[-1] != W_q.shape[0]:
        raise ValueError(
            f"X must have d_model = {W_q.shape[0]} columns (food, person, action, pointer), "
            f"but it has shape {X_in.shape}"
        )
    Q, K, V = X_in @ W_q, X_in @ W_k, X_in @ W_v  # each (..., n, 4)
    return scaled_dot_product_attention(Q, K, V)
