"""The tests' own oracle of which block of the global tensor a rank holds
in a state (docs/DESIGN.md §2.2; the package derives no boxes, it runs the
executor's rank programs): each sharded tensor dim is split by its mesh dims
in shard order, outermost first, each split as torch.chunk splits (an extent
L over n parts: full = ceil(L/n), part r covers [r·full, min(L, (r+1)·full)))."""

from __future__ import annotations

from collections.abc import Sequence

from reshard.torch.placements import State

__all__ = ["Box", "State", "box", "chunk", "coordinate", "group_members", "position"]


def chunk(lo: int, hi: int, parts: int, index: int) -> tuple[int, int]:
    """Part `index` of [lo, hi) split in `parts` as torch.chunk splits."""
    extent = hi - lo
    full = -(-extent // parts)
    return lo + min(extent, index * full), lo + min(extent, (index + 1) * full)


Box = tuple[tuple[int, int], ...]  # per tensor dim: [lo, hi)


def box(
    shape: Sequence[int], state: State, sizes: Sequence[int], coord: Sequence[int]
) -> Box:
    """The block the rank at mesh coordinate `coord` holds in `state`."""
    out = []
    for d, extent in enumerate(shape):
        lo, hi = 0, extent
        for mesh_dim in state.orders.get(d, ()):
            lo, hi = chunk(lo, hi, sizes[mesh_dim], coord[mesh_dim])
        out.append((lo, hi))
    return tuple(out)


def coordinate(position: int, sizes: Sequence[int]) -> tuple[int, ...]:
    """The mesh coordinate of a row-major position."""
    coord = []
    for size in reversed(sizes):
        coord.append(position % size)
        position //= size
    return tuple(reversed(coord))


def group_members(
    coord: Sequence[int], group: Sequence[int], sizes: Sequence[int]
) -> list[tuple[int, ...]]:
    """The coordinates of the members of `coord`'s group over mesh dims
    `group` (outermost first), in group order (docs/DESIGN.md §2.1)."""
    members = [tuple(coord)]
    for mesh_dim in group:
        members = [
            m[:mesh_dim] + (a,) + m[mesh_dim + 1 :]
            for m in members
            for a in range(sizes[mesh_dim])
        ]
    return members


def position(coord: Sequence[int], sizes: Sequence[int]) -> int:
    p = 0
    for c, s in zip(coord, sizes, strict=True):
        p = p * s + c
    return p
