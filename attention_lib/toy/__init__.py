"""The running example of the course: "I ate the cake and it was delicious."

Every chapter uses the objects defined here, so the numbers a learner meets in
chapter 1 are the same numbers that flow through the last chapter. Use them as
``toy.X``, ``toy.TOKENS``, ``toy.scores()`` and so on; the submodules group them:

* :mod:`.sentence`: the tokens, the hand-made token vectors ``X`` and the projections
  ``W_q``, ``W_k``, ``W_v``, with the story they are chosen to tell;
* :mod:`.movies`: the streaming catalogue behind the value-blending analogy.

All arrays are read-only, so no notebook cell can change them for later cells.
"""

from .movies import MOVIE_CARDS, MOVIE_FEATURES, MOVIE_INTEREST, MOVIES
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
    projections,
    scaled_scores,
    scores,
    token_index,
)

__all__ = [
    "FEATURES",
    "MOVIES",
    "MOVIE_CARDS",
    "MOVIE_FEATURES",
    "MOVIE_INTEREST",
    "SENTENCE",
    "TOKENS",
    "VALUE_FEATURES",
    "W_k",
    "W_q",
    "W_v",
    "X",
    "attention",
    "projections",
    "scaled_scores",
    "scores",
    "token_index",
]
