"""Checkers are tested both ways: the reference passes, each typical mistake gets its hint."""

from pathlib import Path

import numpy as np
import pytest

from attention_lib.checks import CheckResult, check_entropy, check_softmax

ROOT = Path(__file__).resolve().parents[1]


def good_softmax(x, axis=-1, temperature=1.0):
    z = (x - x.max(axis=axis, keepdims=True)) / temperature
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def no_max_shift(x, axis=-1, temperature=1.0):
    e = np.exp(x / temperature)
    return e / e.sum(axis=axis, keepdims=True)


def wrong_axis(x, axis=-1, temperature=1.0):
    return good_softmax(x, axis=0, temperature=temperature)


def fixed_axis(x, axis=-1, temperature=1.0):
    return good_softmax(x, axis=-1, temperature=temperature)


def ignores_temperature(x, axis=-1, temperature=1.0):
    return good_softmax(x, axis=axis)


def multiplies_temperature(x, axis=-1, temperature=1.0):
    return good_softmax(x * temperature, axis=axis)


def not_normalised(x, axis=-1, temperature=1.0):
    return np.exp((x - x.max(axis=axis, keepdims=True)) / temperature)


def crashes(x, axis=-1, temperature=1.0):
    raise ZeroDivisionError("oops")


def no_keepdims(x, axis=-1, temperature=1.0):
    e = np.exp((x - x.max(axis=axis)) / temperature)
    return e / e.sum(axis=axis)


def mutates_input(x, axis=-1, temperature=1.0):
    x -= x.max(axis=axis, keepdims=True)
    return good_softmax(x, axis, temperature)


def max_on_last_axis(x, axis=-1, temperature=1.0):
    # the maximum taken along the last axis whatever axis is normalised
    e = np.exp((x - x.max(axis=-1, keepdims=True)) / temperature)
    return e / e.sum(axis=axis, keepdims=True)


def max_on_first_axis(x, axis=-1, temperature=1.0):
    e = np.exp((x - x.max(axis=0, keepdims=True)) / temperature)
    return e / e.sum(axis=axis, keepdims=True)


def stub(x, axis=-1, temperature=1.0):
    return None


def shift_by(statistic):
    def softmax_shifted(x, axis=-1, temperature=1.0):
        e = np.exp((x - statistic(x, axis)) / temperature)
        return e / e.sum(axis=axis, keepdims=True)

    return softmax_shifted


def log_softmax(x, axis=-1, temperature=1.0):
    z = (x - x.max(axis=axis, keepdims=True)) / temperature
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


def test_reference_softmax_passes(capsys):
    result = check_softmax(good_softmax)
    assert result and result.passed and result.status == "PASS"
    assert capsys.readouterr().out == "[softmax] PASS: all 18 cases match the reference.\n"


@pytest.mark.parametrize(
    ("fn", "status", "hint"),
    [
        (no_max_shift, "FAIL", "Subtract each row's maximum"),
        (wrong_axis, "FAIL", "columns sum to 1: you normalised over the wrong axis"),
        (fixed_axis, "FAIL", "use the axis argument"),
        (ignores_temperature, "FAIL", "T is either unused or applied after exp"),
        (multiplies_temperature, "FAIL", "you multiplied by T"),
        (not_normalised, "FAIL", "sum to 1.503215, not 1"),
        (crashes, "FAIL", "raised ZeroDivisionError: oops"),
        (no_keepdims, "FAIL", "keepdims=True"),
        (mutates_input, "FAIL", "changed its input array in place"),
        (stub, "TODO", "returned None"),
        (max_on_last_axis, "FAIL", "subtracted each row's maximum (axis=-1)"),
        (max_on_first_axis, "FAIL", "subtracted each column's maximum (axis=0)"),
        (log_softmax, "FAIL", "you returned log-probabilities"),
        (shift_by(lambda x, a: x.min(axis=a, keepdims=True)), "FAIL", "not its minimum"),
        (shift_by(lambda x, a: x.mean(axis=a, keepdims=True)), "FAIL", "not its minimum"),
        (shift_by(lambda x, a: x.max()), "FAIL", "not one maximum for the whole array"),
    ],
)
def test_each_softmax_mistake_gets_its_own_hint(fn, status, hint, capsys):
    result = check_softmax(fn)
    line = capsys.readouterr().out
    assert not result
    assert result.status == status
    assert line.startswith(f"[softmax] {status}: ")
    assert hint in line
    assert line.count("\n") == 1  # exactly one line


def good_entropy(p):
    safe = np.where(p > 0, p, 1.0)
    return -np.sum(np.where(p > 0, p * np.log(safe), 0.0), axis=-1)


