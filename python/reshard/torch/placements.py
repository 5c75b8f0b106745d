"""DTensor placements and Reshard's placement text (docs/DESIGN.md §2.2), both
ways: Shard, Replicate, Partial and its reduce op, and _StridedShard, which
encodes a shard order (the split factor of a mesh dim is the product of the
sizes of the mesh dims that split the tensor dim before it and come after it
in the placements). A _StridedShard that no shard order explains is refused
with the reason, as is a Partial op the planner does not have."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from torch.distributed.tensor import Partial, Placement, Replicate, Shard
from torch.distributed.tensor.placement_types import _StridedShard

from reshard._errors import invalid_argument

# The Partial ops Reshard plans (docs/DESIGN.md §2.2), by torch's names.
REDUCE_OPS = ("sum", "avg", "max", "min")


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


def _orders(
    placements: Sequence[Placement], sizes: Sequence[int]
) -> dict[int, list[int]]:
    """Each sharded tensor dim's mesh dims in split order, outermost first,
    decoded from the split factors right to left."""
    orders: dict[int, list[int]] = {}
    for mesh_dim in reversed(range(len(placements))):
        p = placements[mesh_dim]
        if not _is_shard(p):
            continue
        factor = p.split_factor if isinstance(p, _StridedShard) else 1
        order = orders.setdefault(p.dim, [])
        # The place whose outer splits (sizes of the mesh dims before it)
        # multiply to exactly the split factor.
        product, place = 1, None
        for i in range(len(order) + 1):
            if product == factor:
                place = i
                break
            if i < len(order):
                product *= sizes[order[i]]
        if place is None:
            raise invalid_argument(
                f"placements[{mesh_dim}]: {p!r} has split factor {factor}, which no "
                f"shard order of tensor dim {p.dim} gives (the mesh dims splitting it "
                f"after mesh dim {mesh_dim}: {order}, sizes "
                f"{[sizes[d] for d in order]})"
            )
        order.insert(place, mesh_dim)
    return orders


def placement_text(
    placements: Sequence[Placement], sizes: Sequence[int], ndim: int
) -> str:
    """The text of DTensor `placements` on a mesh of `sizes` for a tensor of
    `ndim` dims: "S(0)[1],S(0)[0],R" (the order suffix where ≥ 2 mesh dims
    split one tensor dim)."""
    return _text(tuple(placements), tuple(sizes), ndim)


# A training loop converts the same few placements over and over.
@functools.lru_cache(maxsize=4096)
def _text(placements: tuple[Placement, ...], sizes: tuple[int, ...], ndim: int) -> str:
    if len(placements) != len(sizes):
        raise invalid_argument(
            f"placements: {len(placements)} for a mesh of {len(sizes)} dims"
        )
    normalized = [
        _with_dim(p, p.dim + ndim) if _is_shard(p) and p.dim < 0 else p
        for p in placements
    ]
    orders = _orders(normalized, sizes)
    parts = []
    for mesh_dim, p in enumerate(normalized):
        if _is_shard(p):
            order = orders[p.dim]
            suffix = f"[{order.index(mesh_dim)}]" if len(order) >= 2 else ""
            parts.append(f"S({p.dim}){suffix}")
        elif isinstance(p, Replicate):
            parts.append("R")
        elif isinstance(p, Partial):
            if p.reduce_op not in REDUCE_OPS:
                raise invalid_argument(
                    f'placements[{mesh_dim}]: Partial op "{p.reduce_op}" is not one '
                    f"Reshard plans (known: {', '.join(REDUCE_OPS)})"
                )
            parts.append(f"P({p.reduce_op})")
        else:
            raise invalid_argument(
                f"placements[{mesh_dim}]: {p!r} is not a Shard, _StridedShard, "
                "Replicate or Partial"
            )
    return ",".join(parts)


def _is_shard(p: Placement) -> bool:
    return isinstance(p, Shard | _StridedShard)


def _with_dim(p: Placement, dim: int) -> Placement:
    if isinstance(p, _StridedShard):
        return _StridedShard(dim, split_factor=p.split_factor)
    return Shard(dim)


def placements_of(text: str, sizes: Sequence[int]) -> tuple[Placement, ...]:
    """DTensor placements of a printed state ("S(0)[1],S(0)[0],R", as a
    plan's src and dst are printed): a mesh dim that splits its tensor dim
    after mesh dims that follow it in the placements is a _StridedShard."""
    state = State.parse(text)
    if len(state.kinds) != len(sizes):
        raise invalid_argument(
            f'state "{text}": {len(state.kinds)} entries for a mesh of '
            f"{len(sizes)} dims"
        )
    placements: list[Placement] = []
    for kind, dim, op in zip(state.kinds, state.shard_dims, state.ops, strict=True):
        if kind == "S":
            placements.append(Shard(dim))
        elif kind == "P":
            placements.append(Partial(op))
        else:
            placements.append(Replicate())
    for dim, order in state.orders.items():
        for i, mesh_dim in enumerate(order):
            factor = 1
            for earlier in order[:i]:
                if earlier > mesh_dim:
                    factor *= sizes[earlier]
            if factor > 1:
                placements[mesh_dim] = _StridedShard(dim, split_factor=factor)
    return tuple(placements)
