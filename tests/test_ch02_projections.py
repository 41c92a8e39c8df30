"""Chapter 2: the movie search data, the shape diagram, and the chapter's checkers."""

import base64
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest

import attention_lib as al
from attention_lib import toy
from attention_lib.checks import check_one_score, check_projection_element, check_self_matches
from attention_lib.plotting import figure_html, matmul_diagram, token_panels

CAKE, DELICIOUS, WAS = (toy.token_index(t) for t in ("cake", "delicious", "was"))

# --- The search analogy's data -----------------------------------------------------------


def test_movie_keys_and_query_fit_the_catalogue():
    assert toy.MOVIE_KEYS.shape == (len(toy.MOVIES), len(toy.MOVIE_TAGS)) == (5, 4)
    assert toy.SCI_FI_QUERY.shape == (len(toy.MOVIE_TAGS),)
    assert toy.MOVIE_TAGS[int(np.argmax(toy.SCI_FI_QUERY))] == "sci-fi"
    assert np.allclose(toy.MOVIE_KEYS, np.round(toy.MOVIE_KEYS, 1))  # checkable by hand
    assert toy.MOVIE_KEYS.min() >= 0 and toy.MOVIE_KEYS.max() <= 1


def test_new_movie_arrays_are_read_only():
    with pytest.raises(ValueError, match="read-only"):
        toy.MOVIE_KEYS[0, 0] = 9.0
    with pytest.raises(ValueError, match="read-only"):
        toy.SCI_FI_QUERY[0] = 9.0


def test_sci_fi_search_finds_the_sci_fi_films_and_blends_their_cards():
    scores = toy.MOVIE_KEYS @ toy.SCI_FI_QUERY  # (5,)
    ranked = [toy.MOVIES[i] for i in np.argsort(-scores, kind="stable")]
    assert ranked[:3] == ["Interstellar", "Dune", "Star Wars"]
    assert scores[toy.MOVIES.index("Chef")] == scores[toy.MOVIES.index("Tampopo")] == 0
    weights = al.softmax(scores)
    assert weights[[1, 3, 0]].sum() > 0.95  # the three sci-fi films take almost everything
    blend = weights @ toy.MOVIE_CARDS
    # The search is attention: one query, five keys, five values, no scaling.
    output, w = al.scaled_dot_product_attention(
        toy.SCI_FI_QUERY[None], toy.MOVIE_KEYS, toy.MOVIE_CARDS, scale=1.0
    )
    assert np.allclose(output[0], blend) and np.allclose(w[0], weights)
    assert np.round(blend, 1).tolist() == [7.4, 1.7, 151.3]


# --- The shape diagram ------------------------------------------------------------------


def texts(fig):
    return [t.get_text() for t in fig.axes[0].texts]


def test_matmul_diagram_labels_names_shapes_and_the_matching_inner_dimension():
    fig, alt = matmul_diagram((1, 4), (4, 4), names=("x_cake", "W_q", "q_cake"))
    labels = texts(fig)
    for label in ("x_cake", "W_q", "q_cake", "[1 × 4]", "[4 × 4]"):
        assert label in labels
    assert labels.count("[1 × 4]") == 2  # the token row and its projection
    assert any("match: 4 = 4" in t for t in labels)
    assert alt.startswith("Shape diagram. x_cake [1 × 4] times W_q [4 × 4] gives q_cake [1 × 4]")
    assert "inner dimensions match" in alt
    plt.close(fig)


def test_matmul_diagram_is_general_and_sizes_boxes_by_shape():
    fig, alt = matmul_diagram((3, 6), (6, 2), names=("A", "B", "C"))
    assert "[3 × 6]" in texts(fig) and "[6 × 2]" in texts(fig) and "[3 × 2]" in texts(fig)
    outlines = [
        (p.get_width(), p.get_height()) for p in fig.axes[0].patches if p.get_linewidth() == 1.4
    ]
    assert outlines == [(6, 3), (2, 6), (2, 3)]  # width = columns, height = rows
    assert "C [3 × 2]" in alt
    plt.close(fig)


def test_matmul_diagram_prints_values_and_spells_out_the_highlighted_element():
    x = toy.X[CAKE : CAKE + 1]  # (1, 4)
    fig, alt = matmul_diagram(x, toy.W_q, names=("x_cake", "W_q", "q_cake"), highlight=(0, 0))
    labels = texts(fig)
    assert labels.count("1.6") == 2  # W_q[0, 0] and q_cake[0]
    assert "0.9" in labels and "1.8" in labels
    assert "q_cake[0, 0] is row 0 of x_cake dot column 0 of W_q" in alt
    assert alt.endswith("1 × 1.6 + 0 × 0 + 0 × 0.8 + 0 × 1.8 = 1.6.")
    thick = [p for p in fig.axes[0].patches if p.get_linewidth() == 2.5]
    assert len(thick) == 3  # the row, the column and the product's cell
    plt.close(fig)


def test_matmul_diagram_shows_a_mismatch_instead_of_a_product():
    fig, alt = matmul_diagram((8, 4), (3, 4), names=("X", "W", "XW"))
    labels = texts(fig)
    assert "no product" in labels and "?" in labels
    assert any("differ: 4 ≠ 3" in t for t in labels)
    assert "the inner dimensions differ (4 columns against 3 rows)" in alt
    plt.close(fig)


@pytest.mark.parametrize(
    ("left", "right"), [((8, 4), (4, 2)), ((8, 4), (3, 4)), ((1, 4), (4, 4)), ((8, 4), (4, 4))]
)
def test_matmul_diagram_keeps_every_label_inside_the_figure(left, right):
    # The exercise on narrower projections draws (8, 4) @ (4, 2): its verdict once ran off
    # both edges. Shape-only diagrams use smaller cells, so their labels read on a phone.
    fig, _ = matmul_diagram(left, right, rows=[f"t{i}" for i in range(left[0])])
    fig.canvas.draw()
    box = fig.bbox
    for text in fig.axes[0].texts:
        extent = text.get_window_extent()
        assert box.x0 - 1 <= extent.x0 and extent.x1 <= box.x1 + 1, text.get_text()
    assert fig.get_size_inches()[0] <= 5.0  # the 8-token diagram was 7 in wide with numbers
    plt.close(fig)


def test_matmul_diagram_scales_large_shapes_and_closes_cleanly():
    html = figure_html(*matmul_diagram((512, 64), (64, 512)))
    assert "[512 × 512]" in html
    assert plt.get_fignums() == []


def test_matmul_diagram_rejects_bad_input_with_named_problems():
    with pytest.raises(ValueError, match=r"2-D matrix.*shape \(4,\): write one row as"):
        matmul_diagram(toy.X[0], toy.W_q)
    with pytest.raises(ValueError, match="names must be three strings"):
        matmul_diagram((1, 4), (4, 4), names=("x", "W"))
    with pytest.raises(ValueError, match="one label per row of left"):
        matmul_diagram(toy.X, toy.W_q, rows=toy.TOKENS[:3])
    with pytest.raises(ValueError, match=r"highlight \(8, 0\) is outside the product"):
        matmul_diagram(toy.X, toy.W_q, highlight=(8, 0))
    with pytest.raises(ValueError, match="inner dimensions do not match"):
        matmul_diagram((8, 4), (3, 4), highlight=(0, 0))
    with pytest.raises(TypeError, match="highlight must be"):
        matmul_diagram((8, 4), (4, 4), highlight=(0.5, 1))
    with pytest.raises(ValueError, match="positive sides"):
        matmul_diagram((0, 4), (4, 4))
    assert plt.get_fignums() == []  # nothing half-drawn is left open


# --- check_projection_element -------------------------------------------------------------

ELEMENT = {"x_name": "x_delicious", "W_name": "W_q", "others": {"W_k": toy.W_k, "W_v": toy.W_v}}


def check_delicious(answer):
    return check_projection_element(answer, toy.X[DELICIOUS], toy.W_q, 0, **ELEMENT)


def test_projection_element_expects_the_library_value(capsys):
    Q = toy.projections()[0]
    assert round(Q[DELICIOUS, 0], 2) == 1.36  # 0.7 × 1.6 + 0.3 × 0.8
    assert check_delicious(1.36) and check_delicious(float(Q[DELICIOUS, 0]))
    assert capsys.readouterr().out.count("[projection-element] PASS") == 2


