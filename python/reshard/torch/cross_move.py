"""reshard.torch cross-mesh moves (docs/DESIGN.md §9): tensors from one
DeviceMesh layout to another in one torch world (RL weight refit, a
training mesh to an inference mesh), which DTensor.redistribute refuses.

Each rank runs its compiled cross-mesh program (docs/PLAN_JSON.md,
"Cross-mesh programs"), made by the C++ core: its pre-steps on the source
mesh and its post-steps on the destination mesh through the rank-program
interpreter of run_plan (reshard.torch.program), and its transfers as
point-to-point messages on the default process group, one per peer for
all the tensors of a move together, every box given by the program.

`CrossMeshMove` plans and compiles once and moves many times (the RL
loop): every rank compares the layouts' digests with every other rank
once, when it is made, and refuses to move (naming the rank) when any
differs. Destinations may be the caller's own local tensors, written in
place: as data arrives (a failure part way may leave them half written),
or with `staging=True` only once this rank's part of the run succeeded."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import DTensor, Placement

from reshard._errors import Error, StatusCode, invalid_argument
from reshard.torch.dtypes import dtype_name
from reshard.torch.mesh import mesh_of
from reshard.torch.placements import placement_text
from reshard.torch.program import Program, prepare, run

if TYPE_CHECKING:
    from reshard.agent import RegisteredLayout
    from reshard.client import Client

Slices = tuple[slice, ...]


@dataclass(frozen=True)
class Layout:
    """Where a tensor lives: its DeviceMesh, its placements there, its
    global shape and dtype."""

    mesh: DeviceMesh
    placements: tuple[Placement, ...]
    shape: tuple[int, ...]
    dtype: torch.dtype

    @classmethod
    def of(cls, dtensor: DTensor) -> Layout:
        """A DTensor's layout."""
        return cls(
            dtensor.device_mesh,
            tuple(dtensor.placements),
            tuple(dtensor.shape),
            dtensor.dtype,
        )

    def text(self) -> str:
        """The placements as Reshard's state text."""
        return placement_text(self.placements, tuple(self.mesh.shape), len(self.shape))

    def registered(self) -> RegisteredLayout:
        """This layout for a registration at a rank's agent
        (`reshard.agent.LocalAgent.register(name, local, layout=...)`): a
        run then moves the tensor only as laid out here, else every rank
        stops before any data moves, naming this rank and the tensor."""
        from reshard.agent import RegisteredLayout

        return RegisteredLayout(self.shape, mesh_of(self.mesh), self.text())


@dataclass(frozen=True)
class _Peers:
    """One direction's pieces of one tensor, by peer: box slices in the mid
    block and their element counts."""

    pieces: dict[int, tuple[tuple[Slices, tuple[int, ...]], ...]]
    numel: dict[int, int]


@dataclass(frozen=True)
class _TensorMove:
    """One tensor's compiled program on this rank."""

    dtype: torch.dtype
    pre: Program | None
    src_mid: torch.Size | None  # None: not a source rank
    post: Program | None
    dst_mid: torch.Size | None  # None: not a destination rank
    sends: _Peers
    recvs: _Peers
    local: tuple[tuple[Slices, Slices], ...]
    digest: str


def _slices(box: Mapping[str, Any]) -> tuple[Slices, tuple[int, ...]]:
    offset, extent = box["offset"], box["extent"]
    return tuple(slice(o, o + e) for o, e in zip(offset, extent, strict=True)), tuple(
        extent
    )


def _peers(entries: Sequence[Mapping[str, Any]]) -> _Peers:
    pieces = {e["peer"]: tuple(_slices(b) for b in e["boxes"]) for e in entries}
    return _Peers(pieces, {e["peer"]: e["numel"] for e in entries})


def _role(role: Mapping[str, Any] | None, mesh: DeviceMesh) -> tuple[Any, Any]:
    if role is None:
        return None, None
    program = prepare(role["program"], mesh) if role["program"] else None
    return program, torch.Size(role["mid"]["extent"])


