"""`python -m reshard` is reshardctl: the same output and exit status on the
same arguments, the same process (exec, not a child) so that Ctrl-C ends it
as it ends reshardctl, and a clear error where no reshardctl is found."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from reshard_processes import CTL, ROOT, wait_until

MODULE = [sys.executable, "-m", "reshard"]


def both(*args: str) -> tuple[subprocess.CompletedProcess[str], ...]:
    """The module's and reshardctl's runs of `args`."""
    return tuple(
        subprocess.run([*prog, *args], capture_output=True, text=True, timeout=60)
        for prog in (MODULE, [str(CTL)])
    )


@pytest.mark.parametrize(
    "args",
    [
        ["--version"],
        ["job", "run", "--help"],
        ["plan", "--offline", "--mesh", "A=2,B=2", "--shape", "8,8"]
        + ["--from", "S(0),R", "--to", "R,R"],
        ["plan", "--offline", "--mesh", "A=2", "--shape", "8", "--bogus"],
        ["mesh", "get", "--server", "127.0.0.1:1", "--deadline_seconds", "1", "x"],
    ],
)
def test_the_module_runs_reshardctl(args: list[str]) -> None:
    ours, theirs = both(*args)
    assert (ours.returncode, ours.stdout, ours.stderr) == (
        theirs.returncode,
        theirs.stdout,
        theirs.stderr,
    )


def test_job_run_takes_the_tensor_flags() -> None:
    ours, _ = both("job", "run", "--help")
    assert ours.returncode == 0
    for flag in ("--tensor", "--into", "--no-staging", "--allocate"):
        assert flag in ours.stdout, flag


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A TCP port that accepts connections and never answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        yield f"127.0.0.1:{s.getsockname()[1]}"


def interrupted(prog: list[str], server: str) -> tuple[str, int]:
    """What `prog health` waiting on a silent server runs as, and its exit
    status after SIGINT."""
    proc = subprocess.Popen(
        [*prog, "health", "--server", server, "--deadline_seconds", "60"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        exe = wait_until(
            lambda: _exe(proc.pid) if _exe(proc.pid).endswith("reshardctl") else None,
            30,
            "the process to run reshardctl",
        )
        proc.send_signal(signal.SIGINT)
        return exe, proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _exe(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return ""


def test_the_module_becomes_reshardctl_and_ctrl_c_ends_it(silent_server: str) -> None:
    ours_exe, ours_status = interrupted(MODULE, silent_server)
    theirs_exe, theirs_status = interrupted([str(CTL)], silent_server)
    assert ours_exe == theirs_exe == str(CTL.resolve())
    assert ours_status == theirs_status != 0


def test_without_a_reshardctl_the_module_says_so(tmp_path: Path) -> None:
    env = {"PYTHONPATH": str(ROOT / "python"), "PATH": str(tmp_path)}
    run = subprocess.run(
        [*MODULE, "--version"], capture_output=True, text=True, env=env, timeout=60
    )
    assert run.returncode == 127, run.stderr
    assert "reshard: NOT_FOUND: no reshardctl in the package" in run.stderr
