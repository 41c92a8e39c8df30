"""How values cross the sandbox wall: length-prefixed JSON frames, arrays as ``.npy``.

Nothing is ever unpickled: arrays are read with ``np.load(..., allow_pickle=False)`` and
only numeric and boolean dtypes are accepted. Everything else a student's function
returns arrives as an :class:`Opaque` stand-in that carries its type name, so a checker
can say "your function returned dict" and nothing more. Both sides import this module;
the worker uses :func:`encode`, the grader :func:`decode`.
"""

from __future__ import annotations

import base64
import io
import json
import re
import struct

import numpy as np

MAX_FRAME = 64 * 2**20  # bytes in one message: far more than any checker's arrays
MAX_ITEMS = 100_000  # elements of the lists and tuples in one returned value
MAX_DEPTH = 4  # nesting of lists and tuples
MESSAGE = 120  # characters kept of an error message or a string
KINDS = "biufc"  # bool, int, unsigned, float, complex: the dtypes that cross


class ProtocolError(Exception):
    """The other side sent something that is not a well-formed message."""


def send(stream, message: dict) -> None:
    data = json.dumps(message).encode()
    stream.write(struct.pack(">I", len(data)) + data)
    stream.flush()


def frame_length(header: bytes) -> int:
    (length,) = struct.unpack(">I", header)
    if length > MAX_FRAME:
        raise ProtocolError(f"a message of {length} bytes is over the limit")
    return length


def parse(data: bytes) -> dict:
    try:
        message = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise ProtocolError("a message is not JSON") from None
    if not isinstance(message, dict):
        raise ProtocolError("a message is not an object")
    return message


PATH = re.compile(r"(?<![\w.])/[^\s'\"]+")  # an absolute path (no backtracking)


def short(text: str, limit: int = MESSAGE) -> str:
    """One line of printable text, at most ``limit`` characters, with no paths in it."""
    text = re.sub(r"[^\x20-\x7e]+", " ", str(text)[: 4 * limit]).strip()
    text = PATH.sub("<path>", text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _npy(arr: np.ndarray) -> str:
    buffer = io.BytesIO()
    np.save(buffer, np.array(arr, order="C"), allow_pickle=False)
    return base64.b64encode(buffer.getvalue()).decode()


def encode(value, depth: int = 0, budget: list | None = None) -> dict:
    """A JSON-able description of ``value``; unknown objects become their type's name."""
    budget = [MAX_ITEMS] if budget is None else budget  # items left, shared by all levels
    if value is None:
        return {"t": "none"}
    if isinstance(value, bool):
        return {"t": "bool", "v": value}
    if isinstance(value, int) and not isinstance(value, np.generic) and abs(value) < 2**63:
        return {"t": "int", "v": value}
    if isinstance(value, float) and not isinstance(value, np.generic):
        return {"t": "float", "v": repr(float(value))}
    if isinstance(value, str):
        return {"t": "str", "v": short(value)}
    if isinstance(value, (np.ndarray, np.generic, complex)):
        arr = np.asarray(value)
        if type(value) is np.ndarray or isinstance(value, (np.generic, complex)):
            if arr.dtype.kind in KINDS and arr.nbytes <= MAX_FRAME // 2:
                return {"t": "array" if arr.ndim else "scalar", "npy": _npy(arr)}
    if type(value) in (list, tuple) and depth < MAX_DEPTH and len(value) <= budget[0]:
        budget[0] -= len(value)
        items = [encode(v, depth + 1, budget) for v in value]
        return {"t": type(value).__name__, "items": items}
    return {"t": "other", "type": short(type(value).__name__, 40)}


class Opaque:
    """Stands for an object that cannot cross the wall: a dict, a generator, a class..."""

    def __init__(self, name: str):
        self.name = re.sub(r"\W", "", name)[:40] or "object"

    def __repr__(self) -> str:
        return f"<{self.name} object>"


def decode(data, depth: int = 0):
    """The value :func:`encode` described, rebuilt from data only."""
    if not isinstance(data, dict) or depth > MAX_DEPTH + 1:
        raise ProtocolError("a value is malformed")
    kind = data.get("t")
    if kind == "none":
        return None
    if kind == "bool" and isinstance(data.get("v"), bool):
        return data["v"]
    if kind == "int" and type(data.get("v")) is int and abs(data["v"]) < 2**63:
        return data["v"]
    if kind == "float" and isinstance(data.get("v"), str) and len(data["v"]) < 40:
        try:
            return float(data["v"])
        except ValueError:
            raise ProtocolError("a float is malformed") from None
    if kind == "str" and isinstance(data.get("v"), str):
        return short(data["v"])
    if kind in ("array", "scalar") and isinstance(data.get("npy"), str):
        try:
            raw = base64.b64decode(data["npy"], validate=True)
            arr = np.load(io.BytesIO(raw), allow_pickle=False)
        except Exception:
            raise ProtocolError("an array is malformed") from None
        if not isinstance(arr, np.ndarray) or arr.dtype.kind not in KINDS:
            raise ProtocolError("an array has a dtype that is not numeric")
        if kind == "scalar":
            if arr.ndim:
                raise ProtocolError("a scalar is not 0-d")
            return arr[()]
        return arr
    if kind in ("list", "tuple") and isinstance(data.get("items"), list):
        if len(data["items"]) > MAX_ITEMS:
            raise ProtocolError("a list is too long")
        items = [decode(v, depth + 1) for v in data["items"]]
        return items if kind == "list" else tuple(items)
    if kind == "other" and isinstance(data.get("type"), str):
        return Opaque(data["type"])
    raise ProtocolError("a value has an unknown type")
