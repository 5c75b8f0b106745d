"""The Python package's overhead, medians in one run: in-process
reshard.plan, cached and cold, against the same calls in C++ (planner_bench's
BM_PlanFromText: the request parsed from text and planned through the
cache, what the native module does), the cost of reading a step, and a gRPC
Plan from reshard.Client against `reshardctl plan` on the same planner.

  PYTHONPATH=python:build/python RESHARD_BUILD=build \
    /opt/reshard/venv/bin/python bench/python_plan_bench.py
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "python"))

import reshard  # noqa: E402
from median_timing import median_us  # noqa: E402
from reshard.client import Client  # noqa: E402
from reshard_processes import BUILD, CTL, planner  # noqa: E402

MESH = reshard.Mesh.from_text("A=2,B=2,C=2", ["A,C"])


def cpp_medians_us() -> dict[str, float]:
    """planner_bench's BM_PlanFromText medians (cached, cold), in µs."""
    out = subprocess.run(
        [
            str(BUILD / "bench" / "planner_bench"),
            "--benchmark_filter=BM_PlanFromText",
            "--benchmark_repetitions=5",
            "--benchmark_report_aggregates_only=true",
            "--benchmark_format=json",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    medians = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3}[b["time_unit"]]
            medians[b["run_name"].split("/")[-1]] = b["real_time"] * scale
    return medians


def main() -> None:
    one = lambda: reshard.plan(MESH, [16, 16], "P(sum),R,P(sum)", "R,R,R")  # noqa: E731
    one()
    cached = median_us(one, 20000)
    shapes = iter(range(1, 10**9))
    cold_plans: list[reshard.Plan] = []

    def cold() -> None:
        cold_plans.append(
            reshard.plan(MESH, [next(shapes), 16], "S(0),S(1),R", "R,S(0),S(1)")
        )

    cold_us = median_us(cold, 2000)
    cpp_cold = statistics.median(p.planning_us for p in cold_plans)
    steps = sum(len(p.steps) for p in cold_plans[:200])
    fresh = [
        reshard.plan(MESH, [s, 17], "S(0),S(1),R", "R,S(0),S(1)") for s in range(1, 201)
    ]
    start = time.perf_counter()
    read = sum(len([s.op for s in p.steps]) for p in fresh)
    per_step = (time.perf_counter() - start) * 1e6 / read
    cpp = cpp_medians_us()
    print(
        f"in-process cached one-step plan: {cached:.2f} us median; C++ "
        f"{cpp['cached']:.2f} us; Python's part {cached - cpp['cached']:.2f} us"
    )
    print(
        f"in-process cold 3-step plan: {cold_us:.2f} us median; C++ {cpp['cold']:.2f} "
        f"us (the plans' own planning_us {cpp_cold:.2f})"
    )
    print(
        f"reading a step (first access, converted): {per_step:.3f} us ({steps} steps)"
    )
    with tempfile.TemporaryDirectory() as tmp, planner(Path(tmp)) as server:
        client = Client(server)
        call = lambda: client.plan(MESH, [16, 16], "P(sum),R,P(sum)", "R,R,R")  # noqa: E731
        call()
        grpc_us = median_us(call, 2000)
        args = [str(CTL), "--server", server, "plan", "--mesh", "A=2,B=2,C=2"]
        args += ["--flatten", "A,C", "--shape", "16,16", "--from", "P(sum),R,P(sum)"]
        args += ["--to", "R,R,R"]
        ctl_us = median_us(
            lambda: subprocess.run(args, capture_output=True, check=True), 50
        )
    print(
        f"gRPC Plan from Python: {grpc_us:.1f} us median; "
        f"reshardctl plan: {ctl_us:.0f} us"
    )


if __name__ == "__main__":
    main()
