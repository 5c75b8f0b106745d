"""A rank program (docs/PLAN_JSON.md, "Rank programs") run with torch ops:
what the C++ executor compiles for one rank, interpreted here and derived
nowhere else.

Each step has four byte buffers: its input tensor, its output tensor and two
packed wire buffers. Its copy programs (strided copies between byte ranges,
zero fills) run before and after its collective, which runs on whole padded
blocks of those buffers on the step's process group. avg is a sum and then a
division (integers: truncating), as the executor's contract says (§6.1).
On Gloo, which has no reduce_scatter for CPU tensors, a reduce_scatter is an
all_reduce of the blocks and this member's block is kept."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh

from reshard._errors import invalid_argument
from reshard.torch.dtypes import DTYPES
from reshard.torch.groups import StepGroup, step_group

_BUFFERS = {"in": 0, "out": 1, "wire_in": 2, "wire_out": 3}
_OPS = {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}
_NAMES = {name: dtype for dtype, name in DTYPES.items()}

# (buffer, offset, bytes); (from, to, from_offset, to_offset, run_bytes,
# counts, from_strides, to_strides).
Fill = tuple[int, int, int]
Copy = tuple[int, int, int, int, int, tuple[int, ...], tuple[int, ...], tuple[int, ...]]


@dataclass(frozen=True)
class Copies:
    fills: tuple[Fill, ...]
    copies: tuple[Copy, ...]


def _copies(d: dict[str, Any]) -> Copies:
    fills = tuple((_BUFFERS[b], o, n) for b, o, n in d["fills"])
    copies = tuple(
        (_BUFFERS[f], _BUFFERS[t], fo, to, run, tuple(c), tuple(fs), tuple(ts))
        for f, t, fo, to, run, c, fs, ts in d["copies"]
    )
    return Copies(fills, copies)


@dataclass(frozen=True)
class Collective:
    send: int
    send_offset: int
    recv: int


@dataclass(frozen=True)
class ProgramStep:
    """One step, its group resolved on a DeviceMesh."""

    op: str
    group: StepGroup | None  # None: no collective runs
    index: int
    size: int
    out_shape: torch.Size
    block_bytes: int
    wire: tuple[int, int]
    reduce_op: dist.ReduceOp | None
    divisor: int
    before: Copies
    collective: Collective | None
    after: Copies
    # The all_gather's send block is the whole input: it is sent as it is
    # and the one copy before is skipped.
    sends_input: bool
    uses: tuple[bool, bool]  # whether the copies or the collective use in, out


@dataclass(frozen=True)
class Program:
    """A rank program ready to run on one DeviceMesh: the rank's input and
    output shapes, its dtype and its steps."""

    dtype: torch.dtype
    in_shape: torch.Size
    out_shape: torch.Size
    steps: tuple[ProgramStep, ...]
    nccl: bool


def prepare(program: dict[str, Any], mesh: DeviceMesh) -> Program:
    """`program` (a rank program JSON, read) with its groups on `mesh`."""
    dtype = _NAMES[program["dtype"]]
    itemsize = torch.empty((), dtype=dtype, device="meta").element_size()
    steps = tuple(_step(s, mesh, itemsize) for s in program["steps"])
    return Program(
        dtype,
        torch.Size(program["in_shape"]),
        torch.Size(program["out_shape"]),
        steps,
        dist.get_backend() == "nccl",
    )


def _step(s: dict[str, Any], mesh: DeviceMesh, itemsize: int) -> ProgramStep:
    io = s["collective"]
    members = tuple(s["members"])
    collective = (
        Collective(_BUFFERS[io["send"]], io["send_offset"], _BUFFERS[io["recv"]])
        if io
        else None
    )
    before, after = _copies(s["before"]), _copies(s["after"])
    block_bytes = s["block_numel"] * itemsize
    in_bytes = itemsize * math.prod(s["in_shape"])
    sends_input = _sends_input(s["op"], collective, before, block_bytes, in_bytes)
    return ProgramStep(
        op=s["op"],
        group=step_group(mesh, tuple(s["mesh_dims"]), members) if io else None,
        index=s["index"],
        size=len(members),
        out_shape=torch.Size(s["out_shape"]),
        block_bytes=block_bytes,
        wire=(s["wire_in_bytes"], s["wire_out_bytes"]),
        reduce_op=_OPS[s["reduce_op"]] if s["reduce_op"] else None,
        divisor=s["divisor"],
        before=before,
        collective=collective,
        after=after,
        sends_input=sends_input,
        uses=_uses(before, collective, after, sends_input),
    )


def _sends_input(
    op: str, io: Collective | None, before: Copies, block_bytes: int, in_bytes: int
) -> bool:
    """Whether the only copy before an all_gather packs the whole input into
    its send block, so that the input can be sent as it is."""
    if io is None or op != "all_gather" or len(before.copies) != 1:
        return False
    f, t, fo, to, run, counts, _, _ = before.copies[0]
    whole = f == 0 and fo == 0 and not counts and run == in_bytes
    return whole and t == io.send and to == io.send_offset and run == block_bytes


def _uses(
    before: Copies, io: Collective | None, after: Copies, sends_input: bool
) -> tuple[bool, bool]:
    """Whether the step touches its input and its output buffers."""
    copies = after.copies if sends_input else before.copies + after.copies
    named = {b for copy in copies for b in copy[:2]}
    named |= {fill[0] for fill in before.fills + after.fills}
    if io is not None:
        named |= {io.send, io.recv}
    return 0 in named, 1 in named


def run(program: Program, local: torch.Tensor) -> torch.Tensor:
    """This rank's block under the plan's dst, from `local` (its block under
    src, not modified)."""
    if local.shape != program.in_shape or local.dtype != program.dtype:
        raise invalid_argument(
            f"local: {list(local.shape)} {local.dtype}; this rank's block under "
            f"the plan's src is {list(program.in_shape)} {program.dtype}"
        )
    x = local.contiguous()
    for step in program.steps:
        x = _run_step(program, step, x)
    return x


def _bytes(t: torch.Tensor) -> torch.Tensor:
    return t.view(-1).view(torch.uint8)


def _run_step(program: Program, s: ProgramStep, x: torch.Tensor) -> torch.Tensor:
    out = x.new_empty(s.out_shape)
    buffers = [
        _bytes(x) if s.uses[0] else None,
        _bytes(out) if s.uses[1] else None,
        x.new_empty(s.wire[0], dtype=torch.uint8) if s.wire[0] else None,
        x.new_empty(s.wire[1], dtype=torch.uint8) if s.wire[1] else None,
    ]
    _run_copies(s.before, buffers, skip_copy=s.sends_input)
    if s.collective is not None:
        _collective(program, s, buffers, x if s.sends_input else None)
    _run_copies(s.after, buffers, skip_copy=False)
    return out


def _view(
    buffer: torch.Tensor,
    offset: int,
    run: int,
    counts: Sequence[int],
    strides: Sequence[int],
) -> torch.Tensor:
    if not counts:
        return buffer[offset : offset + run]
    return buffer.as_strided(
        (*counts, run), (*strides, 1), buffer.storage_offset() + offset
    )


def _run_copies(c: Copies, buffers: list[Any], skip_copy: bool) -> None:
    for b, offset, n in c.fills:
        buffers[b][offset : offset + n].zero_()
    if skip_copy:
        return
    for f, t, fo, to, run, counts, fs, ts in c.copies:
        _view(buffers[t], to, run, counts, ts).copy_(
            _view(buffers[f], fo, run, counts, fs)
        )


def _block(
    buffers: list[Any], b: int, offset: int, n: int, dtype: torch.dtype
) -> torch.Tensor:
    return buffers[b][offset : offset + n].view(dtype)


def _collective(
    program: Program, s: ProgramStep, buffers: list[Any], send: torch.Tensor | None
) -> None:
    io, dtype, n, block = s.collective, program.dtype, s.size, s.block_bytes
    assert io is not None and s.group is not None
    if send is None:
        span = block if s.op == "all_gather" else n * block
        send = _block(buffers, io.send, io.send_offset, span, dtype)
    else:
        send = send.view(-1)
    if s.op == "all_gather":
        recv = _block(buffers, io.recv, 0, n * block, dtype)
        _all_gather(s.group, recv, send, n)
    elif s.op == "all_reduce":
        recv = _block(buffers, io.recv, 0, block, dtype)
        dist.all_reduce(recv, op=s.reduce_op, group=s.group.group)
        _divide(recv, s.divisor)
    elif s.op == "reduce_scatter":
        recv = _block(buffers, io.recv, 0, block, dtype)
        _reduce_scatter(program, s, recv, send, io.send == 0)
        _divide(recv, s.divisor)
    else:
        recv = _block(buffers, io.recv, 0, n * block, dtype)
        _all_to_all(s.group, recv, send, n)


def _all_gather(g: StepGroup, recv: torch.Tensor, send: torch.Tensor, n: int) -> None:
    if g.order is None:
        dist.all_gather_into_tensor(recv, send, group=g.group)
        return
    gathered = torch.empty_like(recv)
    dist.all_gather_into_tensor(gathered, send, group=g.group)
    recv.view(n, -1)[list(g.order)] = gathered.view(n, -1)


def _reduce_scatter(
    program: Program,
    s: ProgramStep,
    recv: torch.Tensor,
    send: torch.Tensor,
    send_is_input: bool,
) -> None:
    g, n = s.group, s.size
    assert g is not None
    if not program.nccl:
        blocks = send.clone() if send_is_input else send
        dist.all_reduce(blocks, op=s.reduce_op, group=g.group)
        recv.copy_(blocks.view(n, -1)[s.index])
        return
    if g.order is not None:
        send = send.view(n, -1)[list(g.order)].reshape(-1)
    dist.reduce_scatter_tensor(recv, send, op=s.reduce_op, group=g.group)


def _all_to_all(g: StepGroup, recv: torch.Tensor, send: torch.Tensor, n: int) -> None:
    if g.order is None:
        dist.all_to_all_single(recv, send, group=g.group)
        return
    order = list(g.order)
    received = torch.empty_like(recv)
    dist.all_to_all_single(received, send.view(n, -1)[order].reshape(-1), group=g.group)
    recv.view(n, -1)[order] = received.view(n, -1)


def _divide(x: torch.Tensor, divisor: int) -> None:
    if divisor == 1:
        return
    if x.dtype.is_floating_point:
        x.div_(divisor)
    else:
        x.copy_(torch.div(x, divisor, rounding_mode="trunc"))
