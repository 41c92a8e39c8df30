"""Chapter 5: the checkers' hints and their library rule, the slider's bars, and the
heatmap's fixed, labelled colour scale (chapters 3 and 8 use it)."""

from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pytest

import attention_lib as al
from attention_lib import toy
from attention_lib.checks import check_entropy, check_softmax
from attention_lib.checks.names import calls_library, uses_name
from attention_lib.plotting import bar_row, heatmap


def test_heatmap_can_fix_and_label_its_colour_scale():
    weights = al.softmax(toy.scaled_scores())
    fig, alt = heatmap(
        weights, toy.TOKENS, title="w", vmin=0, vmax=1, cbar_label="attention weight"
    )
    image, bar = fig.axes[0].images[0], fig.axes[1]
    assert image.get_clim() == (0, 1)
    assert bar.get_ylabel() == "attention weight"
    assert alt.endswith("Colour scale (attention weight) from 0 to 1.")
    plt.close(fig)


def test_heatmap_without_a_label_is_unchanged():
    weights = al.softmax(toy.scaled_scores())
    fig, alt = heatmap(weights, toy.TOKENS, title="w")
    assert fig.axes[1].get_ylabel() == ""
    assert "Colour scale" not in alt
    assert fig.axes[0].images[0].get_clim() == (weights.min(), weights.max())
    plt.close(fig)


# --- The chapter's checkers: hints for the slips a cold review found -----------------------


def _stable(x, axis, T):
    return (x - x.max(axis=axis, keepdims=True)) / T  # the shifted scores, divided by T


def t_only_in_numerator(x, axis=-1, temperature=1.0):
    s = x - x.max(axis=axis, keepdims=True)
    return np.exp(s / temperature) / np.exp(s).sum(axis=axis, keepdims=True)


def t_only_in_denominator(x, axis=-1, temperature=1.0):
    s = x - x.max(axis=axis, keepdims=True)
    return np.exp(s) / np.exp(s / temperature).sum(axis=axis, keepdims=True)


def max_of_x_not_x_over_t(x, axis=-1, temperature=1.0):
    e = np.exp(x / temperature - x.max(axis=axis, keepdims=True))  # overflows for T < 1
    return e / e.sum(axis=axis, keepdims=True)


def softmax_on_axis_1(x, axis=-1, temperature=1.0):
    e = np.exp(_stable(x, 1, temperature))
    return e / e.sum(axis=1, keepdims=True)


def _entropy_terms(p, log=np.log):
    return -p * log(np.where(p > 0, p, 1.0))  # 0 log 0 counted as 0


@pytest.mark.parametrize(
    ("fn", "hint"),
    [
        (t_only_in_numerator, "your rows do not sum to 1 (x = [1, 2, 3] gives 1.313)"),
        (t_only_in_denominator, "numerator and the denominator alike"),
        (softmax_on_axis_1, "raised AxisError"),
        (softmax_on_axis_1, "A 1-D row has only axis 0: use the axis argument"),
        (max_of_x_not_x_over_t, "scores near 1000 with temperature=0.5"),
        (max_of_x_not_x_over_t, "Subtract the max of x / T, or shift x before dividing"),
    ],
)
def test_softmax_checker_names_the_temperature_and_axis_slips(fn, hint, capsys):
    result = check_softmax(fn)
    line = capsys.readouterr().out
    assert not result and result.status == "FAIL"
    assert line.startswith("[softmax] FAIL: ") and line.count("\n") == 1
    assert hint in line, line


@pytest.mark.parametrize(
    ("fn", "hint"),
    [
        (lambda p: np.mean(_entropy_terms(p), axis=-1), "log(8) / 8"),
        (lambda p: np.mean(_entropy_terms(p), axis=-1), "np.sum, not np.mean"),
        (lambda p: np.sum(_entropy_terms(p, np.log10), axis=-1), "log base 10"),
        (lambda p: np.sum(_entropy_terms(p), axis=1), "raised AxisError"),
        (lambda p: np.sum(_entropy_terms(p), axis=1), "reduce over axis=-1"),
    ],
)
def test_entropy_checker_names_mean_log10_and_axis_slips(fn, hint, capsys):
    result = check_entropy(fn)
    line = capsys.readouterr().out
    assert not result and result.status == "FAIL"
    assert line.startswith("[entropy] FAIL: ") and line.count("\n") == 1
    assert hint in line, line


def clipped_softmax(x, axis=-1, temperature=1.0):  # a "fix" by clipping: finite, but flat
    e = np.exp(np.clip(x / temperature, -700, 700))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize(
    ("fn", "hint"),
    [
        (clipped_softmax, "clipping or capping the scores (np.clip) erases their differences"),
        (lambda x, axis=-1, temperature=1.0: _softmax_t(x, axis, temperature**2), "by T ** 2"),
        (lambda x, axis=-1, temperature=1.0: _softmax_t(x, axis, temperature**0.5), "square root"),
    ],
    ids=["clip", "T-squared", "sqrt-T"],
)
def test_softmax_checker_names_clipping_and_a_wrong_power_of_t(fn, hint, capsys):
    assert not check_softmax(fn)
    line = capsys.readouterr().out
    assert line.startswith("[softmax] FAIL: ") and hint in line, line


# --- Review 05_t round t: the max subtracted after exp, or divided out of the scores ---------


def max_after_exp(x, axis=-1, temperature=1.0):  # the shift on the exponentials
    e = np.exp(x / temperature)
    e = e - e.max(axis=axis, keepdims=True)
    return e / e.sum(axis=axis, keepdims=True)


def divides_by_max(x, axis=-1, temperature=1.0):  # x / max, not x - max
    e = np.exp(x / x.max(axis=axis, keepdims=True) / temperature)
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize(
    ("fn", "hint"),
    [
        (max_after_exp, "a weight is zero or negative ([0.5777 0.4223 -0])"),
        (max_after_exp, "subtract the max from the scores before exp, not from the exponentials"),
        (divides_by_max, "you divided the scores by their maximum instead of subtracting it"),
    ],
    ids=["after-exp", "after-exp-fix", "divided"],
)
def test_softmax_checker_names_where_the_max_goes(fn, hint, capsys):
    assert not check_softmax(fn)
    line = capsys.readouterr().out
    assert line.startswith("[softmax] FAIL: ") and hint in line, line
    assert "values differ" not in line, line


def test_the_max_hints_leave_a_right_answer_and_a_missing_exp_alone(capsys):
    assert check_softmax(lambda x, axis=-1, temperature=1.0: _softmax_t(x, axis, temperature))
    assert not check_softmax(lambda x, axis=-1, temperature=1.0: x - x.max(axis=axis))
    line = capsys.readouterr().out
    assert line.count("PASS") == 1 and "zero or negative" not in line, line


def _entropy_eps(p, eps):
    return -np.sum(p * np.log(p + eps), axis=-1)


@pytest.mark.parametrize(
    ("fn", "hint"),
    [
        (lambda p: np.sum(_entropy_terms(p) / np.where(p > 0, p, 1.0), axis=-1), "8 log 8"),
        (lambda p: np.sum(_entropy_terms(p), axis=-1) / np.log(p.shape[-1]), "divided by log n"),
        (lambda p: _entropy_eps(p, 1e-3), "log(p + eps)"),
        (lambda p: _entropy_eps(p, 1e-6), "log(p + eps)"),
        (lambda p: np.exp(np.sum(_entropy_terms(p), axis=-1)), "perplexity exp(H)"),
    ],
    ids=["no-p-factor", "over-log-n", "eps-1e-3", "eps-1e-6", "perplexity"],
)
def test_entropy_checker_names_a_missing_p_a_normalised_answer_and_a_big_eps(fn, hint, capsys):
    assert not check_entropy(fn)
    line = capsys.readouterr().out
    assert line.startswith("[entropy] FAIL: ") and hint in line, line


def test_the_eps_hint_prints_enough_digits_to_show_the_gap(capsys):
    assert not check_entropy(lambda p: _entropy_eps(p, 1e-6))
    line = capsys.readouterr().out
    # "got 2.079434 ..., 8e-06 below log 8 = 2.079442", not "got 2.0794 ... log 8 = 2.0794"
    got = float(line.split("got ")[1].split()[0])
    shown = float(line.split("log 8 = ")[1].split(":")[0])
    assert got < shown and "8e-06 below log 8" in line, line


def test_a_tiny_eps_inside_the_log_still_passes(capsys):
    assert check_entropy(lambda p: _entropy_eps(p, 1e-12))  # within the checker's tolerance
    assert check_entropy(lambda p: _entropy_eps(p, 1e-7))  # review 05y: the hint says 1e-7 passes
    assert capsys.readouterr().out.count("PASS") == 2


def test_the_eps_hint_accepts_a_tiny_eps_openly(capsys):
    assert not check_entropy(lambda p: _entropy_eps(p, 1e-6))
    line = capsys.readouterr().out
    assert "An eps of 1e-7 or less stays within this checker's tolerance" in line, line
    assert "this one does not" in line and "np.where(p > 0, p, 1.0)" in line


def test_a_list_of_one_entropy_is_not_blamed_on_keepdims(capsys):
    def as_list(p):
        return list(np.atleast_1d(np.sum(_entropy_terms(p), axis=-1)))

    assert not check_entropy(as_list)
    line = capsys.readouterr().out
    assert "not a list or array of one" in line and "Drop keepdims" not in line, line


def naive_in_long_double(x, axis=-1, temperature=1.0):
    e = np.exp(np.asarray(x, dtype=np.longdouble) / temperature)  # no max trick
    return e / e.sum(axis=axis, keepdims=True)


def test_a_wider_float_does_not_replace_the_max_trick(capsys):
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(np.longdouble(12000)))  # the case overflows long double too
    with np.errstate(over="ignore", invalid="ignore"):
        assert not check_softmax(naive_in_long_double)
    line = capsys.readouterr().out
    assert "scores near 12000 and -12000" in line and "subtract each row's maximum" in line, line


def test_a_sign_flipped_twice_is_called_flipped_not_missing(capsys):
    def minus_p_log_one_over_p(p):  # -sum p log(1/p) = +sum p log p: two flips
        return -np.sum(p * np.log(1 / np.where(p > 0, p, 1.0)), axis=-1)

    assert not check_entropy(minus_p_log_one_over_p)
    line = capsys.readouterr().out
    assert "your sign is flipped" in line and "put a minus sign" not in line, line


@pytest.mark.parametrize(
    "fn",
    [
        lambda x, axis=-1, temperature=1.0: np.log(_softmax_t(x, axis, temperature)),  # log
        lambda x, axis=-1, temperature=1.0: _softmax_t(x, axis, 1.0),  # T ignored
        lambda x, axis=-1, temperature=1.0: _softmax_t(x, axis, 1 / temperature),  # times T
        max_of_x_not_x_over_t,
    ],
)
def test_softmax_hints_say_scores_as_the_chapters_do(fn, capsys):
    with np.errstate(over="ignore", invalid="ignore"):
        assert not check_softmax(fn)
    line = capsys.readouterr().out
    assert "scores" in line and "logits" not in line, line


def _softmax_t(x, axis, T):
    e = np.exp(_stable(x, axis, T))
    return e / e.sum(axis=axis, keepdims=True)


def test_the_new_hints_leave_right_answers_alone(capsys):
    def good_softmax(x, axis=-1, temperature=1.0):
        e = np.exp(_stable(x, axis, temperature))
        return e / e.sum(axis=axis, keepdims=True)

    assert check_softmax(good_softmax)
    assert check_entropy(lambda p: np.sum(_entropy_terms(p), axis=-1))
    assert capsys.readouterr().out.count("PASS") == 2


def test_other_failures_get_no_axis_hint(capsys):
    # Only an AxisError the learner's code raises is explained; other verdicts stay as they were.
    assert not check_entropy(lambda p: np.sum(_entropy_terms(p), axis=-1) + 1)
    line = capsys.readouterr().out
    assert "axis=-1, the last axis" not in line and "values differ" in line


# --- The temperature slider's bars ---------------------------------------------------------


def test_a_bar_near_the_top_keeps_its_number_inside_the_frame():
    row = al.softmax(toy.scaled_scores()[toy.token_index("it")], temperature=0.05)
    assert round(row.max(), 2) == 0.99  # the frame the review found crossing the frame
    fig, alt = bar_row(row, toy.TOKENS, title="T = 0.05", top_label="largest weight ('cake')")
    ax = fig.axes[0]
    fig.canvas.draw()
    frame = ax.get_window_extent()
    numbers = [t for t in ax.texts if t.get_text() == "0.99"]
    assert len(numbers) == 1
    box = numbers[0].get_window_extent()
    assert box.y1 <= frame.y1 and box.y0 >= frame.y0  # drawn inside the axes
    assert ax.get_xlabel() == "key"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["largest weight ('cake')"]
    assert alt.endswith("The highlighted bar is the largest weight ('cake').")
    plt.close(fig)


def test_low_bars_keep_their_numbers_above_them_and_no_legend_by_default():
    fig, alt = bar_row(np.array([0.25, 0.75]), ["a", "b"], title="x")
    ax = fig.axes[0]
    assert all(t.get_va() == "bottom" for t in ax.texts)
    assert ax.get_legend() is None and "highlighted" not in alt
    plt.close(fig)


def test_the_slider_frame_can_draw_an_even_share_and_skip_tiny_numbers():
    row = al.softmax(toy.scaled_scores()[toy.token_index("it")], temperature=0.05)
    tiny = int((row < 0.01).sum())
    assert tiny == 7  # the review's seven "0.00" labels
    fig, alt = bar_row(
        row, toy.TOKENS, title="T = 0.05", reference=(1 / 8, "even share, 1/8"), label_from=0.01
    )
    ax = fig.axes[0]
    # round 5l: the seven "<0.01" crowded under the dashed line; tiny bars carry no number
    assert [t.get_text() for t in ax.texts] == ["0.99"]  # no "0.00", no "<0.01"
    (line,) = ax.get_lines()
    assert line.get_linestyle() == "--" and line.get_ydata()[0] == 0.125
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["even share, 1/8", "no number: below 0.01"]
    assert alt.endswith(
        "A dashed line marks the even share, 1/8 (0.125). Bars below 0.01 carry no number."
    )
    # the alt text reads the smallest bar as its label does, not as "(0.00)"
    assert "smallest 'was' (<0.01)." in alt and "0.00" not in alt
    plt.close(fig)


@pytest.mark.parametrize("T", [0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 5, 10])
def test_the_dashed_line_passes_behind_the_numbers_and_each_stays_on_its_bar(T):
    row = al.softmax(toy.scaled_scores()[toy.token_index("it")], temperature=T)
    fig, _ = bar_row(row, toy.TOKENS, title="x", reference=(1 / 8, "even"), label_from=0.01)
    ax = fig.axes[0]
    fig.canvas.draw()
    (line,) = ax.get_lines()
    assert line.get_color() != "black" and line.get_zorder() < 1  # light, behind the bars
    line_y = ax.transData.transform((0, 1 / 8))[1]
    for text in ax.texts:  # each number on an opaque white box, in front of the line
        patch = text.get_bbox_patch()
        if patch is None:  # a tall bar carries its number inside its top
            assert text.get_va() == "top" and row[text.xy[0]] > 0.9, (T, text.get_text())
            continue
        assert patch.get_facecolor() == (1, 1, 1, 1), text.get_text()
        assert text.get_zorder() > line.get_zorder()
        box = patch.get_window_extent()
        # review 05_a: no number floats off its bar (at T = 0.2 an 0.04 sat at about 0.17)
        bar_top = ax.transData.transform((0, row[text.xy[0]]))[1]
        assert 0 <= box.y0 - bar_top <= 15, (T, text.get_text())  # it was about 21 px
        if box.y0 < line_y < box.y1:  # the line passes behind a number sitting on its bar
            assert text.xy[1] == row[text.xy[0]], (T, text.get_text())
        else:  # no box runs along the line: it clears it by a pixel or more
            assert box.y0 - line_y >= 2 or line_y - box.y1 >= 1, (T, text.get_text())
    # bars just below 1/8 (the T = 0.5, 1 and 10 frames) carry their numbers on the line
    lifted = [t for t in ax.texts if row[t.xy[0]] < 1 / 8 and t.xy[1] > row[t.xy[0]]]
    if T in (0.5, 1, 10):
        assert lifted and all(t.xy[1] == 1 / 8 for t in lifted)
    if T in (0.1, 0.2):  # the review's frames: every number on its own bar
        assert not lifted
    plt.close(fig)


