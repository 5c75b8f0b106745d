"""In-process planning: the C++ planner through the native module, with the
process's plan cache (4,096 plans). The module loads on first use, so that
the rest of the package works without it."""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Sequence
from typing import Any

from reshard._cross_plan import CrossMeshPlan
from reshard._errors import Error, StatusCode
from reshard._plan import BatchPlan, Bucket, LazySteps, Plan, PlanWarning, Step
from reshard._values import (
    DEFAULT_BUCKET_BYTES,
    Link,
    Mesh,
    PlanItem,
    PlanOptions,
    State,
    dtype_name,
    options_of,
    state_text,
)

_native_module: Any = None
_meshes: dict[Mesh, Any] = {}
_lock = threading.Lock()
# The most C++ meshes kept built; past it the oldest is dropped.
_MAX_MESHES = 256


def native_or_none() -> Any:
    """The native module, or None where it is not built or installed."""
    try:
        return native()
    except Error:
        return None


def native() -> Any:
    """The native module, imported once; Error(UNIMPLEMENTED) naming what is
    missing when this install has none."""
    global _native_module
    if _native_module is None:
        try:
            from reshard import _native  # type: ignore[attr-defined]
        except ImportError as e:
            raise Error(
                StatusCode.UNIMPLEMENTED,
                "in-process planning needs the native module reshard._native, "
                f"which did not load ({e}); build the package (docs/PYTHON.md, "
                "Installing) or plan on a server with reshard.Client",
            ) from None
        _native_module = _native
    return _native_module


def _link_tuple(link: Any) -> tuple[Any, Any, Any]:
    return (link.bandwidth_gbps, link.latency_us, link.all_to_all_us)


def native_mesh(mesh: Mesh) -> Any:
    with _lock:
        built = _meshes.get(mesh)
    if built is not None:
        return built
    built = native().make_mesh(
        list(mesh.shape),
        list(mesh.dim_names),
        list(mesh.rank_map),
        [list(g) for g in mesh.flattened],
        [_link_tuple(link) for link in mesh.links],
        [_link_tuple(link) for link in mesh.flattened_links],
        mesh.copy_gbps,
        mesh.base_us,
        mesh.reduce_gbps,
    )
    with _lock:
        if len(_meshes) >= _MAX_MESHES:
            del _meshes[next(iter(_meshes))]
        _meshes[mesh] = built
    return built


@functools.lru_cache(maxsize=256)
def _native_options(options: PlanOptions) -> Any:
    """The native options of `options` (a frozen value: built once)."""
    o = native().Options()
    o.planner = options.planner
    o.cost_model = options.cost_model
    o.flatten_policy = options.flatten_policy
    o.merge = options.merge
    o.devices_per_host = options.devices_per_host
    o.search_budget = options.search_budget
    o.max_peak_bytes = options.max_peak_bytes
    return o


def _step_of(handle: Any, i: int) -> Step:
    t = handle.step(i)
    return Step(t[0], tuple(t[1]), *t[2:])


def plan_of(mesh: Mesh, handle: Any) -> Plan:
    """A Plan over a native plan: scalars read now (one call), steps when
    asked."""
    (
        shape,
        dtype,
        src,
        dst,
        planner,
        cost_model,
        trace,
        total_time_us,
        total_bytes,
        peak_bytes,
        planning_us,
        states_expanded,
        cache_hit,
        step_count,
    ) = handle.fields()
    return Plan(
        mesh=mesh,
        shape=tuple(shape),
        dtype=dtype,
        src=src,
        dst=dst,
        planner=planner,
        cost_model=cost_model,
        steps=LazySteps(step_count, lambda i: _step_of(handle, i)),
        trace=trace,
        total_time_us=total_time_us,
        total_bytes=total_bytes,
        peak_bytes=peak_bytes,
        warnings=tuple(
            PlanWarning(c, tuple(d), m, s) for c, d, m, s in handle.warnings()
        ),
        planning_us=planning_us,
        states_expanded=states_expanded,
        cache_hit=cache_hit,
        torch_version=None if planner == "optimal" else torch_version(),
    )


def torch_version() -> str:
    return str(native().torch_version())


def plan(
    mesh: Mesh,
    shape: Sequence[int],
    src: State,
    dst: State,
    dtype: str = "float32",
    options: PlanOptions | None = None,
    **option_kwargs: Any,
) -> Plan:
    """Plans taking a tensor of global `shape` from `src` to `dst` on
    `mesh`, in this process. Option keywords are PlanOptions' (planner=,
    cost_model=, flatten_policy=, merge=, devices_per_host=,
    search_budget=, max_peak_bytes=). Raises reshard.Error."""
    opts = options_of(options, option_kwargs)
    item = native().Item(
        list(shape), dtype_name(dtype), state_text(src), state_text(dst)
    )
    handle = native().plan(native_mesh(mesh), item, _native_options(opts))
    return plan_of(mesh, handle)


