"""One rank of test_torch_redistribute: a long-lived Gloo CPU process that,
for every case of a file, builds the source DTensor from the data rule,
redistributes it with reshard.torch.redistribute and with DTensor's own
redistribute, and prints one JSON line per case: whether Reshard's result
equals the data rule, whether DTensor's equals Reshard's element for
element (Partial dims reduced in both), or what DTensor raised.

  torch_redistribute_rank.py --rank R --world N --store PATH --cases FILE
"""

from __future__ import annotations

import reshard.torch as rt
import torch
from data_rule import linear_index, reduced, source_block, source_value
from layout import State, box, coordinate
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
from torch.distributed.tensor import DTensor
from torch_plan_rank import DTYPES
from torch_ranks import serve_cases


def mesh_for(case: dict, meshes: dict) -> DeviceMesh:  # noqa: ANN001 (plain JSON)
    key = (tuple(case["sizes"]), tuple(case["flatten"]))
    if key not in meshes:
        names = tuple("ABC"[: len(case["sizes"])])
        mesh = init_device_mesh("cpu", tuple(case["sizes"]), mesh_dim_names=names)
        for group in case["flatten"]:
            mesh[tuple(group.split(","))]._flatten()
        meshes[key] = mesh
    return meshes[key]


def equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    return list(a.shape) == list(b.shape) and bool((a.double() == b.double()).all())


def run_case(case: dict, rank: int, meshes: dict) -> dict:  # noqa: ANN001
    mesh = mesh_for(case, meshes)
    sizes, shape = tuple(case["sizes"]), tuple(case["shape"])
    coord = coordinate(rank, sizes)
    src_state, dst_state = State.parse(case["src"]), State.parse(case["dst"])
    src, dst = (
        rt.placements_of(case["src"], sizes),
        rt.placements_of(case["dst"], sizes),
    )
    local = source_block(shape, src_state, sizes, coord).to(DTYPES[case["dtype"]])
    stride = [1] * len(shape)
    for d in reversed(range(len(shape) - 1)):
        stride[d] = stride[d + 1] * shape[d + 1]
    dt = DTensor.from_local(
        local, mesh, src, run_check=False, shape=torch.Size(shape), stride=tuple(stride)
    )
    ours = reduced(rt.redistribute(dt, dst).to_local().clone(), dst_state, sizes, mesh)
    truth = source_value(linear_index(shape, box(shape, dst_state, sizes, coord)))
    line = {"case": case["id"], "ours_ok": equal(ours, truth)}
    try:
        theirs = dt.redistribute(mesh, dst).to_local().clone()
    except Exception as e:  # DTensor's own failure, reported
        line["torch_raised"] = f"{type(e).__name__}: {str(e)[:160]}"
        return line
    line["torch_equal"] = equal(reduced(theirs, dst_state, sizes, mesh), ours)
    return line


if __name__ == "__main__":
    serve_cases(run_case)
