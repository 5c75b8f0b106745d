"""Which block of the global tensor a rank holds in a state (docs/DESIGN.md
§2.2): each sharded tensor dim is split by its mesh dims in shard order,
outermost first, each split as torch.chunk splits (an extent L over n parts:
full = ceil(L/n), part r covers [r·full, min(L, (r+1)·full)))."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from reshard._errors import invalid_argument

_ENTRY = re.compile(r"S\((\d+)\)(?:\[(\d+)\])?|R|P\((\w+)\)")


@dataclass(frozen=True)
class State:
    """A printed state ("S(0)[1],S(0)[0],P(sum)") read: per mesh dim its
    kind ("S", "R" or "P"), shard dim and reduce op; per sharded tensor dim
    its mesh dims in split order."""

    kinds: tuple[str, ...]
    shard_dims: tuple[int | None, ...]
    ops: tuple[str | None, ...]
    orders: dict[int, tuple[int, ...]]

    @classmethod
    def parse(cls, text: str) -> State:
        kinds, dims, ops = [], [], []
        places: dict[int, list[tuple[int, int]]] = {}
        for mesh_dim, entry in enumerate(text.split(",")):
            match = _ENTRY.fullmatch(entry.strip())
            if match is None:
                raise invalid_argument(f'state "{text}": cannot read "{entry}"')
            dim, place, op = match.groups()
            kind = "S" if dim is not None else ("P" if op is not None else "R")
            kinds.append(kind)
            dims.append(int(dim) if dim is not None else None)
            ops.append(op)
            if dim is not None:
                places.setdefault(int(dim), []).append((int(place or 0), mesh_dim))
        orders = {d: tuple(m for _, m in sorted(v)) for d, v in places.items()}
        return cls(tuple(kinds), tuple(dims), tuple(ops), orders)

    def partial_dims(self) -> tuple[int, ...]:
        return tuple(m for m, k in enumerate(self.kinds) if k == "P")


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
