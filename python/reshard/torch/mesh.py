"""A DeviceMesh as a Reshard mesh: its sizes, dim names, the ranks in
row-major order, and the flattened meshes registered on its root mesh
(`mesh["A", "C"]._flatten()`), each matched to the dims whose group it is.
The flattened meshes are private torch state (`_get_root_mesh`,
`_flatten_mapping`); tests/python/test_torch_convert.py fails loudly when
the pinned release changes them."""

from __future__ import annotations

import itertools
import weakref

from torch.distributed.device_mesh import DeviceMesh

from reshard._errors import invalid_argument
from reshard._values import Mesh


def _group_of(mesh: DeviceMesh, dims: tuple[int, ...]) -> list[int]:
    """The ranks of this rank's group over `dims`, row-major."""
    coordinate = mesh.get_coordinate()
    if coordinate is None:
        raise invalid_argument("mesh: this rank is not in the DeviceMesh")
    index: list[int | slice] = list(coordinate)
    for d in dims:
        index[d] = slice(None)
    return [int(r) for r in mesh.mesh[tuple(index)].flatten().tolist()]


def _flattened_dims(mesh: DeviceMesh, flat: DeviceMesh) -> tuple[int, ...] | None:
    """The dims of `mesh` whose group `flat` (a 1-D flattened mesh) is."""
    ranks = [int(r) for r in flat.mesh.flatten().tolist()]
    for count in range(2, mesh.ndim + 1):
        for dims in itertools.combinations(range(mesh.ndim), count):
            if _group_of(mesh, dims) == ranks:
                return dims
    return None


# Converted meshes, by DeviceMesh and the number of flattened meshes its
# root had then (a later _flatten() converts again).
_CONVERTED: weakref.WeakKeyDictionary[DeviceMesh, tuple[int, Mesh]] = (
    weakref.WeakKeyDictionary()
)


def mesh_of(device_mesh: DeviceMesh) -> Mesh:
    """The Reshard mesh of `device_mesh` (on this rank: the flattened
    groups are matched through this rank's groups)."""
    flattened_count = len(device_mesh._get_root_mesh()._flatten_mapping)
    known = _CONVERTED.get(device_mesh)
    if known is not None and known[0] == flattened_count:
        return known[1]
    mesh = _convert(device_mesh)
    _CONVERTED[device_mesh] = (flattened_count, mesh)
    return mesh


def _convert(device_mesh: DeviceMesh) -> Mesh:
    names = device_mesh.mesh_dim_names or tuple(
        f"d{i}" for i in range(device_mesh.ndim)
    )
    root = device_mesh._get_root_mesh()
    flattened = []
    for flat in root._flatten_mapping.values():
        if flat.ndim != 1:
            continue
        dims = _flattened_dims(device_mesh, flat)
        if dims is not None and dims not in flattened:
            flattened.append(dims)
    return Mesh(
        shape=tuple(device_mesh.shape),
        dim_names=tuple(names),
        flattened=tuple(tuple(names[d] for d in dims) for dims in sorted(flattened)),
        rank_map=tuple(int(r) for r in device_mesh.mesh.flatten().tolist()),
    )
