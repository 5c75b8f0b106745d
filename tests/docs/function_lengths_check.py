#!/usr/bin/env python3
"""No function in the tracked C++ tree is longer than the house bound.

The house rule (CONTRIBUTING.md): a function fits in about 60 lines; split
it by phase and name the parts. A function's length here is the lines from
the one holding its opening brace to the one holding its closing brace, both
included; lambdas and local classes count toward the function that holds them.

The scan is lexical, not a compiler's: comments, string and character
literals (raw strings too) are blanked, then braces are matched. A brace
opens a function body when every scope around it is a namespace, a class or
an extern block and the text before it ends like a signature: `)` with
optional qualifiers or a trailing return type, or a constructor's
initializer list. Test bodies (TEST_F(...) {) count as functions too.

Usage: function_lengths_check.py [ROOT] [--max N]   (self-test, then scan)
       function_lengths_check.py --self-test          (the self-test only)
Prints "file:line: N lines" per function over the bound, then a summary;
exits 1 when there is any.
"""

import argparse
import re
import subprocess
import sys

DEFAULT_MAX = 60

_SIGNATURE_END = re.compile(
    r"\)\s*(const|override|final|noexcept|mutable|->\s*[\w:<>,\s*&]+|\s)*$"
)
_INITIALIZER_LIST = re.compile(r"\)\s*:\s")
_NAMESPACE = re.compile(r"\bnamespace\b[^;{}]*$")
_CLASS = re.compile(r"\b(class|struct|union|enum)\b[^;{}()]*$")


def _skip_raw_string(src: str, i: int) -> int | None:
    match = re.match(r'R"([^(\s]*)\(', src[i : i + 20])
    if not match or (i > 0 and (src[i - 1].isalnum() or src[i - 1] == "_")):
        return None
    end = ")" + match.group(1) + '"'
    j = src.find(end, i)
    return len(src) if j < 0 else j + len(end)


def blank_literals(src: str) -> str:
    """The source with comments and literals removed, newlines kept."""
    out = []
    i, n = 0, len(src)
    while i < n:
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
            continue
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * src.count("\n", i, j))
            i = j
            continue
        raw_end = _skip_raw_string(src, i) if src[i] == "R" else None
        if raw_end is not None:
            out.append('""' + "\n" * src.count("\n", i, raw_end))
            i = raw_end
            continue
        if src[i] in "\"'" and not (
            src[i] == "'" and i > 0 and src[i - 1].isalnum()
        ):  # 1'000'000
            quote, j = src[i], i + 1
            while j < n and src[j] != quote and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            out.append(quote + quote)
            i = j + 1
            continue
        out.append(src[i])
        i += 1
    return "".join(out)


def _scope_kind(head: str, outer_is_declarative: bool) -> str:
    if not outer_is_declarative:
        return "block"
    if _NAMESPACE.search(head) or head.startswith("extern"):
        return "scope"
    if _CLASS.search(head) and "(" not in head.split("\n")[-1]:
        return "scope"
    if _SIGNATURE_END.search(head) or _INITIALIZER_LIST.search(head):
        return "function"
    return "block"


def function_lengths(src: str) -> list[tuple[int, int]]:
    """(first line, lines) of every function body in C++ source text."""
    text = blank_literals(src)
    stack, found = [], []
    line, head_start = 1, 0
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c == "{":
            declarative = all(kind == "scope" for kind, _ in stack)
            kind = _scope_kind(text[head_start:i].strip(), declarative)
            stack.append((kind, line))
            head_start = i + 1
        elif c == "}":
            if stack:
                kind, first = stack.pop()
                if kind == "function":
                    found.append((first, line - first + 1))
            head_start = i + 1
        elif c == ";":
            head_start = i + 1
    return found


def tracked_sources(root: str) -> list[str]:
    out = subprocess.check_output(
        ["git", "-C", root, "ls-files", "*.cc", "*.h", "*.cu"], text=True
    )
    return out.split()


def check(root: str, bound: int) -> int:
    long = []
    files = tracked_sources(root)
    for path in files:
        with open(f"{root}/{path}", encoding="utf-8") as f:
            for first, lines in function_lengths(f.read()):
                if lines > bound:
                    long.append((path, first, lines))
    for path, first, lines in sorted(long):
        print(f"{path}:{first}: {lines} lines (bound {bound})")
    print(f"{len(long)} function(s) over {bound} lines in {len(files)} files")
    return 1 if long else 0


def _function(name: str, body_lines: int) -> str:
    body = "".join(f"  x += {i};  // {{ not a brace\n" for i in range(body_lines - 3))
    return f"int {name}(int x) const {{\n{body}  return x;\n}}\n"


def self_test() -> int:
    """The scan finds what it must and nothing else."""
    src = (
        "namespace a {\nclass C {\n "
        + _function("Long", 61)
        + _function("Fits", 60)
        + "};\n}  // namespace a\n"
        'const char* s = R"(void F() {\n)";\n'
        "TEST_F(T, Body) {\n  auto f = [] {\n    return 1;\n  };\n}\n"
        "Ctor::Ctor() : x_(1) {\n  if (x_) {\n  }\n}\n"
    )
    got = [lines for _, lines in function_lengths(src)]
    want = [61, 60, 5, 4]
    if got != want:
        print(f"self-test: found lengths {got}, want {want}")
        return 1
    print("self-test: ok")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("root", nargs="?")
    parser.add_argument("--max", type=int, default=DEFAULT_MAX)
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args(argv)
    status = self_test()
    if status != 0 or args.self_test:
        return status
    root = (
        args.root
        or subprocess.check_output(
            ["git", "rev-parse", "--show-toplevel"], text=True
        ).strip()
    )
    return check(root, args.max)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
