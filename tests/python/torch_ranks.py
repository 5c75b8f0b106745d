"""Rank processes for the torch tests: start one process per rank (each a
script of this folder), collect what each printed within one deadline, and
stop exactly the processes started, even on failure; and the Gloo set-up
every rank script shares."""

from __future__ import annotations

import datetime
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

# A collective that waits longer than this fails the rank (no wedged test).
GLOO_TIMEOUT = datetime.timedelta(seconds=60)


def run_ranks(
    script: Path, world: int, args: Sequence[str], timeout_s: float
) -> list[str]:
    """Runs `script --rank=R --world=N ARGS...` for every rank; returns each
    rank's stdout, asserting every rank exited 0 (its stderr when not)."""
    ranks = [
        subprocess.Popen(
            [sys.executable, str(script), f"--rank={r}", f"--world={world}", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for r in range(world)
    ]
    deadline = time.monotonic() + timeout_s
    outputs = []
    try:
        for r, proc in enumerate(ranks):
            out, err = proc.communicate(timeout=max(deadline - time.monotonic(), 1))
            assert proc.returncode == 0, (
                f"rank {r} exited {proc.returncode}:\n{err[-4000:]}"
            )
            outputs.append(out)
    finally:
        for proc in ranks:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return outputs


def init_gloo(rank: int, world: int, store: str) -> None:
    """This rank's Gloo process group, rendezvous through the file `store`."""
    import torch.distributed as dist

    dist.init_process_group(
        "gloo",
        init_method=f"file://{store}",
        rank=rank,
        world_size=world,
        timeout=GLOO_TIMEOUT,
    )
