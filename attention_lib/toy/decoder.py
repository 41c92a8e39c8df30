r"""Chapter 12: a corpus about food, and a tiny decoder trained on it to write the next word.

The corpus, ``data/food.txt``, is the project's own text under the project's licence:
6,000 different short sentences that ``tools/authoring/make_corpus.py`` generated from templates
with a fixed seed (its docstring says how). What a food tastes like depends on its kind
(cakes are "delicious" or "sweet", lemons "sour", ...), and the running example "I ate
the cake and it was delicious ." is deliberately not in it.

:func:`split` holds sentences out *before* training; :func:`train` fits
:mod:`attention_lib.decoder` with Adam on minibatches of whole sentences, each padded to
:data:`N_CTX` tokens; :func:`baselines` gives the unigram and bigram models the
decoder has to beat. Everything is seeded: the same call gives the same numbers.
"""

from __future__ import annotations

from importlib.resources import files
from typing import NamedTuple

import numpy as np

from ..core import softmax
from ..decoder import cross_entropy, forward, forward_with_heads, head_outputs, init_params
from ..decoder_backward import loss_and_gradients
from .corpus_rules import well_formed as well_formed  # the judge of written sentences

BOS, PAD = "<s>", "<pad>"  # start of a sentence; filler after its "."
N_CTX = 14  # positions: <s> and the longest sentence (13 tokens, "." included)
D_MODEL, HEADS, D_FF = 32, 4, 64
EXAMPLE = "I ate the cake and it was".split()


def sentences() -> list[str]:
    """The corpus: one sentence per item, words and "." separated by single spaces."""
    return files("attention_lib.toy").joinpath("data/food.txt").read_text().splitlines()


SENTENCES = tuple(sentences())
#: Every word of the corpus, in order of first use, after ``<pad>`` (id 0) and ``<s>``.
VOCAB = (PAD, BOS, *dict.fromkeys(w for s in SENTENCES for w in s.split()))
INDEX = {word: i for i, word in enumerate(VOCAB)}


def encode(words) -> np.ndarray:
    """Token ids of a list of words (or one string of words), shape (len(words),)."""
    words = words.split() if isinstance(words, str) else list(words)
    unknown = [w for w in words if w not in INDEX]
    if unknown:
        raise ValueError(f"{unknown[0]!r} is not in the corpus's vocabulary of {len(VOCAB)} words")
    return np.array([INDEX[w] for w in words], dtype=np.int64)


def decode(ids) -> str:
    """The words of some token ids, joined by spaces (``<s>`` and ``<pad>`` left out)."""
    return " ".join(VOCAB[int(i)] for i in ids if int(i) > 1)


class Batch(NamedTuple):
    """Sentences as rows of ``N_CTX`` ids: ``<s>`` first, ``<pad>`` after the ".".

    ``ids`` (m, n) are the inputs; ``targets`` (m, n) the word after each input;
    ``weights`` (m, n) is 1 where that target is a real word and 0 at padding.
    """

    ids: np.ndarray
    targets: np.ndarray
    weights: np.ndarray


def batch(texts) -> Batch:
    """Encode sentences (strings) as a :class:`Batch` of next-word problems."""
    rows = np.zeros((len(texts), N_CTX + 1), dtype=np.int64)  # PAD is 0
    for r, text in enumerate(texts):
        ids = encode([BOS, *text.split()])
        if len(ids) > N_CTX + 1:
            raise ValueError(f"{text!r} is longer than the model's {N_CTX} positions")
        rows[r, : len(ids)] = ids
    targets = rows[:, 1:]
    return Batch(rows[:, :-1], targets, (targets != 0).astype(float))


def split(n_test: int = 600, seed: int = 0, texts=None) -> tuple[Batch, Batch]:
    """Shuffle ``texts`` (None: the corpus) with ``seed``; hold ``n_test`` out: (train, test).

    The split happens before any training and the corpus has no repeated sentence, so
    no test sentence is ever seen while learning. Pass other ``texts`` (e.g. the corpus
    without some word) to split those the same way.
    """
    texts = SENTENCES if texts is None else texts  # None: help() shows no 276 kB default
    order = np.random.default_rng(seed).permutation(len(texts))
    shuffled = [texts[i] for i in order]
    return batch(shuffled[n_test:]), batch(shuffled[:n_test])


def baselines(train: Batch, test: Batch, smoothing: float = 0.1) -> dict:
    """Held-out cross-entropy of two models without attention: ``{"unigram", "bigram"}``.

    The unigram model predicts every word with its frequency in ``train``; the bigram
    model from the previous word alone. Both add ``smoothing`` to every count, so a pair
    never seen in training still gets a small probability.
    """
    V, real = len(VOCAB), train.weights > 0
    counts = np.bincount(train.targets[real], minlength=V) + smoothing  # (V,)
    pairs = np.full((V, V), smoothing)  # pairs[a, b]: how often b followed a
    np.add.at(pairs, (train.ids[real], train.targets[real]), 1.0)
    test_real = test.weights > 0
    unigram = -np.log(counts[test.targets[test_real]] / counts.sum()).mean()
    bigram_p = pairs / pairs.sum(axis=1, keepdims=True)  # (V, V): rows sum to 1
    bigram = -np.log(bigram_p[test.ids[test_real], test.targets[test_real]]).mean()
    return {"unigram": float(unigram), "bigram": float(bigram)}


