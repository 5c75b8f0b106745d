"""What a failed command prints and exits with, as reshardctl
(client/exit_codes.h): the status on stderr, each failing rank below it,
with --json the error object on stdout, and an exit status by code."""

from __future__ import annotations

from typing import TextIO

from reshard._errors import Error, RankFailure, StatusCode
from reshard._json_text import json_string

EXIT_OK = 0
EXIT_OTHER = 1
EXIT_BAD_INPUT = 2
EXIT_NOT_FOUND = 3
EXIT_UNAVAILABLE = 4
EXIT_FAILED_PRECONDITION = 5
EXIT_REFUSED = 6
EXIT_INTERRUPTED = 130

_EXIT_BY_CODE = {
    StatusCode.OK: EXIT_OK,
    StatusCode.INVALID_ARGUMENT: EXIT_BAD_INPUT,
    StatusCode.OUT_OF_RANGE: EXIT_BAD_INPUT,
    StatusCode.NOT_FOUND: EXIT_NOT_FOUND,
    StatusCode.UNAVAILABLE: EXIT_UNAVAILABLE,
    StatusCode.DEADLINE_EXCEEDED: EXIT_UNAVAILABLE,
    StatusCode.FAILED_PRECONDITION: EXIT_FAILED_PRECONDITION,
    StatusCode.UNAUTHENTICATED: EXIT_REFUSED,
    StatusCode.PERMISSION_DENIED: EXIT_REFUSED,
}

# The program's name in what it prints.
PROG = "python -m reshard"


class Interrupted(Error):
    """The user's Ctrl-C ended the command (exit 130)."""

    def __init__(self, message: str) -> None:
        super().__init__(StatusCode.CANCELLED, message)


def exit_code(error: Error) -> int:
    if isinstance(error, Interrupted):
        return EXIT_INTERRUPTED
    return _EXIT_BY_CODE.get(error.code, EXIT_OTHER)


def explain_deadline(error: Error, deadline: float | None, elapsed: float) -> Error:
    """A DEADLINE_EXCEEDED that says which deadline passed: the
    --deadline_seconds given, or the default one."""
    if error.code != StatusCode.DEADLINE_EXCEEDED:
        return error
    bare = error.message == "Deadline Exceeded"
    if not bare and not (deadline is not None and elapsed >= deadline):
        return error
    if deadline is not None:
        # absl::StrCat writes a double with six significant digits: %g.
        message = f"the call did not finish within --deadline_seconds {deadline:g}"
    else:
        message = (
            "the call did not finish within the default deadline (10 s per "
            "attempt); --deadline_seconds D allows more"
        )
    if not bare:
        message += f" ({error.message})"
    return Error(error.code, message, error.ranks)


def _rank_json(f: RankFailure) -> str:
    return (
        f'{{"rank": {f.rank}, "host": {json_string(f.host)}, '
        f'"kind": {json_string(f.kind)}, "message": {json_string(f.message)}}}'
    )


def error_json(error: Error) -> str:
    """{"error": {"code": ..., "message": ...}}, with the failing ranks."""
    code, message = json_string(error.code.name), json_string(error.message)
    if not error.ranks:
        return f'{{"error": {{"code":{code},"message":{message}}}}}'
    ranks = ", ".join(_rank_json(f) for f in error.ranks)
    return f'{{"error": {{"code": {code}, "message": {message}, "ranks": [{ranks}]}}}}'


def report_failure(error: Error, json: bool, out: TextIO, err: TextIO) -> int:
    """Prints `error` as reshardctl does; returns the exit status."""
    err.write(f"reshard: {error.code.name}: {error.message}\n")
    for f in error.ranks:
        host = f" on {f.host}" if f.host else ""
        err.write(f"  rank {f.rank}{host}: {f.kind}: {f.message}\n")
    if json:
        out.write(error_json(error) + "\n")
    return exit_code(error)
