"""The running example of the course: "I ate the cake and it was delicious."

Every chapter uses the objects defined here, so the numbers a learner meets in
chapter 1 are the same numbers that flow through the last chapter. Use them as
``toy.X``, ``toy.TOKENS``, ``toy.scores()`` and so on; the submodules group them:

* :mod:`.sentence`: the tokens, the hand-made token vectors ``X`` and the projections
  ``W_q``, ``W_k``, ``W_v``, with the story they are chosen to tell;
* :mod:`.movies`: the streaming catalogue behind the value-blending analogy.

All arrays are read-only, so no notebook cell can change them for later cells.
"""

from . import (
    decoder,  # chapter 12: a corpus about food and a tiny decoder trained on it
    heads,  # chapter 7: hand-built multi-head weights, as toy.heads.W_q ...
    learning,  # chapter 10: pronoun sentences and a tiny model trained on them
    masking,  # chapter 8: a short sentence padded into a batch, toy.masking.BATCH
)
from .movies import (
    MOVIE_CARDS,
    MOVIE_FEATURES,
    MOVIE_INTEREST,
    MOVIE_KEYS,
    MOVIE_TAGS,
    MOVIES,
    SCI_FI_QUERY,
    catalogue,
)
from .sentence import (
    FEATURES,
    SENTENCE,
    TOKENS,
    VALUE_FEATURES,
    W_k,
    W_q,
    W_v,
    X,
    attention,
    by_feature,
    by_token,
    projections,
    scaled_scores,
    scores,
    token_index,
)
from .table import table, weights
from .words import (
    COUCH_ORDER,
    COUCH_SENTENCE,
    COUCH_TOKENS,
    DOG_SENTENCE,
    DOG_TOKENS,
    E_COUCH,
    E_DOG,
    EMBEDDINGS,
    VOCAB,
    cosine_similarity,
    embed,
    self_attention,
    similarity,
)

__all__ = [
    "COUCH_ORDER",
    "COUCH_SENTENCE",
    "COUCH_TOKENS",
    "DOG_SENTENCE",
    "DOG_TOKENS",
    "EMBEDDINGS",
    "E_COUCH",
    "E_DOG",
    "FEATURES",
    "MOVIES",
    "MOVIE_CARDS",
    "MOVIE_FEATURES",
    "MOVIE_INTEREST",
    "MOVIE_KEYS",
    "MOVIE_TAGS",
    "SCI_FI_QUERY",
    "SENTENCE",
    "TOKENS",
    "VALUE_FEATURES",
    "VOCAB",
    "W_k",
    "W_q",
    "W_v",
    "X",
    "attention",
    "by_feature",
    "by_token",
    "catalogue",
    "cosine_similarity",
    "decoder",
    "embed",
    "heads",
    "learning",
    "masking",
    "projections",
    "scaled_scores",
    "scores",
    "self_attention",
    "similarity",
    "table",
    "token_index",
    "weights",
]
