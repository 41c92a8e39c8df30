"""The streaming-service analogy of chapter 6, as numbers.

The article blends "25% Star Wars, 20% Interstellar, 10% Chef, and so on" into a
personal movie mood of (6.9 adventure, 2.4 humour, 137 min). Its "and so on" hides the
rest of the catalogue; here it is in full, with interests that sum to 1, so the blend
can be checked rather than taken on trust.
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
