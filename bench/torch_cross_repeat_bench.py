"""What a repeated reshard.torch cross-mesh move costs one rank against
the first, in one process on torch's fake process group (world 8: every
collective and point-to-point call completes at once, moving nothing), so
that only the rank's own work counts: the model and scenarios of
bench/torch_cross_move_bench.py, small (hidden 64 by default) so that the
copies are small too. The first move is CrossMeshMove's construction
(planning, compiling, the digest check) plus its first run; a repeated
run moves the same source tensors into the same outputs (`out=`, as an
RL loop hands the inference engine's weights), median of `--reps`. Each
rank is its own process, one after another; ROUNDS rounds alternate.

  PYTHONPATH=python:build/python:tests/python /opt/reshard/venv/bin/python \\
      bench/torch_cross_repeat_bench.py [--hidden 64] [--layers 33] [--reps 21]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROUNDS = 3
# (scenario, rank): a source and a destination rank of the disjoint move,
# a rank of the colocated one.
CASES = (("disjoint", 0), ("disjoint", 4), ("colocated", 0))


def rank_main(a: argparse.Namespace) -> None:
    import torch
    import torch.distributed as dist
    from reshard.torch import CrossMeshMove, Layout, placements_of
    from torch.testing._internal.distributed.fake_pg import FakeStore
    from torch_cross_move_bench import SCENARIOS, Side, model

    dist.init_process_group("fake", store=FakeStore(), rank=a.rank, world_size=8)
    src_sizes, src_ranks, dst_sizes, dst_ranks, kinds = SCENARIOS[a.scenario]
    src, dst = Side(src_sizes, src_ranks), Side(dst_sizes, dst_ranks)
    sources, destinations, locals_ = {}, {}, {}
    for name, shape, kind in model(a.hidden, a.layers):
        s_text, d_text = kinds[kind]
        sources[name] = Layout(
            src.mesh, placements_of(s_text, src_sizes), shape, torch.float32
        )
        destinations[name] = Layout(
            dst.mesh, placements_of(d_text, dst_sizes), shape, torch.float32
        )
        if a.rank in src_ranks:
            locals_[name] = torch.ones(shape)[src.box(shape, s_text, a.rank)].clone()
    start = time.perf_counter()
    move = CrossMeshMove(sources, destinations)
    made = time.perf_counter()
    out = {n: t for n, t in move.run(locals_).items() if t is not None}
    first = time.perf_counter()
    repeated = []
    for _ in range(a.reps):
        at = time.perf_counter()
        move.run(locals_, out)
        repeated.append(time.perf_counter() - at)
    print(json.dumps({"construct": made - start, "first_run": first - made,
                      "repeated": statistics.median(repeated)}))  # fmt: skip
    dist.destroy_process_group()


def one(a: argparse.Namespace, scenario: str, rank: int) -> dict[str, float]:
    args = [sys.executable, __file__, "--rank", str(rank), "--scenario", scenario,
            "--hidden", str(a.hidden), "--layers", str(a.layers),
            "--reps", str(a.reps)]  # fmt: skip
    done = subprocess.run(
        args, capture_output=True, text=True, check=True, timeout=600,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--layers", type=int, default=33)
    p.add_argument("--reps", type=int, default=21)
    p.add_argument("--rank", type=int)
    p.add_argument("--scenario")
    a = p.parse_args()
    if a.rank is not None:
        rank_main(a)
        return
    rounds: dict[tuple[str, int], list[dict[str, float]]] = {c: [] for c in CASES}
    for _ in range(ROUNDS):
        for case in CASES:
            rounds[case].append(one(a, *case))
    print(f"torch_cross_repeat_bench: {a.layers * 6} f32 tensors, hidden {a.hidden}")
    for (scenario, rank), runs in rounds.items():
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        first = med["construct"] + med["first_run"]
        print(
            f"{scenario:9} rank {rank}: first move {first * 1e3:7.2f} ms "
            f"(construct {med['construct'] * 1e3:.2f}, run "
            f"{med['first_run'] * 1e3:.2f}), repeated {med['repeated'] * 1e3:6.2f} "
            f"ms, {100 * med['repeated'] / first:.1f}% of the first"
        )


if __name__ == "__main__":
    main()
