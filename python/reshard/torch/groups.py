"""Process groups of a DeviceMesh over one or more of its dims, as a rank
program's steps name them, kept per DeviceMesh by a weak reference and
destroyed with it.

One dim's group is the mesh's own (`get_group`). A group over several dims
(a merged step, docs/DESIGN.md §2.1) is created once per mesh and dims, on
every rank in the same order (creating one is collective), with its members
in row-major order over those dims. A step's members come from the program
in group order; torch numbers a group's ranks its own way, so each step gets
the permutation between the two, or None where they agree."""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh


@dataclass(frozen=True)
class StepGroup:
    """A step's process group; `order[i]` is the program's member index of
    torch group rank i (None: the same order)."""

    group: dist.ProcessGroup
    order: tuple[int, ...] | None


class _MeshGroups:
    """One DeviceMesh's merged groups and its ranks in row-major order."""

    def __init__(self, mesh: DeviceMesh) -> None:
        self.ranks = [int(r) for r in mesh.mesh.flatten().tolist()]
        self.merged: dict[tuple[int, ...], dist.ProcessGroup] = {}
        self.orders: dict[tuple[tuple[int, ...], tuple[int, ...]], StepGroup] = {}


_MESHES: weakref.WeakKeyDictionary[DeviceMesh, _MeshGroups] = (
    weakref.WeakKeyDictionary()
)


def _mesh_groups(mesh: DeviceMesh) -> _MeshGroups:
    known = _MESHES.get(mesh)
    if known is None:
        known = _MESHES[mesh] = _MeshGroups(mesh)
        finalizer = weakref.finalize(mesh, _destroy, known.merged)
        finalizer.atexit = False
    return known


def _destroy(merged: dict[tuple[int, ...], dist.ProcessGroup]) -> None:
    """Releases a collected mesh's merged groups (their ranks' own)."""
    if not dist.is_initialized():
        return
    for group in merged.values():
        if group is not None and group is not dist.GroupMember.NON_GROUP_MEMBER:
            dist.destroy_process_group(group)
    merged.clear()


def _merged_group(
    mesh: DeviceMesh, known: _MeshGroups, dims: tuple[int, ...]
) -> dist.ProcessGroup:
    group = known.merged.get(dims)
    if group is None:
        rest = [d for d in range(mesh.ndim) if d not in dims]
        size = math.prod(mesh.shape[d] for d in dims)
        rows = mesh.mesh.permute(*rest, *dims).reshape(-1, size).tolist()
        group, _ = dist.new_subgroups_by_enumeration(
            [[int(r) for r in row] for row in rows]
        )
        known.merged[dims] = group
    return group


def position_of(mesh: DeviceMesh) -> int:
    """This rank's row-major place in `mesh` (what rank programs are
    compiled for)."""
    return _mesh_groups(mesh).ranks.index(dist.get_rank())


def step_group(
    mesh: DeviceMesh, dims: tuple[int, ...], members: tuple[int, ...]
) -> StepGroup:
    """The group over `dims` whose members, in group order, are the mesh
    positions `members`."""
    known = _mesh_groups(mesh)
    key = (dims, members)
    found = known.orders.get(key)
    if found is not None:
        return found
    if len(dims) == 1:
        group = mesh.get_group(dims[0])
    else:
        group = _merged_group(mesh, known, dims)
    index = {known.ranks[p]: i for i, p in enumerate(members)}
    order = tuple(index[r] for r in dist.get_process_group_ranks(group))
    found = StepGroup(group, None if order == tuple(range(len(order))) else order)
    known.orders[key] = found
    return found
