"""The sentence of the running example: its tokens, token vectors and projections.

The toy model is tiny on purpose: ``d_model = 4`` and every number has one decimal,
so a learner can redo any dot product by hand. The numbers are *chosen*, not trained,
so that they tell the story of the course:

* ``Q_cake · K_it = 1.3`` (strong) and ``Q_cake · K_I = 0.4`` (weak);
* ``Q_cake · K_cake = 1.6``: "cake" matched against itself scores high, the highest
  value on the diagonal;
* ``Q_it · K_cake = 1.8`` is the highest score of all: the pronoun finds its referent;
* after scaling and softmax, "it" puts more weight on "cake" than on any other word,
  and no other query gives "cake" as large a share.

``tests/test_toy.py`` asserts each of these, so the story cannot silently break.
"""

from __future__ import annotations

import numpy as np

from ..core import attention_scores, scaled_dot_product_attention

SENTENCE = "I ate the cake and it was delicious."

#: One token per word; the full stop is dropped to keep the matrices 8 x 8.
TOKENS = ("I", "ate", "the", "cake", "and", "it", "was", "delicious")

#: What each of the 4 embedding dimensions stands for.
#:
#: * ``food``: how much the word is about eating. "cake" is the food itself, "delicious"
#:   describes food and "ate" is what you do with it.
#: * ``person``: whether the word is someone. Only "I" is; "it" carries a trace because a
#:   pronoun can stand for a person.
#: * ``action``: verbs. "ate" is an action, "was" a weaker one, "and" links actions.
#: * ``pointer``: words that point at something said elsewhere. "it" is the purest
#:   pointer; "the" and "and" point forward or back a little.
FEATURES = ("food", "person", "action", "pointer")

#: The token vectors that enter attention, shape (n, d_model) = (8, 4): the word
#: embeddings E of the eight tokens, *without* positions. At d_model = 4 a positional
#: encoding would write over the same four columns that carry the meaning, so the toy
#: leaves it out on purpose (chapter 1 shows why, and what the original Transformer does:
#: scale E by sqrt(d_model), then add PE). Hand-picked, so each column keeps its FEATURES
#: meaning.
X = np.array(
    [
        # food person action pointer
        [0.0, 1.0, 0.0, 0.0],  # I
        [0.3, 0.0, 1.0, 0.0],  # ate
        [0.0, 0.0, 0.0, 0.5],  # the
        [1.0, 0.0, 0.0, 0.0],  # cake
        [0.0, 0.0, 0.2, 0.3],  # and
        [0.0, 0.2, 0.0, 1.0],  # it
        [0.0, 0.0, 0.6, 0.2],  # was
        [0.7, 0.0, 0.3, 0.0],  # delicious
    ]
)

#: Query projection: row f says what a word with feature f *looks for*.
#: Food words look for food and for pointers that could refer back to them; a person
#: looks for people and actions; an action looks for its object (food) and subject;
#: a pointer looks for the thing it points at, which in this sentence is food.
W_q = np.array(
    [
        [1.6, 0.4, 0.0, 0.9],  # food    ->
        [0.0, 1.2, 0.4, 0.0],  # person  ->
        [0.8, 0.3, 0.5, 0.0],  # action  ->
        [1.8, 0.0, 0.0, 0.3],  # pointer ->
    ]
)

#: Key projection: row f says what a word with feature f *advertises*. Keys mostly
#: advertise what a word is, except that a pointer also advertises a little "thing-ness",
#: because it stands in for a thing.
W_k = np.array(
    [
        [1.0, 0.0, 0.0, 0.0],  # food    ->
        [0.0, 1.0, 0.0, 0.0],  # person  ->
        [0.0, 0.0, 1.0, 0.0],  # action  ->
        [0.2, 0.0, 0.0, 1.0],  # pointer ->
    ]
)

#: What each value dimension means: a short profile of the word, the thing that gets mixed.
VALUE_FEATURES = ("noun", "verb", "third person", "human")

#: Value projection: turns embedding features into that profile.
W_v = np.array(
    [
        # noun verb 3rd  human
        [1.0, 0.0, 1.0, 0.0],  # food:    food is a thing, spoken of in the 3rd person
        [1.0, 0.0, 0.0, 1.0],  # person:  a person is a human noun
        [0.0, 1.0, 0.0, 0.0],  # action:  actions are verbs
        [0.0, 0.0, 1.0, 0.0],  # pointer: "it" points at a 3rd-person thing
    ]
)

# One source of truth: a notebook cell that writes into these arrays would silently change
# every later result, so they are read-only. Use .copy() to experiment.
for _array in (X, W_q, W_k, W_v):
    _array.setflags(write=False)


def token_index(token: str) -> int:
    """Position of ``token`` in :data:`TOKENS`, with a helpful error for typos."""
    try:
        return TOKENS.index(token)
    except ValueError:
        raise ValueError(f"{token!r} is not a token of the sentence; tokens are {TOKENS}") from None


def by_token(values, fmt: str = ".2f") -> str:
    """One number per token, each after its word: ``"I 0.40  ate 0.48 ..."``.

    For printing a row of the sentence's scores or weights with its labels.
    """
    v = np.asarray(values, dtype=float)
    if v.shape != (len(TOKENS),):
        raise ValueError(f"need one number per token, shape ({len(TOKENS)},); got {v.shape}")
    return "  ".join(f"{t} {x:{fmt}}" for t, x in zip(TOKENS, v, strict=True))


def by_feature(values, fmt: str = ".2f") -> str:
    """One number per feature, each after its name: ``"food 1.60  person 0.40 ..."``.

    For printing a query, a key or a token vector (a row of ``Q``, ``K`` or ``X``) with the
    :data:`FEATURES` its coordinates stand for.
    """
    v = np.asarray(values, dtype=float)
    if v.shape != (len(FEATURES),):
        raise ValueError(
            f"need one number per feature {FEATURES}, shape ({len(FEATURES)},); got {v.shape}"
        )
    return "  ".join(f"{f} {x:{fmt}}" for f, x in zip(FEATURES, v, strict=True))


def projections() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(Q, K, V)`` for the toy sentence, each of shape (8, 4)."""
    return X @ W_q, X @ W_k, X @ W_v  # (n, d_model) @ (d_model, d) -> (n, d)


def scores() -> np.ndarray:
    """Raw similarity scores ``Q Kᵀ`` of the toy sentence, shape (8, 8)."""
    Q, K, _ = projections()
    return attention_scores(Q, K)


def scaled_scores() -> np.ndarray:
    """Scores divided by ``sqrt(d_k) = 2``: the input to softmax, shape (8, 8)."""
    Q, K, _ = projections()
    return attention_scores(Q, K) / np.sqrt(K.shape[-1])


def attention(temperature: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Run scaled dot-product attention on the toy sentence: ``(output, weights)``."""
    Q, K, V = projections()
    return scaled_dot_product_attention(Q, K, V, temperature=temperature)
