"""One rank of test_torch_training: a small FSDP2 + TP model (two Linear
layers, real parallelize_module and fully_shard on a (dp, tp) Gloo CPU mesh)
whose forward redistributes its hidden activation where a model would call
DTensor.redistribute, trained for three SGD steps: with DTensor's own
redistribute, with reshard.torch.redistribute, and, given --server, with
reshard.torch.redistribute planning on that service in a process without
the native module (the service compiles the rank programs). Prints one JSON
line per run and step: the loss, and every parameter's full gradient and
value after the step (as lists).

  torch_train_rank.py --rank R --world N --store PATH --values int|random
      [--server HOST:PORT]
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
from collections.abc import Callable
from typing import Any

import reshard.torch as rt
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor, Partial, Placement, Replicate, Shard
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    RowwiseParallel,
    parallelize_module,
)
from torch_ranks import init_gloo

Redistribute = Callable[[DTensor, list[Placement]], DTensor]
HIDDEN, WIDTH, BATCH, STEPS = 12, 8, 6, 3


class Mlp(torch.nn.Module):
    """up (column-parallel, its output kept a DTensor sharded on the hidden
    dim), the activation gathered by `redistribute`, then down
    (row-parallel, chunking its replicated input itself)."""

    def __init__(self, redistribute: Redistribute) -> None:
        super().__init__()
        self.up = torch.nn.Linear(WIDTH, HIDDEN, bias=False)
        self.down = torch.nn.Linear(HIDDEN, WIDTH, bias=False)
        self.redistribute = redistribute

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.up(x))
        assert isinstance(h, DTensor)
        h = self.redistribute(h, [Replicate()])
        return self.down(h)


def initial(values: str) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(7)
    shapes = {"up.weight": (HIDDEN, WIDTH), "down.weight": (WIDTH, HIDDEN)}
    if values == "int":  # small integers: every sum and update exact
        return {
            k: torch.randint(-2, 3, s, generator=g).float() for k, s in shapes.items()
        }
    return {k: torch.randn(s, generator=g) for k, s in shapes.items()}


def batch(values: str, step: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(100 + step)
    if values == "int":
        x = torch.randint(-2, 3, (BATCH, WIDTH), generator=g).float()
        return x, torch.randint(-3, 4, (BATCH, WIDTH), generator=g).float()
    return torch.randn(BATCH, WIDTH, generator=g), torch.randn(
        BATCH, WIDTH, generator=g
    )


def train(
    mesh: DeviceMesh, values: str, redistribute: Redistribute
) -> list[dict[str, Any]]:
    model = Mlp(redistribute)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(initial(values)[name])
    plan = {
        "up": ColwiseParallel(output_layouts=Shard(-1), use_local_output=False),
        "down": RowwiseParallel(input_layouts=Replicate()),
    }
    parallelize_module(model, mesh["tp"], plan)
    fully_shard(model, mesh=mesh["dp"])
    # A power of two: with integer values every update is exact.
    optimizer = torch.optim.SGD(model.parameters(), lr=0.125)
    lines = []
    for step in range(STEPS):
        x, target = batch(values, step)
        optimizer.zero_grad()
        loss = ((model(x) - target) ** 2).sum()
        loss.backward()
        grads = {n: p.grad.full_tensor().tolist() for n, p in model.named_parameters()}
        optimizer.step()
        params = {n: p.full_tensor().tolist() for n, p in model.named_parameters()}
        lines.append(
            {"step": step, "loss": loss.item(), "grads": grads, "params": params}
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    for flag in ("--rank", "--world"):
        parser.add_argument(flag, type=int, required=True)
    parser.add_argument("--store", required=True)
    parser.add_argument("--values", choices=["int", "random"], required=True)
    parser.add_argument("--server")
    a = parser.parse_args()
    if a.server:
        sys.modules["reshard._native"] = None  # type: ignore[assignment]
    init_gloo(a.rank, a.world, a.store)
    mesh = init_device_mesh("cpu", (a.world // 2, 2), mesh_dim_names=("dp", "tp"))
    runs: dict[str, Redistribute] = {
        "dtensor": lambda h, p: h.redistribute(h.device_mesh, p),
        "reshard": lambda h, p: rt.redistribute(h, p),
    }
    if a.server:
        from reshard.client import Client

        client = Client(a.server)
        runs = {
            "dtensor": runs["dtensor"],
            "reshard": lambda h, p: rt.redistribute(h, p, client=client),
        }
    for run, redistribute in runs.items():
        for line in train(mesh, a.values, redistribute):
            print(json.dumps(dict(line, run=run)), flush=True)
    if not a.server:
        print(json.dumps({"groups_released": merged_groups_released(a.world)}))
    dist.destroy_process_group()


def merged_groups_released(world: int) -> bool:
    """A merged step's process group lives as long as its DeviceMesh: made
    on first use, destroyed when the mesh is collected."""
    mesh = init_device_mesh("cpu", (world // 2, 2), mesh_dim_names=("a", "b"))
    x = DTensor.from_local(
        torch.ones(3, 2), mesh, [Partial(), Partial()], run_check=False
    )
    out = rt.redistribute(x, [Replicate(), Replicate()], flatten_policy="any")
    assert torch.equal(out.to_local(), torch.full((3, 2), float(world)))
    before = len(dist.distributed_c10d._world.pg_map)
    del x, out, mesh
    gc.collect()
    return len(dist.distributed_c10d._world.pg_map) < before


if __name__ == "__main__":
    main()