def test_the_slider_text_is_as_large_as_the_tick_labels():
    row = al.softmax(toy.scaled_scores()[toy.token_index("it")], temperature=1)
    fig, _ = bar_row(
        row, toy.TOKENS, title="x", top_label="largest weight", reference=(1 / 8, "even")
    )
    legend = fig.axes[0].get_legend()
    sizes = [t.get_fontsize() for t in [*fig.axes[0].texts, *legend.get_texts()]]
    assert len(sizes) == 10 and min(sizes) >= 10  # 12.5 px in the PNG, was 8 pt (10 px)
    assert [t.get_text() for t in legend.get_texts()] == ["largest weight", "even"]
    plt.close(fig)


def test_a_row_without_tiny_bars_gets_no_no_number_entry():
    row = al.softmax(toy.scaled_scores()[toy.token_index("it")], temperature=1)
    fig, alt = bar_row(row, toy.TOKENS, title="x", reference=(1 / 8, "even"), label_from=0.01)
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == ["even"] and len(fig.axes[0].texts) == 8 and "no number" not in alt
    plt.close(fig)


@pytest.mark.parametrize(("T", "top"), [(10, "0.132"), (5, "0.14"), (1, "0.21")])
def test_the_largest_bar_never_reads_like_another(T, top):
    # round 5l: at T = 10 three bars read 0.13 and only 'cake' was yellow
    row = al.softmax(toy.scaled_scores()[toy.token_index("it")], temperature=T)
    fig, alt = bar_row(row, toy.TOKENS, title="x", reference=(1 / 8, "even"), label_from=0.01)
    numbers = [t.get_text() for t in fig.axes[0].texts]
    plt.close(fig)
    assert numbers[toy.token_index("cake")] == top and numbers.count(top) == 1
    assert len({len(n) for n in numbers}) == 1  # one format for every bar
    assert f"Largest 'cake' ({top})" in alt


def test_a_uniform_row_keeps_its_format():
    fig, _ = bar_row(np.full(4, 0.25), list("abcd"), title="x")
    assert [t.get_text() for t in fig.axes[0].texts] == ["0.25"] * 4
    plt.close(fig)


def test_bar_row_defaults_draw_no_line_and_number_every_bar():
    # Chapter 3's score bars use the defaults: no reference line, a number on every bar.
    values = np.array([0.001, 0.999])
    fig, alt = bar_row(values, ["a", "b"], title="x")
    ax = fig.axes[0]
    assert ax.get_lines() == [] and len(ax.texts) == 2
    assert "dashed" not in alt and "<" not in alt and "labelled" not in alt
    plt.close(fig)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"reference": 0.125}, r"reference must be \(height, label\)"),
        ({"reference": (0.125,)}, r"reference must be \(height, label\)"),
        ({"reference": ("even", 0.125)}, r"reference must be \(height, label\)"),
        ({"label_from": "0.01"}, "label_from must be a number"),
    ],
)
def test_bar_row_names_a_bad_reference_or_label_threshold(kwargs, message):
    with pytest.raises(ValueError, match=message):
        bar_row(np.array([0.5, 0.5]), ["a", "b"], title="x", **kwargs)


# --- The softmax exercise rules out calling a softmax; the entropy hint's own advice --------


def calls_the_library(x, axis=-1, temperature=1.0):
    return al.softmax(x, axis=axis, temperature=temperature)


def calls_it_inside_a_helper(x, axis=-1, temperature=1.0):
    def helper(z):
        return al.softmax(z / temperature, axis=axis)

    return helper(x)


@pytest.mark.parametrize("fn", [calls_the_library, calls_it_inside_a_helper, al.softmax])
def test_softmax_checker_refuses_a_call_to_softmax(fn, capsys):
    result = check_softmax(fn)
    line = capsys.readouterr().out
    assert not result and result.status == "FAIL"
    assert "rules out" in line and "np.max, np.exp and np.sum" in line, line


def _notebook(source: str, **names):
    """Define the functions of ``source`` as a notebook cell would: in ``__main__``."""
    ns = {"__name__": "__main__", "np": np, "al": al, **names}
    exec(source, ns)
    return ns


def _foreign_softmax(module: str):
    """A NumPy softmax called ``softmax`` that lives in another package, as SciPy's does."""
    ns = {"__name__": module, "np": np}
    exec(
        "def softmax(x, axis=-1):\n"
        "    e = np.exp(x - x.max(axis=axis, keepdims=True))\n"
        "    return e / e.sum(axis=axis, keepdims=True)\n",
        ns,
    )
    return ns["softmax"]


_USES = "def my_softmax(x, axis=-1, temperature=1.0):\n    return {}(x / temperature, axis)\n"


@pytest.mark.parametrize(
    ("source", "names"),
    [
        ("sm = al.softmax\n" + _USES.format("sm"), {}),  # the library under an alias
        (_USES.format("sp_sm"), {"sp_sm": _foreign_softmax("scipy.special")}),
        (  # scipy.special.softmax, reached through attributes
            _USES.format("scipy.special.softmax"),
            {"scipy": SimpleNamespace(special=SimpleNamespace(softmax=_foreign_softmax("sp")))},
        ),
        (  # the learner's own helper, which hides a call to the library
            "def softmax(z, axis):\n    return al.softmax(z, axis=axis)\n\n"
            + _USES.format("softmax"),
            {},
        ),
    ],
    ids=["alias", "scipy-alias", "scipy-attribute", "hidden-in-helper"],
)
def test_softmax_checker_finds_a_library_softmax_under_any_name(source, names, capsys):
    fn = _notebook(source, **names)["my_softmax"]
    assert calls_library(fn, "softmax")
    assert not check_softmax(fn)
    assert "rules out" in capsys.readouterr().out


def test_a_learners_own_numpy_helper_named_softmax_passes(capsys):
    helper = (
        "def softmax(z, axis):\n"
        "    e = np.exp(z - z.max(axis=axis, keepdims=True))\n"
        "    return e / e.sum(axis=axis, keepdims=True)\n\n"
    )
    fn = _notebook(helper + _USES.format("softmax"))["my_softmax"]
    assert not calls_library(fn, "softmax")
    assert check_softmax(fn)
    assert "PASS" in capsys.readouterr().out


def test_a_grader_stand_in_without_code_is_not_flagged(capsys):
    class StandIn:  # what a grader passes: a callable that runs the answer elsewhere
        def __call__(self, x, axis=-1, temperature=1.0):
            return al.softmax(x, axis=axis, temperature=temperature)

    assert not hasattr(StandIn(), "__code__")
    assert not calls_library(StandIn(), "softmax")
    assert check_softmax(StandIn())
    assert "PASS" in capsys.readouterr().out


def test_chapter_10s_rule_finds_attention_backward_under_an_alias():
    from attention_lib.backward import attention_backward
    from attention_lib.checks import check_numerical_gradient

    source = "def my_numerical_gradient(Q, K, V, dOut, eps):\n    return ab(Q, K, V, dOut)[0]\n"
    fn = _notebook(source, ab=attention_backward)["my_numerical_gradient"]
    assert calls_library(fn, "attention_backward") and not uses_name(fn, "attention_backward")
    assert "calls attention_backward" in check_numerical_gradient(fn).message


def test_the_entropy_hint_advice_passes_without_a_warning(capsys):
    # A learner who follows the one-hot hint literally: log of np.where(p > 0, p, 1.0).
    assert not check_entropy(lambda p: -np.sum(p * np.log(p), axis=-1))
    line = capsys.readouterr().out
    assert "np.where(p > 0, p, 1.0)" in line, line

    def as_hinted(p):
        return -np.sum(p * np.log(np.where(p > 0, p, 1.0)), axis=-1)

    with np.errstate(all="raise"):  # log(0) or 0 * -inf would raise here
        assert as_hinted(np.array([0.0, 0.0, 1.0])) == 0.0
    assert check_entropy(as_hinted)


# --- Fix round 5j: the page itself ------------------------------------------------------------


# Round 5n added 138 words in folds (the runner-up's derivative and the gradient over T;
# the non-linearity fold's conclusion) and cut the main line from 1059 to 1053 words.
# Round 5p (review 05p) cut both by 4 while adding the normalised rows' conclusion.
# Round 5r (review 05r) cut 1807 -> 1803 and 1046 -> 1038 while saying why "sum only" loses.
# Round 5s (review 05s) cut 1803 -> 1723 and 1038 -> 1012: no sum-only row, no extreme-T fold.
# Round 3 (review 05t) cut 1702 -> 1700 and 1011 -> 989 (test count): the heatmap caption and
# the log-odds clause cut; the runner-up and training folds split (folded 643 -> 660).
# Round 4 (review 05u) cut 1700 -> 1698 and 989 -> 978 while showing divide-by-sum move
# with a shift on the row of "it" (start token, same-knob and chapter 6 tease cut).
# Session 4 (review 05v) cut 1692 -> 1687 and 978 -> 972 while adding the heatmap's note, why
# only gaps count, why an average is no longer than its longest vector, sqrt(d_k) as T and a
# sink fold: the row-maxima note (26b93a54) and the training fold (tgrad05) are cut.
# Session 4b (review 05w) cut 1687 -> 1686 and, with the log-sum-exp fold now a cell of its own
# (56 words, counted on the main line before), 916 -> 880: the heatmap and its note, the
# doubling-sharpens point, bfloat16 and the summary's "Next" cut; the bias shift's reason, the
# softmax Jacobian (in the fold) and the exact al.softmax / nanoGPT wording added.
# Session 4c (review 05x) cut 1686 -> 1681 and 880 -> 853: why exponentiate in two ideas, "a gap
# becomes a ratio" (chapter 4's) and the third shift-invariance statement cut; the qualifier on
# the nudge, the 8 x 8 weights table and the flat row's 0.044 nats (in the exercise) added.
# Session 4d (review 05y) cut 1681 -> 1580 and 853 -> 849: the runner-up fold and the key-bias
# detail cut; why a shift should not matter, then why only exp ignores it; bfloat16 and float16
# named; the mask= of attention; "what softmax adds" after "In code", with 2S explained first.
# Session 4e (review 05z) cut 1580 -> 1546; main line 849 -> 869 (+20): the z^2 line, k > 0
# and k = 1/T, the flat-rows sentence added; "what softmax adds" after the two moves; the
# non-linearity fold and "the saturated rows of chapter 4" cut; the number-formats fold names
# nanoGPT's two paths and why the 2048 stall matters (al.softmax sums float16 in float32).
# Session 4f (review 05aa) cut 1546 -> 1510 and 869 -> 864: why exponentiate prints the shift
# first, then derives exp in two sentences; the flat rows are blamed on hand-picked weights;
# the number-formats fold holds its limits in its text and drops autocast and the kernels.
# Review 05_a cut 1510 -> 1503 and 864 -> 809: "what softmax adds" shrinks to the doubling
# point after "In code" (no output lengths: chapter 6's hull); the only-exp derivation moves
# to a fold, in two steps; nanoGPT and the float16 stall (np.sum does not stall) are cut.
# Review 05_b cut 1503 -> 1492 and 809 -> 808: "what softmax adds" compares outputs like with
# like (raw vs softmax, x1 and x2; x2 is T = 0.5); why exponentiate in one paragraph (a key
# bias); the sigmoid and Boltzmann named; the summary says what softmax adds.
# Review 05_d cut 1492 -> 1487 and 808 -> 806: why exponentiate prints plain and squared
# shares, then says them in words; the temperature section follows the math; "what softmax
# adds" prints the longest value; the Jacobian and number-formats folds shortened.
# Review 05_f raised 1487 -> 1527 and 806 -> 859 (the brief's additions, part paid for by
# the float16 total cut from its fold): a key bias spelled out as q . b; attention has no T
# to set (doubling W_q); doubling gives back chapter 4's raw scores; the chatbot's T is
# another softmax's; each score a negative energy; chapter 4's sigmoid and Jacobian marked.
# Review 05_k cut 1527 -> 1487 and 859 -> 858: "no T to set" said once, atop the temperature
# section (cut from the math and the flat-row note, the chatbot sentence too); the squared
# shares and the log-sum-exp half of the fold cut; the naming answer, rows-not-columns and
# chapter 8's mask= pointer added; the output nears the top key's value, not the longest.
# Review 05_l cut 1487 -> 1486 and 858 -> 837: why exponentiate leads with what softmax must
# do (the key bias a consequence, in the math); log-sum-exp to the slope fold; the x100 and
# reshuffle sentences cut; the max trick printed; one clause on masked_fill.
# Review 05_m cut 1486 -> 1426 and 837 -> 832: the masked-row, al.softmax-refuses and
# masked_fill sentences cut (chapter 8's); number formats one sentence of the max-trick note;
# the sink fold a pointer; "only gaps count" given its reason where it is stated; the
# temperature section opens on T = 2 and e^(1/T); "what softmax adds" is one contrast.
# Review 05_n cut 1426 -> 1425 and 832 -> 831: the temperature section opens on softmax(z / T)
# and e^(1/T), "no T of its own" closes it; the sink fold joins the fixed budget.
# Review 05_s kept 1418 and cut 825 -> 800: why exponentiate leads with the +1 experiment and
# states its condition; the key bias and sparsemax / sigmoid attention move into the fold;
# "what softmax adds" states its takeaway (sharper choice, not longer output).
# Session 10 (editor pass) cut 1481 -> 1371 and 821 -> 676: side roads to a final "Going
# further" (the folds, number formats, sampling and distillation); the doubling duality cut.
# Review 05_dd cut 1378 -> 1359 and 710 -> 692: "what softmax adds" shrinks to issue #29's
# identity and 0.21 -> 0.32 (the bound is chapter 6's); sqrt(d_k) 2 in the toy, 8 at d_k = 64.
# Session 11 (review 05_ff, number diet) cut 1359 -> 1352 and 692 -> 668: the scale slogan cut,
# its point two sentences under the slider; "In code" after the math; numbers left to prints.
# Review 05_ii kept the main line at 790 (mainwc): rule 3's key-bias reason, "better-aligned"
# W_q, the derived sigmoid and chapter 6's use of the weights paid for by cutting "Row i holds
# query i's scores", the torch.softmax line and "softmax is the answer to these rules".
# Review 05_mm raised 1411 -> 1458 and 681 -> 713 (mainwc 800 -> 833): why a row sums to 1
# (chapter 6's average), the slider's T tied to the raw scores, W_q or W_k scaled as a whole
# (T = 1/c), the overflow limits named as logs, the float16 fold's two sums; paid in part by
# cutting "other attentions drop a rule" and the doubling note's "exactly T = 0.5".
# Review 05_qq raised 1511 -> 1541 and 758 -> 788 (+30, the brief's limit): what scaled[i, j]
# means, f continuous, one largest score (ties share), gaps from weights or inputs, the doubled
# ratio derived (e^g -> e^(2g)) and the turned query printed; paid in part by cutting the
# overflow limits from the prose (the page now prints them), the intuition's "(a row of
# scores)" and the summary's "columns have no such budget" (the "In code" note keeps it).
# Review 05_rr raised 1541 -> 1611 and 788 -> 813 (+25, the brief's limit): the note under
# the turned-query print (the query already pointed at cake's key, cosine 0.98; delicious's
# key points almost the same way, 0.92), "no constant term, no bias", the no-other-T sentence
# its own paragraph, float16's overflow at a score of 12 (why libraries use the max trick);
# folds: bfloat16 moved into the float16 fold, add_zero_attn in the sink fold (+45 folded);
# paid in part by cutting "with one largest score" from "Why soft max?" (the temperature
# section says it), the bfloat16 aside from the overflow opening and two short phrasings.
# Review 05_ss raised 1611 -> 1626 and 813 -> 828 (+15, the brief's limit): the turned query
# framed as "the first way, length kept", its two cosines printed (the note names none and
# is narrowed to this example), float32's overflow at 89 beside float16's at 12, one line on
# a row of all -inf (still nan; chapter 8), "the original Transformer"; paid in part by
# cutting the note's numbers (printed above it) and "A turn singles out only ...".
VISIBLE_WORDS = 1626  # review 05_ss (as above)
MAIN_LINE_WORDS = 828  # review 05_ss (as above): +15 words