def _compile(
    program: Mapping[str, Any], src: Layout, dst: Layout, dtype: torch.dtype
) -> _TensorMove:
    pre, src_mid = _role(program["source"], src.mesh)
    post, dst_mid = _role(program["destination"], dst.mesh)
    local = tuple(
        (_slices(f)[0], _slices(t)[0])
        for f, t in zip(program["local_from"], program["local_to"], strict=True)
    )
    return _TensorMove(
        dtype,
        pre,
        src_mid,
        post,
        dst_mid,
        _peers(program["sends"]),
        _peers(program["recvs"]),
        local,
        program["layout_digest"],
    )


def _plan_program(
    src: Layout, dst: Layout, client: Client | None, options: Mapping[str, Any]
) -> Any:
    """This rank's compiled program of the move: from `client`'s service
    when given, else from the native module."""
    args = (
        mesh_of(src.mesh),
        mesh_of(dst.mesh),
        src.shape,
        src.text(),
        dst.text(),
        dtype_name(src.dtype),
        dist.get_rank(),
    )
    if client is not None:
        return client.plan_cross_program(*args, **options)[1]
    from reshard._inprocess import native_or_none

    if native_or_none() is None:
        raise Error(
            StatusCode.UNIMPLEMENTED,
            "cross-mesh moves need the native module reshard._native or a "
            "reshard.Client (client=) whose service compiles the programs",
        )
    from reshard._inprocess import plan_cross_program

    return plan_cross_program(*args, **options)[1]


