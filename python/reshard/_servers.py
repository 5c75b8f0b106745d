"""Where the service is: a --server or servers= entry with its port made
explicit, as reshardctl's --server reads it (client/global_flags.h)."""

from __future__ import annotations

# The planner service's port when an entry names none.
DEFAULT_PORT = 50051
DEFAULT_SERVER = f"127.0.0.1:{DEFAULT_PORT}"


def server_target(entry: str) -> str:
    """`entry` with a port: "h" -> "h:50051", "::1" -> "[::1]:50051"; gRPC
    URIs ("dns:///h:1", "unix:/path") say what they mean already."""
    if ":/" in entry:
        return entry
    if entry.startswith("["):  # [IPv6] or [IPv6]:PORT
        return entry if "]:" in entry else f"{entry}:{DEFAULT_PORT}"
    colons = entry.count(":")
    if colons == 0:
        return f"{entry}:{DEFAULT_PORT}"
    return f"[{entry}]:{DEFAULT_PORT}" if colons > 1 else entry
