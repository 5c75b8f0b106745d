"""One rank of test_torch_run_plan: a long-lived Gloo CPU process that runs
every case of a file with reshard.torch.run_plan and prints one JSON line
per case: its mesh position, its checksum (§6.2, after dst's Partial dims
are reduced) and whether every element equals the data rule. A case may
give the mesh's global ranks in row-major order (`ranks`: a DeviceMesh whose
ranks are not in order, so torch's group ranks differ from the plan's group
order).

  torch_plan_rank.py --rank R --world N --store PATH --cases FILE
      [--without-native]

--without-native runs as an install without the native module does: the
cases' plan JSON must carry every rank's programs.
"""

from __future__ import annotations

import argparse
import json
import sys

import torch
import torch.distributed as dist
from data_rule import checksum, linear_index, reduced, source_block, source_value
from layout import State, box, coordinate
from reshard._plan import Plan
from reshard.torch.run_plan import run_plan
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
from torch_ranks import init_gloo

DTYPES = {
    "float32": torch.float32,
    "float64": torch.float64,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
    "int32": torch.int32,
    "int64": torch.int64,
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--store", required=True)
    parser.add_argument("--cases", required=True)
    parser.add_argument("--without-native", action="store_true")
    a = parser.parse_args()
    if a.without_native:
        sys.modules["reshard._native"] = None  # type: ignore[assignment]
    init_gloo(a.rank, a.world, a.store)
    meshes = {}
    for case in json.load(open(a.cases)):
        plan = Plan.from_json(case["plan"])
        sizes = tuple(plan.mesh.shape)
        ranks = case.get("ranks")  # the mesh's global ranks, row-major
        key = (sizes, plan.mesh.dim_names, tuple(ranks or ()))
        if key not in meshes:
            meshes[key] = (
                DeviceMesh(
                    "cpu",
                    torch.tensor(ranks).view(sizes),
                    mesh_dim_names=plan.mesh.dim_names,
                )
                if ranks
                else init_device_mesh("cpu", sizes, mesh_dim_names=plan.mesh.dim_names)
            )
        mesh = meshes[key]
        position = ranks.index(a.rank) if ranks else a.rank
        coord = coordinate(position, sizes)
        src, dst = State.parse(plan.src), State.parse(plan.dst)
        local = source_block(plan.shape, src, sizes, coord).to(DTYPES[plan.dtype])
        out = reduced(run_plan(case["plan"], local, mesh), dst, sizes, mesh)
        want = source_value(
            linear_index(plan.shape, box(plan.shape, dst, sizes, coord))
        )
        ok = list(out.shape) == list(want.shape) and bool(
            (out.double() == want.double()).all()
        )
        print(
            json.dumps(
                {
                    "case": case["id"],
                    "position": position,
                    "checksum": checksum(out),
                    "ok": ok,
                }
            ),
            flush=True,
        )
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