@pytest.mark.parametrize(
    ("answer", "status", "hint"),
    [
        (1.12, "FAIL", "2 slips give this number: x_delicious · (row 0 of W_q); or only"),
        (0.24, "FAIL", "only the product 0.3 × 0.8"),
        (4.2, "FAIL", "you added up column 0 of W_q without x_delicious"),
        (0.7, "FAIL", "W_k or W_v used instead of W_q; or position 0 of x_delicious alone"),
        (1.4, "FAIL", "close: that is the answer rounded to one decimal. Give 2 decimals."),
        (0.37, "FAIL", "that is element 1, from column 1 of W_q; the question asks for element 0"),
        (0.63, "FAIL", "that is element 3, from column 3 of W_q"),
        (2.0, "FAIL", "2 is too high. Pair each entry of x_delicious with the entry"),
        # review 02_p: the right size with the wrong sign is named as such
        (-1.36, "FAIL", "the sign is wrong: x_delicious and column 0 of W_q have no negative"),
        # 0.7 × 1.6 + 0.3 × 0.4: the second factor from the wrong place
        (1.24, "FAIL", "same row of column 0 of W_q, (1.6, 0, 0.8, 1.8)"),
        (None, "TODO", "replace None with your number"),
        ("1.36", "FAIL", "expected one number, got '1.36': remove the quotes: give a number."),
        (float("nan"), "FAIL", "expected a finite number"),
    ],
)
def test_each_projection_element_mistake_gets_its_own_hint(answer, status, hint, capsys):
    result = check_delicious(answer)
    line = capsys.readouterr().out
    assert not result and result.status == status
    assert line.startswith(f"[projection-element] {status}: ")
    assert hint in line


def test_row_hint_stands_alone_when_no_single_product_matches(capsys):
    # Q_was[1] = 0.6 × 0.3 = 0.18; row 1 of W_q gives 0.6 × 0.4 = 0.24, no product of column 1.
    x = toy.X[WAS]
    assert not check_projection_element(0.24, x, toy.W_q, 1, x_name="x_was", W_name="W_q")
    line = capsys.readouterr().out
    assert "that is x_was · (row 1 of W_q). Element 1 uses column 1" in line
    assert "slips give" not in line
    assert check_projection_element(0.84, x, toy.W_q, 0)


# --- check_self_matches -------------------------------------------------------------------

Q = toy.projections()[0]
S_SHARED = al.attention_scores(Q, Q)  # one matrix for queries and keys


def test_shared_scores_are_symmetric_and_only_three_words_prefer_themselves():
    assert np.allclose(S_SHARED, S_SHARED.T)
    best = [toy.TOKENS[j] for j in S_SHARED.argmax(axis=-1)]
    assert best == ["I", "it", "it", "cake", "it", "it", "it", "cake"]


def test_self_matches_passes_the_count(capsys):
    assert check_self_matches(3, S_SHARED) and check_self_matches(np.int64(3), S_SHARED)
    assert capsys.readouterr().out == "[self-matches] PASS: 3 is right.\n" * 2


@pytest.mark.parametrize(
    ("answer", "status", "hint"),
    [
        (8, "FAIL", "not every word: a score with yourself is |q|²"),
        (5, "FAIL", "that counts the words whose best match is another word"),
        (1, "FAIL", "1 counts only the word the law guarantees, the one with the longest query;"),
        (2, "FAIL", "Count the rows where S.argmax(-1) equals the row index"),
        (4, "FAIL", "did you count the 4 rows that pick word 5 (rows 1, 2, 4 and 6, counting"),
        (6, "FAIL", "6 is too high: a row counts when its largest score"),
        (None, "TODO", "replace None with your number"),
        ("3", "FAIL", "expected one number, got '3': remove the quotes: give a number."),
    ],
)
def test_each_self_matches_mistake_gets_its_own_hint(answer, status, hint, capsys):
    result = check_self_matches(answer, S_SHARED)
    line = capsys.readouterr().out
    assert not result and result.status == status
    assert line.startswith(f"[self-matches] {status}: ") and line.count("\n") == 1
    assert hint in line
    assert "redo the calculation" not in line  # a specific hint, never the generic one


def test_self_matches_follows_the_matrix_it_is_given(capsys):
    # With the identity every word is its own best match, so "all of them" is right.
    assert check_self_matches(4, np.eye(4))
    assert "PASS" in capsys.readouterr().out


def test_catalogue_prints_each_film_with_its_key_or_interest_and_its_card():
    lines = toy.catalogue().splitlines()
    assert lines[0].split() == [*toy.MOVIE_TAGS, "|", *toy.MOVIE_FEATURES]
    assert lines[2].split() == "Interstellar 1.00 0.30 0.00 0.00 | 7 1 169".split()
    assert len(lines) == 1 + len(toy.MOVIES) and max(map(len, lines)) <= 80
    with_interest = toy.catalogue(interest=True).splitlines()
    assert with_interest[0].split()[0] == "interest"
    assert with_interest[3].split()[:2] == ["Chef", "0.10"]


# --- check_one_score ------------------------------------------------------------------------


def one_score(X, W_q, W_k, i, j):
    return (X[i] @ W_q) @ (X[j] @ W_k)


def _softmaxed(X, W_q, W_k, i, j):
    scores = (X[i] @ W_q) @ (X @ W_k).T
    return al.softmax(scores)[j]


def _norms(X, W_q, W_k, i, j):
    return np.linalg.norm(X[i] @ W_q) * np.linalg.norm(X[j] @ W_k)


@pytest.mark.parametrize(
    ("fn", "status", "hint"),
    [
        (one_score, "PASS", "all 3 cases match"),
        (lambda X, q, k, i, j: X[i] @ q @ k.T @ X[j], "PASS", "all 3 cases match"),  # X M Xᵀ
        (lambda X, q, k, i, j: one_score(X, q, k, j, i), "FAIL", "score of query j with key i"),
        (lambda X, q, k, i, j: one_score(X, k, q, i, j), "FAIL", "W_q and W_k swapped"),
        (lambda X, q, k, i, j: one_score(X, q, q, i, j), "FAIL", "W_q for the key too"),
        (lambda X, q, k, i, j: one_score(X, k, k, i, j), "FAIL", "W_k for the query too"),
        (lambda X, q, k, i, j: X[i] @ X[j], "FAIL", "before any projection"),
        (lambda X, q, k, i, j: (q @ X[i]) @ (k @ X[j]), "FAIL", "shapes do not fit"),
        (lambda X, q, k, i, j: X[i] @ q @ k @ X[j], "FAIL", "The key is x_j W_k"),  # no .T
        (lambda X, q, k, i, j: one_score(X, q, k, i, j) / np.sqrt(q.shape[1]), "FAIL", "sqrt(d_k)"),
        (lambda X, q, k, i, j: (X[i] @ q) * (X[j] @ k), "FAIL", "add the products (@, not *)"),
        # review 02r: the slips that got only "got X, expected Y" now get their own hint
        (lambda X, q, k, i, j: round(float(one_score(X, q, k, i, j)), 2), "FAIL", "is rounded"),
        (lambda X, q, k, i, j: one_score(X, q, k, i - 1, j - 1), "FAIL", "one off (i - 1"),
        (lambda X, q, k, i, j: one_score(X, q, k, i, j) / np.sqrt(len(q)), "FAIL", "sqrt(d_model)"),
        (_softmaxed, "FAIL", "the softmax weight of key j in row i"),
        (lambda X, q, k, i, j: abs(one_score(X, q, k, i, j)), "FAIL", "lost its sign"),
        (lambda X, q, k, i, j: 0.5 * one_score(X, q, k, i, j), "FAIL", "half the dot product"),
        (lambda X, q, k, i, j: np.outer(X[i] @ q, X[j] @ k).sum(), "FAIL", "an outer product"),
        (_norms, "FAIL", "the product of the lengths"),
        (lambda X, q, k, i, j: None, "TODO", "returned None: write its body"),
        (
            lambda X, q, k, i, j: print(one_score(X, q, k, i, j)),  # printed, not returned
            "FAIL",
            "returned None: did you print instead of return?",
        ),
        # review 02l: a list is not a (1, 1) slice; it gets its own hint
        (lambda X, q, k, i, j: [one_score(X, q, k, i, j)], "FAIL", "a number, not a list"),
        (lambda X, q, k, i, j: (X[i : i + 1] @ q) @ (X[j : j + 1] @ k).T, "FAIL", ".item()"),
        # review 02 round s: three slips that got a generic or a wrong hint
        (lambda X, q, k, i, j: one_score(X, q, k, i, j + 1), "FAIL", "key of token j + 1"),
        (lambda X, q, k, i, j: one_score(X, q, q, i, i), "FAIL", "the query with itself"),
        (lambda X, q, k, i, j: q[i] @ k[j], "FAIL", "indexed the weights by token"),
    ],
)
def test_each_one_score_mistake_gets_its_own_hint(fn, status, hint, capsys):
    result = check_one_score(fn)
    line = capsys.readouterr().out
    assert result.status == status and bool(result) is (status == "PASS")
    assert line.startswith(f"[one-score] {status}: ") and line.count("\n") == 1
    assert hint in line


def _library_score(X, W_q, W_k, i, j):
    return al.attention_scores(X @ W_q, X @ W_k)[i, j]  # right number, forbidden route


