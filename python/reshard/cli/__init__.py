"""`python -m reshard plan|mesh|job|health`: reshardctl's common commands
from Python, with its flags, output and exit statuses (docs/PYTHON.md,
"The command line"). `exec`, batches, `job calibrate` and `job token`
stay in reshardctl."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from io import StringIO
from typing import TextIO

from reshard._errors import Error, invalid_argument
from reshard.cli import job, mesh, plan
from reshard.cli.args import Args, GlobalFlags, parse_global_flags, read_credentials
from reshard.cli.connect import connect
from reshard.cli.exit_codes import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    PROG,
    explain_deadline,
    report_failure,
)

USAGE = f"""\
usage: {PROG} [global flags] COMMAND [flags]
commands (`{PROG} COMMAND --help` says more):
  plan     plan a redistribution on the service or --offline
  job      list|show|run|cancel jobs of reshard-agent processes
  mesh     register|list|get|delete meshes in the service's registry
  health   whether the service is serving
  --version  print the package's version
global flags (before or after the command), as reshardctl's:
  --server HOST[:PORT][,HOST[:PORT]...]  the service (else $RESHARD_SERVER,
        else 127.0.0.1:50051); a host without a port means port 50051
  --deadline_seconds D  every call's whole deadline, retries included
        (default: 10 s per attempt; `job run` 300 s)
  --job_token_file FILE  the token of the jobs the command names (else
        $RESHARD_JOB_TOKEN)
  --admin_token_file FILE  the planner's admin token (else
        $RESHARD_ADMIN_TOKEN)
  --tls_ca FILE  talk TLS, verifying the server against this PEM CA
  --tls_cert FILE --tls_key FILE  a client certificate (PEM)
exit status: 0 ok; 2 bad input (INVALID_ARGUMENT, OUT_OF_RANGE, usage);
  3 NOT_FOUND; 4 UNAVAILABLE or DEADLINE_EXCEEDED; 5 FAILED_PRECONDITION;
  6 UNAUTHENTICATED or PERMISSION_DENIED; 130 interrupted;
  1 anything else. With --json an error is also printed on stdout as
  {{"error": {{"code": ..., "message": ...}}}}.
"""

HEALTH_USAGE = f"""\
usage: {PROG} [global flags] health [--json]
  Asks the service's gRPC health service; prints SERVING (--json:
  {{"status": "SERVING"}}) and exits 0 when it serves.
"""

Command = Callable[[GlobalFlags, Sequence[str], TextIO], None]


def _health(flags: GlobalFlags, argv: Sequence[str], out: TextIO) -> None:
    args = Args(argv, set(), {"json"})
    with connect(flags) as client:
        client.health()
    out.write('{"status": "SERVING"}\n' if args.has("json") else "SERVING\n")


COMMANDS: dict[str, tuple[Command, str]] = {
    "plan": (plan.run_plan, plan.USAGE),
    "mesh": (mesh.run_mesh, mesh.USAGE),
    "job": (job.run_job_command, job.USAGE),
    "health": (_health, HEALTH_USAGE),
}


def _asks_for_help(words: Sequence[str]) -> bool:
    """`COMMAND ... --help` (or -h) anywhere, or `COMMAND help`."""
    rest = words[1:]
    return any(w in ("--help", "-h") for w in rest) or rest[:1] == ["help"]


def _run(flags: GlobalFlags, out: TextIO) -> None:
    name, rest = flags.rest[0], flags.rest[1:]
    if name not in COMMANDS:
        raise invalid_argument(
            f'unknown command "{name}"; expected plan, job, mesh or health '
            "(exec is reshardctl's)"
        )
    COMMANDS[name][0](flags, rest, out)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line `argv` (default sys.argv[1:]); returns the exit
    status."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        flags = parse_global_flags(args, os.environ.get("RESHARD_SERVER"))
        read_credentials(flags)
    except Error as e:
        return report_failure(e, "--json" in args, sys.stdout, sys.stderr)
    words = flags.rest
    if words and words[0] == "--version":
        from reshard import __version__

        print(f"reshard {__version__}")
        return EXIT_OK
    if not words or words[0] in ("help", "--help", "-h"):
        (sys.stdout if words else sys.stderr).write(USAGE)
        return EXIT_OK if words else EXIT_BAD_INPUT
    if words[0] in COMMANDS and _asks_for_help(words):
        sys.stdout.write(COMMANDS[words[0]][1])
        return EXIT_OK
    # The output is held until the command ends, so that a failure after
    # partial output is reported once.
    out = StringIO()
    start = time.monotonic()
    try:
        _run(flags, out)
        sys.stdout.write(out.getvalue())
        return EXIT_OK
    except KeyboardInterrupt:
        sys.stdout.write(out.getvalue())
        print("reshard: CANCELLED: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Error as e:
        sys.stdout.write(out.getvalue())
        if words[0] not in COMMANDS:
            sys.stderr.write(USAGE)
        error = explain_deadline(e, flags.deadline, time.monotonic() - start)
        return report_failure(
            error, flags.json and not out.getvalue(), sys.stdout, sys.stderr
        )
