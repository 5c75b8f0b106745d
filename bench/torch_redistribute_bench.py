"""reshard.torch against DTensor's own, medians in one run:

- planning, in one process (torch's fake process group, 8 ranks):
  reshard.torch.plan (in-process, a new tensor size each call: every plan a
  cache miss) against PyTorch's planner (_gen_transform_infos_non_cached) on
  the same requests;
- the steady state, in one process (torch's fake process group, 8 ranks,
  local tensors on the meta device, so that only the Python, planning and
  dispatch work counts): a repeated reshard.torch.redistribute against a
  repeated DTensor.redistribute, 4096x1024 f32, 2,000 calls each in ten
  alternating blocks of 200 (the median of the blocks' medians);
- the cold call, the same way: a new tensor shape each call (so every
  call plans), 1,000 calls each, Reshard's then DTensor's;
- redistribute on 4 and 8 Gloo CPU ranks (one process each, loopback),
  Reshard's against DTensor.redistribute on transformer shapes: per case,
  ROUNDS alternating rounds of `--iters` runs each, each run timed on its
  slowest rank; the median of the rounds' medians, and the ratio.

  PYTHONPATH=python:build/python /opt/reshard/venv/bin/python \\
      bench/torch_redistribute_bench.py [--iters 10]
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from median_timing import median_us, slowest_rank_seconds

# Alternating rounds of each call per case; a case's time is the median of
# its rounds' medians (runs on few cores drift over seconds).
ROUNDS = 5

# (name, mesh sizes, global shape, src, dst): a hidden size of 4096 and its
# 4x MLP, split 2-way by FSDP and 2- or 4-way by TP.
CASES = {
    4: [
        ("fsdp+tp colwise -> tp", (2, 2), (4096, 1024), "S(0)[1],S(0)[0]", "R,S(0)"),
        ("shard both -> replicate", (2, 2), (2048, 1024), "S(0),S(1)", "R,R"),
        ("partial -> replicate", (2, 2), (1024, 1024), "P(sum),R", "R,R"),
        ("row to column shards", (4,), (4096, 1024), "S(0)", "S(1)"),
    ],
    8: [
        ("fsdp+tp colwise -> tp", (2, 4), (4096, 1024), "S(0)[1],S(0)[0]", "R,S(0)"),
        ("hsdp+tp -> tp", (2, 2, 2), (4096, 1024), "R,S(0)[1],S(0)[0]", "R,R,S(0)"),
        ("partial -> replicate", (2, 4), (1024, 1024), "P(sum),R", "R,R"),
        ("row to column shards", (8,), (4096, 1024), "S(0)", "S(1)"),
    ],
}


def planning() -> list[str]:
    import reshard.torch as rt
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor
    from torch.distributed.tensor import _redistribute as torch_planner
    from torch.distributed.tensor._dtensor_spec import DTensorSpec
    from torch.testing._internal.distributed.fake_pg import FakeStore

    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=8)
    rows = []
    for name, sizes, shape, src, dst in CASES[8]:
        mesh = init_device_mesh("cpu", sizes)
        src_p, dst_p = rt.placements_of(src, sizes), rt.placements_of(dst, sizes)
        counter = iter(range(1, 10**9))

        inputs = [
            DTensor.from_local(
                torch.empty(0),
                mesh,
                src_p,
                run_check=False,
                shape=torch.Size((shape[0] + 8 * next(counter), shape[1])),
                stride=(shape[1], 1),
            )  # fmt: skip
            for _ in range(400)
        ]
        it = iter(inputs)
        ours = median_us(lambda it=it, dst_p=dst_p: rt.plan(next(it), dst_p), 400)
        specs = [
            (d._spec, DTensorSpec(mesh, dst_p, tensor_meta=d._spec.tensor_meta))
            for d in inputs
        ]
        it2 = iter(specs)
        theirs = median_us(
            lambda it2=it2: torch_planner._gen_transform_infos_non_cached(*next(it2)),
            400,
        )
        rows.append(
            f"plan {name} on {sizes}: Reshard {ours:.1f} us, PyTorch {theirs:.1f} us "
            f"({theirs / ours:.1f}x)"
        )
    dist.destroy_process_group()
    return rows


# (mesh sizes, src, dst): gathers, all_to_alls and all_reduces.
STEADY = [
    ((8,), "S(0)", "R"),
    ((8,), "S(0)", "S(1)"),
    ((8,), "P(sum)", "R"),
    ((2, 4), "S(0),S(1)", "R,R"),
    ((2, 4), "R,S(0)", "R,S(1)"),
    ((2, 4), "P(sum),R", "R,R"),
    ((2, 2, 2), "R,S(0),S(1)", "R,R,R"),
    ((2, 2, 2), "S(0),S(0),S(0)", "S(1),S(1),S(1)"),
    ((2, 2, 2), "P(sum),P(sum),R", "R,R,R"),
]


def steady_state() -> list[str]:
    import reshard.torch as rt
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor
    from torch.distributed.tensor._utils import compute_local_shape_and_global_offset
    from torch.testing._internal.distributed.fake_pg import FakeStore

    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=8)
    rows, shape = [], (4096, 1024)
    for sizes, src, dst in STEADY:
        mesh = init_device_mesh("cpu", sizes)
        src_p, dst_p = rt.placements_of(src, sizes), rt.placements_of(dst, sizes)
        local, _ = compute_local_shape_and_global_offset(shape, mesh, src_p)
        x = DTensor.from_local(
            torch.empty(local, device="meta"), mesh, src_p, run_check=False,
            shape=torch.Size(shape), stride=(shape[1], 1),
        )  # fmt: skip
        calls = {
            "reshard": lambda x=x, d=dst_p: rt.redistribute(x, d),
            "dtensor": lambda x=x, m=mesh, d=dst_p: x.redistribute(m, d),
        }
        times: dict[str, list[float]] = {k: [] for k in calls}
        for f in calls.values():
            f()  # groups, plans and PyTorch's transform cache
        for _ in range(10):
            for k, f in calls.items():
                times[k].append(median_us(f, 200))
        ours, theirs = (statistics.median(times[k]) for k in calls)
        rows.append(
            f"steady state {src} -> {dst} on {sizes}: Reshard {ours:.1f} us, "
            f"DTensor {theirs:.1f} us (Reshard/DTensor {ours / theirs:.2f})"
        )
    dist.destroy_process_group()
    return rows


def cold() -> list[str]:
    import reshard.torch as rt
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor
    from torch.distributed.tensor._utils import compute_local_shape_and_global_offset
    from torch.testing._internal.distributed.fake_pg import FakeStore

    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=8)
    rows = []
    for name, sizes, (rows0, cols), src, dst in CASES[8]:
        mesh = init_device_mesh("cpu", sizes)
        src_p, dst_p = rt.placements_of(src, sizes), rt.placements_of(dst, sizes)
        inputs = []
        for i in range(1, 2001):
            shape = (rows0 + 8 * i, cols)
            local, _ = compute_local_shape_and_global_offset(shape, mesh, src_p)
            inputs.append(DTensor.from_local(
                torch.empty(local, device="meta"), mesh, src_p, run_check=False,
                shape=torch.Size(shape), stride=(cols, 1),
            ))  # fmt: skip
        ours, theirs = iter(inputs[:1000]), iter(inputs[1000:])
        o = median_us(lambda i=ours, d=dst_p: rt.redistribute(next(i), d), 1000)
        t = median_us(
            lambda i=theirs, m=mesh, d=dst_p: next(i).redistribute(m, d), 1000
        )
        rows.append(
            f"cold redistribute {name} on {sizes}: Reshard {o:.1f} us, "
            f"DTensor {t:.1f} us (Reshard/DTensor {o / t:.2f})"
        )
    dist.destroy_process_group()
    return rows


def rank_main(rank: int, world: int, store: str, iters: int) -> None:
    import reshard.torch as rt
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh

    dist.init_process_group(
        "gloo", init_method=f"file://{store}", rank=rank, world_size=world,
        timeout=datetime.timedelta(seconds=120),
    )  # fmt: skip
    out = []
    for name, sizes, shape, src, dst in CASES[world]:
        mesh = init_device_mesh("cpu", sizes)
        src_p, dst_p = rt.placements_of(src, sizes), rt.placements_of(dst, sizes)
        dt = _source(torch.ones(shape), mesh, src_p)
        calls = {
            "reshard": lambda dt=dt, dst_p=dst_p: rt.redistribute(dt, dst_p),
            "dtensor": lambda dt=dt, m=mesh, dst_p=dst_p: dt.redistribute(m, dst_p),
        }
        rounds: dict[str, list[float]] = {k: [] for k in calls}
        for f in calls.values():
            f()  # warm-up: groups, plans
        for _ in range(ROUNDS):
            for which, f in calls.items():
                rounds[which].append(statistics.median(slowest_rank_seconds(f, iters)))
        out.append({"name": name, "sizes": sizes, "shape": shape, **{
            k: statistics.median(v) * 1e6 for k, v in rounds.items()}})  # fmt: skip
    if rank == 0:
        print(json.dumps(out), flush=True)
    dist.destroy_process_group()


def _source(full, mesh, placements):  # noqa: ANN001, ANN202
    """The DTensor of `full` under `placements` (Partial: rank 0 of each
    Partial dim holds the data)."""
    from torch.distributed.tensor import DTensor, Partial, Replicate, distribute_tensor

    if any(isinstance(p, Partial) for p in placements):
        plain = [Replicate() if isinstance(p, Partial) else p for p in placements]
        local = distribute_tensor(full, mesh, plain).to_local().clone()
        coord = mesh.get_coordinate()
        for m, p in enumerate(placements):
            if isinstance(p, Partial) and coord[m] != 0:
                local.zero_()
        return DTensor.from_local(
            local, mesh, placements, run_check=False, shape=full.shape,
            stride=full.stride(),
        )  # fmt: skip
    return distribute_tensor(full, mesh, placements)


def redistribute(world: int, iters: int) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        store = str(Path(tmp) / "store")
        ranks = [
            subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    "--rank",
                    str(r),
                    "--world",
                    str(world),
                    "--store",
                    store,
                    "--iters",
                    str(iters),
                ],
                stdout=subprocess.PIPE,
                text=True,
            )  # fmt: skip
            for r in range(world)
        ]
        outs = [p.communicate(timeout=600)[0] for p in ranks]
    rows = []
    for case in json.loads(outs[0]):
        ratio = case["dtensor"] / case["reshard"]
        rows.append(
            f"redistribute {case['name']} {case['shape']} on {tuple(case['sizes'])}: "
            f"Reshard {case['reshard']:.0f} us, DTensor {case['dtensor']:.0f} us "
            f"({ratio:.2f}x)"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int)
    parser.add_argument("--world", type=int)
    parser.add_argument("--store")
    parser.add_argument("--iters", type=int, default=10)
    a = parser.parse_args()
    if a.rank is not None:
        rank_main(a.rank, a.world, a.store, a.iters)
        return
    for line in planning():
        print(line, flush=True)
    for line in steady_state():
        print(line, flush=True)
    for line in cold():
        print(line, flush=True)
    for world in (4, 8):
        for line in redistribute(world, a.iters):
            print(line, flush=True)


if __name__ == "__main__":
    main()
