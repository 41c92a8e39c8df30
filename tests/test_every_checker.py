"""Every function checker, present and future, meets the learner kindly.

Each chapter's tests check its own checkers' hints. This file holds the promise that no
checker breaks it, including checkers added later: a stub that returns None is "not yet"
(TODO), and a function that crashes, returns the wrong type or calls sys.exit gets one
FAIL line, never a traceback.
"""

import inspect
import sys

import pytest

import attention_lib.checks as checks

FUNCTION_CHECKERS = sorted(
    name
    for name in checks.__all__
    if name.startswith("check_")
    and next(iter(inspect.signature(getattr(checks, name)).parameters)) == "fn"
)


def test_there_are_function_checkers_to_check():
    assert len(FUNCTION_CHECKERS) >= 10, FUNCTION_CHECKERS


def stub(*args, **kwargs):
    return None


def crash(*args, **kwargs):
    raise KeyError("oops")


def wrong_type(*args, **kwargs):
    return "an answer"


def leave(*args, **kwargs):
    sys.exit(1)


@pytest.mark.parametrize("name", FUNCTION_CHECKERS)
@pytest.mark.parametrize(
    ("fn", "status"), [(stub, "TODO"), (crash, "FAIL"), (wrong_type, "FAIL"), (leave, "FAIL")]
)
def test_checker_answers_in_one_line_without_raising(name, fn, status, capsys):
    result = getattr(checks, name)(fn)
    out = capsys.readouterr().out
    assert result.status == status and not result
    assert out.count("\n") == 1 and f"] {status}: " in out, out
    assert "Traceback" not in out
