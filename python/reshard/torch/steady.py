"""Compiled programs for repeated redistributions: a training loop asks for
the same ones every step, and a repeat does no text conversion, no planning
and no native call.

Kept per DeviceMesh by a weak reference (nothing here refers to the mesh, so
that it and its process groups go when the caller drops it), keyed as
PyTorch keys its own transform cache: the source placements with the
tensor's shape, stride and dtype, the target placements and Reshard's
options, and the number of flattened meshes its root has (a later
`_flatten()` can change the optimal plan). Each mesh keeps its
MAX_PER_MESH most recently used entries. Only in-process plans are kept: a
client's service may answer differently over time."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass

from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import Placement

from reshard.torch.program import Program

MAX_PER_MESH = 256


@dataclass(frozen=True)
class Compiled:
    """A redistribution compiled for this rank: the program and the
    placements its result has (a shard order the request implies included)."""

    program: Program
    placements: tuple[Placement, ...]


_MESHES: weakref.WeakKeyDictionary[DeviceMesh, OrderedDict[Hashable, Compiled]] = (
    weakref.WeakKeyDictionary()
)
_lock = threading.Lock()


def flattened_count(mesh: DeviceMesh) -> int:
    return len(mesh._get_root_mesh()._flatten_mapping)


def lookup(mesh: DeviceMesh, key: Hashable) -> Compiled | None:
    with _lock:
        entries = _MESHES.get(mesh)
        if entries is None:
            return None
        found = entries.get(key)
        if found is not None:
            entries.move_to_end(key)
        return found


def store(mesh: DeviceMesh, key: Hashable, compiled: Compiled) -> None:
    with _lock:
        entries = _MESHES.get(mesh)
        if entries is None:
            entries = _MESHES[mesh] = OrderedDict()
        entries[key] = compiled
        while len(entries) > MAX_PER_MESH:
            entries.popitem(last=False)


def cache_size(mesh: DeviceMesh) -> int:
    """The entries kept for `mesh` (for tests)."""
    with _lock:
        return len(_MESHES.get(mesh, ()))
