"""A model's refit through `job run` (docs/DESIGN.md §9): a transformer-
shaped model of LAYERS x 8 f32 tensors (per layer q, k, v, o of H x H, the
MLP's 4H x H and H x 4H, two norms of 16 x 2H; H = 512 and 25 layers: 200
tensors, 64 KiB to 4 MiB each, 403 MiB) registered at the 8 Gloo agents of a
local cluster (scripts/local-cluster.sh --tensors) by this process, moved
from the trainer's layout to the inference engine's, staged and committed
(the destinations allocated by the agents), STEPS times each way, the ways
alternating:

- prepared: one batch schedule (Client.prepare_cross_batch) run every step
  (Client.run_schedule with one binding per tensor): no planning, no plans
  sent, each agent's runner and bindings kept; one pre-flight, one commit;
- planned: Client.run_cross_batch_job every step (the replica plans every
  tensor, its cache answering; the plans go to every agent);
- per tensor: Client.run_cross_job once per tensor every step (one plan,
  one pre-flight and one commit per tensor: what a caller without batches
  does).

Layouts: disjoint (2x2 S(0),S(1) on ranks 0-3 to 2x2 S(1),S(0) on 4-7) and
colocated (2x4 S(0),S(1) on ranks 0-7 to 4x2 S(1),S(0) on the ranks
permuted). Printed: each way's step wall time (median, max) and the
prepared batch's overhead (wall minus its transfers row, p50 and max), and
the ratios to the prepared batch.

  PYTHONPATH=python:build/python /opt/reshard/venv/bin/python \\
      bench/cross_model_job_bench.py [--layers 25] [--hidden 512] [--steps 5]
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import reshard
from cross_job_bench import local_cluster, percentile
from reshard import agent as ragent

JOB = "model-bench"
SRC, DST = "S(0),S(1)", "S(1),S(0)"
LAYOUTS = {
    "disjoint": (
        reshard.Mesh((2, 2), ("dp", "tp"), rank_map=(0, 1, 2, 3)),
        reshard.Mesh((2, 2), ("x", "y"), rank_map=(4, 5, 6, 7)),
    ),
    "colocated": (
        reshard.Mesh((2, 4), ("dp", "tp"), rank_map=tuple(range(8))),
        reshard.Mesh((4, 2), ("x", "y"), rank_map=(3, 6, 1, 4, 7, 2, 5, 0)),
    ),
}


def model(layers: int, hidden: int) -> list[tuple[str, tuple[int, int]]]:
    shapes = [(hidden, hidden)] * 4 + [(4 * hidden, hidden), (hidden, 4 * hidden)]
    shapes += [(16, 2 * hidden)] * 2
    names = ("q", "k", "v", "o", "up", "down", "ln1", "ln2")
    return [
        (f"l{i}.{n}", s)
        for i in range(layers)
        for n, s in zip(names, shapes, strict=True)
    ]


def register_sources(
    state: Path, token: str, mesh: reshard.Mesh, tensors: list[Any], prefix: str
) -> list[Any]:
    """Every source rank's block of every tensor: S(0),S(1) on a 2-D mesh
    splits rows by its dim 0 and columns by its dim 1, evenly here."""
    held = []
    rows, cols = mesh.shape
    for rank in mesh.rank_map:
        local = ragent.LocalAgent(
            str(state / f"agent-{rank}.sock"), job=JOB, rank=rank, token=token
        )
        for name, (r, c) in tensors:
            block = ragent.empty((r // rows, c // cols), "float32")
            block[...] = rank
            local.register(f"{prefix}{name}", block)
            held.append(block)
        held.append(local)
    return held


def step_times(
    ways: dict[str, Callable[[], float]], steps: int
) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {w: [] for w in ways}
    for _ in range(steps):
        for way, run in ways.items():
            start = time.perf_counter()
            times[way].append(run() - start)
    return times


def measure(
    client: reshard.Client, layout: str, tensors: list[Any], steps: int
) -> dict[str, Any]:
    src_mesh, dst_mesh = LAYOUTS[layout]
    batch = [
        reshard.CrossBatchTensor(name, src_mesh, dst_mesh, shape, SRC, DST)
        for name, shape in tensors
    ]
    pairs = [(f"{layout}.w.{n}", f"{layout}.v.{n}") for n, _ in tensors]
    overheads: list[float] = []

    def checked(run: reshard.JobRun) -> float:
        assert run.validated and run.committed, run
        return time.perf_counter()

    def per_tensor() -> float:
        for (_, shape), pair in zip(tensors, pairs, strict=True):
            run = client.run_cross_job(
                JOB, src_mesh, dst_mesh, shape, SRC, DST, tensor=pair, allocate=True
            )
            checked(run)
        return time.perf_counter()

    # The first runs allocate every destination and keep the schedule.
    per_tensor()
    schedule = client.prepare_cross_batch(JOB, batch)
    first = client.run_schedule(JOB, schedule.id, tensors=pairs)
    assert first.validated and first.plan_sent, first

    def prepared_with_overhead() -> float:
        start = time.perf_counter()
        run = client.run_schedule(JOB, schedule.id, tensors=pairs)
        done = checked(run)
        (transfers,) = [s for s in run.steps if s.op == "transfers"]
        overheads.append(done - start - transfers.seconds_median)
        return done

    ways = {
        "prepared": prepared_with_overhead,
        "planned": lambda: checked(
            client.run_cross_batch_job(JOB, batch, bindings=pairs)
        ),
        "per_tensor": per_tensor,
    }
    times = step_times(ways, steps)
    client.delete_schedule(JOB, schedule.id)
    out: dict[str, Any] = {
        w: {"median_ms": statistics.median(t) * 1e3, "max_ms": max(t) * 1e3}
        for w, t in times.items()
    }
    out["prepared"]["overhead_p50_ms"] = percentile(overheads, 0.5) * 1e3
    out["prepared"]["overhead_max_ms"] = max(overheads) * 1e3
    for way in ("planned", "per_tensor"):
        out[f"{way}_over_prepared"] = (
            out[way]["median_ms"] / out["prepared"]["median_ms"]
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=25)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()
    tensors = model(args.layers, args.hidden)
    result: dict[str, Any] = {
        "tensors": len(tensors),
        "bytes": sum(r * c * 4 for _, (r, c) in tensors),
        "steps": args.steps,
    }
    with local_cluster(JOB) as (server, token, state):
        client = reshard.Client(server, job_token=token)
        held = []
        for layout, (src_mesh, _) in LAYOUTS.items():
            held += register_sources(state, token, src_mesh, tensors, f"{layout}.w.")
        for layout in LAYOUTS:
            result[layout] = measure(client, layout, tensors, args.steps)
        client.close()
        del held
    result["date"] = datetime.date.today().isoformat()
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