def _chapter():
    from pathlib import Path

    import nbformat

    path = Path(__file__).resolve().parents[1] / "chapters" / "05_softmax.ipynb"
    cells = nbformat.read(path, as_version=4).cells
    shown = [c for c in cells if "remove-cell" not in c.metadata.get("tags", [])]
    prose = " ".join(c.source for c in shown if c.cell_type == "markdown")
    return {c.id: c for c in cells}, shown, " ".join(prose.split())


def test_fix_round_5j_cuts_words_and_states_what_it_claims():
    cells, shown, flat = _chapter()
    assert len(flat.split()) <= VISIBLE_WORDS, "more visible words than VISIBLE_WORDS"
    # three overflow limits, printed from np.finfo; no unexplained "GPU kernels"
    # review 05aa: the limits sit in the fold's text (computed in a remove-cell), no kernel claim
    # review 05_m: the fold is one sentence of the max-trick note
    box = " ".join(cells["floats05"].source.split())  # session 10: a Going further fold
    # review 05_p: float32's limit (the one GPUs hit) beside float16's
    # review 05_r: one precision for both limits
    # review 05_z F2: the limits open the max-trick section; the fold keeps the float16 sum
    opening = " ".join(cells["f5a1c0de"].source.split())
    # review 05aa F1: bfloat16 named beside float32 (same range); no "formats GPUs train in"
    # review 05_qq item 1: the limits are computed on the page, by a visible loop right under
    # the sentence that says where they come from; bfloat16's is float32's (NumPy lacks it)
    # review 05_rr item 3: the bfloat16 aside moves into the float16 fold
    assert opening.endswith(
        "Exp overflows above the log of each type's largest number:"
    )  # review 05_mm F6: the limits say where they come from
    assert "bfloat16" not in opening
    ids = [c.id for c in shown]
    assert ids.index("f16a05e1") == ids.index("f5a1c0de") + 1
    assert ids.index("f5a1c0df") == ids.index("f16a05e1") + 1  # then the max-trick rows
    loop = cells["f16a05e1"].source
    assert "np.log(top)" in loop and "np.finfo(f).max" in loop
    assert cells["f16a05e1"].outputs[0]["text"].splitlines() == [
        "float64: exp overflows above log(1.7977e+308) = 709.7827",
        "float32: exp overflows above log(3.4028e+38) = 88.7228",
        "float16: exp overflows above log(65504) = 11.0899",
    ]
    assert "GPUs train" not in flat
    # review 05aa F2: the fold leads with rounding (1024, not 1500), then overflow
    # review 05_kk F9, 05_mm F4: n equal keys leave n ones after the max trick; the loop
    # stalls at 2,048, NumPy's pairwise sum is inf only from 65,520 (65,504 is the largest)
    assert "88.72" not in box and "overflows past" not in box
    assert "that loop stalls at 2,048, and NumPy's pairwise sum gives `inf` from 65,520" in box
    assert "(float16's largest number is 65,504)" in box
    assert box.index("give 1024, not 1500") < box.index("`inf`")
    assert "weights of 0.3" not in box  # 05_cc F3
    # review 05_dd F4: the terms are e^(z - max), each 0.3, not copies of e^0.3
    # review 05_hh E1: about 5,000 (one term is 1); np.sum adds float16 in float32 inside
    # review 05_ii F8: two or three sentences; the np.sum aside and "e^{z - max} of 0.3" cut
    # review 05_jj F5: NumPy's float16 sum is pairwise (1500): the running sum is a loop's
    # review 05_pp item 6: no GPU named (real kernels add up in float32; nothing here runs one)
    assert "A float16 sum done one term at a time (a naive running sum) drops" in box
    assert "GPU" not in box
    assert "5,000 terms of 0.3 give 1024, not 1500" in box and "in pairs" not in box
    # review 05_rr item 3: a fourth sentence, bfloat16's range (moved from the opening)
    assert "\\max" not in box and "np.sum" not in box and box.count(". ") <= 4
    assert "exponentials of 0.3" not in box
    assert "tags" not in cells["f16a05e1"].metadata  # review 05_qq item 1: on the page
    assert "GPU kernels" not in flat and flat.count("bfloat16") == 1  # review 05aa F1
    assert "kernel" not in box and "autocast" not in box.lower()
    # review 05_a: np.sum does not stall; a float16 total overflows, the library's reason
    assert "stops growing" not in box and box.count("stall") == 1  # the loop's, 05_mm F4
    assert "65 504" not in box  # review 05_v F9: the float16 sum is back, in the fold
    assert "5f0a1b2c" not in cells  # review 05aa: no private function; 05_kk F7: cut
    # no orphan column sums; the non-linearity section ends on a measured output and sqrt(d_k)
    assert not any("column sums" in c.source for c in shown if c.cell_type == "code")
    printed = cells["d4e5f605"].outputs[0]["text"].splitlines()
    # review 05_hh F3 (issue #29): the identity is said in words and asserted off the page
    # review 05_kk F3: the page shows what softmax does instead: every ratio squared
    # review 05_ll F9: the hidden (2S)V = 2(SV) assert and its process note cut (the page
    # no longer says it)
    # review 05_qq item 3: the query of "it" turned toward cake's key, a third line
    assert printed == [
        "'cake' / 'was': 2.248 -> 5.053",
        "softmax, 'cake': 0.21 -> 0.32",
        "turned query, 'cake': 0.21 -> 0.23",
        "cosine, query and cake's key: 0.98",  # review 05_ss item 1: printed, not a comment
        "cosine, keys of cake and delicious: 0.92",
    ]
    assert "(2 * S) @ V" not in cells["d4e5f606"].source
    assert "issue #29" not in cells["d4e5f606"].source
    assert "turns the same knob" not in flat  # review 05u: cut to split the conclusion


def test_fix_round_5k_cuts_words_folds_number_formats_and_shows_the_two_moves():
    cells, shown, flat = _chapter()
    assert len(flat.split()) <= VISIBLE_WORDS, "more visible words than VISIBLE_WORDS"
    ids = [c.id for c in shown]
    # the spent budget is said once; review 05_s: "only an exponential" returns once, with
    # its condition (each score mapped on its own, then divided by the total) and the proof fold
    # session 10: the fold's title asks "Why only an exponential?"; the main line says it once
    assert flat.count("only an exponential does") == 1
    assert "a query cannot attend to nothing" in flat
    # session 10: it closes the three wishes (positive, in order, only gaps)
    # review 05_x F2: the condition is the family f(z_i) / sum f(z_j), named in one line
    # review 05_z F4: "all weightings", not "rules"
    # review 05_qq item 6: the "only" rests on f being continuous, said on the main line
    assert (
        "Of all weightings $f(z_i) / \\sum_j f(z_j)$ with $f$ continuous, only an exponential"
        " does all three" in flat
    )
    # the two moves, one table for the row of "it", right after the intuition
    assert ids.index("twomov05") == ids.index("96081790") + 1
    table = cells["twomov05"].outputs[0]["data"]["text/plain"]
    assert table.splitlines()[0].split() == [
        "row",
        "of",
        "'it'",
        "score",
        "z",
        "e^z",
        "e^z",
        "/",
        "sum",
    ]
    assert "cake            0.90  2.46       0.21" in table
    # session 4 (review 05v): the row-maxima print is cut; the heatmap's note says it
    assert "largest weight" not in cells["10e4cd6b"].source
    # number formats: review 05_m folds the dropdown into the max-trick note
    assert "f16a05e3" not in cells and "Going deeper: number formats" not in flat
    assert "nanoGPT" not in flat  # review 05_a: autocast runs softmax in float32 anyway
    # (round 5l put the X-doubling check on the page and rewrote the caption: see below)


def test_review_05w_cuts_the_two_temperature_heatmap():
    cells, _, flat = _chapter()
    # learner 3: three temperature displays were one too many; the slider and the curves stay
    assert "t2heat05" not in cells and "t2note05" not in cells
    assert "hardly chooses" not in flat and "3df9fffd" in cells and "twokey05" in cells


def test_the_heatmap_alt_text_names_its_panels_by_the_callers_word():
    from attention_lib.plotting import head_heatmaps

    pair = np.stack([np.full((3, 3), 1 / 3), np.eye(3)])
    fig, alt = head_heatmaps(pair, ["a", "b", "c"], ["T = 1", "T = 0.1"], title="t", unit="panel")
    plt.close(fig)
    assert "Most decisive rows per panel. T = 1: " in alt and "per head" not in alt
    fig, alt = head_heatmaps(pair, ["a", "b", "c"], title="t")  # heads by default
    plt.close(fig)
    assert "Most decisive rows per head. head 1: " in alt
    with pytest.raises(ValueError, match="unit must be a word naming a panel"):
        head_heatmaps(pair, ["a", "b", "c"], title="t", unit="")


def test_fix_round_5l_cuts_words_and_fixes_the_caption_the_factors_and_the_asides():
    cells, shown, flat = _chapter()
    assert len(flat.split()) <= VISIBLE_WORDS, "more visible words than VISIBLE_WORDS"
    # round 3 (review 05t): the heatmap's caption is cut, its title says flat and sharper
    assert "t2cap05" not in cells
    assert "no word stands out" not in flat
    # (round 5m moved the X-doubling check into a dropdown: see below)
    # wording nits; one "halving T"; no unexplained -inf aside
    assert "no step overflows" not in flat
    assert "always gets" not in flat
    # review 05_bb F1: the W_q point is on the main line (tnot05); the fold keeps Hinton only
    assert "halving $T$" not in flat and "doubling $q$" not in flat
    assert "refuses $-\\infty$" not in flat
    # review 05y: the runner-up fold is cut (a curiosity with no payoff later)
    assert "tderiv05" not in cells and "runner-up" not in flat
    assert "as if $T$ were halved" not in flat  # review 05w: only the first point stays
    # a note that holds in the book and in the learner edition (no "folded")
    # review 05aa: the limits are in the box's own text, so no note points outside it
    assert "printed below" not in " ".join(cells["2d2588ed"].source.split())


def test_the_learner_edition_keeps_the_number_format_note_true():
    from pathlib import Path

    import nbformat

    path = Path(__file__).resolve().parents[1] / "notebooks" / "05_softmax.ipynb"
    cells = nbformat.read(path, as_version=4).cells
    flat = [" ".join(c.source.split()) for c in cells]
    # review 05_qq item 1: the note says where the limits come from; the next cell, on show
    # in the learner edition too, computes them (ln 65504 = 11.0899, review 05_pp)
    # review 05_rr item 3: the bfloat16 aside moved into the float16 fold
    said = "Exp overflows above the log of each type's largest number:"
    note = next(i for i, text in enumerate(flat) if said in text)
    assert "folded cell" not in cells[note].source and "printed below" not in flat[note]
    loop = cells[note + 1]
    assert loop.cell_type == "code"
    assert "np.finfo(f).max" in loop.source and "np.log(top)" in loop.source
    assert "source_hidden" not in loop.metadata.get("jupyter", {})


def test_check_softmax_names_the_flipped_shift(capsys):
    def flipped(x, axis=-1, temperature=1.0):
        e = np.exp((x.max(axis=axis, keepdims=True) - x) / temperature)  # max - x
        return e / e.sum(axis=axis, keepdims=True)

    assert not check_softmax(flipped)
    line = capsys.readouterr().out
    assert line.startswith("[softmax] FAIL: ") and "you computed max - x" in line, line
    assert "x - max" in line


def test_a_snug_heatmap_pair_has_no_empty_band_under_its_key_label():
    from attention_lib.plotting import head_heatmaps

    pair = np.stack(
        [al.softmax(toy.scaled_scores()), al.softmax(toy.scaled_scores(), temperature=0.1)]
    )
    sizes = {}
    for snug in (False, True):
        fig, _ = head_heatmaps(
            pair, toy.TOKENS, ["T = 1", "T = 0.1"], title="t", fontsize=10, snug=snug
        )
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        key = next(t for t in fig.texts if t.get_text() == "key (attended to)")
        ticks = min(label.get_window_extent(renderer).y0 for label in fig.axes[0].get_xticklabels())
        label = key.get_window_extent(renderer)
        sizes[snug] = (fig.get_size_inches()[1], ticks - label.y1, label.y0)
        plt.close(fig)
    assert sizes[True][0] < sizes[False][0]  # a shorter figure
    gap_px, floor_px = sizes[True][1], sizes[True][2]
    assert 0 <= gap_px < 10 and floor_px < 20  # right under the ticks, a thin margin
    assert sizes[False][1] > 20  # the band the review saw without snug
    with pytest.raises(TypeError, match="snug"):
        head_heatmaps(pair, toy.TOKENS, title="t", snugg=True)


# --- Fix round 5m: softmax as a function, and two hints that named the wrong cause -----------


def test_the_two_key_figure_draws_the_step_and_one_curve_per_temperature():
    from attention_lib.plotting import two_key_softmax
    from attention_lib.plotting.base import smallest_text_px

    fig, alt = two_key_softmax([1, 0.1], gap=0.26)
    ax = fig.axes[0]
    steps = [line for line in ax.get_lines() if line.get_label() == "hard arg max"]
    curves = [line for line in ax.get_lines() if line.get_label().startswith("softmax, T = ")]
    assert len(steps) == 1 and len(curves) == 2
    assert len({line.get_linestyle() for line in curves}) == 2  # not colour alone
    x, y = curves[1].get_data()  # T = 0.1: near the step away from the tie, 0.5 at it
    assert y[0] < 0.01 and y[-1] > 0.99 and np.isclose(y[len(x) // 2], 0.5)
    assert "score of 'cake' minus score of 'delicious'" == ax.get_xlabel()
    fig.savefig(__import__("io").BytesIO(), format="png", dpi=90)
    assert smallest_text_px(fig) >= 12  # 10 pt
    plt.close(fig)
    assert alt.endswith("at the real gap 0.26, softmax gives 0.56 at T = 1 and 0.93 at T = 0.1.")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"temperatures": [1, 0]}, "positive numbers"),
        ({"temperatures": [1, 0.5, 0.3, 0.2, 0.1]}, "1 to 4"),
        ({"temperatures": [1], "keys": ("cake",)}, "two non-empty tokens"),
        ({"temperatures": [1], "span": 0}, "span must be positive"),
    ],
)
def test_the_two_key_figure_names_bad_input(kwargs, message):
    from attention_lib.plotting import two_key_softmax

    with pytest.raises(ValueError, match=message):
        two_key_softmax(**kwargs)


