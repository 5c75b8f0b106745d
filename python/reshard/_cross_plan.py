"""Cross-mesh plans (docs/DESIGN.md §9) as values: what
`reshard.plan_cross_mesh`, `Client.plan_cross_mesh` and
`CrossMeshPlan.from_json` give, the same for one request."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reshard._errors import invalid_argument
from reshard._plan import PlanWarning, Step, plain_json
from reshard._values import Link, Mesh, State


@dataclass(frozen=True)
class Transfer:
    """A box of the global tensor (offset and extent per tensor dim) that
    global rank `from_` sends to `to`; equal ranks: a copy to itself."""

    from_: int
    to: int
    offset: tuple[int, ...]
    extent: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        """The JSON object's fields, in the C++ writer's order."""
        return {
            "from": self.from_,
            "to": self.to,
            "offset": list(self.offset),
            "extent": list(self.extent),
        }


@dataclass(frozen=True)
class TransferBytes:
    """Bytes sent and received between different ranks: the most one rank
    sends, the mean over the ranks that send, the most one receives."""

    max_send: int
    mean_send: float
    max_recv: int


@dataclass(frozen=True, eq=False)
class CrossMeshPlan:
    """Pre-steps on the source mesh to `src_mid`, transfers to `dst_mid` on
    the destination mesh, post-steps to `dst` (docs/DESIGN.md §9), with the
    sender rule every rank expands its own transfers by and the layout
    digest an executor checks. Equal plans are equal in everything but
    `planning_us`."""

    src_mesh: Mesh
    dst_mesh: Mesh
    shape: tuple[int, ...]
    dtype: str
    src: str
    dst: str
    src_mid: str
    dst_mid: str
    pre_steps: tuple[Step, ...]
    transfers: tuple[Transfer, ...]
    transfers_omitted: int
    post_steps: tuple[Step, ...]
    transfer_time_us: float
    total_time_us: float
    total_bytes: int
    peak_bytes: int
    bytes_by_rank: TransferBytes
    sender_rule: str
    unavailable_ranks: tuple[int, ...]
    cross_link: Link
    layout_digest: str
    warnings: tuple[PlanWarning, ...]
    planning_us: float

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CrossMeshPlan):
            return NotImplemented
        return _without_timing(self.to_dict()) == _without_timing(other.to_dict())

    def __hash__(self) -> int:
        return hash(plain_json(_without_timing(self.to_dict())))

    def to_dict(self) -> dict[str, Any]:
        """The plan JSON as Python values, keys in the C++ writer's order."""
        listed: dict[str, Any] = {"transfers": [t.to_dict() for t in self.transfers]}
        if self.transfers_omitted:
            listed["transfers_omitted"] = self.transfers_omitted
        return {
            "kind": "cross_mesh",
            "src_mesh": _mesh_dict(self.src_mesh),
            "dst_mesh": _mesh_dict(self.dst_mesh),
            "tensor": {"shape": list(self.shape), "dtype": self.dtype},
            "src": self.src,
            "dst": self.dst,
            "src_mid": self.src_mid,
            "dst_mid": self.dst_mid,
            "planner": "optimal",
            "cost_model": "alpha_beta",
            "pre_steps": [s.to_dict() for s in self.pre_steps],
            **listed,
            "post_steps": [s.to_dict() for s in self.post_steps],
            "transfer_time_us": self.transfer_time_us,
            "total_time_us": self.total_time_us,
            "total_bytes": self.total_bytes,
            "peak_bytes": self.peak_bytes,
            "bytes_by_rank": {
                "max_send": self.bytes_by_rank.max_send,
                "mean_send": self.bytes_by_rank.mean_send,
                "max_recv": self.bytes_by_rank.max_recv,
            },
            "sender_rule": {
                "name": self.sender_rule,
                "unavailable_ranks": list(self.unavailable_ranks),
                "cross_link": {
                    "bandwidth_gbps": self.cross_link.bandwidth_gbps,
                    "latency_us": self.cross_link.latency_us,
                },
            },
            "layout_digest": self.layout_digest,
            "warnings": [w.to_dict() for w in self.warnings],
            "planning_us": self.planning_us,
        }

    def to_json(self) -> str:
        """The plan JSON, one line: the same values as `reshardctl plan
        --src_mesh ... --json` prints, in Python's number forms."""
        return plain_json(self.to_dict())

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CrossMeshPlan:
        """Reads cross-mesh plan JSON values; unknown fields are accepted."""
        try:
            rule, sent = d["sender_rule"], d["bytes_by_rank"]
            link = rule.get("cross_link") or {}
            return cls(
                src_mesh=_mesh_of(d["src_mesh"]),
                dst_mesh=_mesh_of(d["dst_mesh"]),
                shape=tuple(int(s) for s in d["tensor"]["shape"]),
                dtype=d["tensor"]["dtype"],
                src=d["src"],
                dst=d["dst"],
                src_mid=d["src_mid"],
                dst_mid=d["dst_mid"],
                pre_steps=tuple(Step.from_dict(s) for s in d["pre_steps"]),
                transfers=tuple(_transfer_of(t) for t in d["transfers"]),
                transfers_omitted=int(d.get("transfers_omitted", 0)),
                post_steps=tuple(Step.from_dict(s) for s in d["post_steps"]),
                transfer_time_us=float(d["transfer_time_us"]),
                total_time_us=float(d["total_time_us"]),
                total_bytes=int(d["total_bytes"]),
                peak_bytes=int(d["peak_bytes"]),
                bytes_by_rank=TransferBytes(
                    int(sent["max_send"]),
                    float(sent["mean_send"]),
                    int(sent["max_recv"]),
                ),
                sender_rule=rule["name"],
                unavailable_ranks=tuple(int(r) for r in rule["unavailable_ranks"]),
                cross_link=Link(link.get("bandwidth_gbps"), link.get("latency_us")),
                layout_digest=d["layout_digest"],
                warnings=tuple(PlanWarning.from_dict(w) for w in d.get("warnings", ())),
                planning_us=float(d.get("planning_us", 0.0)),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise invalid_argument(
                f"cross-mesh plan JSON: missing or bad field {e}"
            ) from None

    @classmethod
    def from_json(cls, text: str | bytes) -> CrossMeshPlan:
        """Reads a cross-mesh plan JSON; INVALID_ARGUMENT naming what is
        missing or bad."""
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            raise invalid_argument(f"cross-mesh plan JSON: {e}") from None
        if not isinstance(value, dict) or value.get("kind") != "cross_mesh":
            raise invalid_argument(
                'cross-mesh plan JSON: not an object of kind "cross_mesh"'
            )
        return cls.from_dict(value)


def _without_timing(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != "planning_us"}


def _mesh_dict(mesh: Mesh) -> dict[str, Any]:
    ranks = list(mesh.rank_map) or list(range(mesh.world_size))
    return {
        "shape": list(mesh.shape),
        "dim_names": list(mesh.dim_names),
        "flattened": [list(g) for g in mesh.flattened],
        "rank_map": ranks,
    }


def _mesh_of(m: Mapping[str, Any]) -> Mesh:
    shape = tuple(m["shape"])
    ranks = tuple(m.get("rank_map") or ())
    identity = ranks == tuple(range(len(ranks)))
    return Mesh(
        shape,
        tuple(m.get("dim_names") or ()),
        tuple(tuple(g) for g in m.get("flattened") or ()),
        () if identity else ranks,
    )


def _transfer_of(t: Mapping[str, Any]) -> Transfer:
    return Transfer(
        int(t["from"]), int(t["to"]), tuple(t["offset"]), tuple(t["extent"])
    )


@dataclass(frozen=True)
class CrossSchedule:
    """A cross-mesh move planned once for a job and kept there
    (Client.prepare_cross_mesh, or a batch's Client.prepare_cross_batch;
    docs/DESIGN.md §9, "A static schedule"): Client.run_schedule names
    `id`. It holds until deleted or until an agent of the job joins or
    leaves (`generation` changes)."""

    id: str
    generation: int
    schedules: int  # the job's, this one included
    plan: CrossMeshPlan | None  # a batch's schedule: None
    tensors: int = 1  # a batch's: how many it moves


@dataclass(frozen=True)
class CrossBatchTensor:
    """One tensor of a cross-mesh batch for a job's replica to plan
    (Client.run_cross_batch_job, Client.prepare_cross_batch): its name,
    its source mesh (its own, a pipeline stage, or the batch's), the
    destination mesh every tensor of the batch shares, its global shape,
    placements on both meshes and dtype."""

    name: str
    src_mesh: Mesh
    dst_mesh: Mesh
    shape: tuple[int, ...]
    src: State
    dst: State
    dtype: str = "float32"