@pytest.mark.parametrize(
    ("fn", "hint"),
    [
        (lambda X, q, k, i, j: str(one_score(X, q, k, i, j)), "returned text: return a number"),
        (lambda X, q, k, i, j: one_score(X, q, k, i, j) > 0, "returned True/False"),
        (_library_score, "calls al.attention_scores, which this exercise rules out"),
    ],
)
def test_one_score_fails_text_and_the_library_s_scores(fn, hint, capsys):
    result = check_one_score(fn)
    line = capsys.readouterr().out
    assert result.status == "FAIL" and hint in line


def test_one_score_names_transposed_weights_on_square_matrices(capsys):
    # (W_q @ x_i) runs only where W is square: the second case; the first raises.
    def transposed(X, W_q, W_k, i, j):
        if W_q.shape[0] != W_q.shape[1]:
            return one_score(X, W_q, W_k, i, j)
        return (W_q @ X[i]) @ (W_k @ X[j])

    assert not check_one_score(transposed)
    assert "you used the transposes" in capsys.readouterr().out


def test_one_score_of_the_toy_is_the_experiment_s_it_cake():
    it, cake = toy.token_index("it"), toy.token_index("cake")
    assert round(float(one_score(toy.X, toy.W_q, toy.W_k, it, cake)), 2) == 1.8
    assert round(float(one_score(toy.X, toy.W_q, toy.W_k, cake, it)), 2) == 1.3


def test_the_missing_transpose_is_named_on_square_matrices_too(capsys):
    # Where d = d_k, X[i] @ W_q @ W_k @ X[j] runs and gives a number: it is still named.
    def no_transpose(X, W_q, W_k, i, j):
        if W_q.shape[0] != W_q.shape[1]:
            return one_score(X, W_q, W_k, i, j)
        return X[i] @ W_q @ W_k @ X[j]

    assert not check_one_score(no_transpose)
    out = capsys.readouterr().out
    assert "The key is x_j W_k" in out and "raised" not in out


# --- Hints added after the fifth cold review ------------------------------------------------

ROWS = dict(zip(toy.TOKENS, toy.X, strict=True))


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (1.28, "element 0 of the row of 'ate' through W_q, another token's number"),  # worked
        (0.42, "element 1 of the row of 'ate' through W_q"),
    ],
)
def test_another_token_s_element_is_named(answer, hint, capsys):
    # The exercise asks for element 1 of q_delicious (0.37); the worked example is q_ate[0].
    x = toy.X[DELICIOUS]
    assert check_projection_element(0.37, x, toy.W_q, 1, **ELEMENT, rows=ROWS)
    capsys.readouterr()
    assert not check_projection_element(answer, x, toy.W_q, 1, **ELEMENT, rows=ROWS)
    line = capsys.readouterr().out
    assert hint in line and "This one starts from x_delicious and column 1" in line
    assert "another row or column" not in line


@pytest.mark.parametrize("answer", [0.5, 0.1, 1.6])
def test_a_round_guess_is_not_blamed_on_another_token(answer, capsys):
    # 0.5 and 1.6 are elements of q_ate and q_cake, 0.1 of q_and, but a one-decimal number is
    # as likely a plain guess: it gets the general hint, not "another token's number".
    x = toy.X[DELICIOUS]
    rows = dict(zip(toy.TOKENS, toy.X @ toy.W_q, strict=True))
    assert any(np.isclose(q, answer).any() for q in rows.values())  # a neighbour has it
    assert not check_projection_element(answer, x, toy.W_q, 1, **ELEMENT, rows=ROWS)
    line = capsys.readouterr().out
    assert "another token" not in line and "another row or column" in line


def test_the_token_s_own_elements_are_not_called_another_token_s(capsys):
    x = toy.X[DELICIOUS]
    assert not check_projection_element(1.36, x, toy.W_q, 1, **ELEMENT, rows=ROWS)
    assert "that is element 0, from column 0 of W_q" in capsys.readouterr().out


@pytest.mark.parametrize("answer", [3.4, 2.5, np.float64(2.9)])
def test_a_count_must_be_a_whole_number(answer, capsys):
    result = check_self_matches(answer, S_SHARED)
    line = capsys.readouterr().out
    assert not result and result.status == "FAIL"
    assert line == f"[self-matches] FAIL: this is a count: a whole number, not {answer:g}.\n"
    assert check_self_matches(3.0, S_SHARED)  # a whole float is a count


def test_a_count_from_another_design_names_that_design(capsys):
    X, (Q, K, _) = toy.X, toy.projections()
    designs = {
        "no projection": al.attention_scores(X, X),  # 4 rows pick themselves
        "one shared matrix": S_SHARED,  # 3: the right one, never named
        "query side only": al.attention_scores(Q, X),  # 2
        "two matrices": al.attention_scores(Q, K),  # 2
    }
    # 4 is also the rows that pick 'it' (ate, the, and, was); 2 also a row of S missed.
    assert not check_self_matches(4, S_SHARED, others=designs)
    four = (
        "4 fits the design 'no projection' of the experiment, or you counted the 4 rows "
        "that pick word 5 (rows 1, 2, 4 and 6, counting from 0) instead of themselves. "
        "Count the rows"
    )
    assert four in capsys.readouterr().out
    assert not check_self_matches(2, S_SHARED, others=designs)
    two = (
        "2 fits the designs 'query side only' and 'two matrices' of the experiment, "
        "or a miscount. Count the rows of S = Q Qᵀ"
    )
    assert two in capsys.readouterr().out
    assert check_self_matches(3, S_SHARED, others=designs)


Q_TOY, K_TOY = toy.projections()[:2]


@pytest.mark.parametrize(
    ("fn", "hint"),
    [
        (lambda X, q, k, i, j: Q_TOY[i] @ K_TOY[j], "ignores its arguments X, W_q and W_k"),
        (lambda X, q, k, i, j: (X[i] @ toy.W_q[:3, :2]) @ (X[j] @ toy.W_k[:3, :2]), "W_q and W_k"),
        (lambda X, q, k, i, j: 0.5, "returns 0.5 whatever it is given"),
        (lambda X, q, k, i, j: one_score(X, q, k, i, i), "ignores its argument j:"),
    ],
)
def test_a_function_that_ignores_its_arguments_is_told_so(fn, hint, capsys):
    assert not check_one_score(fn)
    line = capsys.readouterr().out
    assert hint in line and "values differ" not in line


def test_a_hard_coded_number_is_told_it_never_changes(capsys):
    # review 02_u: a typed 1.8 is not a notebook variable; the probe moves every argument
    for fixed in (lambda X, q, k, i, j: 1.8, lambda X, q, k, i, j: Q_TOY[5] @ K_TOY[3]):
        assert not check_one_score(fixed)
        line = capsys.readouterr().out
        assert "returns 1.8 whatever it is given" in line and "ignores" not in line
        assert "notebook variables" not in line and "q_i = X[i] @ W_q" in line


def test_globals_and_ignored_tokens_get_different_advice(capsys):
    check_one_score(lambda X, q, k, i, j: Q_TOY[i] @ K_TOY[j])
    assert "not from notebook variables" in capsys.readouterr().out
    check_one_score(lambda X, q, k, i, j: one_score(X, q, k, i, i))
    assert "the key from token j: use both" in capsys.readouterr().out


def test_an_unprojected_key_is_named_not_blamed_on_globals(capsys):
    # Review 02t: (x_i W_q) · x_j ignores only W_k; the slip is the missing key projection.
    assert not check_one_score(lambda X, q, k, i, j: (X[i] @ q) @ X[j])
    line = capsys.readouterr().out
    assert "The key must be x_j W_k" in line and "notebook variables" not in line


def test_an_unprojected_query_is_named_not_blamed_on_globals(capsys):
    # Review 02u: x_i · (x_j W_k) ignores only W_q; the slip is the missing query projection.
    assert not check_one_score(lambda X, q, k, i, j: X[i] @ (X[j] @ k))
    line = capsys.readouterr().out
    assert "The query must be x_i W_q" in line and "notebook variables" not in line


@pytest.mark.parametrize(
    ("fn", "hint"),
    [
        (lambda X, q, k, i, j: (q @ X[i]) @ (k @ X[j]), "you used the transposes"),
        (lambda X, q, k, i, j: X[i] @ q @ k @ X[j], "The key is x_j W_k"),
        (lambda X, q, k, i, j: (q @ X[i][: q.shape[1]]) @ X[j][:1], "q_i = X[i] @ W_q, the row"),
        # Review 02j: the columns of X were told about W_q @ X[i], which they never wrote.
        (lambda X, q, k, i, j: (X[:, i] @ q) @ (X[:, j] @ k), "X[:, i] is column i of X"),
        (lambda X, q, k, i, j: (X[i] @ q.T) @ (X[j] @ k.T), "X[i] @ W_q.T, dots x_i with each row"),
        # Review 02s: the whole product with K's transpose forgotten, then indexed.
        (lambda X, q, k, i, j: ((X @ q) @ (X @ k))[i, j], "Q @ K needs K transposed: Q @ K.T"),
    ],
)
def test_a_shape_error_is_traced_to_its_slip(fn, hint, capsys):
    assert not check_one_score(fn)
    line = capsys.readouterr().out
    assert line.startswith("[one-score] FAIL: the shapes do not fit") and hint in line
    # The chapter's symbols are lower case (q_i, x_i): a capital Q_i would be another symbol.
    assert "Q_i" not in line and "X_i" not in line


