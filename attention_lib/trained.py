r"""A small stored sample of a trained model, for chapters 1-7 to compare the toy with.

The toy's weights are set by hand. This module holds, for comparison, a few numbers from
a real trained Transformer, all-MiniLM-L6-v2 (chapter 11 runs the whole model): the rows
of its word-embedding table for a few words, and every head's scaled scores
:math:`q \cdot k / \sqrt{d_k}` on the course's sentence. They are read from
``attention_lib/data/minilm_sample.npz``, which ``tools/authoring/trained_sample.py``
writes from the model and ``tests/test_trained.py`` checks against it, so the chapters
need neither the model (90 MB) nor its loaders.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from .core import softmax

FILE = Path(__file__).parent / "data" / "minilm_sample.npz"
SENTENCE = "I ate the cake and it was delicious."
#: Words whose embedding rows are stored, each one token in the model's vocabulary.
WORDS = (
    "i ate the cake and it was delicious "
    "pie bread soup pizza drank cooked awful she he dog couch chair is"
).split()
N_LAYERS, H, D_MODEL = 6, 12, 384  # so d_k = D_MODEL / H = 32


@lru_cache(maxsize=1)
def _arrays() -> dict:
    with np.load(FILE) as f:
        return {name: f[name] for name in f.files}


def embeddings(words=None):
    """The model's learned word vectors: ``(words, E)`` with ``E`` of shape (len(words), 384).

    ``words`` is a list drawn from :data:`WORDS` (default: all of them), in lower case as
    the model's vocabulary has them. These are the rows of the embedding table before
    positions are added: the model's counterpart of chapter 1's hand-set cards.
    """
    stored = list(WORDS)
    words = stored if words is None else list(words)
    missing = [w for w in words if w not in stored]
    if missing:
        raise ValueError(
            f"no stored vector for {missing}: trained.embeddings() has these words only: "
            f"{', '.join(stored)}"
        )
    E = _arrays()["E"]
    return words, np.stack([E[stored.index(w)] for w in words])


def tokens() -> list:
    """The model's tokens for :data:`SENTENCE`, lower case, ``[CLS]`` first, ``[SEP]`` last."""
    return [str(t) for t in _arrays()["tokens"]]


def scores(layer: int | None = None, head: int | None = None) -> np.ndarray:
    r"""Scaled scores :math:`QK^\top/\sqrt{d_k}` on :data:`SENTENCE`, biases included.

    Shape (6, 12, 11, 11): layer, head, query token, key token (see :func:`tokens`).
    ``layer`` and ``head`` count from 1, as chapter 11 does, and pick one (11, 11) matrix.
    """
    S = _arrays()["scores"]
    if layer is None and head is None:
        return S.copy()
    if layer is None or head is None:
        raise ValueError("give both layer and head (counting from 1), or neither")
    if not (1 <= layer <= N_LAYERS and 1 <= head <= H):
        raise ValueError(
            f"layer runs from 1 to {N_LAYERS} and head from 1 to {H}; "
            f"got layer={layer}, head={head}"
        )
    return S[layer - 1, head - 1].copy()


def weights(layer: int | None = None, head: int | None = None) -> np.ndarray:
    """The attention weights: the softmax of :func:`scores` along each query's row."""
    return softmax(scores(layer, head), axis=-1)
