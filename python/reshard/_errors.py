"""One exception type for every failure: a gRPC status code and its message."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reshard._results import JobRun


class StatusCode(enum.IntEnum):
    """google.rpc.Code, the codes the C++ core and the service answer with."""

    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15
    UNAUTHENTICATED = 16


@dataclass(frozen=True)
class RankFailure:
    """One rank's part of a failed job run (reshard.v1.RankFailure).

    `kind` is lost, no_report, not_joined, not_connected, refused_join, or the
    agent's error kind: timeout, peer, digest_mismatch, bad_plan, cancelled,
    validation, binding, other; commit for a commit that failed; for an
    unvalidated run that raised, validation with the conservation checksums.
    """

    rank: int
    host: str
    kind: str
    message: str


class Error(Exception):
    """A failed call: its status code, the message, and for a failed job run
    the ranks that failed. A job run that ran but did not validate raises
    DATA_LOSS with `run`, the whole result, set."""

    def __init__(
        self,
        code: StatusCode | int,
        message: str,
        ranks: tuple[RankFailure, ...] = (),
        run: JobRun | None = None,
    ) -> None:
        self.code = StatusCode(code)
        self.message = message
        self.ranks = tuple(ranks)
        self.run = run
        super().__init__(f"{self.code.name}: {message}")


def invalid_argument(message: str) -> Error:
    return Error(StatusCode.INVALID_ARGUMENT, message)
