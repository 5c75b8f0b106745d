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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh

from reshard._errors import invalid_argument
from reshard.torch.groups import StepGroup, step_group

_BUFFERS = {"in": 0, "out": 1, "wire_in": 2, "wire_out": 3}
_OPS = {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}
_NAMES = {
    "float32": torch.float32,
    "float64": torch.float64,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
    "int32": torch.int32,
    "int64": torch.int64,
}

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
    steps = []
    for s in program["steps"]:
        io = s["collective"]
        members = tuple(s["members"])
        group = step_group(mesh, tuple(s["mesh_dims"]), members) if io else None
        reduce_op = s["reduce_op"]
        steps.append(
            ProgramStep(
                op=s["op"],
                group=group,
                index=s["index"],
                size=len(members),
                out_shape=torch.Size(s["out_shape"]),
                block_bytes=s["block_numel"] * itemsize,
                wire=(s["wire_in_bytes"], s["wire_out_bytes"]),
                reduce_op=_OPS[reduce_op] if reduce_op else None,
                divisor=s["divisor"],
                before=_copies(s["before"]),
                collective=(
                    Collective(
                        _BUFFERS[io["send"]], io["send_offset"], _BUFFERS[io["recv"]]
                    )
                    if io
                    else None
                ),
                after=_copies(s["after"]),
            )
        )
    return Program(
        dtype,
        torch.Size(program["in_shape"]),
        torch.Size(program["out_shape"]),
        tuple(steps),
        dist.get_backend() == "nccl",
    )


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
    wire_in = x.new_empty(s.wire[0], dtype=torch.uint8) if s.wire[0] else None
    wire_out = x.new_empty(s.wire[1], dtype=torch.uint8) if s.wire[1] else None
    buffers = [_bytes(x), _bytes(out), wire_in, wire_out]
    send = _send_in_place(s, x)
    _run_copies(s.before, buffers, skip_copy=send is not None)
    if s.collective is not None:
        _collective(program, s, buffers, send)
    _run_copies(s.after, buffers, skip_copy=False)
    return out


def _send_in_place(s: ProgramStep, x: torch.Tensor) -> torch.Tensor | None:
    """The input itself, where the only copy before an all_gather packs the
    whole input into the send block (saving that copy)."""
    io = s.collective
    if io is None or s.op != "all_gather" or len(s.before.copies) != 1:
        return None
    f, t, fo, to, run, counts, _, _ = s.before.copies[0]
    whole = f == 0 and fo == 0 and not counts and run == x.numel() * x.element_size()
    if whole and t == io.send and to == io.send_offset and run == s.block_bytes:
        return x
    return None


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
