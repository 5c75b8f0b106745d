"""One rank of test_torch_training's compile test: a module whose forward
calls reshard.torch.redistribute (a Shard(0) DTensor gathered to Replicate,
then a Linear), run eagerly and under torch.compile (dynamo with the eager
backend: the call is a graph break) on a 2-rank Gloo CPU mesh. Prints one
JSON line: whether the compiled forward and the input's gradient equal the
eager ones, and how many graph breaks dynamo counted.

  torch_compile_rank.py --rank R --world N --store PATH
"""

from __future__ import annotations

import json

import reshard.torch as rt
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
from torch.distributed.tensor import DTensor, Replicate, Shard
from torch_ranks import join_from_args


class Gathered(torch.nn.Module):
    def __init__(self, mesh: DeviceMesh) -> None:
        super().__init__()
        self.mesh = mesh
        self.linear = torch.nn.Linear(4, 3, bias=False)
        with torch.no_grad():
            self.linear.weight.copy_(torch.arange(12.0).view(3, 4) - 5)

    def forward(self, local: torch.Tensor) -> torch.Tensor:
        x = DTensor.from_local(local, self.mesh, [Shard(0)], run_check=False)
        full = rt.redistribute(x, [Replicate()]).to_local()
        return self.linear(torch.relu(full)) * 2


def forward_and_grad(
    module: torch.nn.Module, rank: int
) -> tuple[torch.Tensor, torch.Tensor]:
    local = (torch.arange(12.0).view(3, 4) - 6 * rank).requires_grad_()
    out = module(local)
    (out * (torch.arange(out.numel()).view(out.shape) % 5)).sum().backward()
    assert local.grad is not None
    return out.detach(), local.grad


def main() -> None:
    a = join_from_args()
    mesh = init_device_mesh("cpu", (a.world,))
    module = Gathered(mesh)
    eager = forward_and_grad(module, a.rank)
    import torch._dynamo.utils

    torch._dynamo.utils.counters.clear()
    compiled = forward_and_grad(torch.compile(module, backend="eager"), a.rank)
    breaks = sum(torch._dynamo.utils.counters["graph_break"].values())
    line = {
        "forward_equal": bool(torch.equal(eager[0], compiled[0])),
        "grad_equal": bool(torch.equal(eager[1], compiled[1])),
        "graph_breaks": breaks,
    }
    print(json.dumps(line), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