class CrossMeshMove:
    """Tensors moved from their source layouts to their destination
    layouts (by name), planned and compiled once on this rank; `run` moves
    them, as many times as asked. Every rank of the torch world builds it
    with the same layouts, at the same time (it compares the layouts'
    digests over the default process group, FAILED_PRECONDITION naming the
    first rank that differs). Planned in this process, or by `client`'s
    service when given (then the native module is not needed). Option
    keywords as reshard.plan_cross_mesh's (unavailable_ranks=,
    cross_link=, ...)."""

    def __init__(
        self,
        sources: Mapping[str, Layout],
        destinations: Mapping[str, Layout],
        client: Client | None = None,
        **options: Any,
    ) -> None:
        if set(sources) != set(destinations):
            missing = sorted(set(sources) ^ set(destinations))
            raise invalid_argument(
                f"destinations: names {missing} are on one side only"
            )
        self.names = tuple(sources)
        self.destinations = {n: destinations[n] for n in self.names}
        self._moves = {}
        for name in self.names:
            src, dst = sources[name], destinations[name]
            if src.shape != dst.shape or src.dtype != dst.dtype:
                raise invalid_argument(
                    f"destinations[{name!r}]: {list(dst.shape)} {dst.dtype}, "
                    f"the source is {list(src.shape)} {src.dtype}"
                )
            program = _plan_program(src, dst, client, options)
            self._moves[name] = _compile(program, src, dst, src.dtype)
        _check_digests(self._moves)
        self._messages = (_Messages(self._moves, True), _Messages(self._moves, False))
        self._copies = _copies_of(self._moves, self._messages)
        self._views = (_Views(), _Views())  # of source mids, of landing blocks

    def run(
        self,
        sources: Mapping[str, torch.Tensor | DTensor | None],
        out: Mapping[str, torch.Tensor] | None = None,
        staging: bool = False,
    ) -> dict[str, torch.Tensor | None]:
        """Moves every tensor: `sources[name]` is this rank's local tensor
        under its source layout (a DTensor's local tensor is taken; None or
        absent on a rank outside the source mesh). Returns each tensor's
        local tensor under its destination layout (None on a rank outside
        the destination mesh): `out[name]` when given, written in place.
        Without `staging`, `out` is written as data arrives, so a failure
        part way may leave it half written; with it, results are made in
        buffers of their own and copied into `out` only once every transfer
        and post-step of this rank succeeded (a copy per tensor; each rank
        decides for itself: there is no commit across ranks). A failed transfer or
        collective raises Error(UNAVAILABLE) naming this rank's peers. The
        move keeps its views of the caller's tensors for the next run, while
        each name is given the same tensor object on the same memory: the
        RL loop's repeated run only copies."""
        mids: dict[str, torch.Tensor] = {}
        for name, m in self._moves.items():
            if m.src_mid is not None:
                mids[name] = _source_mid(name, m, sources.get(name))
        direct = {} if staging else (out or {})
        results = _destinations(self._moves, direct)
        # The caller's own tensors (no pre- or post-step between): their
        # piece views are kept for the next run.
        given = (
            {n for n, m in self._moves.items() if m.pre is None and n in mids},
            {n for n, m in self._moves.items() if m.post is None and n in direct},
        )
        try:
            self._exchange(mids, results, given)
            finals = {
                name: _finish(m, results.get(name), direct, name)
                for name, m in self._moves.items()
            }
        except RuntimeError as e:
            peers = sorted(
                set(self._messages[0].buffers) | set(self._messages[1].buffers)
            )
            raise Error(
                StatusCode.UNAVAILABLE,
                f"transfers: {e} (this rank exchanges with ranks {peers}; "
                + ("out is as it was)" if staging else "out may be half written)"),
            ) from e
        return _written(finals, out) if staging and out else finals

    def _exchange(
        self,
        mids: Mapping[str, torch.Tensor],
        landing: Mapping[str, torch.Tensor],
        given: tuple[set[str], set[str]],
    ) -> None:
        """Every tensor's copies to this rank itself and its packing, then
        one message per peer and direction, all posted at once on the
        default process group, then the unpacking: each a batch of copies."""
        to: list[torch.Tensor] = []
        frm: list[torch.Tensor] = []
        unpack_to: list[torch.Tensor] = []
        unpack_from: list[torch.Tensor] = []
        for name, c in self._copies.items():
            src = self._views[0].of(name, mids.get(name), c.src_slices, given[0])
            dst = self._views[1].of(name, landing.get(name), c.dst_slices, given[1])
            to += dst[: c.local]
            frm += src[: c.local]
            to += c.sent
            frm += src[c.local :]
            unpack_to += dst[c.local :]
            unpack_from += c.received
        _copy_all(to, frm)
        sends, recvs = self._messages
        ops = [dist.P2POp(dist.isend, t, p) for p, t in sorted(sends.buffers.items())]
        ops += [dist.P2POp(dist.irecv, t, p) for p, t in sorted(recvs.buffers.items())]
        if ops:
            for request in dist.batch_isend_irecv(ops):
                request.wait()
        _copy_all(unpack_to, unpack_from)


def _written(
    finals: dict[str, torch.Tensor | None], out: Mapping[str, torch.Tensor]
) -> dict[str, torch.Tensor | None]:
    """Every staged result copied into the caller's `out` (checked first,
    so that a wrong shape leaves all of `out` as it was)."""
    for name, t in finals.items():
        given = out.get(name)
        if given is not None and t is not None and given.shape != t.shape:
            raise invalid_argument(
                f"out[{name!r}]: {list(given.shape)}; this rank's block is "
                f"{list(t.shape)}"
            )
    for name, t in finals.items():
        given = out.get(name)
        if given is not None and t is not None:
            given.copy_(t)
            finals[name] = given
    return finals


def _source_mid(name: str, m: _TensorMove, given: Any) -> torch.Tensor:
    local = given.to_local() if isinstance(given, DTensor) else given
    if local is None:
        raise invalid_argument(f"sources[{name!r}]: this rank holds a source block")
    if m.pre is not None:
        return run(m.pre, local)
    if local.shape != m.src_mid or local.dtype != m.dtype:
        raise invalid_argument(
            f"sources[{name!r}]: {list(local.shape)} {local.dtype}; this "
            f"rank's block is {list(m.src_mid or ())} {m.dtype}"
        )
    return local


