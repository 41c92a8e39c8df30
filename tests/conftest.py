"""Test-suite wide settings: which tests `make check` leaves to `make test`.

`make check` is the quick loop while writing (ruff plus every test not marked ``slow``:
about 56 s of CPU, some 30 s on two idle cores). A test is slow when it executes notebooks,
trains a model, builds environments or grades submissions in sandboxes; those are listed
here by file or test name, so the test files themselves stay free of bookkeeping.
`make test` runs everything.
"""

import pytest

SLOW = (
    "tests/test_grade.py",  # runs sandboxed submissions
    "tests/test_project.py::test_refreshing_outputs",  # executes a chapter if no build has
    "tests/test_backward.py::test_training",  # trains the chapter 10 model
    "tests/test_backward.py::test_uniform_attention_never_moves",  # trains it again, longer
    "tests/test_ch12_decoder.py::test_training_is_deterministic",  # trains chapter 12's twice
    "tests/test_ch12_decoder.py::test_exercise_b",  # trains chapter 12's with and without a word
    "tests/test_ch12_decoder.py::test_one_head_carries_cake",  # trains chapter 12's for seeds 0-2
    "tests/test_student.py::test_command_line_exits_1",  # builds every student chapter
    "tests/test_pretrained.py::test_long_inputs_are_truncated",  # a 512-token forward pass
    "tests/test_reuse.py",  # runs pytest about 40 times in small repositories
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(SLOW):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _no_figures_from_earlier_tests():
    # Tests that assert "nothing is left open" count pyplot's figures. A test file shares its
    # worker with whichever files ran there before, so start each test with none open.
    import matplotlib.pyplot as plt

    plt.close("all")
    yield
