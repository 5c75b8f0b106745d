"""Reshard from PyTorch: DeviceMeshes, DTensor placements and DTensors as
Reshard's meshes, placement text and plan requests, and plans for them.

    import reshard.torch
    plan = reshard.torch.plan(dtensor, [Replicate(), Shard(0)])
    print(plan.summary())

`run_plan(plan, local, device_mesh)` runs a plan (a Plan or its JSON; no
gRPC or native module needed) on torch's process groups
(reshard/torch/run_plan.py). Imported only when asked for (`import reshard`
never imports torch)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch.distributed.tensor import DTensor, Placement

from reshard._errors import invalid_argument
from reshard._inprocess import plan as plan_in_process
from reshard._plan import Plan
from reshard._values import PlanOptions
from reshard.torch.mesh import mesh_of
from reshard.torch.placements import REDUCE_OPS, placement_text, placements_of
from reshard.torch.run_plan import run_plan

# torch's dtypes by the planner's names (docs/DESIGN.md §2).
DTYPES = {
    torch.float32: "float32",
    torch.float64: "float64",
    torch.bfloat16: "bfloat16",
    torch.float16: "float16",
    torch.int32: "int32",
    torch.int64: "int64",
}

__all__ = [
    "REDUCE_OPS",
    "dtype_name",
    "dst_placements",
    "mesh_of",
    "placement_text",
    "placements_of",
    "plan",
    "run_plan",
]


def dtype_name(dtype: torch.dtype) -> str:
    """The planner's name of a torch dtype; INVALID_ARGUMENT for others."""
    if dtype not in DTYPES:
        raise invalid_argument(
            f"tensor.dtype: {dtype} is not one Reshard plans (known: "
            f"{', '.join(str(d) for d in DTYPES)})"
        )
    return DTYPES[dtype]


def plan(
    dtensor: DTensor,
    placements: Sequence[Placement],
    options: PlanOptions | None = None,
    **option_kwargs: Any,
) -> Plan:
    """Reshard's plan taking `dtensor` to `placements` on its DeviceMesh,
    in this process (option keywords as reshard.plan's)."""
    device_mesh = dtensor.device_mesh
    sizes = tuple(device_mesh.shape)
    ndim = dtensor.ndim
    return plan_in_process(
        mesh_of(device_mesh),
        tuple(dtensor.shape),
        placement_text(dtensor.placements, sizes, ndim),
        placement_text(placements, sizes, ndim),
        dtype_name(dtensor.dtype),
        options,
        **option_kwargs,
    )


def dst_placements(plan: Plan) -> tuple[Placement, ...]:
    """The DTensor placements a plan ends in (its dst)."""
    return placements_of(plan.dst, plan.mesh.shape)