def _destinations(
    moves: Mapping[str, _TensorMove], out: Mapping[str, torch.Tensor]
) -> dict[str, torch.Tensor]:
    """Where each tensor's transfers land: the caller's output when no
    post-step follows, else a dst_mid block of our own."""
    landing = {}
    for name, m in moves.items():
        if m.dst_mid is None:
            continue
        given = out.get(name)
        if given is not None and m.post is None:
            if given.shape != m.dst_mid or given.dtype != m.dtype:
                raise invalid_argument(
                    f"out[{name!r}]: {list(given.shape)} {given.dtype}; this "
                    f"rank's block is {list(m.dst_mid)} {m.dtype}"
                )
            landing[name] = given
        else:
            landing[name] = torch.empty(m.dst_mid, dtype=m.dtype)
    return landing


def _finish(
    m: _TensorMove,
    landed: torch.Tensor | None,
    out: Mapping[str, torch.Tensor] | None,
    name: str,
) -> torch.Tensor | None:
    if landed is None or m.post is None:
        return landed
    result = run(m.post, landed)
    given = (out or {}).get(name)
    if given is None:
        return result
    given.copy_(result)
    return given


# Pieces start at multiples of this many bytes within a message, so that
# every piece can be viewed as its dtype in place.
_ALIGN = 8


@dataclass(frozen=True)
class _Piece:
    name: str
    where: Slices  # in the tensor's src_mid (sent) or dst_mid (received) block
    offset: int  # bytes into the message
    extent: tuple[int, ...]
    dtype: torch.dtype