# --- The exercise's own wrong answers (element 1 of q_delicious, 0.37) ----------------------


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        # the person-person entry of W_q copied without x_delicious
        (1.2, "that is W_q[1, 1] read off alone, without x_delicious"),
        # 0.7 × 1.2: the food entry paired with the person row of the column
        (0.84, "0.7 × 1.2 takes position 0 of x_delicious and row 1 of column 1"),
        (0.7, "that is entry 0 of x_delicious read off alone, without W_q"),
    ],
)
def test_each_wrong_answer_to_the_exercise_names_its_own_mistake(answer, hint, capsys):
    x, extra = toy.X[DELICIOUS], {**ELEMENT, "rows": ROWS}  # as the chapter calls it
    result = check_projection_element(answer, x, toy.W_q, 1, **extra)
    line = capsys.readouterr().out
    assert not result and result.status == "FAIL" and hint in line
    # None of them is another token's number or a matrix the exercise does not print.
    assert "another token" not in line and "you used" not in line
    assert check_projection_element(0.37, x, toy.W_q, 1, **extra)


def test_another_matrix_is_named_when_nothing_on_the_page_explains_the_number(capsys):
    # x_was W_k[:, 0] = 0.2 × 0.2 = 0.04: no entry, product or pairing of x_was and W_q.
    x = toy.X[WAS]
    assert not check_projection_element(0.04, x, toy.W_q, 0, **{**ELEMENT, "x_name": "x_was"})
    assert "you used W_k; this element comes from W_q." in capsys.readouterr().out


def test_matmul_diagram_labels_the_columns_and_names_rows_and_columns_in_the_alt_text():
    fig, alt = matmul_diagram(
        toy.X.shape, toy.W_q.shape, names=("X", "W_q", "Q"), rows=toy.TOKENS,
        cols=toy.FEATURES, title="The whole sentence through W_q",
    )  # fmt: skip
    labels = texts(fig)
    assert all(f in labels for f in toy.FEATURES) and fig.axes[0].get_title()
    fig.canvas.draw()
    for text in fig.axes[0].texts:  # the upright labels stay inside the figure
        extent = text.get_window_extent()
        assert fig.bbox.y0 - 1 <= extent.y0 and extent.y1 <= fig.bbox.y1 + 1, text.get_text()
    assert "The rows of X: I, ate, the, cake, and, it, was, delicious." in alt
    assert alt.endswith("The columns of X: food, person, action, pointer.")
    plt.close(fig)
    with pytest.raises(ValueError, match="cols needs one label per column of left"):
        matmul_diagram((8, 4), (4, 4), cols=("a", "b"))


# --- Numbers that several slips give (the seventh cold review) ------------------------------


@pytest.mark.parametrize(
    ("answer", "slips"),
    [
        # x_delicious has no person entry, and W_k's column 1 is (0, 1, 0, 0): both give 0
        (0, ["W_k used instead of W_q", "position 1 of x_delicious alone (0 × 1.2)"]),
        # W_v's column 1 is (0, 0, 1, 0), so 0.3 × 1 = 0.3, and W_q[2, 1] = 0.3 read off
        (0.3, ["W_v used instead of W_q", "W_q[2, 1] read off alone"]),
    ],
)
def test_a_number_that_several_slips_give_names_them_all(answer, slips, capsys):
    x = toy.X[DELICIOUS]
    assert not check_projection_element(answer, x, toy.W_q, 1, **ELEMENT, rows=ROWS)
    line = capsys.readouterr().out
    assert "slips give this number: " in line and all(slip in line for slip in slips)
    assert line.endswith("multiply each pair and add all 4 products.\n")


def test_a_truncated_answer_is_told_to_round(capsys):
    # 0.7 × 0.525 = 0.3675: cut short it gives 0.36, rounded 0.37.
    x, W = np.array([0.7, 0.0]), np.array([[0.525, 0.0], [1.0, 1.0]])
    assert not check_projection_element(0.36, x, W, 0)
    assert "close: round, do not truncate: 0.3675 rounds to 0.37." in capsys.readouterr().out
    assert check_projection_element(0.37, x, W, 0)


def test_an_exact_two_decimal_answer_has_no_truncation_slip(capsys):
    # 0.7 × 0.4 + 0.3 × 0.3 is 0.37 by hand; in floats 0.36999999999999994, which is noise:
    # 0.36 is no truncation of it, so the hint must not invent one.
    x = toy.X[DELICIOUS]
    assert toy.projections()[0][DELICIOUS, 1] != 0.37  # the float noise is really there
    assert not check_projection_element(0.36, x, toy.W_q, 1, **ELEMENT, rows=ROWS)
    line = capsys.readouterr().out
    assert "truncate" not in line and "cut to" not in line and "0.3699" not in line
    assert "pairing entries one row apart gives this, e.g. 0.3 × 1.2" in line  # one slip for 0.36
    # Review 02s: 0.28 + 0.08 is 0.36 too, so the hint leaves room for an addition slip.
    assert "If your pairs were right, recheck the addition." in line
    assert not check_projection_element(1.35, x, toy.W_q, 0, **ELEMENT)  # element 0 is 1.36
    assert "truncate" not in capsys.readouterr().out


def test_the_toy_s_weights_are_named_before_any_shape_slip(capsys):
    # toy.W_q is (4, 4): on the checker's first case (d_model = 3) it is a shape error, yet
    # the cause is the global, not the order of the product.
    assert not check_one_score(lambda X, q, k, i, j: (X[i] @ toy.W_q) @ (X[j] @ toy.W_k))
    line = capsys.readouterr().out
    assert "ignores its arguments W_q and W_k" in line
    assert "use the W_q and W_k you were given" in line and "the row first" not in line


def test_a_column_of_K_is_told_to_take_a_row(capsys):
    assert not check_one_score(lambda X, q, k, i, j: (X @ q)[i] @ (X @ k)[:, j])
    line = capsys.readouterr().out
    assert line.startswith("[one-score] FAIL: your function raised IndexError")
    assert "row j of K = X @ W_k, K[j] (not the column K[:, j]" in line


def test_the_columns_of_x_are_not_called_transposed_weights(capsys):
    assert not check_one_score(lambda X, q, k, i, j: (X[:, i] @ q) @ (X[:, j] @ k))
    line = capsys.readouterr().out
    assert "Token i is row i, X[i]" in line
    assert "transposes" not in line and "W_q @ X[i]" not in line


def test_self_matches_names_the_words_when_it_knows_them(capsys):
    # Given the tokens, the hint for 4 says which word is picked, not "word 5".
    assert not check_self_matches(4, S_SHARED, tokens=toy.TOKENS)
    line = capsys.readouterr().out
    assert "did you count the 4 rows that pick 'it' instead of themselves?" in line
    assert "word 5" not in line
    assert check_self_matches(3, S_SHARED, tokens=toy.TOKENS)


# --- The page after review 02j ----------------------------------------------------------------


def _page_cells():
    from pathlib import Path

    import nbformat
    from chapter_text import shown

    path = Path(__file__).parents[1] / "chapters" / "02_queries_keys_values.ipynb"
    return shown(nbformat.read(path, as_version=4).cells)


# --- Fix round 2 (review 02k) ---------------------------------------------------------------


def test_the_exercise_checker_needs_only_the_answer(capsys):
    from attention_lib.checks.projection_slips import _toy_case

    case = _toy_case()  # checks may not import toy: its copy of the toy must stay equal
    assert np.array_equal(case["x"], toy.X[DELICIOUS]) and np.array_equal(case["W"], toy.W_q)
    assert all(np.array_equal(case["others"][k], M) for k, M in ELEMENT["others"].items())
    assert list(case["rows"]) == list(toy.TOKENS)
    assert np.array_equal(np.array(list(case["rows"].values())), toy.X)
    # The learner's cell passes one argument: the checker knows x_delicious, W_q and column 1.
    assert check_projection_element(0.37) and not check_projection_element(0.28)
    out = capsys.readouterr().out
    assert "PASS: 0.37" in out and "only the product 0.7 × 0.4" in out
    assert not check_projection_element(1.28)  # the worked example: the toy's rows are known
    assert "another token's number" in capsys.readouterr().out
    with pytest.raises(TypeError, match="give x, W and column together"):
        check_projection_element(0.37, toy.X[DELICIOUS])


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (0.4, "give 2 decimals: this is the answer rounded to one decimal. If it is your full"),
        (37, "that looks like a percent: the element is a plain number, a fraction, not a"),
    ],
)
def test_rounding_and_percent_get_their_own_advice(answer, hint, capsys):
    assert not check_projection_element(answer)
    line = capsys.readouterr().out
    assert line.startswith(f"[projection-element] FAIL: {hint}")
    assert "too high" not in line


