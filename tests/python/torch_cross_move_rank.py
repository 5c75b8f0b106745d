"""One rank of test_torch_cross_move: a long-lived Gloo CPU process that,
for every case of a file, moves a small state dict (full tensors known to
every rank, each rank's source block cut from them by the test's own
layout oracle) from one DeviceMesh layout to another with
reshard.torch's CrossMeshMove four times (the second run into the first
run's outputs, in place; the third staged into fresh outputs; the fourth
into the second's outputs again, with new weights given in place, on
other memory and as new objects), and prints
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
    right = {
        name: want is not None
        and first[name] is not None
        and second[name] is out[name]
        and staged[name] is staged_out[name]
        and all(torch.equal(t, want) for t in (first[name], out[name], staged[name]))
        for name, want in expected.items()
    }
    flipped = new_weights(case, rank, locals_, out)
    fourth = move.run(locals_, out)
    verdict = {}
    for name, want in expected.items():
        if want is None:
            runs = (first, second, staged, fourth)
            verdict[name] = None if all(r[name] is None for r in runs) else "extra"
            continue
        verdict[name] = (
            right[name]
            and fourth[name] is out[name]
            and torch.equal(fourth[name], flipped[name])
        )
    return verdict


def new_weights(
    case: dict[str, Any], rank: int, locals_: dict[str, Any], out: dict[str, Any]
) -> dict[str, Any]:
    """The next step's weights (each full tensor flipped) given as an RL
    loop gives them: every other source written in place, the others the
    same tensor object on other memory (set_), one of them a new object,
    and every other output on other memory: a run may keep views of the
    caller's tensors only while they are still theirs. Returns this rank's
    expected destination blocks."""
    expected = {}
    for i, t in enumerate(case["tensors"]):
        name, full = t["name"], full_tensor(t).flip(0)
        new = block(full, t["src"], case["src_mesh"], rank)
        if new is not None and i == 0:
            locals_[name] = new
        elif new is not None and i % 2:
            locals_[name].copy_(new)
        elif new is not None:
            locals_[name].set_(new)
        if name in out and i % 2 == 0:
            out[name].set_(torch.full_like(out[name], 7))
        expected[name] = block(full, t["dst"], case["dst_mesh"], rank)
    return expected


if __name__ == "__main__":
    serve_cases(run_case)
