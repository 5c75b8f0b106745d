"""One rank of the merged sum/avg check (test_real_torch.py starts four).

Mesh A=1,B=4 with (A,B) flattened; rank r holds r + 1 as P(avg),P(sum)
(A has size 1, so its avg is the value itself), and the answer of R,R is
1 + 2 + 3 + 4 = 10 everywhere. PyTorch 2.15's merge pass keeps P(avg) for
the flattened collective when the avg dim has size 1 (it sets no
avg_scale), so DTensor.redistribute averages over all four ranks (2.5);
without the flattened mesh it gives 10. Reshard's plans give 10, merged
(torch_greedy with the merge pass) or not. Prints one JSON line.
"""

from __future__ import annotations

import json

import reshard.torch as rt
import torch
import torch.distributed as dist
from torch.distributed.tensor import DeviceMesh, DTensor, Partial, Replicate
from torch_ranks import join_from_args

SHAPE = (4,)


def value(dt: DTensor) -> float:
    local = dt.to_local()
    assert bool((local == local[0]).all()), local
    return float(local[0])


def run(rank: int, world: int) -> dict[str, object]:
    ranks = torch.arange(world).reshape(1, world)
    plain = DeviceMesh("cpu", ranks, mesh_dim_names=("A", "B"))
    flat = DeviceMesh("cpu", ranks, mesh_dim_names=("A", "B"))
    flat[("A", "B")]._flatten()
    out: dict[str, object] = {"rank": rank, "torch": torch.__version__}
    for name, mesh in (("plain", plain), ("flattened", flat)):
        dt = DTensor.from_local(
            torch.full(SHAPE, float(rank + 1)),
            mesh,
            [Partial("avg"), Partial("sum")],
            run_check=False,
        )
        replicate = [Replicate(), Replicate()]
        out[f"torch_{name}"] = value(dt.redistribute(mesh, replicate))
        merged = rt.redistribute(dt, replicate, planner="torch_greedy", merge=True)
        out[f"reshard_{name}"] = value(merged)
        out[f"reshard_{name}_optimal"] = value(rt.redistribute(dt, replicate))
    return out


if __name__ == "__main__":
    args = join_from_args()
    try:
        print(json.dumps(run(args.rank, args.world)), flush=True)
        # No rank tears its groups down while a peer still uses them.
        dist.barrier()
    finally:
        dist.destroy_process_group()