def test_a_one_by_one_score_is_told_to_use_rows(capsys):
    assert not check_one_score(lambda X, q, k, i, j: (X[i : i + 1] @ q) @ (X[j : j + 1] @ k).T)
    line = capsys.readouterr().out
    assert "returned shape (1, 1)" in line and "use the rows X[i] and X[j], not X[i:i+1]" in line


def test_one_shared_matrix_lets_no_two_words_both_prefer_the_other(capsys):
    # S = Q Qᵀ: S_ij <= |q_i| |q_j| <= max(S_ii, S_jj), so the longest query picks itself.
    rng = np.random.default_rng(4)
    for _ in range(200):
        Qr = toy.X @ rng.normal(size=(4, 4))
        S = Qr @ Qr.T
        d = np.diag(S)
        assert np.all(S <= np.maximum.outer(d, d) + 1e-9) and S[d.argmax()].argmax() == d.argmax()
    assert toy.TOKENS[np.diag(S_SHARED).argmax()] == "cake"
    assert not check_self_matches(1, S_SHARED, tokens=toy.TOKENS)
    # review 02_k: the hint must not name the word, which part 2 of the exercise asks for
    line = capsys.readouterr().out
    assert "the one with the longest query" in line and "cake" not in line
    assert "word 3" not in line and "'" not in line


def test_wider_cells_keep_the_worked_numbers_apart():
    ate = toy.token_index("ate")
    args = (toy.X[ate : ate + 1], toy.W_q)
    fig, _ = matmul_diagram(*args, names=("x_ate", "W_q", "q_ate"), cell_inches=0.54)
    fig.canvas.draw()
    boxes = {t.get_text(): t.get_window_extent() for t in fig.axes[0].texts}
    gap = boxes["0.42"].x0 - boxes["1.28"].x1  # the default cells leave a quarter of a number
    assert gap > 0.5 * boxes["1.28"].width  # at least half a number's width between the two
    plt.close(fig)
    with pytest.raises(ValueError, match="cell_inches must be a number in"):
        matmul_diagram(*args, cell_inches=0)


def test_token_panels_can_name_the_colour_bar_entry():
    fig, _ = token_panels([toy.X], ["X"], toy.TOKENS, toy.FEATURES, bar_label="entry")
    assert fig.axes[-1].get_ylabel() == "entry"
    plt.close(fig)


def test_token_panels_scale_grows_the_figure_and_its_text_together():
    plain, _ = token_panels([toy.X], ["X"], toy.TOKENS, toy.FEATURES)
    grown, _ = token_panels([toy.X], ["X"], toy.TOKENS, toy.FEATURES, scale=1.3)
    assert np.allclose(grown.get_size_inches(), 1.3 * plain.get_size_inches())
    size = [t.get_fontsize() for t in (plain.axes[0].texts[0], grown.axes[0].texts[0])]
    assert np.isclose(size[1], 1.3 * size[0])
    plt.close(plain)
    plt.close(grown)
    with pytest.raises(ValueError, match="scale must be positive"):
        token_panels([toy.X], ["X"], toy.TOKENS, toy.FEATURES, scale=0)


def test_token_panels_can_hide_an_exercise_answer_from_the_cells_and_the_alt_text():
    Q = toy.X @ toy.W_q
    d = toy.token_index("delicious")
    answer = format(Q[d, 1], ".2f")
    fig, alt = token_panels([toy.X, Q], ["X", "Q"], toy.TOKENS, toy.FEATURES, hidden=[(1, d, 1)])
    cells = [t.get_text() for t in fig.axes[1].texts]
    assert cells.count("?") == 1 and cells[d * 4 + 1] == "?"
    assert answer not in cells and answer not in alt
    assert "'delicious' / person shown as '?'" in alt
    assert [t.get_text() for t in fig.axes[0].texts].count("?") == 0  # only the named panel
    # its colour would hint at 0.37: a grey patch covers exactly that cell, in that panel only
    patches = fig.axes[1].patches
    assert len(patches) == 1 and not fig.axes[0].patches
    assert patches[0].get_xy() == (0.5, d - 0.5) and patches[0].get_hatch()
    r, g, b, _ = patches[0].get_facecolor()
    assert r == g == b
    plt.close(fig)
    with pytest.raises(ValueError, match="hidden cell"):
        token_panels([toy.X], ["X"], toy.TOKENS, toy.FEATURES, hidden=[(1, 0, 0)])