def t_after_exp(x, axis=-1, temperature=1.0):  # T divides exp(x), so it cancels
    e = np.exp(x - x.max(axis=axis, keepdims=True)) / temperature
    return e / e.sum(axis=axis, keepdims=True)


def naive_nan_to_num(x, axis=-1, temperature=1.0):  # nan weights quietly set to 0
    e = np.exp(x / temperature)
    return np.nan_to_num(e / e.sum(axis=axis, keepdims=True))


@pytest.mark.parametrize(
    ("fn", "hint", "wrong"),
    [
        (t_after_exp, "applied after exp, where dividing every exp(z) by T cancels", "ignored"),
        (naive_nan_to_num, "a row of weights sums to 0, not 1", "np.clip"),
        (naive_nan_to_num, "(np.nan_to_num, say) hides it. exp(1000) overflows", "np.clip"),
    ],
    ids=["T-after-exp", "nan-to-num", "nan-to-num-cause"],
)
def test_softmax_hints_name_a_cancelled_t_and_a_zeroed_nan(fn, hint, wrong, capsys):
    with np.errstate(over="ignore", invalid="ignore"):
        assert not check_softmax(fn)
    line = capsys.readouterr().out
    assert line.startswith("[softmax] FAIL: ") and hint in line, line
    assert wrong not in line, line


def test_fix_round_5m_explains_the_runner_up_moves_what_softmax_adds_and_draws_softmax():
    cells, shown, flat = _chapter()
    assert len(flat.split()) <= VISIBLE_WORDS, "more visible words than VISIBLE_WORDS"
    ids = [c.id for c in shown]
    # the two-key figure right after the math, tokens in its alt text
    assert ids.index("twokey05") == ids.index("softmx05") + 1  # round 5n: Ex 5.1 before
    assert cells["twokey05"].metadata["tags"] == ["hide-input"]
    html = cells["twokey05"].outputs[0]["data"]["text/html"]
    assert "keys &#x27;cake&#x27; and &#x27;delicious&#x27;" in html and "hard arg max" in html
    assert float(html.split('data-text-px="')[1].split('"')[0]) >= 12
    assert "drains" not in flat
    # the cut print: the slider and the heatmap already show T = 0.1 and T = 10
    assert "463130da" not in cells
    # review 05z: "what softmax adds" right after the two moves and why exponentiate
    # review 05_a: the derivation's fold, then the math; "what softmax adds" after "In code"
    # review 05_b: the uniqueness claim joins why exponentiate; its proof follows the prints
    # session 10 (editor pass): the folds sit in a final "Going further", after the summary
    assert ids.index("0893ab71") < ids.index("gofurth5") == ids.index("onlyexp5") - 1
    # review 05_o: the formula right after the two-move table, before why exponentiate
    assert ids.index("04fabf9f") == ids.index("twomov05") + 1
    assert ids.index("twomov07") == ids.index("04fabf9f") + 1
    # session 11 (review 05_ff F3): the scale point sits under the slider note, no heading
    assert ids.index("d4e5f601") == ids.index("tgaps05") + 1  # review 05_pp: tnot05 split
    opening = " ".join(cells["d4e5f601"].source.split())
    # review 05_m: one contrast; review 05_p: the two ways of weighting announced first
    # review 05_r: the longest value (chapter 6's bound) is cut from the comparison
    # review 05_v F7 (session 10): the experiment opens with its question
    # review 05_dd F2: what softmax does with scale; output lengths are chapter 6's
    # review 05_hh F3: both facts of issue #29 in words beside the one printed move
    # review 05_kk F3: "scores as weights ... double the output" leaned on chapter 6's output:
    # the sentence says what softmax does to doubled scores, and the cell prints it
    # review 05_mm F1: "T = 1/c" is said just before, so the doubling note is c = 2
    # review 05_pp item 3: no "bias" before the page introduces one (the fold, later)
    # review 05_rr item 2: "constant term, no bias" names it for either reader
    # review 05_qq item 3: the squared ratio derived in one line (e^g -> e^(2g) = (e^g)^2),
    # and the turned query (the "lined up with one key" claim) introduced
    assert opening == (
        "With $c = 2$ (if the projection adds no constant term, no bias), every gap $g$ doubles,"
        " so every ratio"
        " $e^g$ between weights becomes its square, $e^{2g} = (e^g)^2$. Turning the query toward"
        " cake's key (the first way, length kept) sharpens less:"
    )  # review 05_ii F3: no "raw" (chapter 4's word for unscaled scores)
    assert "double the output" not in flat
    # review 05_ss item 1: the only length named is the turned query's (output lengths are
    # chapter 6's, review 05_dd F2)
    assert opening.count("length") == 1 and "length kept" in opening
    # review 05_dd F2: the bound (chapter 6's) is cut from the experiment and the Summary
    assert "longest value" not in flat and "outgrow" not in flat and "grows only" not in flat
    assert "understanding-transformers-4" not in opening
    assert "d4e5f602" not in cells and "d4e5f603" not in cells  # review 05z: fold cut
    # plain words, not [CLS]; no "clear favourite" the example then contradicts
    assert "[CLS]" not in flat and "special start token" not in flat  # review 05u: cut
    assert "clear favourite" not in flat
    # session 4: the training fold is cut (chapter 4 makes the p(1 - p) slope argument)
    assert "tgrad05" not in cells
    # review 05w: the Jacobian, one fold line tying chapter 4's p(1 - p) to chapter 10
    assert "Jacobian" not in " ".join(_main_line(shown))
    fold = " ".join(cells["lsefold5"].source.split())
    assert "(\\operatorname{diag}(p) - p p^\\top)_{ij} / T" in fold  # review 05_d: no p(1 - p)
    # review 05s: the extreme-T fold (maintainer notes, wrong for long float16 rows) is cut
    assert "breaks the three lines" not in flat
    assert cells["7f07aa6a"].source.count("np.where") == 1 and "inner" not in flat
    # sampling temperature, next to the distillation pointer
    # review 05_b: the word comes from physics (Boltzmann), in the words it replaces
    # review 05_f: the chatbot's temperature divides another softmax; a score, a negative energy
    # review 05_k: said once, at the top of the temperature section
    assert "is this $T$" not in flat and "next-word one over the vocabulary" not in flat
    # review 05_m: Boltzmann moves into the temperature section, with e^(1/T) per point
    assert flat.lower().count("chapter 12") == 1  # session 11: "Chapter 12 sets T"
    # review 05_n: the definition and the slider first; "no T of its own" closes the section
    # session 10: the pointer moved to a Going further fold with the distillation one
    # review 05_bb F1: the sampling pointer moved to the main line, under the slider
    # review 05_cc F1: "in the standard Transformer", no "only"
    # review 05_jj F8: the sampling pointer moves from the crowded tnot05 into the fold
    assert "Chapter 12 sets $T$ by hand when sampling words" in cells["tuse05"].source
    assert "Chapter 12" not in cells["tnot05"].source
    top = " ".join(cells["1a18e25e"].source.split())
    # session 10: the Boltzmann history note is cut; T > 0 moved here from the math
    assert "Temperature $T > 0$ gives $\\operatorname{softmax}(z / T)$; $T = 1$ is plain" in top
    assert "A gap of 1 makes one weight $e^{1/T}$ times the other" in top
    assert "amount" not in top
    assert "Boltzmann" not in flat and "negative energy" not in flat


# --- Fix round 5n: three slips that got a generic or a near-miss hint -----------------------


def sums_along_last_axis(x, axis=-1, temperature=1.0):  # the max follows axis, the sum does not
    e = np.exp(_stable(x, axis, temperature))
    return e / e.sum(axis=-1, keepdims=True)


def subtracts_t(x, axis=-1, temperature=1.0):  # a shift by T, which softmax cancels
    e = np.exp(x - x.max(axis=axis, keepdims=True) - temperature)
    return e / e.sum(axis=axis, keepdims=True)


def ignores_t(x, axis=-1, temperature=1.0):
    return _softmax_t(x, axis, 1.0)


@pytest.mark.parametrize(
    ("fn", "hint", "wrong"),
    [
        (sums_along_last_axis, "you summed along the last axis whatever axis was", "values"),
        (subtracts_t, "temperature=1000 gave nan: you subtracted T from the scores", "unused"),
        (ignores_t, "T is either unused or applied after exp", "subtracted"),
    ],
    ids=["sum-last-axis", "T-subtracted", "T-ignored"],
)
def test_softmax_hints_name_a_hard_coded_sum_axis_and_a_subtracted_t(fn, hint, wrong, capsys):
    with np.errstate(all="ignore"):
        assert not check_softmax(fn)
    line = capsys.readouterr().out
    assert line.startswith("[softmax] FAIL: ") and hint in line, line
    assert wrong not in line, line


def test_entropy_hint_says_a_zeroed_nan_was_hidden(capsys):
    def zeroed(p):
        with np.errstate(all="ignore"):
            return np.nan_to_num(-np.sum(p * np.log(p), axis=-1))  # nan total -> 0

    assert not check_entropy(zeroed)
    line = capsys.readouterr().out
    assert line.startswith("[entropy] FAIL: got 0 for the row [0.0, 0.5, 0.5], not 0.6931")
    assert "If you replaced nan by 0 (np.nan_to_num, say)" in line, line
    # nansum skips the nan term and is right: it passes
    with np.errstate(all="ignore"):
        assert check_entropy(lambda p: -np.nansum(p * np.log(p), axis=-1))


def test_the_smallest_t_is_solid_and_darkest_against_the_light_step():
    from matplotlib.colors import to_rgb

    from attention_lib.plotting import two_key_softmax

    fig, _ = two_key_softmax([1, 0.3, 0.1], gap=0.26)
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    plt.close(fig)

    def lightness(label):
        return float(np.mean(to_rgb(lines[label].get_color())))

    sharp, step = "softmax, T = 0.1", "hard arg max"
    assert lines[sharp].get_linestyle() == "-"  # not dotted along the step
    assert lightness(sharp) < lightness("softmax, T = 0.3") < lightness("softmax, T = 1")
    assert lightness(step) - lightness(sharp) > 0.6  # the review's dotted grey was close


# --- Fix round 5n: the page ------------------------------------------------------------------


def _main_line(shown):
    """Visible words outside dropdowns, exercises and solutions (and a solution's body)."""
    kept, inside = [], False
    for cell in (c for c in shown if c.cell_type == "markdown"):
        s = cell.source
        inside = inside or "{solution-start}" in s
        if not (
            inside or s.startswith("````{admonition}") or "{exercise}" in s or "{solution" in s
        ):
            kept.append(s)
        inside = inside and "{solution-end}" not in s
    return " ".join(kept).split()


def test_fix_round_5n_links_chapter_4_captions_the_curve_and_folds_the_derivative():
    cells, shown, flat = _chapter()
    assert len(_main_line(shown)) <= MAIN_LINE_WORDS, "round 5n: main line 1059 -> 1053"
    ids = [c.id for c in shown]
    # chapter 4's formula and two keys acknowledged; the curve is its curve with g / T
    assert "used softmax as a given" not in flat
    # review 05_hh F5: chapter 4 wrote the formula; this chapter says why, and computes it
    assert "Chapter 4 wrote the formula; here is why it has that form" in flat
    caption = " ".join(cells["twokeycap"].source.split())
    assert ids.index("twokeycap") == ids.index("twokey05") + 1
    # session 10: "0.90 - 0.64" cut (both scores are in the table above)
    # review 05_y F5: chapter 4's two-key weight by name and formula; its gap g over T
    assert "At the real gap $g = 0.26$, cake gets 0.56" in caption  # review 05aa F4
    assert "$p = 1/(1 + e^{-g/T})$" not in caption
    # review 05_b: the curve named, and T pointed back to the formula that defines it
    # review 05_d: the sigmoid named once, for the gap; T is defined in its own section now
    # review 05_p: one idea per sentence; chapter 4 gave the formula, this page names it
    assert "the *sigmoid*" in caption and "as in the formula" not in caption
    # review 05_f: marked as chapter 4's two-key weight (in its main line, not a fold)
    # review 05_k: no "with T added" chain; chapter 4's p = 1/(1 + e^{-g}) becomes g / T
    # review 05_r: chapter 4 calls it the top weight; here it is the weight of "cake"
    # review 05_t round t: for g < 0 the first key is not the top one: "the first of two keys"
    assert "top weight" not in caption and "added" not in caption
    # session 10: one sentence: chapter 4's weight of "cake", its lead g (any sign) over T
    # review 05_z F3: "its gap g divided by T" was hard to parse; the formula says it
    # review 05_bb F6: chapter 4 gave the formula without T and without the word "sigmoid"
    # review 05_ii F2: derived (divide top and bottom by e^(z1/T)), a function of g alone
    # review 05_mm F7: the three-colon sentence split in two
    assert caption.startswith(
        'With only "cake" and "delicious" (scores $z_1$, $z_2$), divide top and bottom of'
        " cake's weight by $e^{z_1/T}$. It becomes $1/(1 + e^{-g/T})$, the *sigmoid* of $g/T$,"
        " so only the gap $g = z_1 - z_2$ counts."  # review 05_ll F2: of g / T, not of the gap
    )
    # review 05_o: Exercise 5.1 uses T, so it follows the temperature section
    # session 11 (review 05_ff F5): "In code" right after the math, before the temperature
    assert ids.index("2adc8f99") < ids.index("1a18e25e") < ids.index("tnot05")
    assert ids.index("tnot05") < ids.index("f37d9cdc")
    assert ids.index("f37d9cdc") < ids.index("3e3185c4")  # before the other exercises
    # review 05y: the runner-up's derivative fold is cut
    assert "\\frac{d \\log p_i}{d \\beta}" not in flat
    # the non-linearity fold states its conclusion
    assert "cubic in $X$" not in flat and "Dividing by the sum alone lands closer still" not in flat
    # a table, not a decoded line; no (2S)V = 2(SV) tautology
    # review 05_dd F2 (issue #29): the identity (2S)V = 2(SV) is printed, then softmax's
    printed = cells["d4e5f605"].outputs[0]["text"].splitlines()
    assert printed[1] == "softmax, 'cake': 0.21 -> 0.32"  # review 05_hh F3: identity unprinted
    # review 05_m: the fully masked row is chapter 8's (its math states the 0 / 0)
    assert "masked row" not in flat and "masked_fill" not in flat
    # the summary no longer repeats "doubling = a lower temperature"
    assert "Doubling the scores is a lower temperature" not in flat


# --- Fix round 5o (review 05o): the listing, the doubling table, one curve before T --------


def test_the_two_key_figure_with_t_1_alone_is_dark_and_solid_against_the_light_step():
    from matplotlib.colors import to_rgb

    from attention_lib.plotting import two_key_softmax

    fig, alt = two_key_softmax([1], gap=0.26)
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    plt.close(fig)
    assert {k for k in lines if not k.startswith("_")} == {"hard arg max", "softmax, T = 1"}
    curve, step = lines["softmax, T = 1"], lines["hard arg max"]
    assert curve.get_linestyle() == "-"
    # more than thickness: the review found a light grey dotted T = 1 curve on the grey band
    assert np.mean(to_rgb(step.get_color())) - np.mean(to_rgb(curve.get_color())) > 0.6
    assert "The softmax curve passes 0.5" in alt and "steeper for a smaller T" not in alt
    assert alt.endswith("at the real gap 0.26, softmax gives 0.56 at T = 1.")


