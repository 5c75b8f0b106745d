"""What a repeated cross-mesh move costs around its transfers through `job
run` (docs/DESIGN.md §9, "A static schedule"): the 8 Gloo agents of a local
cluster (scripts/local-cluster.sh --tensors), one f32 tensor registered at
every rank by this process, moved from a trainer's 2x2 mesh on ranks 0-3
(S(0),S(1)) to an inference engine's 2x2 on ranks 4-7 (S(1),S(0)), staged
and committed, RUNS times each way, the two ways alternating:

- planned: Client.run_cross_job every time (the job's replica plans, its
  plan cache answering; the plan goes to every agent, which compiles its
  runner and binds the tensors);
- prepared: Client.run_schedule of one schedule from prepare_cross_mesh
  (no planning, no plan sent; each agent's runner and binding kept).

A run's overhead is the client's wall time of the RunJob call minus its
transfers row (the slowest rank's seconds): dispatch, pre-flight, the
conservation checksums, the commit and the reports. p50 and p99 of it
over the runs, and of the wall time.

  PYTHONPATH=python:build/python /opt/reshard/venv/bin/python \\
      bench/cross_job_bench.py [--runs 100] [--size 1024]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import reshard
from reshard import agent as ragent

ROOT = Path(__file__).resolve().parent.parent
JOB = "cross-bench"
SRC_MESH = reshard.Mesh((2, 2), ("dp", "tp"), rank_map=(0, 1, 2, 3))
DST_MESH = reshard.Mesh((2, 2), ("x", "y"), rank_map=(4, 5, 6, 7))
SRC, DST = "S(0),S(1)", "S(1),S(0)"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def register_blocks(state: Path, token: str, size: int) -> list[Any]:
    """Every rank's block (size/2 square): a source on 0-3, a destination
    on 4-7; the connections stay open while the bench runs."""
    held = []
    for rank in range(8):
        local = ragent.LocalAgent(
            str(state / f"agent-{rank}.sock"), job=JOB, rank=rank, token=token
        )
        block = ragent.empty((size // 2, size // 2), "float32")
        block[...] = rank
        local.register("w" if rank < 4 else "w_inference", block)
        held += [local, block]
    return held


def timed(run: Callable[[], reshard.JobRun]) -> tuple[float, float]:
    """The call's wall seconds and its overhead (wall minus transfers)."""
    start = time.perf_counter()
    result = run()
    wall = time.perf_counter() - start
    assert result.validated and result.committed, result
    (transfers,) = [s for s in result.steps if s.op == "transfers"]
    return wall, wall - transfers.seconds_median


def measure(client: reshard.Client, runs: int, size: int) -> dict[str, Any]:
    tensor = ("w", "w_inference")
    schedule = client.prepare_cross_mesh(
        JOB, SRC_MESH, DST_MESH, (size, size), SRC, DST
    )
    first = client.run_schedule(JOB, schedule.id, tensor=tensor)
    assert first.plan_sent
    ways = {
        "planned": lambda: client.run_cross_job(
            JOB, SRC_MESH, DST_MESH, (size, size), SRC, DST, tensor=tensor
        ),
        "prepared": lambda: client.run_schedule(JOB, schedule.id, tensor=tensor),
    }
    times: dict[str, list[tuple[float, float]]] = {w: [] for w in ways}
    for _ in range(runs):
        for way, run in ways.items():
            times[way].append(timed(run))
    out: dict[str, Any] = {"runs": runs, "bytes": size * size * 4}
    for way, pairs in times.items():
        walls, overheads = [w for w, _ in pairs], [o for _, o in pairs]
        out[way] = {
            "wall_p50_ms": percentile(walls, 0.5) * 1e3,
            "wall_p99_ms": percentile(walls, 0.99) * 1e3,
            "overhead_p50_ms": percentile(overheads, 0.5) * 1e3,
            "overhead_p99_ms": percentile(overheads, 0.99) * 1e3,
        }
    out["overhead_p50_ratio"] = (
        out["planned"]["overhead_p50_ms"] / out["prepared"]["overhead_p50_ms"]
    )
    return out


@contextlib.contextmanager
def local_cluster(job: str) -> Iterator[tuple[str, str, Path]]:
    """8 Gloo agents with --tensors (scripts/local-cluster.sh): the
    server, the job token and the state folder; stopped on the way out."""
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "cluster"
        env = dict(
            os.environ,
            RESHARD_BUILD=str(ROOT / "build"),
            RESHARD_CLUSTER_DIR=str(state),
        )
        script = str(ROOT / "scripts" / "local-cluster.sh")
        started = subprocess.run(
            [script, "start", "8", "--job", job, "--tensors"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        try:
            if started.returncode != 0:
                raise RuntimeError(started.stderr)
            token = (state / "job-token").read_text().strip()
            yield started.stdout.strip(), token, state
        finally:
            subprocess.run([script, "stop"], env=env, capture_output=True, timeout=60)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--size", type=int, default=1024)
    args = parser.parse_args()
    with local_cluster(JOB) as (server, token, state):
        held = register_blocks(state, token, args.size)
        client = reshard.Client(server, job_token=token)
        result = measure(client, args.runs, args.size)
        client.close()
        del held
    result["date"] = datetime.date.today().isoformat()
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