def test_chapter_leaves_the_value_blend_to_chapter_6_and_w_qk_to_chapter_3():
    cells = {c.id: c for c in _page_cells()}
    assert "44ef9939" not in cells and "v2read01" not in cells  # the value demo is chapter 6's
    # values get a job: what "it" should receive is the value of "cake" (review 02q)
    assert "wqk2txt1" not in cells and "value of 'cake'" in cells["e12303af"].source
    case = " ".join(cells["1eab48bb"].source.split())
    # review 02_o-2: what "it" receives, the value of "cake" and not its key
    receives = "it receives cake's value, a third-person noun, not its key, food."
    assert receives in case and "later layers" not in case
    # review 02_l-9: the printed rows are named (key of "cake"), not counted ("last line")
    assert "line)" not in case
    # review 02_f-1: the key of "cake" is a choice, not a consequence of being matched
    assert "A key only has to be matched" not in case and "We chose the key of" not in case
    assert "$V = K$" not in case  # editor pass 10: "Chapter 6 does the blend." cut
    assert "key of 'cake'" in cells["e12303af"].source
    assert "wqk2tab1" not in cells and "cdb08696" not in cells  # no table, no preview call
    assert "wqkfold1" not in cells  # review 02a: the A^-T fold moved to chapter 3
    figure = cells["62fccb11"]  # the Q heatmap must not give away Exercise 2.1's 0.37
    assert 'hidden=[(1, toy.token_index("delicious"), 1)]' in figure.source
    shown = figure.outputs[0]["data"]["text/plain"]
    assert "'delicious' / seeks person shown as '?'" in shown and "0.37" not in shown
    heading = "what if queries and keys shared one matrix?"
    # review 02_x-3: the table's raw scores are not compared across designs
    assert "Compare numbers within a design's row" in cells["1eab48bb"].source
    assert heading in cells["1eab48bb"].source and "did every job" not in cells["1eab48bb"].source
    prose = "\n".join(c.source for c in cells.values() if c.cell_type == "markdown")
    # review 02_x-1: the worked q_it . k_cake is cut (chapter 3 opens with the 1.80)
    assert "colj0001" not in cells and "pairs query column" not in prose
    assert "q2read01" not in cells and "seeks food hardest" in cells["0c33d0b0"].source
    assert "Every word but 'I' seeks food" not in cells["62fccb11"].source  # said once, in prose
    # review 02_x-4 (reverses 02_p): the search's dot product is flagged as unscaled
    steps = " ".join(cells["087e3e00"].source.split())
    assert "by a dot product (unscaled; chapter 4 scales it)." in steps
    printed = cells["b0bb8f49"].outputs[0]["text"]
    # review 02_d-5: the K | V table is cut (cell e12303af prints the four vectors used)
    assert "k | v" not in printed and "K columns:" not in printed
    assert printed.splitlines()[0] == "X (8, 4) @ W_q (4, 4) -> Q (8, 4)"
    assert printed.splitlines()[1] == "Q equals X @ W_q: True"  # review 02_uu-1: it runs
    assert "no feature names" not in prose and "makes the shares this sharp" not in prose  # cut
    # what finds "cake" is W_k keeping food in key column 0; "differing" alone is not claimed
    two = cells["c95b653c"].source
    # review 02_k-3: the zeroing sentence is cut (chapter 3 splits 1.30 into 0.08 + 1.22);
    # 02_k-1: what breaks the symmetry is W_q W_k^T, and here W_q alone already does
    flat_two = " ".join(two.split())
    # review 02_u-2: the pair the table prints, not ate/cake or "7 of the 8"
    assert '"it" seeks "cake" (1.80) more than "cake" seeks "it" (1.30).' in flat_two
    assert "7 of the 8" not in flat_two and "1.22" not in two and "0.48" not in two
    assert "0.08" not in two and "Set $W_q$" not in two and "forced equal" not in two
    # review 02_m-3: chapter 3's cost argument (rank, GPT-2 counts) is not repeated here
    # review 02_q-2: the identity is given where W_q W_k^T first appears
    # editor pass 10: the W_q W_k^T identity is cut from the bullet (chapter 3 derives it)
    assert "0.98" not in two and "$W_q$ alone" not in two
    assert "98,304" not in two and "rank" not in two and "What breaks" not in two
    # review 02r: sharing forces symmetric SCORES; the weights may still differ; W_s is cut.
    # review 02u: the self-preference law stays in exercise 2.2 (shared matrix only); the main
    # line and the Summary no longer claim two matrices break it
    # review 02_u-1: symmetry said with the printed pair, and the longest query picks itself
    # review 02_v-2: equal scores, not equal shares
    assert '"cake" and "it" score each other 3.25 both ways (equal scores, not equal' in flat_two
    assert "exactly as hard" not in flat_two
    # review 02_x-2: a pointer to Exercise 2.2 that does not give its answer away
    assert "Must a word match itself best? Exercise 2.2." in flat_two
    assert "sure to pick itself" not in flat_two
    assert "at least one scores itself" not in two and "limit" not in two
    # review 02_f-4: the shared row's self-match is named; exercise 2.2's count stays unsaid
    # review 02_o-5: the |q_it|^2 aside moved into exercise 2.2; "even $I$" is cut
    # review 02_q-7/8: the table and exercise 2.2 say it; the bullets do not repeat it
    # review 02 round s-1: the bullet now names the cost, "it" preferring itself (3.39 > 3.25)
    assert "matches itself best" not in flat_two
    # editor pass 10: 3.39 is said once, in the bullet (tested in review 02s below)
    assert "three" not in two.lower()
    assert "permit this" not in flat_two and "weights we added" not in flat_two
    assert "can still make the weights differ" not in flat_two  # review 02_l-2: cut
    assert "W_s" not in cells["6d20e151"].source and not re.search(r"W_s(?!hort)", prose)
    summary = " ".join(cells["05104d83"].source.split())
    shared_line = (
        "**One matrix shared by queries and keys forces symmetric scores**, and the word with "
        "the longest query picks itself;"
    )
    assert shared_line in summary
    assert "separate matrices allow asymmetric ones" not in summary  # review 02_k-1
    assert "do not force" not in summary  # review 02_d-1: the W_k = 2 W_q remark is cut
    assert "limit" not in summary and "at least one scores itself" not in summary
    solution = cells["5e1f0a03"].source
    assert "Two\n   matrices obey no such law" not in solution and "matrices obey" not in solution
    # review 02u: a key is the label a word is found by, not "what the word is"
    assert "says what the word\nis" not in cells["12660781"].source
    # review 02 round s-7: the roles are not restated a third time in "Back to the sentence"
    back = cells["12660781"].source.split("\n\n")[1]  # its first paragraph: one sentence
    # review 02_v-4: every word is both searcher and item
    assert back == (
        "Self-attention runs this search inside the sentence, with every word both searcher"
        " and item."
    )
    assert "what most queries here seek" not in case
    assert 'seeks "it"' not in cells["05104d83"].source
    assert "need only differ" not in two and "$W_k = I$" not in two
    assert "noun spoken of" not in cells["12660781"].source  # W_v is not shown there yet
    assert "a 3 rather than a 1" not in cells["087e3e00"].source
    # review 02t: the query of 3 is said before its cell; the "query of 1" column is cut
    search = " ".join(cells["265e464b"].source.split())
    # review 02_d-7: the softmax-sharpening aside is cut; 02_d-6: no provenance of the marks
    # review 02_k-6: the temperature aside is cut too; 02_f-8: lowercase q
    # review 02_m-5: why 3, in one clause; 02_n-9: said with the shares a 1 would give
    # review 02_q-3: why 3, in one parenthesis
    # review 02 round s-5: the parenthesis gives its numbers (0.42 with 3, 0.29 with 1)
    # review 02_v-5 / editor pass 10: the "why 3" aside moved to a Going further fold
    assert "Our query puts 3 on sci-fi alone." in search and "0.29" not in search
    why3 = " ".join(cells["c2gf0001"].source.split())
    assert why3.startswith("## Going further")
    assert "With 1 on sci-fi, Interstellar's share would be 0.29, not 0.42" in why3
    assert "Chapter 4 returns to" in why3  # review 02_u-7: chapter 4 returns to sharpness
    assert "Chef's would grow from 0.02 to 0.11." in why3  # review 02_x-10
    after = " ".join(cells["6b585669"].source.split())
    # review 02_p: the "Why 3?" digression (a forward reference to scaling) is cut
    assert "Why 3?" not in after and "longer query" not in after and "chapter 4" not in after
    assert "larger number" not in search
    assert "$q$, is your request" in search and "sharpens" not in search
    assert "come from the article" not in search
    out = cells["318c1d4b"].outputs[0]["text"]
    assert "query of 1" not in out and "query of 1" not in prose and "Chef    0.0   0.02" in out
    assert "when\nchosen" not in cells["12660781"].source  # a soft lookup passes on shares
    assert "in\nproportion to how well" not in cells["12660781"].source  # shares (review 02a)
    assert "weighted by its share" not in cells["12660781"].source  # round s-7: cut
    # review 02_y-5: the gufunc ("core dimension 0") cell is cut; the library's error stays
    assert "core dimension" not in prose and "e369ec66" not in cells
    assert "151.3 minutes are no one film's" in cells["6b585669"].source  # the blend is no film
    assert "as its query" in cells["wqwhy001"].source and "gets its row" not in prose
    order = [c.id for c in _page_cells()]
    assert order.index("f05ed001") > order.index("c95b653c")  # fused fold after the experiment
    # review 02_n-8: the cross-attention fold follows the fused one, out of the film-to-sentence
    # flow
    assert order.index("c4055a77") == order.index("f05ed001") + 1
    assert "The film search had one query and five keys" in cells["c4055a77"].source
    assert "\\le \\lVert q_i \\rVert^2" in cells["5e1f0a03"].source  # part 2: Cauchy-Schwarz
    assert "A trained model learns them\n(chapter 10)" in cells["12660781"].source
    sizes = cells["6ca0c255"].source
    assert "384 / 12 = 32" in sizes and "768 / 12 = 64" in sizes  # real d_k (review 02q)
    assert cells["087e3e00"].source.count(":") == 0  # short sentences, no colon chain
    figure = cells["62fccb11"].source
    assert 'bar_label="entry"' in figure and "scale=1.3" in figure and "set_fontsize" not in figure
    assert "#" not in cells["40912d84"].source.split("cell_inches")[1]  # no layout comment
    assert "Three matrices stored as one" in cells["f05ed001"].source
    # review 02_l-3: the bias is not what fusing changes, and BERT is not fused
    fused = " ".join(cells["f05ed001"].source.split())
    # review 02_u-3: nanoGPT's training script turns the bias off
    bias = (
        "Fused or not, the arithmetic is our $XW$; GPT-2 and BERT add a bias, $Q = X W_q + b_q$ "
        "(nanoGPT's model class too, to load GPT-2; its training script turns it off);"
    )
    assert bias in fused and "(by default)" not in fused
    assert "The arithmetic is the same, except" not in fused
    assert "One matrix for all three jobs" in " ".join(cells["1eab48bb"].source.split())
    assert "the same three for every word in every position" in cells["12660781"].source
    assert "whatever the shared matrix" not in cells["5e1f0a03"].source
    assert cells["wqkv0001"].source.startswith("toy.weights()")  # no formatting code to read
    assert "hints = {" not in cells["ab785b83"].source
    assert cells["ab785b83"].source.endswith("check_projection_element(my_answer)")


def test_weights_table_prints_the_three_matrices_row_by_feature():
    lines = repr(toy.weights()).splitlines()
    # review 02a: W_q and W_k side by side, W_v below, so no line wraps on the website
    assert len(lines) == 2 * (2 + len(toy.FEATURES)) + 1 and lines[6] == ""
    assert max(map(len, lines)) <= 80
    top, bottom = lines[:6], lines[7:]
    assert top[0].split() == "W_q (query) seeks W_k (key) advertises".split()
    assert bottom[0].split() == "W_v (value) hands over".split()
    assert top[1].split() == list(2 * toy.FEATURES)  # full names, no abbreviations (review 02u)
    # review 02_m-6: one word per column head ("third person" read as two columns)
    # review 02_uu-4: the same words as the prose and toy.VALUE_FEATURES, not "3rd"
    assert bottom[1].split() == ["noun", "verb", "third-person", "human"]
    for block, W in ((top, np.hstack([toy.W_q, toy.W_k])), (bottom, toy.W_v)):
        for f, (feature, line) in enumerate(zip(toy.FEATURES, block[2:], strict=True)):
            assert line.split()[0] == feature
            assert np.allclose([float(v) for v in line.split()[1:]], W[f])


# --- Fix round 3 (review 02p) ---------------------------------------------------------------


def test_one_score_names_cosine_similarity(capsys):
    # Chapter 1's learners wrote cosine similarity: dividing by both lengths is a likely slip.
    def cosine(X, W_q, W_k, i, j):
        q, k = X[i] @ W_q, X[j] @ W_k
        return q @ k / (np.linalg.norm(q) * np.linalg.norm(k))

    assert not check_one_score(cosine)
    out = capsys.readouterr().out
    assert "chapter 1's cosine similarity" in out and "raw dot product" in out
    assert check_one_score(lambda X, W_q, W_k, i, j: (X[i] @ W_q) @ (X[j] @ W_k))