class _Messages:
    """One direction's messages, one per peer: every tensor's pieces for
    that peer in name order, each at an aligned offset, in a buffer kept
    for every run (a repeated run allocates none)."""

    def __init__(self, moves: Mapping[str, _TensorMove], sending: bool) -> None:
        layout: dict[int, list[_Piece]] = {}
        size: dict[int, int] = {}
        for name, m in moves.items():
            itemsize = m.dtype.itemsize
            peers = m.sends if sending else m.recvs
            for peer, pieces in peers.pieces.items():
                for where, extent in pieces:
                    at = -(-size.get(peer, 0) // _ALIGN) * _ALIGN
                    layout.setdefault(peer, []).append(
                        _Piece(name, where, at, extent, m.dtype)
                    )
                    size[peer] = at + math.prod(extent) * itemsize
        self.buffers = {p: torch.empty(n, dtype=torch.uint8) for p, n in size.items()}
        # Each piece with its view of its message, made once: a repeated
        # run only copies.
        self.pieces = {
            peer: tuple((piece, self._view(piece, peer)) for piece in pieces)
            for peer, pieces in layout.items()
        }

    def _view(self, piece: _Piece, peer: int) -> torch.Tensor:
        n = math.prod(piece.extent) * piece.dtype.itemsize
        raw = self.buffers[peer][piece.offset : piece.offset + n]
        return raw.view(piece.dtype).view(piece.extent)


@dataclass(frozen=True)
class _Copies:
    """One tensor's copies on this rank, in a fixed order: slices of its
    source mid block (its local copies' sources, then its sent pieces)
    and of its landing block (the local copies' targets, then its received
    pieces), with the message views its pieces are packed into and
    unpacked from."""

    src_slices: tuple[Slices, ...]
    dst_slices: tuple[Slices, ...]
    local: int  # how many local copies lead each slices tuple
    sent: tuple[torch.Tensor, ...]
    received: tuple[torch.Tensor, ...]


def _copies_of(
    moves: Mapping[str, _TensorMove], messages: tuple[_Messages, _Messages]
) -> dict[str, _Copies]:
    pieces: dict[str, tuple[list[Slices], list[torch.Tensor]]] = {}
    for direction, message in enumerate(messages):
        for peer_pieces in message.pieces.values():
            for piece, view in peer_pieces:
                slices, views = pieces.setdefault((piece.name, direction), ([], []))
                slices.append(piece.where)
                views.append(view)
    copies = {}
    for name, m in moves.items():
        sent = pieces.get((name, 0), ([], []))
        received = pieces.get((name, 1), ([], []))
        copies[name] = _Copies(
            tuple(f for f, _ in m.local) + tuple(sent[0]),
            tuple(t for _, t in m.local) + tuple(received[0]),
            len(m.local),
            tuple(sent[1]),
            tuple(received[1]),
        )
    return copies


class _Views:
    """Each tensor's views at its slices, kept for a tensor object the
    caller hands again (an RL loop moves the same weights every step)
    while it still has the same memory: a repeated run then only copies.
    Views of tensors made by the run itself are not kept."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[torch.Tensor, Any, list[torch.Tensor]]] = {}

    def of(
        self,
        name: str,
        tensor: torch.Tensor | None,
        slices: tuple[Slices, ...],
        keep: set[str],
    ) -> list[torch.Tensor]:
        if tensor is None:
            return []
        key = (tensor.data_ptr(), tensor.shape, tensor.stride(), tensor.dtype)
        kept = self._kept.get(name)
        if kept is not None and kept[0] is tensor and kept[1] == key:
            return kept[2]
        views = [tensor[s] for s in slices]
        if name in keep:
            self._kept[name] = (tensor, key, views)
        else:
            self._kept.pop(name, None)
        return views


def _copy_all(to: list[torch.Tensor], frm: list[torch.Tensor]) -> None:
    """to[i] = frm[i] for every i, in one dispatch."""
    if to:
        torch._foreach_copy_(to, frm)


def _check_digests(moves: Mapping[str, _TensorMove]) -> None:
    """Every rank's digest of every tensor's layout digest, compared: a rank
    given another layout is named before any data moves."""
    joined = ",".join(f"{n}={m.digest}" for n, m in moves.items())
    mine = int.from_bytes(hashlib.sha256(joined.encode()).digest()[:8], "little")
    mine_t = torch.tensor([mine >> 1], dtype=torch.int64)
    every = [torch.zeros_like(mine_t) for _ in range(dist.get_world_size())]
    dist.all_gather(every, mine_t)
    for rank, theirs in enumerate(every):
        if int(theirs) != int(mine_t):
            raise Error(
                StatusCode.FAILED_PRECONDITION,
                f"layout_digest: rank {rank} moves tensors of another layout "
                "(its meshes, placements, shapes or names differ); no data "
                "was moved",
            )


def move_state_dict(
    state_dict: Mapping[str, DTensor | None],
    device_mesh: DeviceMesh,
    placements: Callable[[str, DTensor], Sequence[Placement]] | Sequence[Placement],
    out: Mapping[str, torch.Tensor] | None = None,
    client: Client | None = None,
    **options: Any,
) -> dict[str, torch.Tensor | None]:
    """Moves every DTensor of `state_dict` to `placements` (one list for
    all, or a function of the name and the DTensor) on `device_mesh`, in
    one call: plans (in this process, or by `client`'s service), compiles
    and runs a CrossMeshMove once. Returns each
    tensor's local tensor under its new layout (None on a rank outside
    `device_mesh`); `out[name]`, when given, is written in place."""
    sources, destinations = {}, {}
    for name, value in state_dict.items():
        if not isinstance(value, DTensor):
            raise invalid_argument(f"state_dict[{name!r}]: not a DTensor")
        sources[name] = Layout.of(value)
        chosen = placements(name, value) if callable(placements) else placements
        destinations[name] = Layout(
            device_mesh, tuple(chosen), tuple(value.shape), value.dtype
        )
    move = CrossMeshMove(sources, destinations, client, **options)
    return move.run(state_dict, out)
