"""Rank processes for the torch tests: start one process per rank (each a
script of this folder), collect what each printed within one deadline, and
stop exactly the processes started, even on failure; and the Gloo set-up
every rank script shares."""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

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


def join_from_args(*flags: str) -> argparse.Namespace:
    """A rank script's --rank, --world and --store (and each of `flags`, a
    required string) read from its command line, and its Gloo world
    joined."""
    parser = argparse.ArgumentParser()
    for flag in ("--rank", "--world"):
        parser.add_argument(flag, type=int, required=True)
    for flag in ("--store", *flags):
        parser.add_argument(flag, required=True)
    a = parser.parse_args()
    init_gloo(a.rank, a.world, a.store)
    return a


def run_cases(
    script: Path, tmp: Path, world: int, cases: list[Any], timeout_s: float
) -> list[list[dict[str, Any]]]:
    """Runs a case-serving rank script (serve_cases) on `world` ranks over
    `cases`, written to a file in `tmp`; every rank's lines, read."""
    path = tmp / f"{script.stem}-cases-{world}.json"
    path.write_text(json.dumps(cases))
    args = [f"--store={tmp / f'{script.stem}-store-{world}'}", f"--cases={path}"]
    outputs = run_ranks(script, world, args, timeout_s)
    return [[json.loads(line) for line in out.splitlines()] for out in outputs]


def serve_cases(run_case: Callable[[dict[str, Any], int, dict[Any, Any]], Any]) -> None:
    """A rank script's main: joins the Gloo world and prints one JSON line
    per case of --cases, `run_case(case, rank, meshes)` (meshes: the
    script's own, kept across cases)."""
    import torch.distributed as dist

    a = join_from_args("--cases")
    meshes: dict[Any, Any] = {}
    with open(a.cases) as f:
        cases = json.load(f)
    for case in cases:
        print(json.dumps(run_case(case, a.rank, meshes)), flush=True)
    dist.destroy_process_group()
