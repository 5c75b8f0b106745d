"""Writes docs/PYTHON_API.md, the reference of the Python package: every name
in reshard.__all__ with its signature and docstring, the public methods and
properties of each class, and what `python -m reshard` is. Run with the
project environment after `make build`:

    PYTHONPATH=python:build/python /opt/reshard/venv/bin/python \\
        scripts/python_api_doc.py > docs/PYTHON_API.md

tests/python/test_docs.py fails when the committed file differs from what
this prints, so the reference cannot fall behind the package."""

from __future__ import annotations

import enum
import importlib
import inspect
from collections.abc import Callable
from types import ModuleType
from typing import Any

import reshard
from reshard import _command_line as command_line_module

HEADER = """\
# The Python package `reshard`: API reference

Generated from the package's docstrings by `scripts/python_api_doc.py`
(the command is in its docstring); `tests/python/test_docs.py` checks that
this file is what the script prints. The guide is docs/PYTHON.md.
"""


def _parameter(p: inspect.Parameter) -> str:
    text = p.name
    if p.kind is p.VAR_POSITIONAL:
        text = "*" + text
    elif p.kind is p.VAR_KEYWORD:
        text = "**" + text
    if p.annotation is not p.empty:
        text += f": {p.annotation}"
    if p.default is not p.empty:
        text += f" = {p.default!r}"
    return text


def signature(obj: Callable[..., Any], drop_self: bool = False) -> str:
    sig = inspect.signature(obj)
    params = list(sig.parameters.values())
    if drop_self and params and params[0].name in ("self", "cls"):
        params = params[1:]
    parts, keyword_only_marked = [], False
    for p in params:
        if p.kind is p.KEYWORD_ONLY and not keyword_only_marked:
            parts.append("*")
            keyword_only_marked = True
        keyword_only_marked |= p.kind is p.VAR_POSITIONAL
        parts.append(_parameter(p))
    returns = sig.return_annotation
    tail = "" if returns in (sig.empty, None, "None") else f" -> {returns}"
    return f"({', '.join(parts)}){tail}"


def _doc(obj: object) -> str:
    doc = inspect.getdoc(obj)
    return f"\n{doc}\n" if doc else ""


def _members(cls: type) -> list[str]:
    """The class's own public methods and properties, in source order."""
    out = []
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(value, property):
            out.append(f"- `{name}` (property){_inline(value)}")
        elif isinstance(value, classmethod | staticmethod):
            function = value.__func__
            out.append(f"- `{name}{signature(function, True)}`{_inline(function)}")
        elif inspect.isfunction(value):
            out.append(f"- `{name}{signature(value, True)}`{_inline(value)}")
    return out


def _inline(obj: object) -> str:
    doc = inspect.getdoc(obj)
    return ": " + " ".join(doc.split()) if doc else ""


def entry(name: str, module: ModuleType = reshard) -> str:
    obj = getattr(module, name)
    name = (
        f"{module.__name__.removeprefix('reshard.')}.{name}"
        if module is not reshard
        else name
    )
    if isinstance(obj, type) and issubclass(obj, enum.Enum):
        members = ", ".join(f"`{m.name}` = {m.value}" for m in obj)
        return f"### `reshard.{name}`\n{_doc(obj)}\nMembers: {members}.\n"
    if isinstance(obj, type):
        init = (
            obj
            if "__init__" in vars(obj) or hasattr(obj, "__dataclass_fields__")
            else None
        )
        head = f"### `class reshard.{name}{signature(init) if init else ''}`\n"
        members = _members(obj)
        return head + _doc(obj) + ("\n" + "\n".join(members) + "\n" if members else "")
    if not callable(obj):  # a constant
        return f"### `reshard.{name}`\n\n`{obj!r}`\n"
    return f"### `reshard.{name}{signature(obj)}`\n{_doc(obj)}"


def command_line() -> str:
    return "## `python -m reshard`\n" + _doc(command_line_module)


def document() -> str:
    parts = [HEADER, "## Names\n"]
    parts += [entry(name) for name in sorted(reshard.__all__)]
    from_torch = importlib.import_module("reshard.torch")
    parts.append("## `reshard.torch`\n" + _doc(from_torch))
    parts += [entry(name, from_torch) for name in sorted(from_torch.__all__)]
    from_agent = importlib.import_module("reshard.agent")
    parts.append("## `reshard.agent`\n" + _doc(from_agent))
    parts += [entry(name, from_agent) for name in sorted(from_agent.__all__)]
    parts.append(command_line())
    return "\n".join(parts)


if __name__ == "__main__":
    print(document(), end="")
