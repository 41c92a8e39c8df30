"""Chapter 9's score-memory checker: answers typed wrongly rather than worked out wrongly
(a quoted number, commas, ``^`` for a power)."""

from __future__ import annotations

from numbers import Integral


def typed_slip(answer, n: int, h: int, itemsize: int) -> str | None:
    """A hint for an answer that is the right sum mistyped in Python, or None."""
    expected = h * n * n * itemsize
    if isinstance(answer, str) and _is_number(answer):  # '536870912': text, not a number
        if "," in answer:  # '536,870,912'
            return (
                f"got the text {answer!r}: drop the quotes and the commas (or write {expected:_})."
            )
        return f"got the text {answer!r}: drop the quotes."
    if (
        isinstance(answer, tuple)
        and answer
        and all(isinstance(a, int) for a in answer)
        and "".join(f"{a:03d}" if i else str(a) for i, a in enumerate(answer)) == str(expected)
    ):  # 536,870,912 without quotes is the tuple (536, 870, 912)
        return f"got the tuple {answer!r}: drop the commas (or write {expected:_})."
    # 16*4096^2*2 is (16*4096) ^ (2*2) = 65540: ^ is XOR and binds after *
    xor = {(n * a) ^ (2 * b) for a, b in ((h * itemsize, 1), (h, itemsize), (itemsize, h))}
    xor.add(n ^ (2 * h * itemsize))  # 4096^2*16*2
    if isinstance(answer, Integral) and answer == h * (n ^ 2) * itemsize != expected:
        return (  # 16*(4096^2)*2: the brackets do not help, 4096^2 is 4098
            f"got {answer:,}: in Python {n}^2 is {n ^ 2:,}, because ^ is XOR, not a power "
            f"(brackets do not change that). Write {n}**2."
        )
    if isinstance(answer, Integral) and answer in xor - {expected}:
        return f"got {answer:,}: use ** for powers (n**2); ^ is XOR in Python."
    return None


def numbers_hint(kind: str, itemsize: int, h: int) -> str:
    """The hint for h n² (numbers, not bytes). At 2 bytes a number it is also half the
    heads' bytes, or half of each matrix (a causal mask), so the hint names those too."""
    hint = f"It counts the numbers, not the bytes (each {kind} takes {itemsize})"
    if itemsize != 2:
        return f"that is 1/{itemsize} of the answer. {hint}."
    heads = f", or uses {h // 2} heads instead of {h}" if h % 2 == 0 else ""
    return (
        f"that is half the answer. {hint}{heads}, or keeps half of each matrix for a causal "
        "mask: the n × n scores are stored in full even with a mask."
    )


def _is_number(text: str) -> bool:
    """Whether ``text`` would be a number without its quotes (digits, _ or , allowed)."""
    try:
        float(text.replace(",", "").replace("_", ""))
    except ValueError:
        return False
    return True
