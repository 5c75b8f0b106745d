"""docs/DESIGN.md §6.2's data rule and checksum in torch, for the tests of
reshard.torch.run_plan: the source block each rank starts from (Partial
sources split as the executor splits them) and the checksum of a result."""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.distributed as dist
from layout import Box, State, box, group_members
from torch.distributed.device_mesh import DeviceMesh

CHECKSUM_MODULUS = (1 << 61) - 1


def linear_index(shape: Sequence[int], b: Box) -> torch.Tensor:
    """The global row-major index of every element of block `b`."""
    index = torch.zeros([hi - lo for lo, hi in b], dtype=torch.int64)
    stride = 1
    for d in reversed(range(len(shape))):
        lo, hi = b[d]
        view = [1] * len(shape)
        view[d] = hi - lo
        index += (torch.arange(lo, hi, dtype=torch.int64) * stride).view(view)
        stride *= shape[d]
    return index


def source_value(i: torch.Tensor) -> torch.Tensor:
    return i % 31 - 15


def source_block(
    shape: Sequence[int], src: State, sizes: Sequence[int], coord: Sequence[int]
) -> torch.Tensor:
    """Rank `coord`'s block under `src`, as integers (int64)."""
    i = linear_index(shape, box(shape, src, sizes, coord))
    g = source_value(i)
    dims = src.partial_dims()
    if not dims:
        return g
    n = 1
    for m in dims:
        n *= sizes[m]
    members = group_members([0] * len(sizes), dims, sizes)
    mine = tuple(coord[m] for m in dims)
    q = [tuple(c[m] for m in dims) for c in members].index(mine)
    ops = {src.ops[m] for m in dims}
    divisor = 1
    for m in dims:
        if src.ops[m] == "avg":
            divisor *= sizes[m]
    if ops <= {"sum", "avg"}:
        magnitude = g.abs()
        part = magnitude // n + ((i + q) % n < magnitude % n).long()
        return torch.where(g < 0, -1, 1) * divisor * part
    delta = 1 + (i + q) % 3
    other = g - delta if ops == {"max"} else g + delta
    return torch.where(i % n == q, g, other)


def checksum(x: torch.Tensor) -> int:
    """Σ (k + 1)·x_k mod 2^61 − 1 over the row-major local index k."""
    total = 0
    for k, value in enumerate(x.flatten().tolist()):
        total = (total + (k + 1) * (round(value) % CHECKSUM_MODULUS)) % CHECKSUM_MODULUS
    return total


def reduced(
    x: torch.Tensor, dst: State, sizes: tuple[int, ...], mesh: DeviceMesh
) -> torch.Tensor:
    """`x` with dst's Partial dims reduced (the validation collective): max
    and min dim by dim; sum and avg summed over every dim, then divided once
    by the avg dims' sizes, so that no intermediate value is rounded."""
    divisor = 1
    for m in dst.partial_dims():
        op = dst.ops[m]
        reduce = {"max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}.get(
            op, dist.ReduceOp.SUM
        )
        dist.all_reduce(x, op=reduce, group=mesh.get_group(m))
        divisor *= sizes[m] if op == "avg" else 1
    if divisor == 1:
        return x
    if x.dtype.is_floating_point:
        return x / divisor
    return torch.div(x, divisor, rounding_mode="trunc")
