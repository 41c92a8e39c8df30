"""A second, shorter sentence, batched with the running example (chapter 8).

A batch is one array, so its sentences must have one length. Our sentence has 8 tokens;
"The dog ate the pie" has 5, so it gets 3 rows of **padding** (zeros) to fill it up to
8. The short sentence uses chapter 1's word embeddings (:func:`toy.embed`), so its token
vectors live in the same 4-d space as :data:`toy.X` (food, person, action, pointer), and
the sentence's own ``W_q``, ``W_k``, ``W_v`` apply to it unchanged.

The numbers tell chapter 8's story:

* alone, "ate" looks for what was eaten: its largest weight, 0.27, is on "pie";
* in the batch without a mask, every real token of the short sentence hands about a
  third of its attention to the three padding rows, and its outputs shrink;
* with :func:`attention_lib.padding_mask`, the short sentence's outputs equal those it
  has alone, and the long sentence is untouched either way.

``tests/test_ch08_masking.py`` asserts each of these. Use them as ``toy.masking.X_SHORT``
and so on. All arrays are read-only.
"""

from __future__ import annotations

import numpy as np

from ..core import scaled_dot_product_attention
from ..masks import pad_batch
from .sentence import TOKENS, W_k, W_q, W_v, X
from .words import embed

SHORT_SENTENCE = "The dog ate the pie."

#: The tokens of the short sentence; the full stop is dropped, as in :data:`toy.TOKENS`.
SHORT_TOKENS = ("The", "dog", "ate", "the", "pie")

#: What the figures print on a padding position.
PAD = "<pad>"

#: The short sentence's token vectors, shape (5, 4): rows of chapter 1's embedding table.
X_SHORT = embed(SHORT_TOKENS)

#: The batch of both sentences, shape (b, n, d_model) = (2, 8, 4): ``BATCH[0]`` is
#: :data:`toy.X`, ``BATCH[1]`` is :data:`X_SHORT` followed by 3 rows of zeros.
#: ``LENGTHS`` = (8, 5) counts the real tokens of each.
BATCH, LENGTHS = pad_batch([X, X_SHORT], n=len(TOKENS))

#: One label per position of each sentence in the batch, padding included.
BATCH_TOKENS = (TOKENS, SHORT_TOKENS + (PAD,) * (len(TOKENS) - len(SHORT_TOKENS)))

for _array in (X_SHORT, BATCH, LENGTHS):
    _array.setflags(write=False)


def projections(batch=BATCH) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(Q, K, V)`` for a batch of token vectors, each of shape (..., n, 4)."""
    batch = np.asarray(batch)
    return batch @ W_q, batch @ W_k, batch @ W_v  # (..., n, 4) @ (4, 4) -> (..., n, 4)


def attention_alone() -> tuple[np.ndarray, np.ndarray]:
    """The short sentence attended on its own, no padding: ``(output (5, 4), weights (5, 5))``."""
    return scaled_dot_product_attention(*projections(X_SHORT))
