"""The streaming-service analogy of chapter 6, as numbers.

The article blends "25% Star Wars, 20% Interstellar, 10% Chef, and so on" into a
personal movie mood of (6.9 adventure, 2.4 humour, 137 min). Its "and so on" hides the
rest of the catalogue; here it is in full, with interests that sum to 1, so the blend
can be checked rather than taken on trust.

Chapter 2 uses the same five films for the search analogy: each film is labelled with
tags (its *key*), a search for "science fiction" is a *query*, and the cards above are
the *values* a match hands back.
"""

from __future__ import annotations

import numpy as np

#: The streaming-service analogy: how much you want each film, and what each film is.
MOVIES = ("Star Wars", "Interstellar", "Chef", "Dune", "Ratatouille")
MOVIE_FEATURES = ("adventure", "humour", "minutes")
MOVIE_INTEREST = np.array([0.25, 0.20, 0.10, 0.25, 0.20])
MOVIE_CARDS = np.array(
    [
        [8.0, 2.0, 121.0],  # Star Wars
        [7.0, 1.0, 169.0],  # Interstellar
        [3.0, 6.0, 114.0],  # Chef
        [8.0, 2.0, 155.0],  # Dune
        [6.0, 3.0, 114.0],  # Ratatouille
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
        [0.0, 0.2, 0.7, 1.0],  # Ratatouille
    ]
)

#: A search for "science fiction", shape (4,): weight on the sci-fi tag only. The size,
#: 3, says how keen the searcher is: the larger it is, the more the best matches win over
#: the rest once the match scores become shares (chapter 5 explains why).
SCI_FI_QUERY = np.array([3.0, 0.0, 0.0, 0.0])

for _array in (MOVIE_KEYS, SCI_FI_QUERY):
    _array.setflags(write=False)
