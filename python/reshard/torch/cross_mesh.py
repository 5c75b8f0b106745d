"""reshard.torch.plan_cross_mesh: a DTensor's (or a state dict's) move to
another DeviceMesh of the same world with new placements, planned by
Reshard (docs/DESIGN.md §9); PyTorch's DTensor.redistribute refuses a
change of mesh. Running such a plan is not built yet."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import DTensor, Placement

from reshard._cross_plan import CrossMeshPlan
from reshard._errors import invalid_argument
from reshard.torch.dtypes import dtype_name
from reshard.torch.mesh import mesh_of
from reshard.torch.placements import placement_text

if TYPE_CHECKING:
    from reshard.client import Client


def plan_cross_mesh(
    dtensor: DTensor,
    device_mesh: DeviceMesh,
    placements: Sequence[Placement],
    client: Client | None = None,
    **options: Any,
) -> CrossMeshPlan:
    """Reshard's plan taking `dtensor` from its mesh to `placements` on
    `device_mesh`; both meshes are sub-meshes of one world, their ranks the
    world's. In this process, or by `client`'s service when given; keywords
    as reshard.plan_cross_mesh's (unavailable_ranks=, cross_link=, and
    the options)."""
    src_mesh = mesh_of(dtensor.device_mesh)
    dst_mesh = mesh_of(device_mesh)
    src = placement_text(
        dtensor.placements, tuple(dtensor.device_mesh.shape), dtensor.ndim
    )
    dst = placement_text(placements, tuple(device_mesh.shape), dtensor.ndim)
    args = (
        src_mesh,
        dst_mesh,
        tuple(dtensor.shape),
        src,
        dst,
        dtype_name(dtensor.dtype),
    )
    if client is not None:
        return client.plan_cross_mesh(*args, **options)
    from reshard._inprocess import plan_cross_mesh as in_process

    return in_process(*args, **options)


def plan_state_dict_cross_mesh(
    state_dict: Mapping[str, Any],
    device_mesh: DeviceMesh,
    placements: Callable[[str, DTensor], Sequence[Placement]],
    client: Client | None = None,
    **options: Any,
) -> dict[str, CrossMeshPlan]:
    """plan_cross_mesh for every DTensor of a module's `state_dict`, each to
    `placements(name, dtensor)` on `device_mesh`, by name. A value that is
    not a DTensor is refused, naming its key."""
    plans = {}
    for name, value in state_dict.items():
        if not isinstance(value, DTensor):
            raise invalid_argument(f"state_dict[{name!r}]: not a DTensor")
        plans[name] = plan_cross_mesh(
            value, device_mesh, placements(name, value), client, **options
        )
    return plans
