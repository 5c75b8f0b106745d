"""JSON text as the C++ writers print it (common/json_text.h), so that what
Python prints equals reshardctl's byte for byte: numbers in the shortest
form that reads back exactly, choosing scientific notation only where it is
shorter (std::to_chars), and strings escaped as JsonString escapes them."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

_REPR = re.compile(r"(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?")


def number_text(value: float) -> str:
    """A double as std::to_chars writes it ("100", "0.5", "1e+05");
    "null" where it is not finite (FormatDouble)."""
    value = float(value)
    if not math.isfinite(value):
        return "null"
    match = _REPR.fullmatch(repr(value))
    assert match is not None, repr(value)
    sign, whole, fraction, exponent = match.groups()
    digits = whole + (fraction or "")
    point = len(whole) + int(exponent or 0)  # the decimal point's position
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    if not digits:
        return sign + "0"
    if point <= 0:
        fixed = "0." + "0" * -point + digits
    elif point >= len(digits):
        fixed = digits + "0" * (point - len(digits))
    else:
        fixed = digits[:point] + "." + digits[point:]
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    power = point - 1
    scientific = f"{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}"
    return sign + (scientific if len(scientific) < len(fixed) else fixed)


def json_string(text: str) -> str:
    """`text` quoted: quote, backslash and newline escaped, other control
    characters as \\u00XX, everything else as it is."""
    out = ['"']
    for c in text:
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif c == "\n":
            out.append("\\n")
        elif ord(c) < 0x20:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def compact_json(value: Any) -> str:
    """`value` (dicts, lists, strings, numbers, bools, None) as one line with
    no spaces: the plan JSON's form (planner/format/plan_format.h)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return number_text(value)
    if isinstance(value, str):
        return json_string(value)
    if isinstance(value, Mapping):
        items = (f"{json_string(k)}:{compact_json(v)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, Sequence):
        return "[" + ",".join(compact_json(v) for v in value) + "]"
    raise TypeError(f"not a JSON value: {value!r}")