def plan_program(
    mesh: Mesh,
    shape: Sequence[int],
    src: State,
    dst: State,
    dtype: str,
    position: int,
    **option_kwargs: Any,
) -> tuple[dict[str, Any], str]:
    """Plans in this process and compiles the plan for the rank at mesh
    `position`, in one native call and without a Plan: that rank's program
    (docs/PLAN_JSON.md, "Rank programs"), read, and the plan's dst."""
    opts = options_of(None, option_kwargs)
    n = native()
    item = n.Item(list(shape), dtype_name(dtype), state_text(src), state_text(dst))
    text, dst_text = n.plan_program(
        native_mesh(mesh), item, _native_options(opts), position
    )
    return json.loads(text), dst_text


def plan_batch(
    mesh: Mesh,
    items: Sequence[PlanItem],
    bucket_bytes: int = DEFAULT_BUCKET_BYTES,
    all_or_nothing: bool = False,
    options: PlanOptions | None = None,
    **option_kwargs: Any,
) -> BatchPlan:
    """Plans every item on `mesh` with one options set and buckets the plans
    (docs/DESIGN.md §8). A bad item gets its own Error in `plans` (its
    message starts `items[i].`) unless `all_or_nothing`, which raises the
    first."""
    opts = options_of(options, option_kwargs)
    n = native()
    native_items = [
        n.Item(list(i.shape), dtype_name(i.dtype), state_text(i.src), state_text(i.dst))
        for i in items
    ]
    plans, buckets, totals = n.plan_batch(
        native_mesh(mesh),
        native_items,
        _native_options(opts),
        bucket_bytes,
        all_or_nothing,
    )
    return BatchPlan(
        plans=tuple(
            Error(p[0], p[1]) if isinstance(p, tuple) else plan_of(mesh, p)
            for p in plans
        ),
        buckets=tuple(Bucket.from_tuple(b) for b in buckets),
        collectives_before=totals[0],
        collectives_after=totals[1],
        time_us_before=totals[2],
        time_us_after=totals[3],
        peak_bytes=totals[4],
        names=tuple(i.name for i in items),
    )


def cache_info() -> dict[str, int]:
    """The in-process plan cache: size, capacity, hits, misses."""
    size, capacity, hits, misses = native().cache_info()
    return {"size": size, "capacity": capacity, "hits": hits, "misses": misses}


def plan_cross_mesh(
    src_mesh: Mesh,
    dst_mesh: Mesh,
    shape: Sequence[int],
    src: State,
    dst: State,
    dtype: str = "float32",
    unavailable_ranks: Sequence[int] = (),
    cross_link: Link | None = None,
    options: PlanOptions | None = None,
    **option_kwargs: Any,
) -> CrossMeshPlan:
    """Plans moving a tensor of global `shape` from `src` on `src_mesh` to
    `dst` on `dst_mesh`, the two placed in one global rank space by their
    rank maps (docs/DESIGN.md §9), in this process. `unavailable_ranks`:
    source ranks that must not send; `cross_link`: what transfers cost
    (default: the slower mesh's dim 0 link). Option keywords as
    reshard.plan's (the planner is optimal). Raises reshard.Error."""
    opts = options_of(options, option_kwargs)
    text = native().plan_cross_mesh(
        *_cross_args(
            src_mesh, dst_mesh, shape, src, dst, dtype, unavailable_ranks, cross_link
        ),
        _native_options(opts),
    )
    return CrossMeshPlan.from_json(text)


def _cross_args(
    src_mesh: Mesh,
    dst_mesh: Mesh,
    shape: Sequence[int],
    src: State,
    dst: State,
    dtype: str,
    unavailable_ranks: Sequence[int],
    cross_link: Link | None,
) -> tuple[Any, ...]:
    return (
        native_mesh(src_mesh),
        native_mesh(dst_mesh),
        list(shape),
        dtype_name(dtype),
        state_text(src),
        state_text(dst),
        list(unavailable_ranks),
        _link_tuple(cross_link or Link()),
    )


def plan_cross_program(
    src_mesh: Mesh,
    dst_mesh: Mesh,
    shape: Sequence[int],
    src: State,
    dst: State,
    dtype: str,
    rank: int,
    unavailable_ranks: Sequence[int] = (),
    cross_link: Link | None = None,
    options: PlanOptions | None = None,
    **option_kwargs: Any,
) -> tuple[CrossMeshPlan, dict[str, Any]]:
    """plan_cross_mesh, and global `rank`'s compiled program of the plan
    (docs/PLAN_JSON.md, "Cross-mesh programs"), read, in one call."""
    opts = options_of(options, option_kwargs)
    plan_text, program = native().plan_cross_program(
        *_cross_args(
            src_mesh, dst_mesh, shape, src, dst, dtype, unavailable_ranks, cross_link
        ),
        _native_options(opts),
        rank,
    )
    return CrossMeshPlan.from_json(plan_text), json.loads(program)
