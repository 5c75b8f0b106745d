"""One rank of test_torch_fsdp: FSDP2 over a tensor-parallel module on a 2-D
(dp, tp) or 3-D (dp_replicate, dp_shard, tp) Gloo CPU mesh. For every
parameter it prints one JSON line: its placements as Reshard's text, whether
the rank's block is the one that text gives of the full weight, and whether
reshard.torch.redistribute to the TP-only layout (Replicate on the data
parallel dims) holds the right block, and equals DTensor's own.

  torch_fsdp_rank.py --rank R --world N --store PATH --rows ROWS
"""

from __future__ import annotations

import argparse
import json

import reshard.torch as rt
import torch
import torch.distributed as dist
from layout import State, box, coordinate
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import Replicate
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    RowwiseParallel,
    parallelize_module,
)
from torch_ranks import init_gloo


def block(
    full: torch.Tensor, text: str, sizes: tuple[int, ...], rank: int
) -> torch.Tensor:
    b = box(full.shape, State.parse(text), sizes, coordinate(rank, sizes))
    return full[tuple(slice(lo, hi) for lo, hi in b)]


def main() -> None:
    parser = argparse.ArgumentParser()
    for flag in ("--rank", "--world", "--rows"):
        parser.add_argument(flag, type=int, required=True)
    parser.add_argument("--store", required=True)
    a = parser.parse_args()
    init_gloo(a.rank, a.world, a.store)
    if a.world == 4:
        mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
        dp = mesh["dp"]
    else:
        names = ("dp_replicate", "dp_shard", "tp")
        mesh = init_device_mesh("cpu", (2, 2, 2), mesh_dim_names=names)
        dp = mesh["dp_replicate", "dp_shard"]
    model = torch.nn.Sequential(
        torch.nn.Linear(8, a.rows, bias=False), torch.nn.Linear(a.rows, 8, bias=False)
    )
    full = {}
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.arange(p.numel(), dtype=p.dtype).view(p.shape))
            full[name] = p.detach().clone()
    parallelize_module(
        model, mesh["tp"], {"0": ColwiseParallel(), "1": RowwiseParallel()}
    )
    fully_shard(model, mesh=dp)
    sizes = tuple(mesh.shape)
    for name, p in model.named_parameters():
        text = rt.placement_text(p.placements, sizes, p.ndim)
        local = p.to_local().detach()
        line = {"param": name, "placements": str(p.placements), "text": text}
        line["layout_ok"] = bool(
            torch.equal(local, block(full[name], text, sizes, a.rank))
        )
        tp_only = tuple(Replicate() for _ in sizes[:-1]) + (p.placements[-1],)
        ours = rt.redistribute(p.detach(), tp_only)
        want = block(
            full[name], rt.placement_text(tp_only, sizes, p.ndim), sizes, a.rank
        )
        line["tp_only_ok"] = bool(torch.equal(ours.to_local(), want))
        theirs = p.detach().redistribute(mesh, tp_only).to_local()
        line["torch_equal"] = bool(torch.equal(theirs, ours.to_local()))
        print(json.dumps(line), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
