"""The streaming-service analogy of chapters 2 and 6, as numbers.

The article blends "25% Star Wars, 20% Interstellar, 10% Chef, and so on" into a
personal movie mood of (6.9 adventure, 2.4 humour, 137 min). Its "and so on" hides the
rest of the catalogue, so the sum cannot be checked. This course completes it with two
films of its own choosing, Dune (2021) and Tampopo (1985): the article names neither.
Their interests (0.25, 0.20) and their adventure and humour ratings are invented so
that the article's total comes out exactly: with these interests, no other whole
ratings from 0 to 10 give 6.9 and 2.4. Every running time is the film's real
theatrical length: Star Wars 121, Interstellar 169 and Chef 114 minutes (the article's
figures), Dune 155 and Tampopo 114 minutes.

Chapter 2 uses the same five films for the search analogy: each film is labelled with
tags (its *key*), a search for "science fiction" is a *query*, and the cards are the
*values* a match hands back.
"""

from __future__ import annotations

import numpy as np

#: The movie mood of chapter 6: how much you want each film (sums to 1), and its card.
MOVIES = ("Star Wars", "Interstellar", "Chef", "Dune", "Tampopo")
MOVIE_FEATURES = ("adventure", "humour", "minutes")
MOVIE_INTEREST = np.array([0.25, 0.20, 0.10, 0.25, 0.20])
MOVIE_CARDS = np.array(
    [
        [8.0, 2.0, 121.0],  # Star Wars
        [7.0, 1.0, 169.0],  # Interstellar
        [3.0, 6.0, 114.0],  # Chef
        [8.0, 2.0, 155.0],  # Dune: invented interest and ratings, real minutes
        [6.0, 3.0, 114.0],  # Tampopo: invented interest and ratings, real minutes
    ]
)

for _array in (MOVIE_INTEREST, MOVIE_CARDS):  # read-only, like the sentence's arrays
    _array.setflags(write=False)

#: The search analogy of chapter 2: the tags a catalogue labels its films with.
MOVIE_TAGS = ("sci-fi", "action", "comedy", "food")

#: Each film's key, shape (5, 4): how strongly it carries each tag of MOVIE_TAGS, from 0
#: (not at all) to 1. Interstellar is the purest science fiction; Star Wars is more
#: space adventure than science, so it gets a little less.
MOVIE_KEYS = np.array(
    [
        # sci-fi action comedy food
        [0.8, 1.0, 0.2, 0.0],  # Star Wars
        [1.0, 0.3, 0.0, 0.0],  # Interstellar
        [0.0, 0.0, 0.8, 1.0],  # Chef
        [0.9, 0.8, 0.0, 0.0],  # Dune
        [0.0, 0.2, 0.7, 1.0],  # Tampopo
    ]
)

#: A search for "science fiction", shape (4,): weight on the sci-fi tag only. The size,
#: 3, says how keen the searcher is: the larger it is, the more the best matches win over
#: the rest once the match scores become shares (chapter 5 explains why).
SCI_FI_QUERY = np.array([3.0, 0.0, 0.0, 0.0])

for _array in (MOVIE_KEYS, SCI_FI_QUERY):
    _array.setflags(write=False)


def catalogue(*, interest: bool = False) -> str:
    """The five films as a printable table: each film's key (its tags) and its card.

    With ``interest=True`` the first columns hold the article's interest in each film
    (chapter 6) instead of the tags (chapter 2).
    """
    first = ("interest",) if interest else MOVIE_TAGS
    left = MOVIE_INTEREST[:, None] if interest else MOVIE_KEYS  # (5, 1) or (5, 4)
    lines = [f"{'':>12}" + "".join(f"{t:>8}" for t in first) + " |"]
    lines[0] += "".join(f"{f:>10}" for f in MOVIE_FEATURES)
    for film, tags, card in zip(MOVIES, left, MOVIE_CARDS, strict=True):
        row = "".join(f"{v:8.2f}" for v in tags) + " |" + "".join(f"{v:10.0f}" for v in card)
        lines.append(f"{film:>12}{row}")
    return "\n".join(lines)
