"""`python -m reshard` and the `reshard` script: reshardctl itself.

The process becomes reshardctl (exec, not a child), with the same arguments
and environment, so its output, exit statuses and Ctrl-C are reshardctl's
(docs/PYTHON.md, "The command line")."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

import reshard

# Exit status when no reshardctl is found, as a shell exits for a missing command.
EXIT_NOT_FOUND = 127


def reshardctl_path() -> str | None:
    """The package's own reshardctl (reshard/bin/ in the wheel, or in the
    build's half of the package), else the first on $PATH."""
    for folder in reshard.__path__:
        candidate = Path(folder, "bin", "reshardctl")
        if os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("reshardctl")


def main(argv: Sequence[str] | None = None) -> int:
    """Replaces this process with reshardctl on `argv` (default
    sys.argv[1:]); returns only when there is none to run."""
    args = list(sys.argv[1:] if argv is None else argv)
    program = reshardctl_path()
    if program is None:
        print(
            "reshard: NOT_FOUND: no reshardctl in the package (reshard/bin/) "
            "or on PATH; build the project or install the wheel",
            file=sys.stderr,
        )
        return EXIT_NOT_FOUND
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(program, [program, *args])