# --- Fix round a (review 02a) ---------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda X, W_q, W_k, i, j: (X[i] @ W_q) @ W_k,  # a shape error, a vector where square
        lambda X, W_q, W_k, i, j: (X[i] @ W_q) @ W_k.T,  # a vector of length d_model
    ],
)
def test_one_score_names_a_key_without_x_j(fn, capsys):
    assert not check_one_score(fn)
    line = capsys.readouterr().out
    assert "your key is missing x_j" in line and "k_j = X[j] @ W_k" in line
    assert "could not finish" not in line and "TypeError" not in line


@pytest.mark.parametrize("answer", [np.array([0.37]), [0.37], np.array([[0.37]])])
def test_a_one_number_array_is_told_how_to_take_the_number_out(answer, capsys):
    assert not check_projection_element(answer)
    line = capsys.readouterr().out
    assert "expected one number" in line and "take it out with [0] or float(...)" in line


def test_a_count_cannot_be_negative_and_true_false_rows_are_summed(capsys):
    Q = toy.X @ toy.W_q
    S = al.attention_scores(Q, Q)
    assert not check_self_matches(-3, S)
    assert "a count cannot be negative" in capsys.readouterr().out
    assert not check_self_matches(S.argmax(-1) == np.arange(len(S)), S)
    assert "Count the True entries with .sum()" in capsys.readouterr().out
    # review 02_m: the indices of the words, not how many there are
    own = np.flatnonzero(S.argmax(-1) == np.arange(len(S)))
    for indices in (own, own.tolist(), tuple(own.tolist())):
        assert not check_self_matches(indices, S)
        assert "is the list of words; give how many, e.g. len(...)" in (capsys.readouterr().out)
    assert not check_self_matches([3], S)  # one number in a list: take it out
    assert "list of words" not in capsys.readouterr().out
    assert not check_projection_element("0.37")  # text: no array advice
    assert "take it out" not in capsys.readouterr().out


def test_no_output_line_wraps_and_the_review_02a_clauses_are_there():
    cells = {c.id: c for c in _page_cells()}
    for cell in cells.values():
        for out in cell.get("outputs", []):
            data = out.get("data", {})  # a figure's text/plain is its alt text, not shown
            figure = "text/html" in data or "image/png" in data
            text = out.get("text", "") or ("" if figure else data.get("text/plain", ""))
            lines = [line for line in text.splitlines() if not line.startswith("[")]
            assert max(map(len, lines), default=0) <= 80, (cell.id, text)  # verdicts may wrap
    order = list(cells)
    assert order.index("0c33d0b0") < order.index("c0fb933e")
    rules = " ".join(cells["wqwhy001"].source.split())
    # review 02_m-4: the items are each row's largest entries, not the whole row
    assert "Each row's largest entries:" in rules  # review 02_z-1: step 1 of three
    assert "article's story" not in rules
    # review 02_n-6: food's second entry is motivated, not called arbitrary
    assert "food looks for food and for pointers to it," in rules and "arbitrary" not in rules
    # review 02_uu-3: the reason, checked: after itself, "cake" scores "it" and "delicious"
    assert 'so "cake" matches "delicious" and "it";' in rules
    Q, K = toy.projections()[:2]
    cake_scores = Q[toy.token_index("cake")] @ K.T  # (8,)
    by_score = [toy.TOKENS[j] for j in np.argsort(-cake_scores)]
    assert by_score[:3] == ["cake", "it", "delicious"]
    # review 02_f-3: the value features are named where W_v is first printed
    assert "**$W_v$ is what a word hands over:** noun, verb, third person, human." in rules
    # review 02_k-5: one item per row of W_q, in row order; no "cake looks back for it"
    items = [line.strip() for line in cells["wqwhy001"].source.splitlines()]
    items = [line for line in items if line.startswith("- ")]
    assert [item.split()[1:3] for item in items] == [
        ["food", "looks"], ["a", "person"], ["an", "action"], ["a", "pointer"]
    ]  # fmt: skip
    assert "looks back" not in rules
    # review 02_k-2: the toy's staging is said once: food stands in for a thing, W_k ≈ I
    # review 02_l-4: the one departure of W_k from I is said; 02_l-8: "hand-chosen" said once
    assert 'our stand-in for "a thing"' in rules
    # review 02_p-3: the printed 0.20 food in the key of "it" is explained, I is named
    key = "**$W_k$ is nearly the identity $I$**, so a key's entries are the word's features"
    assert key in rules
    # review 02_z-2: the 0.2 is left to chapter 3
    assert "pointer also advertises a little food; chapter 3 uses it)." in rules
    assert "not staged" not in rules and "**hand-chosen**" in cells["12660781"].source
    assert "1.30" not in rules and "also prints every key" not in rules
    two = " ".join(cells["c95b653c"].source.split())
    assert "even $I$" not in two and "Reformer" not in two  # review 02b-3, 02_o-5
    # review 02_k-1: the two-matrix bullet leads with a one-way example the toy's scores show
    # review 02_m-2: sharing makes the scores symmetric, not attention unworkable
    # review 02_q-1: the one-way example is a property of the hand-set matrices
    # review 02_u-2: the ate/cake pair (not printed) is cut for the table's it/cake pair
    assert "**Two matrices:** " in two and '"cake" → "ate" 0.48.' not in two
    assert "language needs" not in two.lower()
    assert "pulls each word" not in two  # review 02_n-1: 3 of 8 self-matches, not a pull
    # review 02_n-2, 02_p-6, 02_q-9: why almost every word picks "cake"
    assert "7 of the 8 words do" not in two and "toward food" not in two  # review 02_u-2
    assert "cols=toy.FEATURES" in cells["40912d84"].source  # the W_q figure names its columns
    # review 02 round s-4: its rows are labelled too; the labels widen the figure, so its
    # cells shrink to 0.54 in and the PNG stays under 819 px (chapter 7's widest at 11.25 px
    # text), keeping its text over 7 px on a phone (tests/site/test_site_reader.py)
    assert "right_rows=toy.FEATURES" in cells["40912d84"].source
    assert "cell_inches=0.54" in cells["40912d84"].source
    # review 02_k: the text right before the figure says which row is which feature
    # review 02_n-5: no "the figure highlights all three" parenthesis
    by_hand = " ".join(cells["7d13fca5"].source.split())
    assert "of $W_q$, whose rows are food, person, action, pointer:" in by_hand
    assert "all three" not in by_hand


# --- Fix round b (review 02b) -----------------------------------------------------------------


def test_the_whole_query_row_is_told_to_take_one_entry(capsys):
    Q = toy.X @ toy.W_q
    row = Q[DELICIOUS]
    assert not check_projection_element(row) and not check_projection_element(list(row))
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    for line in lines:
        assert "that is the whole query, x_delicious W_q; element 1 is its second entry" in line


def test_a_count_above_the_words_and_an_overwritten_s_are_named(capsys):
    Q, K = toy.projections()[:2]
    assert not check_self_matches(9, S_SHARED)
    assert "there are only 8 words" in capsys.readouterr().out
    S_two = al.attention_scores(Q, K)  # the learner overwrote S_shared with Q @ K.T
    for answer in (2, 3):  # 2 fits that matrix, 3 the real one: both are told why
        assert not check_self_matches(answer, S_two)
        assert "S_shared should be Q @ Q.T (symmetric)" in capsys.readouterr().out
    assert check_self_matches(None, S_two).status == "TODO"
    assert check_self_matches(3, S_SHARED)


def test_products_without_their_sum_are_told_to_add_them(capsys):
    assert not check_one_score(lambda X, W_q, W_k, i, j: (X[i] @ W_q) * (X[j] @ W_k))
    line = capsys.readouterr().out
    assert "one number: add the products (@, not *)" in line and "expected ()" not in line
    one_array = lambda X, W_q, W_k, i, j: np.atleast_1d(one_score(X, W_q, W_k, i, j))  # noqa: E731
    assert not check_one_score(one_array)
    assert "or end with .item()" in capsys.readouterr().out


def test_review_02b_page_edits():
    cells = _page_cells()
    prose = "\n".join(" ".join(c.source.split()) for c in cells if c.cell_type == "markdown")
    assert "sharpens softmax" not in prose  # review 02_d-7
    assert "best films stand out" not in prose
    # editor pass 10: the "a little noun and human (0.2 each)" aside is cut
    assert 'names=("X", "W_q", "Q")' in prose and "To check question 1" not in prose
    assert "After you answer question 1, check with" in prose  # review 02_o-8
    # review 02_y-4: the Reformer aside is cut from exercise 2.2's solution
    assert "Reformer" not in prose and "kitaev2020reformer" not in prose


# --- Fix round k (review 02_k) ----------------------------------------------------------------


