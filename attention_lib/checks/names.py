"""What a learner's function names in its code: to enforce a rule or word a hint.

Checkers use it to tell "you called the library's answer" (``al.softmax``,
``attention_backward``) from a wrong result, and to name a slip (``K.T`` on a batch).
"""

from __future__ import annotations


def uses_name(fn, name: str) -> bool:
    """Whether ``fn``'s code, or code defined inside it (a helper, a comprehension), uses
    the global or attribute ``name``. A callable without Python code (a builtin, the
    grader's stand-in for the learner's function) reads as ``False``.
    """
    codes = [getattr(fn, "__code__", None)]
    while codes:
        code = codes.pop()
        if code is None:
            continue
        if name in code.co_names:
            return True
        codes.extend(c for c in code.co_consts if hasattr(c, "co_names"))
    return False
