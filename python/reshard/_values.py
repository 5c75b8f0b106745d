"""The value types a caller builds: meshes, links, placements, options.

Pure Python (no native module, no grpcio), so that they work wherever the
package imports. Full validation is the planner's: these check only what
would otherwise give a confusing error far from its cause.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from reshard._errors import invalid_argument

# The dtype names the planner accepts, long and short (docs/DESIGN.md §2).
DTYPES: dict[str, str] = {
    "float32": "float32",
    "f32": "float32",
    "float64": "float64",
    "f64": "float64",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "f16": "float16",
    "int32": "int32",
    "i32": "int32",
    "int64": "int64",
    "i64": "int64",
}
PLANNERS = ("optimal", "torch_greedy", "torch_graph")
COST_MODELS = ("alpha_beta", "torch")
FLATTEN_POLICIES = ("existing", "any", "none")
REDUCE_OPS = ("sum", "avg", "max", "min")
# A batch's bucket (and a cross-mesh batch's exchange) bound when none is
# given: planner/batch/bucket_schedule.h's kDefaultBucketBytes.
DEFAULT_BUCKET_BYTES = 25 << 20


def dtype_name(dtype: str) -> str:
    """The long name of `dtype` ("f32" -> "float32")."""
    try:
        return DTYPES[dtype]
    except KeyError:
        raise invalid_argument(
            f'tensor.dtype: unknown dtype "{dtype}"; expected float32, float64, '
            "bfloat16, float16, int32 or int64"
        ) from None


@dataclass(frozen=True)
class Link:
    """One mesh dim's (or flattened group's) link; None: the model's default."""

    bandwidth_gbps: float | None = None  # GB/s, GB = 1e9 bytes
    latency_us: float | None = None  # per hop
    all_to_all_us: float | None = None  # one all_to_all's latency on the group

    def is_default(self) -> bool:
        """Whether every field is the cost model's default."""
        return (
            self.bandwidth_gbps is None
            and self.latency_us is None
            and self.all_to_all_us is None
        )


def _tuple_of(values: Iterable[object], kind: type) -> tuple:
    return tuple(kind(v) for v in values)  # type: ignore[call-arg]


@dataclass(frozen=True)
class Mesh:
    """A device mesh (docs/DESIGN.md §2.1): sizes, dim names, the row-major
    position -> rank map, the flattened groups the job has, and links.

    Hashable, so that in-process planning builds the C++ mesh once per value.
    """

    shape: tuple[int, ...]
    dim_names: tuple[str, ...] = ()
    flattened: tuple[tuple[str, ...], ...] = ()
    rank_map: tuple[int, ...] = ()
    links: tuple[Link, ...] = ()  # empty, or one per dim
    flattened_links: tuple[Link, ...] = ()  # empty, or one per flattened
    copy_gbps: float | None = None
    base_us: float | None = None
    reduce_gbps: float | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "shape", _tuple_of(self.shape, int))
        names = _tuple_of(self.dim_names, str)
        set_(self, "dim_names", names or tuple(f"d{i}" for i in range(len(self.shape))))
        groups = tuple(
            tuple(g.split(",")) if isinstance(g, str) else _tuple_of(g, str)
            for g in self.flattened
        )
        set_(self, "flattened", groups)
        set_(self, "rank_map", _tuple_of(self.rank_map, int))
        set_(self, "links", tuple(self.links))
        set_(self, "flattened_links", tuple(self.flattened_links))
        if len(self.dim_names) != len(self.shape):
            raise invalid_argument(
                f"mesh.dim_names: {len(self.dim_names)} names for "
                f"{len(self.shape)} dims"
            )

    @classmethod
    def from_text(cls, text: str, flatten: Sequence[str] = ()) -> Mesh:
        """`reshardctl`'s --mesh and --flatten: Mesh.from_text("A=2,B=4",
        ["A,B"])."""
        names: list[str] = []
        sizes: list[int] = []
        for part in text.split(","):
            name, sep, size = part.strip().partition("=")
            if not sep or not name or not size.strip().isdigit():
                raise invalid_argument(
                    f'mesh: "{part}" is not NAME=SIZE (e.g. A=2,B=2)'
                )
            names.append(name)
            sizes.append(int(size))
        return cls(tuple(sizes), tuple(names), tuple(flatten))

    @property
    def world_size(self) -> int:
        """The number of ranks: the product of the sizes."""
        size = 1
        for s in self.shape:
            size *= s
        return size

    def group_size(self, mesh_dims: Iterable[int]) -> int:
        """The ranks in a group over `mesh_dims` (indices): the product of their
        sizes."""
        size = 1
        for d in mesh_dims:
            size *= self.shape[d]
        return size


