"""reshard.torch.redistribute: DTensor.redistribute planned by Reshard and run
by run_plan; explain: Reshard's plan beside PyTorch's own transform sequence
for the same request.

Autograd is not supported: a DTensor that requires grad is refused (use
DTensor.redistribute where a backward is needed)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from torch.distributed.tensor import DTensor, Placement

from reshard._errors import Error, StatusCode
from reshard._plan import Plan
from reshard.torch.dtypes import dtype_name
from reshard.torch.mesh import mesh_of
from reshard.torch.placements import placement_text, placements_of
from reshard.torch.run_plan import run_plan

if TYPE_CHECKING:
    from reshard.client import Client


def plan_for(
    dtensor: DTensor,
    placements: Sequence[Placement],
    client: Client | None = None,
    **options: Any,
) -> Plan:
    """Reshard's plan taking `dtensor` to `placements`: in this process, or
    by `client`'s service when given (option keywords as reshard.plan's)."""
    sizes = tuple(dtensor.device_mesh.shape)
    mesh = mesh_of(dtensor.device_mesh)
    shape = tuple(dtensor.shape)
    src = placement_text(dtensor.placements, sizes, dtensor.ndim)
    dst = placement_text(placements, sizes, dtensor.ndim)
    dtype = dtype_name(dtensor.dtype)
    if client is not None:
        return client.plan(mesh, shape, src, dst, dtype, **options)
    from reshard._inprocess import plan as plan_in_process

    return plan_in_process(mesh, shape, src, dst, dtype, **options)


def dst_placements(plan: Plan) -> tuple[Placement, ...]:
    """The DTensor placements a plan ends in (its dst)."""
    return placements_of(plan.dst, plan.mesh.shape)


def redistribute(
    dtensor: DTensor,
    placements: Sequence[Placement],
    planner: str = "optimal",
    client: Client | None = None,
    **options: Any,
) -> DTensor:
    """A DTensor equal to `dtensor.redistribute(dtensor.device_mesh,
    placements)`, planned by Reshard (in-process, or by `client`) and run on
    the mesh's process groups. Every rank of the mesh calls it."""
    if dtensor.requires_grad:
        raise Error(
            StatusCode.FAILED_PRECONDITION,
            "dtensor: requires_grad is set, and reshard.torch.redistribute has no "
            "backward; use DTensor.redistribute, or detach() first",
        )
    plan = plan_for(dtensor, placements, client, planner=planner, **options)
    local = run_plan(plan, dtensor.to_local(), dtensor.device_mesh)
    return DTensor.from_local(
        local,
        dtensor.device_mesh,
        dst_placements(plan),
        run_check=False,
        shape=dtensor.shape,
        stride=dtensor.stride(),
    )


def _torch_steps(dtensor: DTensor, placements: Sequence[Placement]) -> list[str]:
    """PyTorch's own transform sequence for the request (its private
    _gen_transform_infos; a change in the pin fails test_torch_redistribute)."""
    from torch.distributed.tensor import _redistribute
    from torch.distributed.tensor._dtensor_spec import DTensorSpec

    src = dtensor._spec
    dst = DTensorSpec(src.mesh, tuple(placements), tensor_meta=src.tensor_meta)
    infos = _redistribute._gen_transform_infos_non_cached(src, dst)
    lines = []
    for info in infos:
        before, after = info.src_dst_placements
        lines.append(f"mesh dim {info.mesh_dim}: {before} -> {after}")
    return lines


def explain(
    dtensor: DTensor,
    placements: Sequence[Placement],
    planner: str = "optimal",
    client: Client | None = None,
    **options: Any,
) -> str:
    """Reshard's plan (its step table and modelled time) and, below it,
    PyTorch's transform sequence for the same request."""
    plan = plan_for(dtensor, placements, client, planner=planner, **options)
    theirs = _torch_steps(dtensor, placements)
    lines = "".join(f"  {line}\n" for line in theirs) or "  (nothing to do)\n"
    return (
        f"Reshard ({plan.planner}):\n{plan.summary()}"
        f"PyTorch {_torch_version()} ({len(theirs)} transforms):\n{lines}"
    )


def _torch_version() -> str:
    import torch

    return str(torch.__version__)