def test_fix_round_5o_shows_doubling_without_softmax_and_the_real_listing():
    cells, shown, flat = _chapter()
    ids = [c.id for c in shown]
    assert len(flat.split()) <= VISIBLE_WORDS and len(_main_line(shown)) <= MAIN_LINE_WORDS
    # review 05_d: the temperature section right after the math (and its exercise), so T is
    # known before the two-key figure and the doubling experiment
    # review 05_o: the formula right after the table; Exercise 5.1 after the temperature
    assert (
        ids.index("04fabf9f")
        < ids.index("2adc8f99")
        < ids.index("1a18e25e")
        < ids.index("d4e5f601")
        < ids.index("f37d9cdc")
        < ids.index("twokey05")
    )
    # review 05_jj F9: Exercise 5.1 (temperature) ends the doubling, before "Why soft max?"
    # review 05_rr item 1: the note that reads the turned-query print sits between them
    assert ids.index("tturn05") == ids.index("d4e5f605") + 1
    assert ids.index("f37d9cdc") == ids.index("tturn05") + 1
    # review 05r: the figure draws T = 1, 0.3 and 0.1, so the soft arg max is seen nearing
    # the step (round 5o had T = 1 alone)
    assert "two_key_softmax([1, 0.3, 0.1], gap=gap)" in cells["twokey05"].source
    assert "T = 0.1" in cells["twokey05"].outputs[0]["data"]["text/html"]
    # show imported once; the heatmap title says "sharper"
    assert sum("import" in c.source and " show" in c.source for c in shown) == 1
    # review 05_dd F2 (issue #29): one print, the identity and cake's 0.21 -> 0.32; one sentence
    printed = cells["d4e5f605"].outputs[0]["text"].splitlines()
    assert printed[1] == "softmax, 'cake': 0.21 -> 0.32"
    conclusion = " ".join(cells["d4e5f601"].source.split())  # session 11: slogan cut
    assert "d4e5f607" not in cells and "scale into size" not in flat  # review 05_ff F3
    assert "2.60" not in flat and "5.20" not in flat and "1.41" not in flat and "0.91" not in flat
    # review 05_s: plain division, blind to scale, is the contrast
    # review 05_t round t: plain division's scale is said once, with the shift (why exp)
    assert "Plain division" not in conclusion and "0.335" not in conclusion
    assert "sharpen the row instead" not in conclusion
    assert "Doubling is softmax at $T = 0.5$" not in conclusion  # review 05_d: T known by now
    assert flat.count("hull") == 0  # review 05_p
    assert 'what "cake" carries' not in cells["d4e5f601"].source  # no distance to V[cake]
    # solution 5.2: the listing is the core; the guard is named, in a fold
    # review 05y: for T > 1 the library divides before it shifts: the same result, not order
    # review 05_s: the float32 clause had no visible reason: cut
    # review 05_kk F7: the bare claim is cut. The solution does not call al.softmax: the
    # grader flags a graded answer that calls the library's softmax (tests/test_grade_marks)
    assert "5f0a1b2c" not in cells and "gives the same result" not in flat
    solution = cells["83182082"]
    assert "al.softmax" not in solution.source
    # the fold follows the solution, not inside it: a fold within a solution fold is a
    # second toggle that the site and JupyterLab checks would take for a solution
    assert "xtremT05" not in cells  # review 05s: cut, its float16 point is in number formats
    assert "b7e1c3a3" not in cells  # the real-models fold is cut


def test_the_guard_that_the_solution_names_exists_and_divides_first_for_large_t():
    import inspect

    from attention_lib import core

    source = inspect.getsource(core._softmax_guarded)
    assert "if T > 1.0:" in source and "x.astype(np.float64) / T" in source
    x16 = np.array([60000.0, 0.0, -60000.0], dtype=np.float16)
    assert round(float(al.softmax(x16, temperature=6e4)[2]), 2) == 0.09


# --- Fix round 5p (review 05p): normalising alone, a negative sum, the masked row, T shown ---


def test_fix_round_5p_separates_the_exponential_from_the_normalisation():
    cells, shown, flat = _chapter()
    assert len(flat.split()) <= VISIBLE_WORDS and len(_main_line(shown)) <= MAIN_LINE_WORDS
    # review 05s: the sum-only row is gone; the negative-score line shows it failing
    table = cells["d4e5f605"].outputs[0]["text"]
    assert "sum only" not in table
    conclusion = " ".join(cells["d4e5f601"].source.split())  # session 11: slogan cut
    assert "training cannot sharpen" not in conclusion
    assert "sums to 1, so its favourite gains only" not in conclusion
    # the zero sum, by example; the library refuses a row of -inf
    # review 05_bb F4: the counter-examples follow the bare rules
    # review 05_jj F4: printout tagged; review 05_kk F4: what rules 1-2's line shows, in words
    said = " ".join(cells["negsay05"].source.split())
    assert said == (
        "The share $-0.5$ is negative (rule 1), and the smaller score, $-3$, gets the larger"
        " share, 1.5 (rule 2)."
    )
    assert "`al.softmax` refuses" not in flat  # review 05_m: chapter 8's mask= instead
    with pytest.raises(ValueError, match="infinity"):
        al.softmax(np.full(3, -np.inf))
    with pytest.raises(ValueError, match="infinity"):  # a partly masked row too
        al.softmax(np.array([-np.inf, 0.0, 1.0]))
    # review 05s: no T = 0.5 call in "The math"; Exercise 5.1 names the keyword instead
    assert "tcall05" not in cells
    assert "`al.softmax(z, temperature=T)`" in cells["f37d9cdc"].source


# --- Fix round 5q (review 05q): why the exponential, shown on a negative score; "approaching" ---


def test_fix_round_5q_says_why_normalising_alone_is_not_enough():
    cells, shown, flat = _chapter()
    ids = [c.id for c in shown]
    conclusion = " ".join(cells["d4e5f601"].source.split())  # session 11: slogan cut
    # review 05s: the table makes the two lessons, not a distance to V['cake']
    assert "Dividing by the sum alone lands closer still" not in conclusion
    assert "Softmax adds" not in conclusion
    # the break on a negative score, printed right after the sentence that claims it
    assert ids.index("negsum05") == ids.index("twomov07") + 1
    line = cells["negsum05"].outputs[0]["text"]
    # review 05_d: [2, -1] sums to 1 and printed itself; [1, -3] gives the larger score -0.5
    # session 10: printed first, in the order of the three wishes
    # review 05_jj F4: each printed line names the rule it tests
    assert line.splitlines()[0] == "rules 1-2: [1, -3] / sum: [-0.5  1.5]   softmax: [0.98 0.02]"
    # the row of 'it' is not saturated (> 0.99) until T <= 0.05: "approaching", not "nearly"
    assert "pushes the row toward **one-hot**" in flat  # review 05_m, after e^(1/T)
    row = al.softmax(toy.scaled_scores()[toy.token_index("it")], temperature=0.1)
    assert 0.9 < row.max() < 0.99


# --- Fix round 5s (review 05s): weights that sum to 1, scale as sharpness, why exp -----------


def test_fix_round_5s_makes_the_two_lessons_of_what_softmax_adds():
    cells, shown, flat = _chapter()
    assert len(flat.split()) <= VISIBLE_WORDS and len(_main_line(shown)) <= MAIN_LINE_WORDS
    printed = cells["d4e5f605"].outputs[0]["text"].splitlines()
    assert printed[1] == "softmax, 'cake': 0.21 -> 0.32"  # review 05_dd F2
    conclusion = " ".join(cells["d4e5f601"].source.split())  # session 11: slogan cut
    assert "chapter 6 says why" not in conclusion and "2.69" not in conclusion
    # review 05t: the undefined "log-odds" is cut (the intuition says gap -> ratio once)
    intuition = " ".join(cells["96081790"].source.split())
    # review 05_n: "the amount" was undefined; what is multiplied is e^z
    assert "log-odds" not in flat and "multiplies $e^z$ by $e \\approx 2.7$" in intuition
    assert "amount" not in intuition
    assert "a gap in score becomes a ratio" not in intuition  # review 05x: chapter 4 says it
    # "flat at T = 1" said once in prose; one rounding for the row of "it"
    assert "barely differ" not in flat and "hardly chooses" not in flat  # review 05w: cut
    assert "the 0.17" in cells["626d0525"].outputs[0]["text"]
    assert "0.165" not in cells["626d0525"].outputs[0]["text"]
    # the float16 total (its sentence cut in review 05_f), true since al.softmax adds float16
    # rows in float32
    with np.errstate(over="ignore"):
        assert np.isinf(np.ones(70000, dtype=np.float16).sum())
    row = al.softmax(np.zeros(70000, dtype=np.float16))
    assert np.isclose(row.astype(np.float64).sum(), 1.0, atol=1e-2)


def no_temperature(x, axis=-1):
    return _softmax_t(x, axis, 1.0)


def returns_x(x, axis=-1, temperature=1.0):
    return x


def no_exp(x, axis=-1, temperature=1.0):
    return x / x.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize(
    ("fn", "hint", "wrong"),
    [
        (no_temperature, "write it as my_softmax(x, axis=-1, temperature=1.0)", "TypeError"),
        (returns_x, "you returned the scores unchanged", "divide each exponential"),
        (no_exp, "without exponentiating them", "values differ"),
    ],
    ids=["no-T-parameter", "returns-x", "no-exp"],
)
def test_softmax_hints_name_a_missing_temperature_and_a_missing_exp(fn, hint, wrong, capsys):
    assert not check_softmax(fn)
    line = capsys.readouterr().out
    assert line.startswith("[softmax] FAIL: ") and hint in line, line
    assert wrong not in line, line


# --- Fix round 3 (review 05t): four rows, precision in float16, sharper trained heads -------


def test_round_3_shows_both_raw_rows_and_points_to_sharper_trained_heads():
    cells, shown, flat = _chapter()
    assert len(flat.split()) <= VISIBLE_WORDS and len(_main_line(shown)) <= MAIN_LINE_WORDS
    conclusion = " ".join(cells["d4e5f601"].source.split())  # session 11: slogan cut
    assert conclusion.count(". ") <= 1  # session 11: at most two sentences
    # review 05w: the heatmap and its note are cut (26b93a54 was cut before)
    assert "26b93a54" not in cells and "t2note05" not in cells
    assert "tderiv05" not in cells
    assert "exercise 5.3: the entropy" in cells["a7c31e01"].source
    assert "5f0a1b2c" not in cells  # review 05_s, 05_kk F7: the clause, then the line, cut
    # review 05_a: the stall is cut; np.sum of float16 pairs its terms and does not stall
    assert np.sum(np.full(5000, np.float16(0.1))) == np.float16(500)


def test_an_entropy_loop_over_atleast_2d_rows_is_not_blamed_on_keepdims(capsys):
    def rows_loop(p):
        rows = np.atleast_2d(p)  # a 1-D row becomes one row: the answer has shape (1,)
        return np.array([-sum(q * np.log(q) for q in row if q > 0) for row in rows])

    assert not check_entropy(rows_loop)
    line = capsys.readouterr().out
    assert "not a list or array of one" in line and "np.atleast_2d" in line, line
    assert "sum without keepdims" not in line, line


# --- Fix round 5u (review 05u): a loop over one row's entries meets a stack of rows ----------


def test_check_entropy_says_a_loop_over_entries_must_take_a_stack_of_rows(capsys):
    def loop(p):  # right for one row; `pi > 0` is a whole row in a 2-D array
        h = 0.0
        for pi in p:
            if pi > 0:
                h -= pi * np.log(pi)
        return h

    assert not check_entropy(loop)
    line = capsys.readouterr().out
    assert line.startswith("[entropy] FAIL: ") and "truth value" in line, line
    assert "must also take 2-D and 3-D arrays" in line and "axis=-1" in line


