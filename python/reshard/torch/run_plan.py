"""reshard.torch.run_plan: a plan run on torch process groups, one rank's
local tensor in, its local tensor under the plan's dst out.

Every collective works on padded blocks (docs/DESIGN.md §2.3): each member's
block is known from the state and its coordinates, padded to the group's
largest, exchanged, and trimmed. Members are matched to group ranks through
their global ranks, so the group's own rank order never matters. Ops by
backend: all_gather, all_reduce and all_to_all_single everywhere;
reduce_scatter_tensor on NCCL, and on Gloo (which has none for CPU tensors)
an all_reduce that each rank then cuts its block from. avg is a sum, then an
IEEE division (integers: truncating), as the executor's contract says."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh

from reshard._errors import Error, StatusCode, invalid_argument
from reshard._plan import Plan, Step
from reshard.torch.layout import Box, State, box, coordinate, group_members, position

_REDUCE_OPS = {
    "sum": dist.ReduceOp.SUM,
    "max": dist.ReduceOp.MAX,
    "min": dist.ReduceOp.MIN,
}


def _extents(b: Box) -> list[int]:
    return [hi - lo for lo, hi in b]


def _region(x: torch.Tensor, within: Box, region: Box) -> torch.Tensor:
    """The part of `x` (holding the block `within`) that is `region`."""
    for d, ((lo, _), (rlo, rhi)) in enumerate(zip(within, region, strict=True)):
        x = x.narrow(d, rlo - lo, rhi - rlo)
    return x


def _intersect(a: Box, b: Box) -> Box:
    return tuple(
        (max(alo, blo), max(max(alo, blo), min(ahi, bhi)))
        for (alo, ahi), (blo, bhi) in zip(a, b, strict=True)
    )


def _padded(x: torch.Tensor, shape: Sequence[int]) -> torch.Tensor:
    if list(x.shape) == list(shape):
        return x.contiguous()
    out = x.new_zeros(shape)
    out[tuple(slice(0, e) for e in x.shape)] = x
    return out


class _Run:
    """One rank's state while it runs a plan on a DeviceMesh."""

    def __init__(self, plan: Plan, mesh: DeviceMesh) -> None:
        self.plan, self.mesh = plan, mesh
        self.sizes = tuple(plan.mesh.shape)
        if tuple(mesh.shape) != self.sizes:
            raise invalid_argument(
                f"mesh: the DeviceMesh is {tuple(mesh.shape)}, the plan's {self.sizes}"
            )
        self.ranks = [int(r) for r in mesh.mesh.flatten().tolist()]
        self.coord = coordinate(self.ranks.index(dist.get_rank()), self.sizes)
        self.backend = dist.get_backend()

    def box(self, state: State, coord: Sequence[int] | None = None) -> Box:
        return box(self.plan.shape, state, self.sizes, coord or self.coord)

    def group(
        self, dims: tuple[int, ...]
    ) -> tuple[dist.ProcessGroup, list[tuple[int, ...]]]:
        """The process group over `dims` and its members' coordinates by
        group rank."""
        group = _group_of(self.mesh, dims, self.ranks, self.sizes)
        by_rank = {
            self.ranks[position(c, self.sizes)]: c
            for c in group_members(self.coord, dims, self.sizes)
        }
        members = [by_rank[dist.get_global_rank(group, i)] for i in range(len(by_rank))]
        return group, members

    def reduce(
        self, x: torch.Tensor, step: Step, n: int, group: dist.ProcessGroup
    ) -> None:
        op, divisor = _reduction(step, n)
        dist.all_reduce(x, op=op, group=group)
        _divide(x, divisor)


def _reduction(step: Step, n: int) -> tuple[dist.ReduceOp, int]:
    """The collective's op and the divisor after it: avg (and a {sum, avg}
    mix) is a sum, then a division by n (or by the step's avg_divisor)."""
    op = step.reduce_op or "sum"
    if op == "avg":
        return _REDUCE_OPS["sum"], n
    return _REDUCE_OPS[op], step.avg_divisor


def _divide(x: torch.Tensor, divisor: int) -> None:
    if divisor == 1:
        return
    if x.dtype.is_floating_point:
        x.div_(divisor)
    else:
        x.copy_(torch.div(x, divisor, rounding_mode="trunc"))


# Process groups over flattened dims, by DeviceMesh and dims: creating one is
# collective, so every rank creates the same ones in the same order (the
# plan's step order, the same on every rank).
_GROUPS: dict[tuple[int, tuple[int, ...]], dist.ProcessGroup] = {}


def _group_of(
    mesh: DeviceMesh, dims: tuple[int, ...], ranks: list[int], sizes: tuple[int, ...]
) -> dist.ProcessGroup:
    if len(dims) == 1:
        return mesh.get_group(dims[0])
    key = (id(mesh), dims)
    if key not in _GROUPS:
        lists, seen = [], set()
        for p in range(len(ranks)):
            members = group_members(coordinate(p, sizes), dims, sizes)
            first = position(members[0], sizes)
            if first not in seen:
                seen.add(first)
                lists.append([ranks[position(m, sizes)] for m in members])
        mine, _ = dist.new_subgroups_by_enumeration(lists)
        _GROUPS[key] = mine
    return _GROUPS[key]