def adam_step(params: dict, grads: dict, state: dict, lr: float, t: int, b1=0.9, b2=0.99):
    r"""One Adam update, in place: each weight moves by about ``lr``, scaled per entry.

    :math:`m \leftarrow \beta_1 m + (1-\beta_1) g`, :math:`v \leftarrow \beta_2 v +
    (1-\beta_2) g^2`, then :math:`W \leftarrow W - \eta\, \hat m / (\sqrt{\hat v} +
    10^{-8})` with the bias corrections :math:`\hat m = m / (1 - \beta_1^t)`,
    :math:`\hat v = v / (1 - \beta_2^t)`.
    """
    for name, g in grads.items():
        m, v = state.setdefault(name, (np.zeros_like(g), np.zeros_like(g)))
        m[:] = b1 * m + (1 - b1) * g  # running mean of the gradient
        v[:] = b2 * v + (1 - b2) * g * g  # and of its square: its usual size
        m_hat, v_hat = m / (1 - b1**t), v / (1 - b2**t)  # bias corrections
        params[name] -= lr * m_hat / (np.sqrt(v_hat) + 1e-8)


class TrainingRun(NamedTuple):
    """What :func:`train` returns: the weights and the losses it recorded."""

    params: dict  # the trained weights
    steps: np.ndarray  # (k,) the steps at which the held-out loss was measured
    train_loss: np.ndarray  # (k,) cross-entropy on the first 600 training sentences, same steps
    test_loss: np.ndarray  # (k,) held-out cross-entropy at those steps


def train(
    train: Batch,
    test: Batch,
    *,
    steps=800,
    batch_size=32,
    lr=0.01,
    seed=0,
    every=100,
    adam=True,
    attention=True,
):
    """Adam on minibatches of ``batch_size`` sentences, from :func:`init_params`.

    With ``adam=False``, plain gradient descent instead: every weight moves by ``lr`` times
    its gradient, as in chapter 10. With ``attention=False``, a control: ``W_o`` stays 0, so
    attention adds nothing and each position sees only its own token and position.

    The learning rate decays linearly to 0 over the steps. Every ``every`` steps (and at
    step 0), or at each step of ``every`` if it is a list of steps, the loss is measured
    (measuring draws no random numbers), with the weights of that moment, on the held-out
    sentences and on as many training sentences (the first ones, always the same), so the
    two curves compare like with like. Deterministic for a given ``seed``.
    """
    params = init_params(len(VOCAB), D_MODEL, N_CTX, D_FF, seed=seed)
    if not attention:
        params["W_o"][:] = 0  # and its gradient is zeroed below: attention stays silent
    rng = np.random.default_rng(seed)
    seen = Batch(*(a[: len(test.ids)] for a in train))  # training sentences to measure on
    state, measured = {}, []  # state: Adam's running averages
    at = set(range(0, steps + 1, every)) if np.ndim(every) == 0 else set(every)

    def measure(step):  # the losses after ``step`` steps; draws no random numbers
        if step in at:
            held_out = cross_entropy(forward(params, test.ids, HEADS)[0], *test[1:])
            on_train = cross_entropy(forward(params, seen.ids, HEADS)[0], *seen[1:])
            measured.append((step, on_train, held_out))

    measure(0)
    for step in range(steps):
        rows = rng.choice(len(train.ids), size=batch_size, replace=False)
        ids, targets, weights = (a[rows] for a in train)  # the minibatch
        _, grads = loss_and_gradients(params, HEADS, ids, targets, weights)
        if not attention:  # the control: W_o stays 0
            grads["W_o"][:] = 0
        rate = lr * (1 - step / steps)  # falls linearly to 0
        if adam:  # beta_2 = 0.99 in adam_step; PyTorch's default is 0.999
            adam_step(params, grads, state, rate, step + 1)
        else:  # plain gradient descent, as in chapter 10
            for name, g in grads.items():
                params[name] -= rate * g
        measure(step + 1)
    return TrainingRun(params, *map(np.array, zip(*measured, strict=True)))


def next_word_probabilities(params: dict, words) -> np.ndarray:
    """P(next word | ``<s>`` + words) for every word of :data:`VOCAB`, shape (len(VOCAB),)."""
    logits, _ = forward(params, encode([BOS, *words]), HEADS)  # (n, V)
    return softmax(logits[-1])


def mean_ablated(params: dict, words, heads, reference: Batch) -> np.ndarray:
    """P(next word | ``<s>`` + words) with the listed heads (counted from 1) mean-ablated.

    Each listed head's output at position ``i`` is replaced by its average at position
    ``i`` over the real tokens of ``reference`` (e.g. the held-out sentences): the head
    still adds a typical vector, but one that knows nothing of *this* sentence.
    """
    ids = encode([BOS, *words])  # (n,)
    n, bad = len(ids), [k for k in heads if not 1 <= k <= HEADS]
    if bad:
        raise ValueError(f"heads are counted from 1 to {HEADS}, got {bad[0]}")
    idx = [k - 1 for k in heads]
    mean = _mean_head_outputs(params, reference.ids[:, :n])  # (h, n, d_model), held out
    outputs = head_outputs(params, ids, HEADS)  # (h, n, d_model), this sentence's
    outputs[idx] = mean[idx]  # the listed heads' outputs swapped for their averages
    return softmax(forward_with_heads(params, ids, outputs)[-1])  # the rest, rerun


def _mean_head_outputs(params: dict, ref_ids: np.ndarray) -> np.ndarray:
    """Each head's output at each position, averaged over the real tokens of ``ref_ids``."""
    real = (ref_ids != INDEX[PAD])[:, None, :, None]  # (m, 1, n, 1)
    ref = head_outputs(params, ref_ids, HEADS)  # (m, h, n, d_model)
    return (ref * real).sum(axis=0) / real.sum(axis=0)  # (h, n, d_model)