def test_fix_round_5u_makes_the_case_for_exp_on_the_row_of_it():
    cells, shown, flat = _chapter()
    assert len(flat.split()) <= VISIBLE_WORDS and len(_main_line(shown)) <= MAIN_LINE_WORDS
    # review 05x: shift-invariance first, then where a key bias comes from; no extra ideas
    assert "Dividing by the sum alone works" not in flat
    why = " ".join(cells["twomov07"].source.split())
    # review 05_b: the reason only gaps count is that a shared amount (a key bias) says
    # nothing about which key to prefer, not "no natural zero"; one paragraph, k = 1/T moved
    # review 05_f: the key bias spelled out: q . b, the same for every key in q's row
    # review 05_k: GPT-2's key bias (chapter 2), scaled: q . b / sqrt(d_k); no colon chain
    # review 05_l: what softmax must do leads; the key bias is a consequence, after the math
    # review 05_o: the key bias is cut (the toy has none); the requirements are a list
    # review 05_p: a dot product has a zero; the reason is a bias in the key projection,
    # which adds one number to the whole row and favours no key
    # review 05_y F4: rule 3 gets its reason on the main line, once (the fold's cut)
    # review 05_ii F4: a dot product has a zero; the reason is a shared shift (a key bias)
    assert "natural zero" not in flat  # final form: do not move it again
    # review 05_r: the bias shown (q . b_k is the same for every key); the exponential is
    # forced only under the stated asks, and the designs that drop one are named
    # review 05_s: the experiment leads; the bias and the other designs move into the fold,
    # which says what each design drops
    # review 05_t round t: the reason in one clause, the detail in the fold
    # session 10 (review 05_v F1, F2, F5): a short lead, the prints, then the three wishes
    # review 05_jj F3, F4: the three rules before the code; rule 3's reason is the design's
    assert why.startswith("Why exponentiate? Shares should be: 1. **positive**;")
    assert why.endswith(
        "3. **dependent only on gaps** (**shift-invariant**): a number added to the whole row"
        " says nothing about which key fits best. Try plain"  # review 05_ll F6
        " division by the sum:"
    )
    fold = " ".join(cells["onlyexp5"].source.split())
    assert fold.split(":class: dropdown ")[1].startswith("Of weights $f(z_i) / \\sum_j f(z_j)$")
    assert "Why only gaps?" not in fold and "favours no key" not in flat
    # review 05_v (finding 3): sparsemax is not of the f(z_i) / sum f(z_j) form at all
    # review 05_ii F5: sparsemax keeps shift-invariance and order; it drops rule 1
    assert "Sparsemax and entmax drop rule 1 (strict positivity) and this form" in fold
    assert "stay shift-invariant but give exact zeros" in fold
    # review 05_hh F2: sigmoid attention is in the fold, beside sparsemax, not the main line
    assert "Other attentions drop a rule on purpose. Sigmoid attention drops the budget" in fold
    assert flat.count("Sigmoid attention") == 1 and "sigmoid attention" not in flat
    assert "b_k" not in why and "Sparsemax" not in why and "gaps alone and be smooth" not in flat
    assert flat.count("key bias") == 1  # review 05_jj F3: the fold only, not chapter 11's
    # review 05_m: the reason where the requirement is stated, and not again in the math
    math = " ".join(cells["04fabf9f"].source.split())
    # session 10 (review 05_v F8): T is out of the first formula
    # review 05_kk F5: the math's shift-invariance sentence is cut; rule 3 carries it
    assert "cancels" not in math and "$T" not in math and "/ T" not in math
    # review 05_d: the shares moved by +1 said in words after the prints; the uniqueness
    # claim (narrowed to the f(z_i) / sum f(z_j) family, review 05_a) opens the proof fold
    said = " ".join(cells["shiftsay5"].source.split())
    # review 05_k: the squared shares are cut (they added a line without a point)
    assert "0.538" not in said and "squared" not in flat
    # session 10 (review 05_v F1): three wishes, each with its number; the doubling duality
    # (0.324, T = 0.5) is cut: "what softmax adds" shows doubling ("cake" 0.21 -> 0.32)
    # review 05_bb F4: the three rules bare, then where plain division fails each
    # review 05_dd F3: rule 3's plain reason first; the key bias a short aside
    # session 11 (review 05_ff F1, F2): the reason in one clause; the printout holds the
    # numbers; the key bias, as a shift of the scaled row, moves into the proof fold
    # review 05_kk F4: the rules-1-2 line is said in words (negsay05); the bare "breaks each
    # rule; softmax keeps them" is cut to pay for it
    assert said.startswith(
        "Of all weightings $f(z_i) / \\sum_j f(z_j)$ with $f$ continuous, only an exponential"
    )  # review 05_qq item 6
    assert "key bias" not in said and "key bias" not in why  # review 05_jj F3
    assert "A key bias $b_k$ makes such a shift" in fold  # 05_jj: the fold only
    # review 05_jj F2: sigmoid attention breaks rule 3 too, with the row of 'it' as proof
    assert "Sigmoid attention drops the budget and rule 3" in fold
    assert 'adding 1 to every score of "it" moves "cake" from 0.71 to 0.87' in fold
    assert "$q \\cdot b_k / \\sqrt{d_k}$" in fold
    assert "0.324" not in flat and flat.count("0.335") == 0
    # review 05_s: the conclusion states its condition (a per-score map, then the total)
    # review 05_t round t: "passes" says which test: ignoring a shift
    assert "only an exponential does all three:" in said
    # review 05_ii: "softmax is the answer to these rules" cut to pay for rule 3's reason
    # review 05_mm F8: "other attentions drop a rule on purpose" is the fold's alone
    # review 05_pp item 2: one line of why: a ratio of exponentials sees only the gap
    assert said.endswith(
        "only an exponential does all three: the ratio of two weights,"
        " $e^{z_i} / e^{z_j} = e^{z_i - z_j}$, depends on their gap alone."
    )
    assert flat.count("drop a rule on purpose") == 1
    fold = " ".join(cells["onlyexp5"].source.split())
    assert "Of weights $f(z_i) / \\sum_j f(z_j)$" in fold and "Of weights" not in why
    assert "only $f(z) = a e^{kz}$ ignores shifts" in fold and "Only softmax" not in flat
    assert "twomov08" not in cells and "k = 1/T" not in why
    ids = [c.id for c in shown]
    assert ids.index("negsum05") == ids.index("twomov07") + 1
    # review 05_kk F6: one small cell per demonstration, rules 1-2 then rule 3
    assert ids.index("negsay05") == ids.index("negsum05") + 1
    assert ids.index("shift05") == ids.index("negsay05") + 1
    assert ids.index("shiftsay5") == ids.index("shift05") + 1
    out = cells["negsum05"].outputs[0]["text"].splitlines()
    out += cells["shift05"].outputs[0]["text"].splitlines()
    assert len(out) == 3 and out[1].startswith("rule 3: cake, plain:")
    assert out[2].startswith("rule 3: cake, soft")
    assert out[1].split()[-4:] == ["0.335,", "after", "+1:", "0.178"]  # session 10: 2nd, 3rd
    assert out[2].split()[-4:] == ["0.211,", "after", "+1:", "0.211"]
    z = toy.scaled_scores()[toy.token_index("it")]
    assert z.min() >= 0  # "all scores >= 0"
    # the summary agrees with the fold: softmax a smooth arg max, log-sum-exp the smooth max
    summary = " ".join(cells["0893ab71"].source.split())
    assert "smooth **arg max**" in summary  # session 4: log-sum-exp only in its fold
    # review 05_k: the naming answer on the main line; the fold keeps the Jacobian only
    # review 05_l: the log-sum-exp clause (it needs gradients) moves into the slope fold
    soft = " ".join(cells["softmx05"].source.split())  # review 05_y F1: a single score
    assert "Softmax, a smooth arg max, responds to a nudge of any single score," in soft
    assert "every nudge" not in soft
    assert "log-sum-exp" not in cells["softmx05"].source
    assert "whose gradient\nis softmax" in cells["lsefold5"].source
    # T is named before the figure that plots it; the non-linearity fold is split
    # session 4: T is defined by the formula above the figure; the caption no longer repeats it
    # review 05_t round t: the three values at the real gap show the step approached
    # review 05_u F1: the three values hold for two keys only; the full row's follow
    cap = " ".join(cells["twokeycap"].source.split())
    # session 10: one number per temperature shown (0.70 and 0.49 at T = 0.3 cut)
    # review 05_z F3: the formula written out, g / T inside the sigmoid
    # review 05_ii F2: chapter 4 never wrote the closed form: it is derived here in one line
    assert "divide top and bottom of cake's weight by $e^{z_1/T}$" in cap
    assert "chapter 4's formula" not in cap
    # review 05aa F4: "0.26, 0.56" read as a list; g named, then all eight keys
    # review 05_dd F5: the figure draws T = 0.3, so the caption names it
    # session 11 (number diet): the two ends the figure's alt text gives; the slider shows
    # the full row's values
    assert cap.endswith(
        "At the real gap $g = 0.26$, cake gets 0.56 at $T = 1$ and 0.93 at $T = 0.1$."
    )
    math = " ".join(cells["04fabf9f"].source.split())
    assert "(next section)" not in math and "k = 1/T" not in math


# --- Session 4 (review 05v): what to notice, two reasons, real code, sinks -------------------


def test_session_4_gives_the_two_reasons():
    cells, shown, flat = _chapter()
    weights = al.softmax(toy.scaled_scores())
    # learner 2: why only gaps count, and why no average outgrows its longest vector
    # review 05_a: the two steps in a fold: a ratio of the shift alone, then g(c + d)
    gaps = " ".join(cells["onlyexp5"].source.split())
    assert gaps.startswith("````{admonition} Why only an exponential?")  # session 10
    assert "Rearranged, $f(z + c) / f(z)$ is the same for every $z$; call it $g(c)$" in gaps
    assert "$g(c + d) = g(c)\\, g(d)$" in gaps and "$f(c) = f(0)\\, e^{kc}$" in gaps
    # educator 1: the scaling of chapter 4 is a temperature on the raw scores
    # review 05_k: moved to the top of the temperature section, said once
    # review 05_m: T = 2 on the raw scores, so "halving T" reads against one baseline
    # review 05_o: "acts as", so the sentence does not read as a contradiction
    # review 05_p: one idea per sentence
    # review 05_x F1: T = 2 is relative to the raw scores; the slider's T = 1 is attention
    # review 05_bb F1: attention has no T knob; sqrt(d_k) is its only, fixed, temperature
    # review 05_cc F1: true of the standard Transformer, not of every model
    # review 05_ss item 6: "original" (later models may add a learned scale, QK-norm's gain)
    # review 05_dd F1: 2 is the toy's value; the original Transformer's is 8 (d_k = 64)
    # review 05_hh F4: two plain statements
    # review 05_ll F3, F5: inside attention (chapter 12 samples at a T); larger W_k lengthens
    # every key, where one longer key raises only its own score
    # review 05_mm F2: the slider's T = 1 is T = 2 on the raw scores; F1: W_q or W_k scaled
    # up as a whole (a larger matrix in general can shrink gaps)
    assert (
        "Dividing chapter 3's raw scores by $\\sqrt{d_k}$ (2 here) is a softmax at temperature 2,"
        " so the slider's $T = 1$ is $T = 2$ on the raw scores: Inside attention, the original"
        " Transformer has no other $T$. A head sharpens only through wider gaps, from its weights"
        " or its inputs: a query lined up with one key far more than with the others, or $W_q$"
        " or $W_k$ scaled up as a whole ($\\times c$ stretches every gap by $c$, like $T = 1/c$)."
        in flat
    )  # review 05_jj F1: not only W_q and W_k (biases, the vectors fed in); F8: one idea less
    # review 05_pp item 1: two paragraphs, and the identity printed between them (not only
    # in a hidden assert): the raw scores at T = 2 give the row the slider shows at T = 1
    ids = [x.id for x in shown]
    assert ids.index("t2show05") == ids.index("tnot05") + 1
    assert ids.index("tgaps05") == ids.index("t2show05") + 1
    code = cells["t2show05"].source
    assert "al.softmax(toy.scores(), temperature=2)" in code and len(code.splitlines()) <= 3
    rows = cells["t2show05"].outputs[0]["text"].splitlines()
    assert rows[0].startswith("raw scores, T = 2:") and rows[1].startswith("scaled scores, T = 1:")
    assert rows[0].split(":")[1].strip() == rows[1].split(":")[1].strip()  # the same 8 weights
    # review 05_kk F2: keys pointing nearer q do not sharpen by themselves (a key bias)
    assert "point more nearly the same way" not in flat
    assert "better-aligned" not in flat and "Chapter 12" not in cells["tnot05"].source
    assert "$\\sqrt{d_k} = 2$" not in flat
    assert np.allclose(al.softmax(toy.scaled_scores(), temperature=1), weights)
    assert np.allclose(al.softmax(toy.scores(), temperature=2), weights)  # sqrt(d_k) = 2


def test_session_4_ties_softmax_to_real_code_and_points_to_sinks():
    cells, shown, flat = _chapter()
    ids = [c.id for c in shown]
    # educator 2: PyTorch's fully masked row, the float32 upcast in nanoGPT's call
    # review 05_m: cut, chapter 8's; number formats one sentence of the max-trick note
    assert "F.softmax" not in cells["2d2588ed"].source
    formats = " ".join(cells["2d2588ed"].source.split())
    # review 05w: F.softmax is nanoGPT's fallback; its default flash kernel sums in float32
    # review 05y: bfloat16 is nanoGPT's default (float32's range), float16 its fallback
    # review 05aa: one nanoGPT sentence, no kernel or autocast claim; the stall depends on the term
    assert "nanoGPT" not in formats  # review 05_a: cut
    assert "flash" not in formats and "F.softmax" not in formats
    assert "stall" not in formats
    # review 05y: the mask= belongs to attention, not to al.softmax
    # review 05_d: the forward pointer to chapter 8's mask= is cut for density
    assert "masked row" not in cells["2d2588ed"].source  # review 05_m: chapter 8's
    # educator 3: a fold on the spent budget, said once
    # review 05_n: the fold belongs to the fixed budget, not to overflow
    assert ids.index("sink05") == ids.index("onlyexp5") + 1
    sink = " ".join(cells["sink05"].source.split())
    # session 10: titled by its question, in the final "Going further"
    assert sink.startswith("````{admonition} Can a query attend to nothing?")
    assert ":class: dropdown" in sink
    # review 05_m: a one-sentence pointer to chapter 11 (softmax plus one cut)
    assert "{cite:p}`xiao2023efficient`" in sink and "chapter 11" in sink
    assert "chapter 7 shows a trained head parking" in sink  # review 05_mm F5: where it begins
    # review 05_rr item 4: + one sentence on an escape built in on purpose (add_zero_attn)
    assert "adds 1 to the denominator" not in sink and len(sink.split()) <= 67
    assert flat.count("a query cannot attend to nothing") == 1
    assert "a query cannot attend to nothing" not in cells["twomov07"].source


def _swapped_softmax(x, temperature=1.0, axis=-1):  # the parameters in the wrong order
    e = np.exp((x - x.max(axis=axis, keepdims=True)) / temperature)
    return e / e.sum(axis=axis, keepdims=True)


def _one_row_loop_softmax(x, axis=-1, temperature=1.0):  # right on one row only
    m = x[0]
    for xi in x:
        if xi > m:
            m = xi
    e = np.exp((x - m) / temperature)
    return e / e.sum()


@pytest.mark.parametrize(
    ("fn", "hint"),
    [
        (_swapped_softmax, "check the order of your parameters"),
        (_one_row_loop_softmax, "must also take 2-D and 3-D arrays"),
    ],
    ids=["swapped-parameters", "one-row-loop"],
)
def test_check_softmax_names_swapped_parameters_and_a_one_row_loop(fn, hint, capsys):
    assert not check_softmax(fn)
    line = capsys.readouterr().out
    assert line.startswith("[softmax] FAIL: ") and hint in line, line


def test_review_05x_shows_the_weights_qualifies_the_nudge_and_says_shift_invariance_twice():
    cells, shown, flat = _chapter()
    assert len(flat.split()) <= VISIBLE_WORDS and len(_main_line(shown)) <= MAIN_LINE_WORDS
    # "In code" shows the 8 x 8 weights, one labelled row per query
    # review 05_ss item 4: the rows' gaps are printed above the table
    gaps, result = cells["10e4cd6b"].outputs
    assert gaps["text"].startswith("gap in each row (max - min score): [0.6   0.511")
    assert "0.81 " in gaps["text"] and float(gaps["text"].split()[-3]) == 0.81  # row of "it"
    table = result["data"]["text/plain"].splitlines()
    assert table[0].split() == ["query", "\\", "key", *toy.TOKENS] and len(table) == 9
    it_row = next(line for line in table if line.split()[0] == "it")
    weights = al.softmax(toy.scaled_scores())
    assert [float(v) for v in it_row.split()[1:]] == [round(w, 2) for w in weights[5]]
    assert "only weakly once a row is nearly one-hot" in cells["softmx05"].source
    assert "0.044 nats below" in cells["010bd4dd"].source
    # shift-invariance: motivated in twomov07, proved in the math, not restated a third time
    assert "Shift-invariance" not in cells["f5a1c0de"].source
    # review 05y: the fold points back to chapter 4's p(1 - p) instead of re-deriving it
    # review 05_d: the Jacobian half shortened to the formula and chapter 10
    # review 05_l: chapter 4 showed p(1 - p), not the Jacobian; chapter 10 derives it
    fold = " ".join(cells["lsefold5"].source.split())
    assert "Chapter 4's two-key slope $p(1 - p)$ generalises to" in fold
    assert "chapter 10 derives it" in fold and "from chapter 4" not in fold


def test_softmax_checker_wants_an_array_not_a_list(capsys):
    # right values returned as a Python list: the exercise asks for an array
    assert not check_softmax(
        lambda x, axis=-1, temperature=1.0: _softmax_t(x, axis, temperature).tolist()
    )
    line = capsys.readouterr().out
    assert (
        line.startswith("[softmax] FAIL: ") and "returned a list" in line and "np.asarray" in line
    )


