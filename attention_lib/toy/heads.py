"""Four hand-built attention heads for the running example (chapter 7).

The sentence keeps its token vectors ``X`` (``d_model = 4``; features food, person,
action, pointer). Here the four columns of each weight matrix are cut into ``h = 4``
heads of width ``d_k = d_v = 1``, so head ``i`` owns column ``i`` of ``W_q``, ``W_k``
and ``W_v``. With a width of 1, a head's query and key for a token are single numbers
``q`` and ``k``, and its score is just the product ``q * k`` (and ``sqrt(d_k) = 1``, so
there is nothing to scale). That makes every head checkable by hand:

* a token whose ``q`` is 0 asks nothing: its row of weights is uniform, 1/8 each;
* a token whose ``q`` is positive prefers the keys with the largest ``k``, and the
  larger its ``q``, the more decisively.

So each head is a pair of columns: *who asks* (``W_q``) and *what answers* (``W_k``).
All queries are 0 or positive (``X`` has no negative entries and neither has ``W_q``),
so no row is pushed towards the smallest key. The numbers are chosen, not trained, so
that the heads tell the article's story:

* **pronoun**: "it" -> "cake" (0.73);
* **verb-object**: "ate" -> "cake" (0.86);
* **sentiment**: "delicious" -> "cake" (0.73);
* **verb-subject**: "ate" -> "I" (0.90). "ate" needs both its object and its subject,
  and one row of one head can only favour one of them: that is why there are heads.

``tests/test_ch07_multi_head.py`` asserts each of these. Use them through
``toy.heads`` (``toy.heads.W_q`` ...), which keeps them apart from the one-head
``toy.W_q`` of the sentence.
"""

from __future__ import annotations

import numpy as np

from ..heads import multi_head_attention
from .sentence import X

#: One name per head, in column order: head ``i`` uses column ``i`` of each matrix.
HEAD_NAMES = ("pronoun", "verb-object", "sentiment", "verb-subject")

#: Number of heads the weights are built for; ``d_k = d_model / N_HEADS = 1``.
N_HEADS = 4

#: Queries, one column per head; rows are the features of ``X``. *Who asks?*
#:
#: * pronoun: pointer words ask ("it" most, with pointer 1.0; "the" and "and" a little);
#: * verb-object and verb-subject: actions ask ("ate" most; "was" a little);
#: * sentiment: food words ask for the food they describe ("delicious", and "cake"
#:   itself, which therefore looks at itself).
#:
#: The person row is all zeros: "I" asks nothing in these heads, so its rows are uniform.
W_q = np.array(
    [
        # pron  v-obj sent  v-subj
        [0.0, 0.0, 3.0, 0.0],  # food    ->
        [0.0, 0.0, 0.0, 0.0],  # person  ->
        [0.0, 2.0, 0.0, 2.0],  # action  ->
        [2.0, 0.0, 0.0, 0.0],  # pointer ->
    ]
)

#: Keys, one column per head. *What answers?*
#:
#: * pronoun: things and people can be referred to, actions cannot (food 2, person 1,
#:   action -1), so "cake" answers first and "I" is the runner-up;
#: * verb-object: what can be eaten is food and not an action (food 2, action -2);
#: * sentiment: the thing described is food, or a pointer standing in for it
#:   (food 2, action -1, pointer 1), so "it" is the runner-up, as in "it was delicious";
#: * verb-subject: who does things is a person (person 2, action -1), so "I" answers.
W_k = np.array(
    [
        # pron  v-obj sent  v-subj
        [2.0, 2.0, 2.0, 0.0],  # food    ->
        [1.0, 0.0, 0.0, 2.0],  # person  ->
        [-1.0, -2.0, -1.0, -1.0],  # action  ->
        [0.0, 0.0, 1.0, 0.0],  # pointer ->
    ]
)

#: Values, one column per head: the one number each head hands back. The pronoun,
#: verb-object and sentiment heads fetch *food-ness* ("it" learns that it stands for
#: food); the verb-subject head fetches *person-ness* ("ate" learns that a person did it).
W_v = np.array(
    [
        # pron  v-obj sent  v-subj
        [1.0, 1.0, 1.0, 0.0],  # food    ->
        [0.0, 0.0, 0.0, 1.0],  # person  ->
        [0.0, 0.0, 0.0, 0.0],  # action  ->
        [0.0, 0.0, 0.0, 0.0],  # pointer ->
    ]
)

#: Output projection: the identity, so column ``i`` of the output is exactly what head
#: ``i`` brought back and can be read on its own. A trained ``W_o`` mixes the heads.
W_o = np.eye(4)

# Read-only, like the rest of the toy: use .copy() to experiment.
for _array in (W_q, W_k, W_v, W_o):
    _array.setflags(write=False)


def head_names(h: int = N_HEADS) -> tuple[str, ...]:
    """Names for the heads when the same weights are cut into ``h`` heads (1, 2 or 4).

    With fewer heads, each head owns several of the hand-built columns, so its name
    lists them: ``head_names(2) == ("pronoun + verb-object", "sentiment + verb-subject")``.
    """
    if h not in (1, 2, 4):
        raise ValueError(f"the toy heads have d_model = 4 columns; h must be 1, 2 or 4, got {h!r}")
    per_head = N_HEADS // h
    return tuple(" + ".join(HEAD_NAMES[i : i + per_head]) for i in range(0, N_HEADS, per_head))


def attention(h: int = N_HEADS) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head attention of the toy sentence with these weights: ``(output, weights)``.

    Returns
    -------
    output : ndarray of shape (8, 4)
        Column ``i`` is what head ``i`` fetched (with ``h = 4``).
    weights : ndarray of shape (h, 8, 8)
        One attention matrix per head.
    """
    return multi_head_attention(X, W_q, W_k, W_v, W_o, h=h)
