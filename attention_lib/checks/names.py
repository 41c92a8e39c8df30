"""What a learner's function names in its code: to enforce a rule or word a hint.

Checkers use it to tell "you called the library's answer" (``al.softmax``,
``attention_backward``) from a wrong result, and to name a slip (``K.T`` on a batch).
"""

from __future__ import annotations

import sys
import types


def uses_name(fn, name: str) -> bool:
    """Whether ``fn``'s code, or code defined inside it (a helper, a comprehension), uses
    the global or attribute ``name``. A callable without Python code (a builtin, the
    grader's stand-in for the learner's function) reads as ``False``.
    """
    return any(name in code.co_names for code in _codes(fn))


def calls_library(fn, name: str, allowed_module: str = "__main__") -> bool:
    """Whether ``fn`` reaches a callable called ``name`` that the learner did not write.

    The names in ``fn``'s code (and in code nested inside it) are looked up where Python
    would find them: ``fn``'s globals, its closure and its defaults, then attributes of
    the modules and namespaces found there (``al.softmax``, ``scipy.special.softmax``).
    A callable whose ``__name__`` contains ``name`` counts as the library's unless the
    learner defined it: in ``allowed_module`` or next to ``fn`` (the same globals). The
    learner's own functions are followed in turn, so a helper that hides the call is
    found too. So ``sm = al.softmax`` is caught, while a NumPy-only helper the learner
    named ``softmax`` is allowed. An import inside ``fn`` is followed too when its module
    is already loaded. A callable without Python code reads as ``False``.
    """
    home = getattr(fn, "__globals__", None)

    def own(obj) -> bool:
        return getattr(obj, "__module__", None) == allowed_module or (
            home is not None and getattr(obj, "__globals__", None) is home
        )

    seen, todo = {id(fn)}, [fn]
    while todo:
        current = todo.pop()
        codes = list(_codes(current))
        if not codes:
            continue
        names = set().union(*(code.co_names for code in codes))
        scope = getattr(current, "__globals__", {})
        found = [scope[n] for n in names if n in scope]
        # An import inside fn names its module ("attention_lib.core"): look up loaded ones only.
        found += [sys.modules[n] for n in names if n not in scope and n in sys.modules]
        found += [
            c.cell_contents for c in getattr(current, "__closure__", None) or () if _filled(c)
        ]
        found += getattr(current, "__defaults__", None) or ()
        found += (getattr(current, "__kwdefaults__", None) or {}).values()
        spaces = [obj for obj in found if _namespace(obj)]
        for _ in range(3):  # al.softmax, scipy.special.softmax: up to three dots deep
            attrs = [a for obj in spaces for n in names if (a := vars(obj).get(n)) is not None]
            found += attrs
            spaces = [a for a in attrs if _namespace(a)]
        for obj in found:
            if not callable(obj) or id(obj) in seen:
                continue
            seen.add(id(obj))
            if own(obj):
                todo.append(obj)  # the learner's helper: look inside it too
            elif name in str(getattr(obj, "__name__", "")):
                return True
    return False


def _codes(fn):
    """``fn``'s code object and every code object nested inside it."""
    todo = [getattr(fn, "__code__", None)]
    while todo:
        code = todo.pop()
        if isinstance(code, types.CodeType):
            yield code
            todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def _namespace(obj) -> bool:
    """A module, namespace or class: its attributes are read from its ``__dict__`` only,
    so no property of an arbitrary object runs."""
    return isinstance(obj, (types.ModuleType, types.SimpleNamespace, type))


def reaches(fn, targets, *args) -> bool:
    """Whether running ``fn(*args)`` enters the code of any of ``targets``, however it
    got there (``__import__(...)``, ``getattr``): the runtime side of ``calls_library``.
    An error inside ``fn`` reads as ``False``: the checks that ran it already named it.
    """
    codes = {getattr(t, "__code__", None) for t in targets} - {None}
    hit = []

    def watch(frame, event, arg):
        if event == "call" and frame.f_code in codes:
            hit.append(frame.f_code)

    args = [a.copy() if hasattr(a, "copy") else a for a in args]  # the caller's stay intact
    old = sys.getprofile()
    sys.setprofile(watch)
    try:
        fn(*args)
    except Exception:
        return bool(hit)
    finally:
        sys.setprofile(old)
    return bool(hit)