def test_review_05z_says_why_the_weights_table_is_flat():
    cells, shown, flat = _chapter()
    ids = [c.id for c in shown]
    # learner 1: one sentence under the weights table, with numbers computed here too
    assert ids.index("flatrow5") == ids.index("10e4cd6b") + 1
    note = " ".join(cells["flatrow5"].source.split())
    # review 05_a: "weights" meant W_q, W_k here; the note names them and the 0.81 span
    # review 05_l: "close to even", not "nearly flat"; 0.81 is the widest row, not a design
    # review 05_m: blamed on the toy's small scores; trained heads are sharper
    # review 05_n: "close to even" undersold a 2.25 ratio: far from one-hot, the top is 0.21
    # review 05_p: tied to chapter 4's scaling
    # session 10: the 0.21 (in the table and the caption) and "scaling halved them" cut
    # review 05_y: the chapter 11 pointer cut to pay for rule 3's reason
    # review 05_t round t: the 0.81 span and its 2.25 ratio were cut to pay for the main line
    # review 05_kk F1: "the toy's scores are small" contradicted shift-invariance: the gaps
    # are small, and the span and ratio come back to say so
    # review 05_mm F9: the column budget is its own sentence; "is over ... times" reworded
    assert note.endswith(
        'far from one-hot: their widest gap is 0.81 (row of "it"), so no weight in a row'
        " exceeds $e^{0.81} \\approx 2.25$ times another."  # review 05_ll F4
    )
    assert "scores are small" not in flat
    assert "hand-picked" not in flat and "keep each row" not in note
    # review 05_k: rows, not columns, sum to 1, in prose; "no T to set" moved and said once
    # review 05_r: "probability distribution" said once in prose
    assert note.startswith("Each row is a probability distribution over the keys. Columns")
    assert flat.count("probability distribution") == 1
    # review 05_o: why a column total matters: keys have no budget
    assert 'Columns have no budget: "cake" collects 1.32.' in note
    assert "1.32" not in cells["10e4cd6b"].source  # no longer only a code comment
    assert "$T$" not in note and flat.count("no other $T$") == 1  # 05_x F1, 05_cc F1
    top = " ".join(cells["1a18e25e"].source.split())
    # review 05_n: the definition opens the section; what T is not closes it (after the fold)
    assert top.startswith("## Temperature: how decisive is attention? Temperature $T > 0$")
    last = " ".join(cells["tnot05"].source.split())
    # review 05_o, 05_u F5, 05_v F4 (the division by sqrt(d_k) is itself a temperature)
    assert last.startswith("Dividing chapter 3's raw scores by $\\sqrt{d_k}$ (2 here) is a softmax")
    # session 10: the doubling duality ("as T = 0.5 would") is cut with 0.324
    # review 05_z F5: the W_q point (chapter 6 leans on it) moves into the temperature fold
    fold = " ".join(cells["tuse05"].source.split())
    # review 05_bb F1: the W_q point is back on the main line; the fold keeps Hinton only
    # review 05_mm F1: "like T = 1/c" replaces the doubling note's "exactly T = 0.5"
    # review 05_pp item 1: the W_q point is its own paragraph (tgaps05) after the printed rows
    gaps = " ".join(cells["tgaps05"].source.split())
    assert "stretches every gap by $c$, like $T = 1/c$" in gaps and "$T = 0.5$" not in flat
    assert "hinton2015distilling" in fold and "W_q" not in fold
    ids = [c.id for c in cells.values()]
    # review 05_r: what ties T to attention sits right under the slider
    assert ids.index("tnot05") == ids.index("3df9fffd") + 1
    assert "no $T$" not in top
    span = np.ptp(toy.scaled_scores(), axis=-1).max()
    assert round(span, 2) == 0.81 and round(np.exp(span), 2) == 2.25
    w = al.softmax(toy.scaled_scores())
    assert (w.max(axis=-1) / w.min(axis=-1)).max() <= 2.25


# --- Review 05_a: the softmax checker names float16 rounding, one row, a transpose ----------


def _in_float16(x, axis=-1, temperature=1.0):  # the right formula, in float16
    x = x.astype(np.float16)
    e = np.exp((x - x.max(axis=axis, keepdims=True)) / temperature)
    return e / e.sum(axis=axis, keepdims=True)


def _rows_loop(x, axis=-1, temperature=1.0):  # written for a matrix: a row is one number
    out = []
    for row in x:
        e = [np.exp((v - max(row)) / temperature) for v in row]
        out.append([v / sum(e) for v in e])
    return np.array(out)


def _atleast_2d_loop(x, axis=-1, temperature=1.0):  # one row comes back as (1, 3)
    x = np.atleast_2d(x)
    out = np.empty_like(x)
    for i, row in enumerate(x):
        e = np.exp((row - row.max()) / temperature)
        out[i] = e / e.sum()
    return out


def _index_loop(x, axis=-1, temperature=1.0):  # on one row, x[i] is a number: weight 1
    out = np.empty_like(x)
    for i in range(len(x)):
        e = np.exp((x[i] - np.max(x[i])) / temperature)
        out[i] = e / np.sum(e)
    return out


def _transposed(x, axis=-1, temperature=1.0):
    return _softmax_t(x, axis, temperature).T


@pytest.mark.parametrize(
    ("fn", "hint", "wrong"),
    [
        (_in_float16, "that is float16 rounding", "divide each exponential"),
        (_rows_loop, "must handle any number of axes (one row", "truth value"),
        (_atleast_2d_loop, "The first case is one row, x of shape (3,)", "keepdims=True keeps"),
        (_index_loop, "each entry was normalised on its own", "divide each exponential"),
        (_transposed, "Transposed? Return x's own shape.", "values differ"),
    ],
    ids=["float16", "rows-loop", "atleast-2d", "index-loop", "transposed"],
)
def test_check_softmax_names_float16_one_row_and_a_transpose(fn, hint, wrong, capsys):
    assert not check_softmax(fn)
    line = capsys.readouterr().out
    assert line.startswith("[softmax] FAIL: ") and hint in line, line
    assert wrong not in line, line


def test_float32_and_a_near_miss_are_not_called_float16(capsys):
    def in_float32(x, axis=-1, temperature=1.0):
        return _softmax_t(x.astype(np.float32), axis, temperature)

    def eps_in_sum(x, axis=-1, temperature=1.0):  # a real slip, 1e-3 off: not rounding
        e = np.exp((x - x.max(axis=axis, keepdims=True)) / temperature)
        return e / (e.sum(axis=axis, keepdims=True) + 1e-3)

    assert check_softmax(in_float32)
    assert not check_softmax(eps_in_sum)
    assert "float16" not in capsys.readouterr().out


def test_the_real_gap_marker_has_a_style_no_curve_has():
    from attention_lib.plotting import two_key_softmax

    fig, _ = two_key_softmax([1, 0.3, 0.1], gap=0.26)
    lines = fig.axes[0].get_lines()
    plt.close(fig)
    marker = next(line for line in lines if np.allclose(line.get_xdata(), 0.26))
    curves = [line for line in lines if line.get_label().startswith("softmax, T = ")]
    assert marker.get_linewidth() < min(c.get_linewidth() for c in curves)
    assert marker.get_linestyle() == "-" and marker.get_color() == "0.45"  # thin grey
    assert curves[0].get_linestyle() == ":"  # T = 1, which the review's marker looked like


def test_the_library_gives_the_overflow_as_its_reason_for_float32_sums():
    import inspect

    from attention_lib import core

    source = inspect.getsource(core._softmax)
    assert "a float16 total overflows past 65,504 (70,000 equal keys)" in source
    assert "65,505" not in source


# --- Review 05_b: the hard arg max and a float16 entropy get named -----------------------------


def _hard_arg_max(x, axis=-1, temperature=1.0):  # one-hot on the largest score
    return (x == x.max(axis=axis, keepdims=True)).astype(float)


def test_check_softmax_names_the_hard_arg_max(capsys):
    assert not check_softmax(_hard_arg_max)
    line = capsys.readouterr().out
    assert line.startswith("[softmax] FAIL: ") and "this is the hard arg max" in line, line
    assert "softmax keeps every weight above 0" in line and "values differ" not in line


@pytest.mark.parametrize("where", ["output", "input"])
def test_check_entropy_names_float16(where, capsys):
    def in_float16(p):
        q = p.astype(np.float16) if where == "input" else p
        h = -np.sum(q * np.log(np.where(q > 0, q, 1.0)), axis=-1)
        return h.astype(np.float16) if where == "output" else h

    assert not check_entropy(in_float16)
    line = capsys.readouterr().out
    assert line.startswith("[entropy] FAIL: ") and "log 8 in float16" in line, line
    assert "that is float16 rounding" in line and "values differ" not in line


def test_float32_entropy_is_not_called_float16(capsys):
    assert check_entropy(lambda p: -np.sum(p * np.log(np.where(p > 0, p, 1.0)), -1, np.float32))
    assert "float16" not in capsys.readouterr().out


def test_a_zero_entropy_for_another_reason_is_not_blamed_on_nan_to_num(capsys):
    # review 05_d: a 0 on [0, 0.5, 0.5] need not come from a zeroed nan; the hint is an "if"
    def wrong(p):  # no nan anywhere: a row holding a 0 just gets 0
        return np.where((p == 0).any(axis=-1), 0.0, np.sum(_entropy_terms(p), axis=-1))

    assert not check_entropy(wrong)
    line = capsys.readouterr().out
    assert "got 0 for the row" in line and "If you replaced nan by 0" in line, line
    assert "hid it" not in line, line


def test_a_hard_coded_softmax_is_told_it_ignores_x(capsys):
    def hard_coded(x, axis=-1, temperature=1.0):
        return np.array([0.09003057, 0.24472847, 0.66524096])  # softmax([1, 2, 3])

    assert not check_softmax(hard_coded)
    line = capsys.readouterr().out
    assert "your answer ignores x" in line and "returned shape" not in line, line


# --- Review 05_k: rounded weights are named as rounding; chapter 8's mask= -------------------


@pytest.mark.parametrize(("k", "shown"), [(1, "1 decimal ("), (3, "3 decimals (")])
def test_check_softmax_names_rounded_weights(k, shown, capsys):
    def rounded(x, axis=-1, temperature=1.0):
        return np.round(_softmax_t(x, axis, temperature), k)

    assert not check_softmax(rounded)
    line = capsys.readouterr().out
    assert line.startswith("[softmax] FAIL: ") and "rounded to " + shown in line, line
    assert "return them unrounded" in line and "divide each exponential" not in line, line


@pytest.mark.parametrize(("k", "shown"), [(2, "2 decimals ([0.09 0.24 0.66])"), (3, "3 decimals")])
def test_check_softmax_names_truncated_weights_as_truncation(k, shown, capsys):
    # review 05_m: (w * 1000).astype(int) / 1000 was told to divide by the sum it had
    def truncated(x, axis=-1, temperature=1.0):
        return (_softmax_t(x, axis, temperature) * 10**k).astype(int) / 10**k

    assert not check_softmax(truncated)
    line = capsys.readouterr().out
    assert line.startswith("[softmax] FAIL: ") and "truncated to " + shown in line, line
    assert "astype(int)" in line and "divide each exponential" not in line, line


def test_check_softmax_puts_the_loop_advice_first(capsys):
    # review 05_m: a loop over rows meets a 1-D row first and returns all ones; the useful
    # part of the message (any number of axes, no loop) comes before the all-ones detail
    def row_loop(x, axis=-1, temperature=1.0):
        out = []
        for row in x:
            e = np.exp((row - np.max(row, keepdims=True)) / temperature)
            out.append(e / e.sum(axis=-1, keepdims=True))
        return np.array(out)

    assert not check_softmax(row_loop)
    line = capsys.readouterr().out
    assert line.startswith("[softmax] FAIL: The first case is one row, x of shape (3,)"), line
    assert line.rstrip().endswith("Every weight came out 1: each entry was normalised on its own.")


def test_review_05k_points_to_chapter_8s_mask_argument():
    cells, _, _ = _chapter()
    # review 05_m: the mask= pointer is cut with the masked row (chapter 8 has both)
    note = " ".join(cells["2d2588ed"].source.split())
    assert note.startswith("The naive formula gives `nan`: $\\infty / \\infty$ in the first")
    # review 05_ss item 5: one line, not the masked-row discussion, points to chapter 8
    assert "mask=" not in note and note.count("chapter 8") == 1
    assert "A row of all $-\\infty$ (every key masked) still gives `nan`: see chapter 8." in note


@pytest.mark.parametrize(
    ("fn", "ending"),
    [  # review 05_mm: softmax(p) does use p, transformed: the hint says so
        (
            lambda p: np.sum(_entropy_terms(al.softmax(p)), axis=-1),  # softmax applied first
            "yours is the entropy of softmax(p): did you transform p before the sum? Use the"
            " weights p as they are.",
        ),
        (
            lambda p: np.full(p.shape[:-1], np.log(8)),  # log 8, whatever p is
            "A one-hot row has entropy 0: is your answer using p?",
        ),
    ],
    ids=["softmax-first", "hard-coded-log-8"],
)
def test_entropy_checker_says_a_one_hot_row_has_entropy_0(fn, ending, capsys):
    assert not check_entropy(fn)
    line = capsys.readouterr().out
    assert "on a one-hot row" in line and "A one-hot row has entropy 0" in line, line
    assert line.rstrip().endswith(ending), line


def test_the_entropy_exercise_says_numpy_only_as_the_softmax_one_does():
    cells, _, _ = _chapter()  # review 05_mm: scipy.stats.entropy is not installed
    assert "NumPy only" in cells["3e3185c4"].source and "NumPy only" in cells["35e5c480"].source


# --- Review 05_l: the max trick on the page; -inf masking in PyTorch named -------------------


def test_review_05l_shows_the_max_trick_and_names_masked_fill():
    cells, shown, flat = _chapter()
    code = cells["1434be3b"].source
    assert "np.exp(rows - rows.max(axis=-1, keepdims=True))" in code
    assert max(len(line) for line in code.splitlines()) <= 80
    out = cells["1434be3b"].outputs[0]["text"]
    trick = out.split("max trick:\n")[1]
    # session 10 (review 05_v F6): the problem first, then the fix; no al.softmax print
    assert out.startswith("naive formula:\n") and "al.softmax" not in out
    rows = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -1002.0]])
    assert trick.strip() == str(al.softmax(rows).round(3))  # the same rows
    note = " ".join(cells["2d2588ed"].source.split())
    assert "masked_fill" not in note  # review 05_m: cut (chapter 8 names it)
    assert "k > 0$ keeps the order ($k = 1/T$)" in cells["onlyexp5"].source
    code = cells["d4e5f605"].source
    assert "w[cake]" in code and "soft[cake]" not in code  # review 05_m: printed per row


# --- Review 05_n: weights cast to int; an entropy written as a loop over rows --------------


def test_check_softmax_names_weights_cast_to_int(capsys):
    def cast(x, axis=-1, temperature=1.0):
        return _softmax_t(x, axis, temperature).astype(int)

    assert not check_softmax(cast)
    line = capsys.readouterr().out
    assert line.startswith("[softmax] FAIL: ") and "you returned integers ([0 0 0])" in line
    assert "astype(int) turns every weight below 1 into 0" in line, line
    assert "divide each exponential" not in line, line


def test_an_int_one_hot_is_still_named_the_hard_arg_max(capsys):
    assert not check_softmax(lambda x, axis=-1, temperature=1.0: (x == x.max()).astype(int))
    assert "hard arg max" in capsys.readouterr().out


def _safe_log(r):
    return np.log(np.where(r > 0, r, 1.0))


@pytest.mark.parametrize(
    ("fn", "hint"),
    [
        (
            lambda p: [-sum(q * np.log(q) for q in row if q > 0) for row in p],
            "a loop over its rows (for row in p) meets numbers, not rows",
        ),
        (
            lambda p: np.array([-np.sum(p[i, :] * _safe_log(p[i, :])) for i in range(len(p))]),
            "a loop over its rows (for row in p) meets numbers, not rows",
        ),
        (
            lambda p: np.array([-np.sum(r * _safe_log(r)) for r in p]),
            "You returned -p log p per entry, not their sum: sum over axis=-1. A loop over rows",
        ),
        (
            lambda p: (
                -np.sum(p * _safe_log(p))
                if p.ndim == 1
                else np.array([-np.sum(r * _safe_log(r)) for r in p])
            ),
            "Each 2 x 3 block gave one number. Reduce over the last axis only (axis=-1). A loop",
        ),
    ],
    ids=["nested-generators", "index-rows", "array-of-rows", "rows-of-a-3d-array"],
)
def test_check_entropy_names_a_loop_over_rows(fn, hint, capsys):
    assert not check_entropy(fn)
    line = capsys.readouterr().out
    assert line.startswith("[entropy] FAIL: ") and line.count("\n") == 1
    assert hint in line, line


# --- Review 05_o: base 2 named --------------------------------------------------------------


@pytest.mark.parametrize(
    "power",
    [np.exp2, lambda s: 2.0**s],
    ids=["exp2", "two-to-the"],
)
def test_check_softmax_names_base_2(power, capsys):
    def base_2(x, axis=-1, temperature=1.0):
        e = power((x - x.max(axis=axis, keepdims=True)) / temperature)
        return e / e.sum(axis=axis, keepdims=True)

    assert not check_softmax(base_2)
    line = capsys.readouterr().out
    assert line.startswith("[softmax] FAIL: ") and "the base must be e: np.exp" in line, line
    assert "values differ" not in line, line


