"""The client a command calls the service with, as reshardctl connects
(client/cli_args.h, ConnectClient): one retry of UNAVAILABLE, and with
--deadline_seconds every attempt and the whole call within it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reshard._errors import Error, StatusCode
from reshard.cli.args import GlobalFlags

if TYPE_CHECKING:
    try:
        from reshard.client import Client
    except ImportError as e:  # the command line without grpcio: --offline only
        raise Error(StatusCode.FAILED_PRECONDITION, str(e)) from None

# The client's per-attempt timeout when no --deadline_seconds is given.
DEFAULT_TIMEOUT_S = 10.0


def connect(flags: GlobalFlags, deadline: float | None = None) -> Client:
    """A client of the global flags' servers; `deadline` (seconds) instead
    of --deadline_seconds for quick side calls."""
    try:
        from reshard.client import Client
    except ImportError as e:  # the command line without grpcio: --offline only
        raise Error(StatusCode.FAILED_PRECONDITION, str(e)) from None

    deadline = deadline if deadline is not None else flags.deadline
    return Client(
        flags.servers,
        timeout=deadline if deadline is not None else DEFAULT_TIMEOUT_S,
        deadline=deadline,
        max_attempts=2,
        tls_ca=flags.tls_ca,
        tls_cert=flags.tls_cert,
        tls_key=flags.tls_key,
        job_token=flags.job_token,
        admin_token=flags.admin_token,
    )
