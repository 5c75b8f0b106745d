"""Command-line parsing as reshardctl parses (client/cli_args.h,
client/global_flags.h): `--name value`, `--name=value`, repeatable options,
switches, errors that name the flag, and the global flags every command
takes before or after its word."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from reshard._errors import Error, StatusCode, invalid_argument
from reshard._servers import DEFAULT_SERVER, server_target

# The longest secret a token file or variable may hold (common/secret_file.h).
MAX_SECRET_BYTES = 4096


def _edit_distance(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        diagonal, row[0] = row[0], i
        for j in range(1, len(b) + 1):
            above = row[j]
            row[j] = min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1]))
            diagonal = above
    return row[len(b)]


def _unknown_flag(name: str, known: Sequence[str]) -> Error:
    """The error for an unknown flag: "unknown flag --plannr; did you mean
    --planner?" when a known flag (in `known`'s order) is within a third of
    the name's length (at least 2) of edits."""
    best, best_distance = "", max(2, len(name) // 3) + 1
    for flag in known:
        d = _edit_distance(name, flag)
        if d < best_distance:
            best, best_distance = flag, d
    hint = f"; did you mean --{best}?" if best else ""
    return invalid_argument(f"unknown flag --{name}{hint}")


class Args:
    """The flags of one command: options take a value, switches none."""

    def __init__(
        self, argv: Sequence[str], options: set[str], switches: set[str]
    ) -> None:
        self._values: dict[str, list[str]] = {}
        i = 0
        while i < len(argv):
            arg = argv[i]
            if not arg.startswith("--"):
                raise invalid_argument(f'unexpected argument "{arg}"')
            name, eq, value = arg[2:].partition("=")
            if name in switches:
                if eq:
                    raise invalid_argument(f"--{name} takes no value")
                self._values.setdefault(name, []).append("true")
                i += 1
                continue
            if name not in options:
                # C++ walks the options, then the switches, each in order.
                raise _unknown_flag(name, [*sorted(options), *sorted(switches)])
            if not eq:
                if i + 1 >= len(argv):
                    raise invalid_argument(f"--{name} needs a value")
                i += 1
                value = argv[i]
            self._values.setdefault(name, []).append(value)
            i += 1

    def has(self, name: str) -> bool:
        return name in self._values

    def get(self, name: str) -> str | None:
        """The last value given for `name`."""
        values = self._values.get(name)
        return values[-1] if values else None

    def get_all(self, name: str) -> list[str]:
        return list(self._values.get(name, ()))


_INTEGER = re.compile(r"\s*[+-]?\d+\s*")


def integer(text: str) -> int | None:
    """`text` as an integer as absl::SimpleAtoi reads it; None when it is
    not one."""
    return int(text) if _INTEGER.fullmatch(text) else None


def int_flag(args: Args, flag: str, minimum: int, default: int) -> int:
    text = args.get(flag)
    if text is None:
        return default
    value = integer(text)
    if value is None or value < minimum:
        raise invalid_argument(f'--{flag}: "{text}" is not an integer >= {minimum}')
    return value


def int_list(text: str, flag: str) -> list[int]:
    """Integers of "16,16"; INVALID_ARGUMENT naming `flag`."""
    out = []
    for part in text.split(","):
        value = integer(part)
        if value is None:
            raise invalid_argument(
                f'--{flag}: "{part}" is not an integer (in "{text}")'
            )
        out.append(value)
    return out


def number(text: str) -> float | None:
    """`text` as a number as absl::SimpleAtod reads it; None when it is not
    one."""
    try:
        return float(text)
    except ValueError:
        return None


def server_entries(text: str, flag: str) -> list[str]:
    entries = []
    for raw in text.split(","):
        entry = raw.strip()
        # ":7" names no host; "::1" is IPv6's loopback.
        if not entry or (entry.startswith(":") and not entry.startswith("::")):
            raise invalid_argument(
                f'{flag}: "{text}" must be HOST[:PORT][,HOST[:PORT]...]'
            )
        entries.append(server_target(entry))
    return entries


@dataclass
class GlobalFlags:
    """What every command takes: the servers, the whole call's deadline,
    the credentials, and the command's own words (`rest`)."""

    servers: list[str] = field(default_factory=lambda: [DEFAULT_SERVER])
    server_given: bool = False
    deadline: float | None = None
    json: bool = False
    job_token_file: str | None = None
    admin_token_file: str | None = None
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    job_token: str = ""
    admin_token: str = ""
    rest: list[str] = field(default_factory=list)


_FILE_FLAGS = ("job_token_file", "admin_token_file", "tls_cert", "tls_key", "tls_ca")


def _flag_value(args: Sequence[str], i: int, name: str) -> tuple[str | None, int]:
    """The value of global flag `name` at args[i] and the index after it;
    (None, i) when args[i] is not that flag."""
    arg = args[i]
    if not arg.startswith("--" + name):
        return None, i
    tail = arg[2 + len(name) :]
    if tail.startswith("="):
        return tail[1:], i + 1
    if tail:  # --server_x
        return None, i
    if i + 1 >= len(args):
        raise invalid_argument(f"--{name} needs a value")
    return args[i + 1], i + 2


def _deadline(text: str) -> float:
    seconds = number(text)
    if seconds is None or not math.isfinite(seconds) or seconds <= 0:
        raise invalid_argument(
            f'--deadline_seconds: "{text}" is not a number of seconds > 0'
        )
    return seconds


def parse_global_flags(args: Sequence[str], env_server: str | None) -> GlobalFlags:
    """Takes the global flags out of `args`; `env_server` ($RESHARD_SERVER)
    names the servers when --server is not given."""
    flags = GlobalFlags()
    server = env_server or DEFAULT_SERVER
    i = 0
    while i < len(args):
        value, after = _flag_value(args, i, "server")
        if value is not None:
            server, flags.server_given, i = value, True, after
            continue
        value, after = _flag_value(args, i, "deadline_seconds")
        if value is not None:
            flags.deadline, i = _deadline(value), after
            continue
        for name in _FILE_FLAGS:
            value, after = _flag_value(args, i, name)
            if value is not None:
                setattr(flags, name, value)
                i = after
                break
        else:
            flags.json = flags.json or args[i] == "--json"
            flags.rest.append(args[i])
            i += 1
    flags.servers = server_entries(
        server, "--server" if flags.server_given else "RESHARD_SERVER"
    )
    return flags


def _secret(source: str, secret: str) -> str:
    """`secret` when gRPC metadata can carry it (CheckSecretText's rules)."""
    data = secret.encode("latin-1", "replace")
    if not data:
        raise invalid_argument(f"{source}: the secret is empty")
    if len(data) > MAX_SECRET_BYTES:
        raise invalid_argument(
            f"{source}: the secret has {len(data)} bytes, at most {MAX_SECRET_BYTES}"
        )
    for i, byte in enumerate(data):
        if not 0x20 <= byte < 0x7F:
            raise invalid_argument(
                f"{source}: byte {i} of the secret is not printable ASCII "
                "(gRPC metadata carries only that)"
            )
    return secret


def _secret_of(flag: str, path: str | None, env_var: str) -> str:
    """The token of `--flag` when given, else of $env_var, else ""."""
    if path:
        source = f"--{flag}={path}"
        if os.path.isdir(path):
            raise invalid_argument(f"{source}: cannot read it (not a file)")
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_SECRET_BYTES + 1)
        except OSError as e:
            raise invalid_argument(
                f"{source}: cannot read it ({os.strerror(e.errno or 0)})"
            ) from None
        text = data.decode("latin-1").rstrip(" \t\n\v\f\r")
        if not text:
            raise invalid_argument(f"{source}: the file holds no secret")
        return _secret(source, text)
    value = os.environ.get(env_var, "")
    return _secret(env_var, value) if value else ""


def read_credentials(flags: GlobalFlags) -> None:
    """Reads each token from its file when given, else its environment
    variable; checks the TLS flags' rules (both of --tls_cert and
    --tls_key, or neither)."""
    flags.job_token = _secret_of(
        "job_token_file", flags.job_token_file, "RESHARD_JOB_TOKEN"
    )
    flags.admin_token = _secret_of(
        "admin_token_file", flags.admin_token_file, "RESHARD_ADMIN_TOKEN"
    )
    if (flags.tls_cert is None) != (flags.tls_key is None):
        raise Error(
            StatusCode.INVALID_ARGUMENT,
            "--tls_cert and --tls_key: a client certificate needs both",
        )