def test_review_05o_names_the_scale_and_states_the_gap_values():
    cells, shown, flat = _chapter()
    code = cells["d4e5f605"].source
    # a scale factor, not k (a key on this page); soft (an array above) is not rebound
    assert "2 * S" in code and "for k in" not in code  # review 05_dd F2: doubling only
    assert "\nsoft =" not in code and "    soft =" not in code
    assert max(len(line) for line in code.splitlines()) <= 80
    caption = " ".join(cells["twokeycap"].source.split())
    # review 05_t round t: the three numbers return, in one clause of the prose
    # review 05_u F1: the full row's values close the clause
    assert "0.49" not in caption and "0.70" not in caption  # session 11: number diet
    assert caption.count("0.93") == 1
    math = " ".join(cells["04fabf9f"].source.split())
    assert "Order-preserving" not in math  # the list right after says it


# --- Review 05_s: the per-entry hint names a row loop only when there is one -----------------


def test_a_missing_sum_is_not_told_about_row_loops(capsys):
    assert not check_entropy(lambda p: -p * np.log(np.where(p > 0, p, 1.0)))  # no sum at all
    line = capsys.readouterr().out
    assert line.rstrip().endswith("-p log p per entry, not their sum: sum over axis=-1."), line
    assert "loop" not in line, line


def test_the_solution_names_both_safe_orders_in_a_comment():
    cells, _, _ = _chapter()
    code = cells["83182082"].source
    # review 05_ss item 2: as safe for any realistic T; x = 1e308, T = 0.5 makes x / T inf
    assert "# shift, then divide by T (T > 0); x / T minus its own max is as safe for\n" in code
    assert "    # any realistic T (it fails only if x / T itself overflows)\n" in code
    with np.errstate(over="ignore", invalid="ignore"):
        big = np.array([1e308, 0.0]) / 0.5
        assert np.isnan(np.exp(big - big.max())).any()
    assert max(len(line) for line in code.splitlines()) <= 80
    x = np.array([[1000.0, 1001.0, -1000.0]])
    for T in (0.1, 1.0, 10.0):  # both orders: every exponent at most 0, the same weights
        a, b = (x - x.max()) / T, x / T - (x / T).max()
        assert a.max() == b.max() == 0 and np.allclose(np.exp(a), np.exp(b))


@pytest.mark.parametrize("shift_first", [True, False])
def test_check_softmax_names_floor_division(shift_first):
    # review 05_x: `// T` got only "values differ"; both placements floor the 2 x 3 matrix alike
    def my_softmax(x, axis=-1, temperature=1.0):
        m = x.max(axis=axis, keepdims=True)
        s = (x - m) // temperature if shift_first else x // temperature - m // temperature
        e = np.exp(s)
        return e / e.sum(axis=axis, keepdims=True)

    result = check_softmax(my_softmax)
    assert not result and "// is floor division" in str(result)


# --- Fix round aa (review 05_aa): checker hints for the shift and // slips; lists rejected --


def _shift_one_side(side):
    def my_softmax(x, axis=-1, temperature=1.0):
        z = x / temperature
        s = z - z.max(axis=axis, keepdims=True)
        top, bottom = (s, z) if side == "numerator" else (z, s)
        return np.exp(top) / np.exp(bottom).sum(axis=axis, keepdims=True)

    return my_softmax


@pytest.mark.parametrize(("side", "total"), [("numerator", "0.049787"), ("sum", "20.085537")])
def test_check_softmax_names_a_max_subtracted_on_one_side_only(side, total, capsys):
    result = check_softmax(_shift_one_side(side))
    line = capsys.readouterr().out
    assert not result and f"sum to {total}, not 1" in line, line
    assert f"only in the {side}" in line and "the same max in the sum as in each" in line


def test_check_softmax_names_floor_division_on_one_row(capsys):
    # review 05_aa: e // e.sum() floors every weight to 0 on x = [1, 2, 3]
    def floored(x, axis=-1, temperature=1.0):
        z = x / temperature
        e = np.exp(z - z.max(axis=axis, keepdims=True))
        return e // e.sum(axis=axis, keepdims=True)

    def as_int(x, axis=-1, temperature=1.0):  # a cast keeps its own message
        return floored(x, axis, temperature).astype(int)

    result = check_softmax(floored)
    line = capsys.readouterr().out
    assert not result and "every weight is 0: // is floor division" in line, line
    check_softmax(as_int)
    line = capsys.readouterr().out
    assert "you returned integers" in line and "//" not in line, line


def test_check_entropy_rejects_a_list_as_check_softmax_does(capsys):
    def as_list(p):
        return np.sum(_entropy_terms(p), axis=-1).tolist()

    result = check_entropy(as_list)
    line = capsys.readouterr().out
    assert not result and "returned a list: return a NumPy array (np.asarray)" in line, line
    assert check_entropy(lambda p: np.sum(_entropy_terms(p), axis=-1))  # an array passes
    assert "all 6 cases" in capsys.readouterr().out  # the type probe is not a case


def test_the_float16_fold_numbers_hold():
    total = np.float16(0)
    for _ in range(5000):  # one at a time, as a running sum would
        total = np.float16(total + np.float16(0.3))
    assert total == 1024
    assert np.sum(np.full(5000, 0.3, dtype=np.float16)) == 1500  # review 05_cc F5: pairwise
    bf16_max = np.array([0x7F7F0000], dtype=np.uint32).view(np.float32)[0]
    assert round(float(np.log(bf16_max)), 2) == 88.72  # bfloat16 shares float32's range


# --- Review 05_hh: a division by the whole array's total; p clipped before the log ----------


def test_check_softmax_names_a_division_by_the_whole_arrays_sum(capsys):
    def whole(x, axis=-1, temperature=1.0):
        e = np.exp((x - x.max(axis=axis, keepdims=True)) / temperature)
        return e / e.sum()  # one total for the whole array

    assert not check_softmax(whole)
    line = capsys.readouterr().out
    assert "divided by the sum of the whole array" in line and "axis=axis" in line, line


def test_check_softmax_keeps_the_plain_message_for_rows_off_another_way(capsys):
    def doubled(x, axis=-1, temperature=1.0):
        e = np.exp((x - x.max(axis=axis, keepdims=True)) / temperature)
        total = e.sum(axis=axis, keepdims=True)
        return e / total if x.ndim == 1 else 2 * e / total  # rows sum to 2

    assert not check_softmax(doubled)
    line = capsys.readouterr().out
    assert "normalise along the axis you were given" in line and "whole array" not in line


@pytest.mark.parametrize("clip", [lambda p: np.clip(p, 1e-3, 1), lambda p: np.maximum(p, 1e-3)])
def test_check_entropy_names_p_clipped_before_the_log(clip, capsys):
    assert not check_entropy(lambda p: -np.sum(p * np.log(clip(p)), axis=-1))
    line = capsys.readouterr().out
    assert "clipped before the log" in line and "np.where(p > 0, p, 1.0)" in line, line


def test_the_clip_hint_leaves_right_answers_and_a_tiny_clip_alone(capsys):
    right = lambda p: -np.sum(p * np.log(np.where(p > 0, p, 1.0)), axis=-1)  # noqa: E731
    assert check_entropy(right)
    assert check_entropy(lambda p: -np.sum(p * np.log(np.clip(p, 1e-12, 1)), axis=-1))
    assert capsys.readouterr().out.count("PASS") == 2


# --- Review 05_jj: a constant entropy ignores p; the objective says soft arg max -----------


@pytest.mark.parametrize(
    "fn",
    [lambda p: 2.035, lambda p: np.full(np.shape(p)[:-1], 2.035)],  # the T = 1 answer
    ids=["number", "array"],
)
def test_check_entropy_says_a_constant_answer_ignores_p(fn, capsys):
    assert not check_entropy(fn)
    line = capsys.readouterr().out
    assert "the same for a one-hot row: your answer does not change with p" in line, line
    assert "eps" not in line, line  # review 05_jj: it was told about log(p + eps)


def test_the_constant_hint_leaves_the_eps_and_log_8_hints_alone(capsys):
    assert not check_entropy(lambda p: _entropy_eps(p, 1e-3))  # depends on p: the eps hint
    assert not check_entropy(lambda p: np.full(p.shape[:-1], np.log(8)))  # right on uniform
    assert check_entropy(lambda p: np.sum(_entropy_terms(p), axis=-1))
    eps, log8, right = capsys.readouterr().out.splitlines()
    assert "log(p + eps)" in eps and "does not change with p" not in eps
    assert "A one-hot row has entropy 0" in log8 and "does not change" not in log8
    assert "PASS" in right


def test_review_05jj_objective_says_soft_arg_max_as_the_page_does():
    cells, _, flat = _chapter()
    objectives = " ".join(cells["c4490847"].source.split())
    assert "say why {term}`softmax` is a soft arg max;" in objectives
    assert '"soft" max;' not in objectives and "smooth **arg max**" in flat


# --- Review 05_pp: a cell to try Exercise 5.1 in; the float16 pointer a sentence; fold nits --


def test_review_05pp_gives_exercise_5_1_a_cell_and_states_the_asides_plainly():
    cells, shown, flat = _chapter()
    ids = [c.id for c in shown]
    # item 5: Exercise 5.1's text, then its folded solution, each in its own cell; the
    # learner edition puts its scratch cell ("try it here") between them. The site shows
    # no empty code cell: tests/test_intro.py counts a code cell after an exercise as a
    # cell to fill in, which needs a checker, and this exercise is a prediction.
    # review 05_qq item 2: a scratch cell of comments only sits between them on the site too
    # (tests/test_intro.py no longer takes it for a cell to fill in), and the learner edition
    # adds none of its own there (tests/test_learner.py checks the edition)
    assert ids.index("f37d9cdc-try") == ids.index("f37d9cdc") + 1
    assert ids.index("f37d9cdd") == ids.index("f37d9cdc-try") + 1
    scratch = cells["f37d9cdc-try"]
    assert scratch.cell_type == "code" and not scratch.outputs
    assert scratch.source == "# Your turn: try your answers here with al.softmax(z, temperature=T)."
    assert "None" not in scratch.source and "check_" not in scratch.source
    assert "{solution" not in cells["f37d9cdc"].source
    assert cells["f37d9cdd"].source.startswith("```{solution-start} ex-softmax-predict")
    assert cells["f37d9cde"].source.startswith("```{solution-end}")
    # item 4: the float16 catch is a sentence that names where it is explained
    note = " ".join(cells["2d2588ed"].source.split())
    # review 05_rr: shortened, to pay for the float16 overflow sentence above it
    assert note.endswith("Float16 sums can still fail: see Going further.")
    assert "What else goes wrong in float16?" in cells["floats05"].source
    # item 6: entmax also raises the clipped result to a power 1 / (alpha - 1)
    fold = " ".join(cells["onlyexp5"].source.split())
    assert "clip at 0 (entmax then raises the result to a power), so they stay" in fold
    # item 6: ln 65504 = 11.0899 is just under 11.09, and float16's 11.09 is 11.094: inf
    assert 11.08 < np.log(65504) < 11.09 and float(np.float16(11.09)) > 11.09
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(np.float16(11.09)))


# --- Review 05_qq: what scaled[i, j] means; one largest score; the overflow limits printed ---


def test_review_05qq_names_the_entries_the_tie_and_computes_the_limits_on_the_page():
    cells, shown, flat = _chapter()
    # item 4: "Where we are" says what an entry and a row of scaled are
    where = " ".join(cells["a962b882"].source.split())
    assert "Row $i$ holds query $i$'s scores: `scaled[i, j]` is its score for key $j$." in where
    assert "scaled = toy.scaled_scores()" in cells["626d0525"].source
    # item 5: one-hot needs one largest score; tied maxima share the weight
    top = " ".join(cells["1a18e25e"].source.split())
    assert (
        "toward **one-hot** (with one largest score; tied maxima share the weight), a **large**"
        in top
    )
    tied = al.softmax(np.array([1.0, 1.0, 0.0]), temperature=1e-3)
    assert np.allclose(tied, [0.5, 0.5, 0.0])
    # item 1: the loop on the page gives the three limits; bfloat16's is float32's to 2 places
    for f, limit in ((np.float64, 709.78), (np.float32, 88.72), (np.float16, 11.09)):
        assert round(float(np.log(float(np.finfo(f).max))), 2) == limit
    bf16_max = np.array([0x7F7F0000], dtype=np.uint32).view(np.float32)[0]
    assert round(float(np.log(bf16_max)), 2) == 88.72
    # item 3: the turned query's line is short and the Summary keeps the continuity proviso
    code = cells["d4e5f605"].source
    # review 05_ss item 1: unit keys make the turn and the two printed cosines short
    assert "q = np.linalg.norm(Q[it]) * u[cake]" in code
    assert len(code.splitlines()) == 14
    summary = " ".join(cells["0893ab71"].source.split())
    assert "Of continuous weightings $f(z_i) / \\sum_j f(z_j)$, only an exponential" in summary
    # the exercise's solution still writes softmax itself
    assert "al.softmax" not in cells["83182082"].source


# --- Review 05_rr: the turned query read, one idea per paragraph, float16 in practice ---------


def test_review_05rr_reads_the_turned_query_and_says_when_exp_overflows():
    cells, shown, flat = _chapter()
    ids = [c.id for c in shown]
    # item 1: a note under the print says why the turn barely sharpens, with both cosines
    note = " ".join(cells["tturn05"].source.split())
    assert ids.index("tturn05") == ids.index("d4e5f605") + 1
    # review 05_ss item 1: the cosines are printed above; the claim is narrowed to this
    # example (the turn moves cake's lead over delicious 0.26 -> 0.28 in score)
    assert note == (
        "The query already pointed nearly at cake's key, and delicious's key points almost the"
        " same way, so here the turn barely widens cake's lead."
    )
    assert "stands apart" not in flat
    Q, K = toy.X @ toy.W_q, toy.X @ toy.W_k
    it, cake, dl = (toy.token_index(t) for t in ("it", "cake", "delicious"))

    def cos(a, b):
        return a @ b / np.linalg.norm(a) / np.linalg.norm(b)

    assert round(cos(Q[it], K[cake]), 2) == 0.98 and round(cos(K[cake], K[dl]), 2) == 0.92
    # item 2: "no other T" is a paragraph of its own; the constant is named both ways
    gaps = cells["tgaps05"].source.split("\n\n")
    # review 05_ss item 6: the original Transformer (later models may add a learned scale)
    assert gaps[0] == "Inside attention, the original Transformer has no other $T$."
    assert len(gaps) == 2 and gaps[1].startswith("A head sharpens only through wider gaps")
    assert "(if the projection adds no constant term, no bias)" in cells["d4e5f601"].source
    # item 3: when overflow happens in practice, under the printed limits; bfloat16 folded
    trick = " ".join(cells["f5a1c0df"].source.split())
    # review 05_ss item 3: float32 overflows too (above 88.72), not only float16
    assert trick.startswith(
        "A score of 89 overflows in float32, 12 in float16, so library softmaxes use the"
        " **max trick**"
    )
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(np.float32(89))) and np.isfinite(np.exp(np.float32(88)))
    assert round(np.exp(12.0)) == 162755 > float(np.finfo(np.float16).max) == 65504
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(np.float16(12.0)))
    box = " ".join(cells["floats05"].source.split())
    assert "bfloat16, which NumPy lacks, trades digits for range" in box
    assert "overflows only above about 88.7." in box and flat.count("bfloat16") == 1
    # item 4: the sink fold names an escape built in on purpose
    sink = " ".join(cells["sink05"].source.split())
    assert "`nn.MultiheadAttention(add_zero_attn=True)` appends a zero key and value" in sink
    # "Why soft max?" no longer repeats the one-largest-score proviso of the temperature section
    assert flat.count("one largest score") == 1
