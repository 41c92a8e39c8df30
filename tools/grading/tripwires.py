"""Tripwires: the library functions an exercise rules out, caught when they run.

Runs inside the sandboxed worker (:mod:`.worker`), before any answer cell. Each ruled-out
function (``attention_lib.core.softmax``, from the exercise's metadata) gets a new body
in place: the function object itself is changed, so every name for it sees the change
(``al.softmax``, ``L = al; L.softmax``, ``from attention_lib.core import softmax as
stable``, the library's own calls to it). The new body calls the original, except while
the student's function for an exercise that rules it out is running: then the call is
recorded and raises :class:`ForbiddenCall` (catching it does not erase the record), or,
where the teacher only flags such calls, is recorded and goes on.

After each call the worker checks that the tripwires are still in place; a function
put back, or a module reloaded, is reported as tampering. Code running in the same
process could still dig out the original body; the static flags name the tools for that
(dunder attributes, ``gc``, ``importlib``), and the teacher reads them.
"""

from __future__ import annotations

import importlib
import types

REGISTRY = "__tripwires__"  # the name, in the guarded module's globals, of the hooks


class ForbiddenCall(RuntimeError):
    """A library function this exercise rules out was called."""


class Tripwires:
    def __init__(self, rules: dict, stop: bool = True):
        self.stop = stop
        self.rules = {
            label: frozenset(n for n in names if isinstance(n, str))
            for label, names in rules.items()
            if isinstance(label, str) and isinstance(names, list)
        }
        self.armed: frozenset = frozenset()
        self.hits: list[str] = []
        self.guards: dict[str, tuple] = {}  # name: (module, attr, function, body, hook)
        self.problems: list[str] = []
        self.broken: set[str] = set()  # tripwires found removed, reported once
        for name in sorted(set().union(*self.rules.values())):
            self._guard(name)

    def _guard(self, name: str) -> None:
        module_name, _, attr = name.rpartition(".")
        if not module_name.split(".")[0] == "attention_lib" or not attr.isidentifier():
            self.problems.append(f"{name} is not a function of attention_lib")
            return
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            self.problems.append(f"no module {module_name}")
            return
        fn = getattr(module, attr, None)
        if not isinstance(fn, types.FunctionType) or fn.__closure__:
            self.problems.append(f"{name} is not a plain function")
            return
        original = types.FunctionType(fn.__code__, fn.__globals__, attr, fn.__defaults__)
        original.__kwdefaults__ = fn.__kwdefaults__

        def hook(*args, **kwargs):
            if name in self.armed:
                self.hits.append(name)
                if self.stop:
                    raise ForbiddenCall(f"{name} is ruled out in this exercise")
            return original(*args, **kwargs)

        source = f"def {attr}(*args, **kwargs):\n    return {REGISTRY}[{name!r}](*args, **kwargs)\n"
        compiled = compile(source, f"<tripwire {name}>", "exec")
        body = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
        fn.__globals__.setdefault(REGISTRY, {})[name] = hook
        fn.__code__ = body
        self.guards[name] = (module, attr, fn, body, hook)

    def arm(self, label) -> None:
        self.hits = []
        self.armed = self.rules.get(label, frozenset())

    def disarm(self) -> list[str]:
        self.armed = frozenset()
        return list(dict.fromkeys(self.hits))

    def tampered(self) -> list[str]:
        """The names whose tripwire is found removed since the last look."""
        found = []
        for name, (module, attr, fn, body, hook) in self.guards.items():
            try:
                intact = (
                    module.__dict__.get(attr) is fn
                    and fn.__code__ is body
                    and fn.__globals__[REGISTRY][name] is hook
                )
            except Exception:  # noqa: BLE001 - whatever was put there, it is not ours
                intact = False
            if not intact and name not in self.broken:
                found.append(name)
        self.broken.update(found)
        return found
