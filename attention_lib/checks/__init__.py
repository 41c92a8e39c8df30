"""Exercise checkers: run a learner's function on fixed cases and say what went wrong.

A checker never raises. It prints exactly one line that starts with a stable tag, so a
grader can read it and a learner can act on it::

    [softmax] PASS: all 15 cases match the reference.
    [softmax] FAIL: got nan or inf for logits near 1000: exp(1000) overflows. Subtract ...
    [softmax] TODO: your function returned None. Write its body, then run this cell again.

and returns a :class:`CheckResult`, which is truthy exactly when the exercise passed.
The hints come from recognising the usual mistakes, not from generic "wrong answer"s.

:mod:`.base` holds the shared machinery; each chapter's checkers live in a module of
their own and are re-exported here, so ``from attention_lib.checks import
check_softmax`` works whichever module a checker is in.
"""

from .base import CheckResult
from .softmax import check_entropy, check_softmax

__all__ = ["CheckResult", "check_entropy", "check_softmax"]