@pytest.mark.parametrize(
    ("fn", "status", "hint"),
    [
        (good_entropy, "PASS", "all 6 cases"),
        (lambda p: np.sum(good_entropy(p)) * -1, "FAIL", "your sign is flipped"),
        (lambda p: good_entropy(p) / np.log(2), "FAIL", "log base 2"),
        (lambda p: -np.sum(p * np.log(p), axis=-1), "FAIL", "0 * log(0)"),
        (lambda p: good_entropy(p).sum(), "FAIL", "Reduce over the last axis only"),
        (lambda p: -p * np.log(np.where(p > 0, p, 1.0)), "FAIL", "returned shape (8,)"),
        (lambda p: None, "TODO", "returned None"),
        (lambda p: "high", "FAIL", "not an array of numbers"),
        (lambda p: -np.nan_to_num(np.sum(p * np.log(p), -1)), "FAIL", "[0.0, 0.5, 0.5]"),
        (lambda p: good_entropy(p)[..., None], "FAIL", "without keeping it (keepdims=True)"),
    ],
)
def test_entropy_checker(fn, status, hint, capsys):
    result = check_entropy(fn)
    line = capsys.readouterr().out
    assert result.status == status
    assert bool(result) is (status == "PASS")
    assert hint in line


def test_a_checker_never_raises_even_for_strange_callables(capsys):
    assert not check_softmax(42)  # not callable at all
    assert not check_entropy(lambda: 0)  # wrong signature
    assert capsys.readouterr().out.count("FAIL") == 2


def test_check_result_is_not_shown_twice_in_jupyter(capsys):
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.display import display

    InteractiveShell.instance()  # display() as in Jupyter, not the plain-print fallback
    result = CheckResult("softmax", "PASS", "ok")
    display(result)  # the verdict line was printed by the checker; nothing more appears
    display(1.5)  # while an ordinary value does appear
    assert capsys.readouterr().out == "1.5\n"
    assert repr(result) == "CheckResult('[softmax] PASS: ok')"


def test_a_mismatch_on_a_matrix_still_gives_one_line(capsys):
    def off_on_3d_arrays(x, axis=-1, temperature=1.0):
        # right on vectors and matrices, a little too flat on 3-D arrays: no known mistake
        return good_softmax(x, axis, temperature * (1.1 if x.ndim == 3 else 1.0))

    assert not check_softmax(off_on_3d_arrays)
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "values differ" in out and "entries differ" in out


def test_the_pass_line_counts_the_cases_actually_run(capsys):
    calls = []

    def counted(x, axis=-1, temperature=1.0):
        calls.append(1)
        return good_softmax(x, axis, temperature)

    check_softmax(counted)
    assert (
        capsys.readouterr().out == f"[softmax] PASS: all {len(calls)} cases match the reference.\n"
    )


@pytest.mark.parametrize("doc", ["README.md", "teaching.md"])
def test_verdicts_quoted_in_the_docs_are_real(doc, capsys):
    # Every "[softmax] ..." line the docs show must be what the checker really prints.
    for fn in (good_softmax, stub, wrong_axis, no_max_shift):
        check_softmax(fn)
    printed = capsys.readouterr().out.splitlines()
    quoted = [
        line.strip().removesuffix("...").strip()
        for line in (ROOT / doc).read_text().splitlines()
        if line.strip().startswith("[softmax]")
    ]
    assert quoted, f"{doc} shows no verdict lines"
    for line in quoted:
        assert any(real.startswith(line) for real in printed), f"{doc} quotes {line!r}"


@pytest.mark.parametrize(
    ("answer", "status", "text"),
    [
        (0.21, "PASS", "0.21 is right."),
        (0.2113, "PASS", "is right"),
        (None, "TODO", "replace None"),
        (0.42, "FAIL", "you forgot to divide by 2"),
        (0.3, "FAIL", "0.3 is too high"),
        (0.1, "FAIL", "0.1 is too low"),
        ("0.21", "FAIL", "expected one number, got '0.21'"),
        ([0.21], "FAIL", "expected one number"),
        (True, "FAIL", "expected one number"),
        (float("nan"), "FAIL", "expected a finite number"),
    ],
)
def test_check_number_judges_a_prediction(answer, status, text, capsys):
    from attention_lib.checks.base import check_number

    result = check_number(
        "guess", answer, 0.2113, mistakes=((0.4226, "you forgot to divide by 2."),)
    )
    line = capsys.readouterr().out
    assert result.status == status and bool(result) is (status == "PASS")
    assert line.startswith(f"[guess] {status}: ") and text in line and line.count("\n") == 1


@pytest.mark.parametrize(
    ("answer", "status", "text"),
    [
        (36, "PASS", "36 is right."),
        (36.0, "PASS", "is right"),
        (np.int64(36), "PASS", "is right"),
        (36.4, "FAIL", "this is a count: a whole number, not 36.4"),
        (35.6, "FAIL", "a whole number"),
        (35, "FAIL", "35 is too low"),
    ],
)
def test_a_count_must_be_a_whole_number(answer, status, text, capsys):
    # places=0 marks a count (36 allowed pairs, 3 self-matches): 36.4 does not round to a pass.
    from attention_lib.checks.base import check_number

    result = check_number("count", answer, 36, places=0)
    line = capsys.readouterr().out
    assert result.status == status and text in line


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        (537_000_000, "close: 537,000,000 looks rounded"),
        (5.37e8, "looks rounded"),
        (536_870_911, "is too low"),  # off by one: an integer count is never "rounded"
        (537_000_001, "is too high"),
    ],
)
def test_only_a_round_number_near_a_count_is_called_rounded(answer, text, capsys):
    from attention_lib.checks.base import check_number

    assert not check_number("bytes", answer, 536_870_912, places=0)
    assert text in capsys.readouterr().out