def _gather(
    run: _Run, x: torch.Tensor, step: Step, frm: State, to: State
) -> torch.Tensor:
    group, members = run.group(step.mesh_dims)
    boxes = [run.box(frm, c) for c in members]
    shape = [max(e) for e in zip(*(_extents(b) for b in boxes), strict=True)]
    # Gloo wants the output as the blocks concatenated along dim 0.
    flat = x.new_empty([len(members) * shape[0], *shape[1:]])
    dist.all_gather_into_tensor(flat, _padded(x, shape), group=group)
    out_box = run.box(to)
    if _concatenated_along_0(boxes, shape, out_box):
        return flat  # the blocks in group order are the result: no copy
    parts = flat.view(len(members), *shape)
    out = x.new_empty(_extents(out_box))
    for part, b in zip(parts, boxes, strict=True):
        piece = part[tuple(slice(0, e) for e in _extents(b))]
        _region(out, out_box, b).copy_(piece)
    return out


def _concatenated_along_0(boxes: list[Box], shape: list[int], out_box: Box) -> bool:
    """Whether unpadded blocks, in group order, tile `out_box` along dim 0."""
    if any(_extents(b) != shape for b in boxes):
        return False
    starts = [b[0][0] for b in boxes]
    return starts == [out_box[0][0] + i * shape[0] for i in range(len(boxes))] and all(
        b[1:] == out_box[1:] for b in boxes
    )


def _reduce_scatter(
    run: _Run, x: torch.Tensor, step: Step, frm: State, to: State
) -> torch.Tensor:
    group, members = run.group(step.mesh_dims)
    n = len(members)
    in_box = run.box(frm)
    if run.backend != "nccl":
        run.reduce(x, step, n, group)
        return _region(x, in_box, run.box(to)).contiguous()
    boxes = [run.box(to, c) for c in members]
    shape = [max(e) for e in zip(*(_extents(b) for b in boxes), strict=True)]
    stacked = torch.stack([_padded(_region(x, in_box, b), shape) for b in boxes])
    out = x.new_empty(shape)
    op, divisor = _reduction(step, n)
    dist.reduce_scatter_tensor(out, stacked, op=op, group=group)
    _divide(out, divisor)
    mine = run.box(to)
    return out[tuple(slice(0, e) for e in _extents(mine))].contiguous()


def _all_to_all(
    run: _Run, x: torch.Tensor, step: Step, frm: State, to: State
) -> torch.Tensor:
    group, members = run.group(step.mesh_dims)
    in_box, out_box = run.box(frm), run.box(to)
    # The largest piece any member sends any other, known to all.
    all_in = [run.box(frm, c) for c in members]
    all_out = [run.box(to, c) for c in members]
    shape = [0] * len(run.plan.shape)
    for a in all_in:
        for b in all_out:
            shape = [
                max(s, e)
                for s, e in zip(shape, _extents(_intersect(a, b)), strict=True)
            ]
    send = torch.stack(
        [_padded(_region(x, in_box, _intersect(in_box, b)), shape) for b in all_out]
    )
    received = torch.empty_like(send)
    dist.all_to_all_single(received, send, group=group)
    out = x.new_empty(_extents(out_box))
    for piece, a in zip(received, all_in, strict=True):
        region = _intersect(a, out_box)
        _region(out, out_box, region).copy_(
            piece[tuple(slice(0, e) for e in _extents(region))]
        )
    return out


def _local(
    run: _Run, x: torch.Tensor, step: Step, frm: State, to: State
) -> torch.Tensor:
    in_box, out_box = run.box(frm), run.box(to)
    if step.op == "chunk":
        return _region(x, in_box, out_box).contiguous()
    if step.op == "partition":
        keeps = step.reduce_op != "sum" or all(
            run.coord[g] == 0 for g in step.mesh_dims
        )
        return x.clone() if keeps else torch.zeros_like(x)
    out = x.new_zeros(_extents(out_box))  # shard_to_partial
    _region(out, out_box, in_box).copy_(x)
    return out


def _run_step(run: _Run, x: torch.Tensor, step: Step) -> torch.Tensor:
    frm, to = State.parse(step.from_), State.parse(step.to)
    if step.op in ("chunk", "partition", "shard_to_partial"):
        return _local(run, x, step, frm, to)
    if math.prod(run.sizes[g] for g in step.mesh_dims) == 1:
        return x  # a one-rank group moves no data
    if step.op == "all_gather":
        return _gather(run, x, step, frm, to)
    if step.op == "all_reduce":
        x = x.clone()
        group, members = run.group(step.mesh_dims)
        run.reduce(x, step, len(members), group)
        return x
    if step.op == "reduce_scatter":
        return _reduce_scatter(run, x.clone(), step, frm, to)
    if step.op == "all_to_all":
        return _all_to_all(run, x, step, frm, to)
    raise Error(StatusCode.UNIMPLEMENTED, f"step op {step.op}: not one run_plan knows")


def run_plan(plan: Plan | str, local: torch.Tensor, mesh: DeviceMesh) -> torch.Tensor:
    """Runs `plan` (a Plan or its JSON) on `mesh`'s process groups: `local`
    is this rank's block of the tensor under the plan's src; returns its
    block under dst. Every rank of the mesh calls it with the same plan."""
    if isinstance(plan, str):
        plan = Plan.from_json(plan)
    run = _Run(plan, mesh)
    want = _extents(run.box(State.parse(plan.src)))
    if list(local.shape) != want:
        raise invalid_argument(
            f"local: shape {list(local.shape)}; this rank's block under "
            f"{plan.src} is {want}"
        )
    x = local.contiguous()
    for step in plan.steps:
        x = _run_step(run, x, step)
    return x
