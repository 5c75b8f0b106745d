"""Plans as typed values: the plan JSON of docs/DESIGN.md §4 read, written
and printed in pure Python, whichever planner (in-process or a server) made
the plan."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

from reshard._errors import Error, invalid_argument
from reshard._values import Mesh

COLLECTIVES = ("all_gather", "all_reduce", "reduce_scatter", "all_to_all")
# Ops whose JSON carries no reduce_op (null).
_NO_REDUCE_OP = ("all_gather", "all_to_all", "chunk")


@dataclass(frozen=True)
class Step:
    """One step (docs/DESIGN.md §2.3): a collective on a group, or a local
    one. `from_` and `to` are the states before and after, in list form."""

    op: str
    mesh_dims: tuple[int, ...]
    group: str
    reduce_op: str | None
    avg_divisor: int
    src_tensor_dim: int | None
    dst_tensor_dim: int | None
    from_: str
    to: str
    bytes: int
    time_us: float

    def is_communicating(self, mesh: Mesh) -> bool:
        """Whether the step moves data: a collective on a group of more than one
        rank."""
        return self.op in COLLECTIVES and mesh.group_size(self.mesh_dims) > 1

    def to_dict(self) -> dict[str, Any]:
        """The JSON object's fields, in the C++ writer's order."""
        return {
            "op": self.op,
            "mesh_dims": list(self.mesh_dims),
            "group": self.group,
            "reduce_op": None if self.op in _NO_REDUCE_OP else self.reduce_op,
            "avg_divisor": self.avg_divisor,
            "src_tensor_dim": self.src_tensor_dim,
            "dst_tensor_dim": self.dst_tensor_dim,
            "from": self.from_,
            "to": self.to,
            "bytes": self.bytes,
            "time_us": self.time_us,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Step:
        """Reads a step of the plan JSON."""
        return cls(
            op=d["op"],
            mesh_dims=tuple(d["mesh_dims"]),
            group=d["group"],
            reduce_op=d.get("reduce_op"),
            avg_divisor=int(d.get("avg_divisor", 0)),
            src_tensor_dim=d.get("src_tensor_dim"),
            dst_tensor_dim=d.get("dst_tensor_dim"),
            from_=d["from"],
            to=d["to"],
            bytes=int(d["bytes"]),
            time_us=float(d["time_us"]),
        )


@dataclass(frozen=True)
class PlanWarning:
    """A structured warning (docs/DESIGN.md §3.4), e.g.
    missing_flattened_group with the dims to flatten and the time it saves."""

    code: str
    dims: tuple[str, ...]
    message: str
    saving_us: float

    def to_dict(self) -> dict[str, Any]:
        """The JSON object's fields, in the C++ writer's order."""
        return {
            "code": self.code,
            "dims": list(self.dims),
            "message": self.message,
            "saving_us": self.saving_us,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PlanWarning:
        """Reads a warning of the plan JSON."""
        return cls(d["code"], tuple(d["dims"]), d["message"], float(d["saving_us"]))


class LazySteps(Sequence[Step]):
    """Steps converted one at a time, when first read: a plan from the
    in-process planner holds its steps in C++ until asked."""

    def __init__(self, count: int, convert: Callable[[int], Step]) -> None:
        self._count = count
        self._convert = convert
        self._done: list[Step | None] = [None] * count

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, i: int) -> Step: ...
    @overload
    def __getitem__(self, i: slice) -> list[Step]: ...
    def __getitem__(self, i: int | slice) -> Step | list[Step]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._count))]
        if i < 0:
            i += self._count
        if not 0 <= i < self._count:
            raise IndexError("step index out of range")
        step = self._done[i]
        if step is None:
            step = self._done[i] = self._convert(i)
        return step

    def __iter__(self) -> Iterator[Step]:
        return (self[i] for i in range(self._count))

    def __repr__(self) -> str:
        return repr(list(self))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return list(self) == list(other)


@dataclass(frozen=True, eq=False)
class Plan:
    """A plan (docs/DESIGN.md §4): the steps that take a tensor of `shape`
    and `dtype` from `src` to `dst` on `mesh`, with the cost model's times.

    The same value from `reshard.plan` (in-process), `Client.plan` and
    `Plan.from_json`; `to_json()` gives what `reshardctl plan --json`
    prints."""

    mesh: Mesh
    shape: tuple[int, ...]
    dtype: str
    src: str
    dst: str
    planner: str
    cost_model: str
    steps: Sequence[Step]
    trace: str
    total_time_us: float
    total_bytes: int
    peak_bytes: int
    warnings: tuple[PlanWarning, ...]
    planning_us: float
    states_expanded: int
    cache_hit: bool
    torch_version: str | None = None  # for the torch planners' plans

    def _content(self) -> str:
        """The plan JSON without how this copy was made (planning_us,
        cache_hit): what equality and hashing compare."""
        d = self.to_dict()
        del d["planning_us"], d["cache_hit"]
        return plain_json(d)

    def __eq__(self, other: object) -> bool:
        """The same plan: every field but planning_us and cache_hit, which
        say how this copy was made (a cache hit equals the first plan)."""
        if not isinstance(other, Plan):
            return NotImplemented
        return self._content() == other._content()

    def __hash__(self) -> int:
        return hash(self._content())

    @property
    def communicating_steps(self) -> int:
        """The steps that move data (a collective on a group of more than one
        rank)."""
        return sum(1 for s in self.steps if s.is_communicating(self.mesh))

    def to_dict(self) -> dict[str, Any]:
        """The plan JSON as Python values, keys in the C++ writer's order."""
        out: dict[str, Any] = {
            "mesh": {
                "shape": list(self.mesh.shape),
                "dim_names": list(self.mesh.dim_names),
                "flattened": [list(g) for g in self.mesh.flattened],
            },
            "tensor": {"shape": list(self.shape), "dtype": self.dtype},
            "src": self.src,
            "dst": self.dst,
            "planner": self.planner,
        }
        if self.planner != "optimal":
            out["torch_version"] = self.torch_version
        out.update(
            cost_model=self.cost_model,
            steps=[s.to_dict() for s in self.steps],
            trace=self.trace,
            total_time_us=self.total_time_us,
            total_bytes=self.total_bytes,
            peak_bytes=self.peak_bytes,
            warnings=[w.to_dict() for w in self.warnings],
            planning_us=self.planning_us,
            states_expanded=self.states_expanded,
            cache_hit=self.cache_hit,
        )
        return out

    def to_json(self) -> str:
        """The plan JSON, one line: with the native module, the C++ writer's
        text, as `reshardctl plan --json` prints it; without it, the same
        JSON values, not the same bytes."""
        written = self._written_by_native(table=False)
        return plain_json(self.to_dict()) if written is None else written.rstrip("\n")

    def _written_by_native(self, table: bool) -> str | None:
        """The C++ writers' text of this plan (planner/format/plan_format.h),
        or None without the native module or for a plan they would write
        otherwise: another PyTorch pin's, or one the C++ reader refuses."""
        from reshard._inprocess import native_or_none

        module = native_or_none()
        if module is None or self.torch_version not in (None, module.torch_version()):
            return None
        try:
            return str(module.format_plan_json(plain_json(self.to_dict()), table))
        except Error:
            return None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Plan:
        """Reads plan JSON values; unknown fields and any torch_version are
        accepted (docs/DESIGN.md §4)."""
        try:
            m, t = d["mesh"], d["tensor"]
            mesh = Mesh(
                tuple(m["shape"]),
                tuple(m.get("dim_names") or ()),
                tuple(tuple(g) for g in m.get("flattened") or ()),
            )
            return cls(
                mesh=mesh,
                shape=tuple(int(s) for s in t["shape"]),
                dtype=t["dtype"],
                src=d["src"],
                dst=d["dst"],
                planner=d["planner"],
                cost_model=d["cost_model"],
                steps=tuple(Step.from_dict(s) for s in d["steps"]),
                trace=d.get("trace", ""),
                total_time_us=float(d["total_time_us"]),
                total_bytes=int(d["total_bytes"]),
                peak_bytes=int(d.get("peak_bytes", 0)),
                warnings=tuple(PlanWarning.from_dict(w) for w in d.get("warnings", ())),
                planning_us=float(d.get("planning_us", 0.0)),
                states_expanded=int(d.get("states_expanded", 0)),
                cache_hit=bool(d.get("cache_hit", False)),
                torch_version=d.get("torch_version"),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise invalid_argument(f"plan JSON: missing or bad field {e}") from None

    @classmethod
    def from_json(cls, text: str | bytes) -> Plan:
        """Reads a plan JSON (`reshardctl plan --json`); INVALID_ARGUMENT naming
        what is missing or bad."""
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            raise invalid_argument(f"plan JSON: {e}") from None
        if not isinstance(value, dict):
            raise invalid_argument("plan JSON: not an object")
        return cls.from_dict(value)

    def planner_label(self) -> str:
        """Who made the plan, as the table's total line says it (a budget
        fallback named)."""
        if any(w.code == "search_budget_exceeded" for w in self.warnings):
            return f"{self.planner} planner's fallback: see search_budget_exceeded"
        return f"{self.planner} planner"

    def summary(self) -> str:
        """The trace, one row per step and the warnings: with the native
        module, what `reshardctl plan` prints; without it, the same content
        with columns separated by two spaces."""
        written = self._written_by_native(table=True)
        if written is not None:
            return written
        rows = [f"trace: {self.trace}", "#  op  group  from -> to  bytes  us"]
        rows += [
            f"{i}  {s.op}  {s.group}  {s.from_} -> {s.to}  {s.bytes}  {s.time_us:.4f}"
            for i, s in enumerate(self.steps)
        ]
        rows.append(
            f"total: {len(self.steps)} steps ({self.communicating_steps} "
            f"communicating), {self.total_bytes} bytes, {self.total_time_us:.4f} us "
            f"({self.cost_model} model, {self.planner_label()}), peak "
            f"{self.peak_bytes} bytes/rank"
        )
        rows += [f"warning [{w.code}]: {w.message}" for w in self.warnings]
        return "\n".join(rows) + "\n"

    def __repr__(self) -> str:
        ops = ", ".join(f"{s.op}[{s.group}]" for s in self.steps) or "no steps"
        return (
            f"<reshard.Plan {self.src} -> {self.dst} on {self.mesh.shape} "
            f"{self.dtype}{list(self.shape)}: {ops}; {self.total_time_us:.4f} us, "
            f"{self.planner}>"
        )


def plain_json(value: Any) -> str:
    """JSON text, one line, in Python's own number and string forms."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class BucketMember:
    """Step `step` of item `tensor`'s plan (0-based)."""

    tensor: int
    step: int


@dataclass(frozen=True)
class Bucket:
    """One collective over its members' packed blocks (docs/DESIGN.md §8)."""

    op: str
    mesh_dims: tuple[int, ...]
    group: str
    reduce_op: str | None  # for all_reduce and reduce_scatter
    avg_divisor: int
    bytes: int
    in_bytes: int
    out_bytes: int
    time_us: float
    members: tuple[BucketMember, ...]

    @classmethod
    def from_tuple(cls, t: Sequence[Any]) -> Bucket:
        """A bucket from the native module's tuple, fields in this class's
        order."""
        members = tuple(BucketMember(a, b) for a, b in t[9])
        return cls(t[0], tuple(t[1]), *t[2:9], members)  # type: ignore[arg-type]


@dataclass(frozen=True)
class BatchPlan:
    """A planned batch: each item's plan or its own error, in order, and the
    bucketed schedule of the planned items."""

    plans: tuple[Any, ...]  # Plan, or reshard.Error for a bad item
    buckets: tuple[Bucket, ...]
    collectives_before: int  # communicating steps, tensor by tensor
    collectives_after: int  # buckets
    time_us_before: float
    time_us_after: float
    peak_bytes: int
    names: tuple[str, ...] = ()