def test_review_02k_page_edits():
    cells = {c.id: c for c in _page_cells()}
    steps = " ".join(cells["087e3e00"].source.split())
    assert "the attention weights (not the weight matrices $W$ below)." in steps  # finding 7
    part2 = " ".join(cells["5e1f0a03"].source.split())  # finding 4: the question answered
    assert "the one with the longer query scores itself at least as high as the other" in part2
    assert "so they cannot both prefer each other." in part2
    # the law behind it: |q_i| >= |q_j| gives q_i . q_j <= |q_i|^2 (Cauchy-Schwarz)
    Q = toy.projections()[0]
    n = np.linalg.norm(Q, axis=1)
    S = Q @ Q.T
    for i in range(len(Q)):
        for j in range(len(Q)):
            if n[i] >= n[j]:
                assert S[i, j] <= S[i, i] + 1e-12


# --- Fix round o (review 02_o) ----------------------------------------------------------------


def test_review_02o_page_edits():
    cells = {c.id: c for c in _page_cells()}
    assert cells["33291ce2"].source.startswith("## The toy's matrices")  # finding 6
    two = " ".join(cells["c95b653c"].source.split())
    # finding 3: symmetric scores, not symmetric shares; finding 4: why direction matters
    assert "softmax normalises each row alone" not in two  # review 02_t-5: chapter 5's point
    assert "A verb seeks its object" not in two  # review 02_q-1: toy numbers, not language
    assert "One shared matrix cannot do that." not in two  # the bullet above says it


@pytest.mark.parametrize("answer", ["0.37", " 0.37", "3"])
def test_a_number_in_quotes_is_told_to_drop_them(answer, capsys):
    assert not check_delicious(answer) and not check_self_matches(answer, S_SHARED)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    for line in lines:
        assert line.endswith(f"got {answer!r}: remove the quotes: give a number.")
    assert not check_delicious("zero")  # not a number at all: no talk of quotes
    assert "quotes" not in capsys.readouterr().out


# --- Fix round p (review 02_p) ----------------------------------------------------------------


def test_review_02p_page_edits():
    cells = {c.id: c for c in _page_cells()}
    prose = "\n".join(
        " ".join(c.source.split()) for c in cells.values() if c.cell_type == "markdown"
    )
    # finding 1: d_k is a width; "length" is kept for the norm |q| only
    assert "$d_k$ is the *width* of a query or a key: its number of entries." in prose
    assert "a query 2 wide per token." in prose and "keys are $d_k = 2$ wide too" in prose
    assert "length of a query" not in prose and "of length 2" not in prose
    assert "have length" not in prose and "same length" not in prose
    # finding 5: no projection is the shared design with W = I
    two = " ".join(cells["c95b653c"].source.split())
    assert "**No projection** is the shared design with $W = I$." in two
    assert "exercise 2.2 covers it" not in two  # review 02_q-7
    # educator 3: the shape-error section keeps one attention_lib example
    assert "V[:5]" not in cells["978618ed"].source
    assert cells["978618ed"].outputs[0]["text"].count("ValueError") == 1
    assert "values for 5 of the 8 words" not in prose


# --- Fix round s (review 02_s) ----------------------------------------------------------------


def test_review_02s_page_edits():
    cells = {c.id: c for c in _page_cells()}
    two = " ".join(cells["c95b653c"].source.split())
    # finding 1, reworded in review 02_t-1: a property of our W_q, not of sharing
    # review 02_u-1: a long query prefers itself, with the numbers the table prints
    # review 02_v-1: query length alone does not decide it ("delicious", "I")
    assert '"It" happens to prefer itself (3.39 > 3.25)' in two
    assert "long query" not in two
    assert "Sharing also costs" not in two
    Q = toy.projections()[0]
    it, cake = toy.token_index("it"), toy.token_index("cake")
    S = al.attention_scores(Q, Q)
    assert (round(S[it, it], 2), round(S[it, cake], 2)) == (3.39, 3.25)
    # finding 2's Reformer aside is cut (review 02_y-4)
    # finding 4: W_q's rows are labelled with the features in the one-token diagram
    assert "right_rows=toy.FEATURES" in " ".join(c.source for c in _page_cells())


def test_one_token_diagram_names_the_rows_of_w_q():
    fig, alt = matmul_diagram(
        toy.X[1:2], toy.W_q, names=("x_ate", "W_q", "q_ate"), right_rows=toy.FEATURES
    )
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert set(toy.FEATURES) <= texts and "The rows of W_q: food, person, action, pointer." in alt
    plt.close(fig)
    # the page's figure: drawn at most 520 px wide on a phone, its text stays over 7 px
    cells = {c.id: c for c in _page_cells()}
    html = cells["40912d84"].outputs[0]["data"]["text/html"]
    png = base64.b64decode(re.search(r"base64,([^\"]+)", html).group(1)[:64])
    width = int.from_bytes(png[16:20], "big")
    text_px = float(re.search(r'data-text-px="([0-9.]+)"', html).group(1))
    assert text_px * min(width, 520) / width >= 7.0


# --- Fix round y (review 02_y) ----------------------------------------------------------------


def test_review_02y_page_edits():
    cells = {c.id: c for c in _page_cells()}
    flat = {k: " ".join(c.source.split()) for k, c in cells.items()}
    # finding 1: part 3 gives the deciding quantity, |q_j| cos(theta), not "shorter"
    part3 = flat["5e1f0a03"]
    assert "Four queries" not in part3
    assert "Row $i$ picks the word with the largest $\\lVert q_j \\rVert \\cos\\theta$." in part3
    assert '"Delicious" points almost exactly at "cake" ($\\cos\\theta = 0.992$)' in part3
    # finding 2: why query column 0 may be called "seeks food" (reworded in review 02_z-1)
    assert 'so query entry 0 means "seeks food".' in flat["wqwhy001"]
    # finding 3: a larger score gets a larger share
    assert "grow with the score (3.0 → 0.42, 2.7 → 0.31)." in flat["087e3e00"]
    # finding 5: only the library's error is left in the fold
    assert "Operand 1" not in flat["6ab3a5e0"] and "W_short" not in flat["6ab3a5e0"]
    # finding 6: exercise 2.1 prints x_delicious and column 1 only
    assert "print(toy.W_q)" not in cells["ab785b83"].source
    assert "toy.W_q[:, 1]" in cells["ab785b83"].source
    # finding 7: GPT-2's Conv1D keeps our orientation
    assert "Hugging Face's GPT-2 (`Conv1D`) stores our $(d_{in}, d_{out})$." in flat["f05ed001"]


# --- Fix round z (review 02_z) ----------------------------------------------------------------


def test_review_02z_page_edits():
    cells = {c.id: c for c in _page_cells()}
    flat = {k: " ".join(c.source.split()) for k, c in cells.items()}
    # finding 1/2: three steps in the table's order; the rows reading moved from the maths
    why = flat["wqwhy001"]
    steps = [why.index(f"{n}. **$W_{m}$") for n, m in ((1, "q"), (2, "k"), (3, "v"))]
    assert steps == sorted(steps) and "mixes the **rows**" not in flat["ae9e394f"]
    assert "A score $q \\cdot k$ multiplies query entry $j$ with key entry $j$" in why
    assert "learn a shared, unnamed matching space;" in why and "0.2" not in why
    # finding 7: the 1.28 sum said once in the text, no display line repeating the diagram
    assert flat["7d13fca5"].count("1.28") == 1 and "$$" not in flat["7d13fca5"]
    # finding 4 and 5: why the self-match is the failure; only the Q/K half is tested
    assert "the pronoun's best match is itself, not the noun it stands for." in flat["c95b653c"]
    assert "(we test the query-key half)" in flat["1eab48bb"]
    # learner 2: exercise 2.2 asks only for the count; the law is stated, proved in the solution
    ask = flat["5e1f0a01"]
    assert "the word with the longest query must pick itself" in ask and "1." not in ask
    # finding 3: the deciding quantity, with numbers
    assert "(1.73–1.83) beats every other" in flat["5e1f0a03"]
    assert "their own lengths (0.72–1.46) included." in flat["5e1f0a03"]


def test_review_02z_checker_hints(capsys):
    # 0.7 × 0.4 × 0.3 = 0.084 is a product chain, not q_it[2] = 0.08 of another token
    assert not check_projection_element(0.7 * 0.4 * 0.3)
    line = capsys.readouterr().out
    assert "you multiplied where you should add" in line and "another token" not in line
    assert not check_projection_element(0.7 + 0.3)
    line = capsys.readouterr().out
    assert "you added x_delicious's entries without multiplying by the column" in line
    assert check_projection_element(0.37)
    capsys.readouterr()
    best = S_SHARED.argmax(-1)  # each row's best match: len(best) would be 8
    assert not check_self_matches(best, S_SHARED)
    line = capsys.readouterr().out
    assert "each row's best match; compare it with np.arange(8)" in line and "len(" not in line
    assert not check_self_matches(["I", "cake", "it"], S_SHARED, tokens=toy.TOKENS)
    assert "count them with len(...)" in capsys.readouterr().out