@dataclass(frozen=True)
class Shard:
    """Shard(dim): the tensor dim split across a mesh dim."""

    dim: int

    def __str__(self) -> str:
        return f"S({self.dim})"


@dataclass(frozen=True)
class Replicate:
    """Replicate(): every rank holds the whole tensor."""

    def __str__(self) -> str:
        return "R"


@dataclass(frozen=True)
class Partial:
    """Pending reduction: sum, avg, max or min."""

    op: str = "sum"

    def __post_init__(self) -> None:
        if self.op not in REDUCE_OPS:
            raise invalid_argument(
                f'placement: unknown reduce op "{self.op}" '
                f"(known: {', '.join(REDUCE_OPS)})"
            )

    def __str__(self) -> str:
        return f"P({self.op})"


Placement = Shard | Replicate | Partial
State = str | Sequence[Placement]


def state_text(state: State) -> str:
    """Placement text for the planner. A string passes through as is (both
    notations: "S(0)[1]S(0)[0]R" and "Shard(dim=0), Replicate()"); a sequence
    of Shard/Replicate/Partial becomes "S(0),R,P(sum)" (default shard
    order)."""
    if isinstance(state, str):
        return state
    parts = []
    for p in state:
        if not isinstance(p, Shard | Replicate | Partial):
            raise invalid_argument(
                f"placement: {p!r} is not a Shard, Replicate or Partial"
            )
        parts.append(str(p))
    return ",".join(parts)


@dataclass(frozen=True)
class PlanOptions:
    """What `reshardctl plan` takes beside the request (docs/DESIGN.md §3)."""

    planner: str = "optimal"
    cost_model: str = "alpha_beta"
    flatten_policy: str = "existing"
    merge: bool = False  # PyTorch's merge post-pass (torch planners)
    devices_per_host: int = 8
    search_budget: int = 0  # expanded states; 0: the planner's default
    max_peak_bytes: int | None = None  # per rank and step

    def __post_init__(self) -> None:
        for name, value, known in (
            ("planner", self.planner, PLANNERS),
            ("cost_model", self.cost_model, COST_MODELS),
            ("flatten_policy", self.flatten_policy, FLATTEN_POLICIES),
        ):
            if value not in known:
                raise invalid_argument(
                    f'options.{name}: unknown value "{value}" '
                    f"(known: {', '.join(known)})"
                )


@dataclass(frozen=True)
class PlanItem:
    """One tensor of a batch: its name, global shape, dtype and states."""

    shape: tuple[int, ...]
    src: State
    dst: State
    dtype: str = "float32"
    name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", _tuple_of(self.shape, int))


DEFAULT_OPTIONS = PlanOptions()


def options_of(options: PlanOptions | None, kwargs: dict[str, Any]) -> PlanOptions:
    """`options`, or PlanOptions of the option keywords (planner=, ...)."""
    if options is not None and kwargs:
        raise TypeError("give either options= or option keywords, not both")
    if options is not None:
        return options
    return PlanOptions(**kwargs) if kwargs else DEFAULT_OPTIONS
