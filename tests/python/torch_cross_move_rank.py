"""One rank of test_torch_cross_move: a long-lived Gloo CPU process that,
for every case of a file, moves a small state dict (full tensors known to
every rank, each rank's source block cut from them by the test's own
layout oracle) from one DeviceMesh layout to another with
reshard.torch's CrossMeshMove three times (the second run into the first
run's outputs, in place; the third staged into fresh outputs), and prints
one JSON line per case: for each tensor, whether this rank's results equal
its block of the full tensor element for element (null on a rank outside
the destination mesh).

  torch_cross_move_rank.py --rank R --world N --store PATH --cases FILE
"""

from __future__ import annotations

from typing import Any

import reshard.torch as rt
import torch
from layout import State, box, coordinate
from reshard.client import Client
from reshard.torch.cross_move import CrossMeshMove, Layout
from torch.distributed.device_mesh import DeviceMesh
from torch_plan_rank import DTYPES
from torch_ranks import serve_cases


def mesh_of_case(side: dict[str, Any], meshes: dict[Any, DeviceMesh]) -> DeviceMesh:
    key = (tuple(side["sizes"]), tuple(side["ranks"]))
    if key not in meshes:
        ranks = torch.tensor(side["ranks"]).reshape(side["sizes"])
        names = tuple(side["names"][: len(side["sizes"])])
        meshes[key] = DeviceMesh("cpu", ranks, mesh_dim_names=names)
    return meshes[key]


def full_tensor(t: dict[str, Any]) -> torch.Tensor:
    n = 1
    for e in t["shape"]:
        n *= e
    values = (torch.arange(n, dtype=torch.int64) * 37 + t["seed"]) % 201 - 100
    return values.reshape(t["shape"]).to(DTYPES[t["dtype"]])


def block(full: torch.Tensor, text: str, side: dict[str, Any], rank: int) -> Any:
    """This rank's block of `full` under `text` on the side's mesh, a P(sum)
    dim holding it at coordinate 0 and zeros elsewhere (None: not a rank of
    that mesh)."""
    if rank not in side["ranks"]:
        return None
    sizes = side["sizes"]
    coord = coordinate(side["ranks"].index(rank), sizes)
    state = State.parse(text)
    local = full[
        tuple(slice(lo, hi) for lo, hi in box(full.shape, state, sizes, coord))
    ]
    sums = [m for m, op in enumerate(state.ops) if op == "sum"]
    zero = any(coord[m] != 0 for m in sums)
    return torch.zeros_like(local) if zero else local.clone()


def run_case(case: dict[str, Any], rank: int, meshes: dict[Any, Any]) -> Any:
    src_mesh = mesh_of_case(case["src_mesh"], meshes)
    dst_mesh = mesh_of_case(case["dst_mesh"], meshes)
    sources, destinations, locals_, expected = {}, {}, {}, {}
    for t in case["tensors"]:
        full = full_tensor(t)
        shape, dtype = tuple(t["shape"]), DTYPES[t["dtype"]]
        sources[t["name"]] = Layout(
            src_mesh, rt.placements_of(t["src"], case["src_mesh"]["sizes"]),
            shape, dtype)  # fmt: skip
        destinations[t["name"]] = Layout(
            dst_mesh, rt.placements_of(t["dst"], case["dst_mesh"]["sizes"]),
            shape, dtype)  # fmt: skip
        locals_[t["name"]] = block(full, t["src"], case["src_mesh"], rank)
        expected[t["name"]] = block(full, t["dst"], case["dst_mesh"], rank)
    client = Client(case["planner"]) if "planner" in case else None
    move = CrossMeshMove(sources, destinations, client)
    first = move.run(locals_)
    out = {n: torch.full_like(v, 7) for n, v in first.items() if v is not None}
    second = move.run(locals_, out)
    staged_out = {n: torch.full_like(v, 7) for n, v in first.items() if v is not None}
    staged = move.run(locals_, staged_out, staging=True)
    verdict = {}
    for name, want in expected.items():
        got, again, third = first[name], second[name], staged[name]
        if want is None:
            nothing = got is None and again is None and third is None
            verdict[name] = None if nothing else "extra"
            continue
        verdict[name] = (
            got is not None
            and again is out[name]
            and third is staged_out[name]
            and all(torch.equal(t, want) for t in (got, again, third))
        )
    return verdict


if __name__ == "__main__":
    serve_cases(run_case)
