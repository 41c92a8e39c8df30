"""Four hand-built attention heads for the running example (chapter 7).

The sentence keeps its token vectors ``X`` (``d_model = 4``; features food, person,
action, pointer). Here the four columns of each weight matrix are cut into ``h = 4``
heads of width ``d_k = d_v = 1``: head 1 owns column 0 of ``W_q``, ``W_k`` and ``W_v``,
head 2 column 1, and so on (the chapter counts heads from 1, NumPy from 0). With a
width of 1, a head's query and key for a token are single numbers ``q`` and ``k``, and
its score is just ``q * k`` (``sqrt(d_k) = 1``: nothing to scale). So every head is
checkable by hand:

* a token whose ``q`` is 0 asks nothing: its row of weights is uniform, 1/8 each;
* a token whose ``q`` is positive prefers the keys with the largest ``k``, and the
  larger its ``q``, the more decisively (exercise 7.4 asks why, and what a negative
  ``q`` does).

Width 1 is deliberately thin, so that every number can be read by hand; real heads are
usually 64 or 128 wide (from 32 to 256). Chapter 7 builds heads two numbers wide: the
object and subject heads for "ate" in the text, and one head that serves three askers in
exercise 7.4.
Each head is three columns: *who asks* (``W_q``), *what answers* (``W_k``) and *what
comes back* (``W_v``). All queries are 0 or positive (``X`` has no negative entries and
neither has ``W_q``). The numbers are chosen by hand, not trained, so that the heads
tell the article's story:

* **pronoun**: "it" -> "cake" (0.73);
* **verb-object**: "ate" -> "cake" (0.86);
* **food-topic**: "delicious" -> "cake" (0.73). The article imagines a *sentiment*
  head here; ``X`` has no feature for praise, so this head can only read *food*: the
  words about food ask for the food itself;
* **verb-subject**: "ate" -> "I" (0.90). "ate" needs both its object and its subject;
  one head would split its row between them and hand back one weighted average of their
  values, in which features the two share can no longer be told apart: that is why there
  are heads (chapter 7 shows it with an object head and a subject head of width 2).

``tests/test_ch07_multi_head.py`` asserts each of these. Use them through
``toy.heads`` (``toy.heads.W_q`` ...), which keeps them apart from the one-head
``toy.W_q`` of the sentence.
"""

from __future__ import annotations

import numpy as np

from ..heads import multi_head_attention
from .sentence import W_v as _W_v_sentence
from .sentence import X

#: One name per head, in column order: head 1 is column 0 of each matrix.
HEAD_NAMES = ("pronoun", "verb-object", "food-topic", "verb-subject")

#: Number of heads the weights are built for; ``d_k = d_model / N_HEADS = 1``.
N_HEADS = 4

# Rows are the features of X; column j is head j + 1. Pronoun: pointers ask; food
# answers, people less (+1), actions least (-1). Verb-object: actions ask; food
# answers. Food-topic: food words ask; food answers, and a pointer less (+1).
# Verb-subject: actions ask; a person answers. Values: heads 1 to 3 return a word's
# food ("it" learns that it stands for food), head 4 its person ("ate" learns that a
# person did it). W_o is the identity, so each head's value keeps its own output
# column; a trained W_o mixes the heads.
# The chapter shows the lines from here to "# fmt: on" in two listings, each at most 39
# characters wide so that it fits a phone's code box without wrapping.
# fmt: off
#     1   2   3   4   <- head
W_q = np.array([  # who asks
    [ 0,  0,  3,  0],   # food
    [ 0,  0,  0,  0],   # person
    [ 0,  2,  0,  2],   # action
    [ 2,  0,  0,  0],   # pointer
], dtype=float)
W_k = np.array([  # what answers
    [ 2,  2,  2,  0],   # food
    [ 1,  0,  0,  2],   # person
    [-1, -2, -1, -1],   # action
    [ 0,  0,  1,  0],   # pointer
], dtype=float)
# what each head returns, and W_o
#     1   2   3   4   <- head
W_v = np.array([  # what comes back
    [ 1,  1,  1,  0],   # food
    [ 0,  0,  0,  1],   # person
    [ 0,  0,  0,  0],   # action
    [ 0,  0,  0,  0],   # pointer
], dtype=float)
W_o = np.eye(4)  # the identity
# fmt: on

# The pair, chapter 7's opening: two heads of width 2 for "ate", as (W_q, W_k, W_v, W_o).
# Both key on a word's (food, person) and return its values of chapters 2 to 6, (noun,
# human). An action asks for food in the object head (columns 0-1) and for a person in
# the subject head (columns 2-3). Run as one head (h = 1), the same matrices give "ate"
# one row that splits between "cake" and "I" and returns one average of their values.
_pair_q = np.zeros((4, 4))
_pair_q[2] = [16.0, 0.0, 0.0, 16.0]  # the action row: who asks, and how loudly
PAIR = (_pair_q, np.eye(4)[:, [0, 1, 0, 1]], _W_v_sentence[:, [0, 3, 0, 3]], np.eye(4))

# Read-only, like the rest of the toy: use .copy() to experiment.
for _array in (W_q, W_k, W_v, W_o, *PAIR):
    _array.setflags(write=False)


def head_names(h: int = N_HEADS) -> tuple[str, ...]:
    """Names for the heads when the same weights are cut into ``h`` heads (1, 2 or 4).

    With fewer heads, each head owns several of the hand-built columns, so its name
    lists them: ``head_names(2) == ("pronoun + verb-object", "food-topic + verb-subject")``.
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
        Column ``j`` is what head ``j + 1`` fetched (with ``h = 4``).
    weights : ndarray of shape (h, 8, 8)
        One attention matrix per head.
    """
    return multi_head_attention(X, W_q, W_k, W_v, W_o, h=h)
