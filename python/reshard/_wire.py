"""Python values <-> reshard.v1 messages: the one place the client meets
generated types. Imported only by the client (it needs protobuf)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from reshard import _version
from reshard._cross_plan import CrossMeshPlan, Transfer, TransferBytes
from reshard._errors import Error, RankFailure
from reshard._plan import (
    _NO_REDUCE_OP,
    BatchPlan,
    Bucket,
    BucketMember,
    Plan,
    PlanWarning,
    Step,
)
from reshard._results import (
    AgentInfo,
    JobInfo,
    JobRun,
    PreparedSchedule,
    RankReport,
    RecentRun,
    ResolvedGroup,
    RunProgress,
    StepResult,
    TensorCheck,
    TensorResult,
)
from reshard._values import Link, Mesh, PlanItem, PlanOptions, dtype_name, state_text
from reshard.v1 import coordinator_pb2 as cpb
from reshard.v1 import planner_pb2 as pb


def _enum(enum: Any, prefix: str, name: str) -> int:
    return int(enum.Value(prefix + name.upper()))


def _enum_name(enum: Any, prefix: str, value: int, default: str) -> str:
    if value == 0:
        return default
    return str(enum.Name(value))[len(prefix) :].lower()


def _link_to(link: Link, out: Any) -> None:
    for name in ("bandwidth_gbps", "latency_us", "all_to_all_us"):
        value = getattr(link, name)
        if value is not None:
            setattr(out, name, value)


def _link_from(msg: Any) -> Link:
    return Link(
        *(
            getattr(msg, n) if msg.HasField(n) else None
            for n in ("bandwidth_gbps", "latency_us", "all_to_all_us")
        )
    )


def mesh_to_proto(mesh: Mesh) -> Any:
    out = pb.Mesh(shape=mesh.shape, dim_names=mesh.dim_names, rank_map=mesh.rank_map)
    for i, group in enumerate(mesh.flattened):
        f = out.flattened.add(dims=group)
        if i < len(mesh.flattened_links):
            _link_to(mesh.flattened_links[i], f.link)
    for link in mesh.links:
        _link_to(link, out.links.add())
    for name in ("copy_gbps", "base_us", "reduce_gbps"):
        if getattr(mesh, name) is not None:
            setattr(out, name, getattr(mesh, name))
    return out


def mesh_from_proto(msg: Any) -> Mesh:
    links = tuple(_link_from(link) for link in msg.links)
    flat_links = tuple(_link_from(f.link) for f in msg.flattened)
    return Mesh(
        shape=tuple(msg.shape),
        dim_names=tuple(msg.dim_names),
        flattened=tuple(tuple(f.dims) for f in msg.flattened),
        rank_map=tuple(msg.rank_map),
        links=() if all(x.is_default() for x in links) else links,
        flattened_links=() if all(x.is_default() for x in flat_links) else flat_links,
        **{
            n: getattr(msg, n) if msg.HasField(n) else None
            for n in ("copy_gbps", "base_us", "reduce_gbps")
        },
    )


def options_to_proto(o: PlanOptions) -> Any:
    out = pb.PlanOptions(
        planner=_enum(pb.PlannerKind, "PLANNER_KIND_", o.planner),
        cost_model=_enum(pb.CostModel, "COST_MODEL_", o.cost_model),
        flatten_policy=_enum(pb.FlattenPolicy, "FLATTEN_POLICY_", o.flatten_policy),
        merge=o.merge,
        devices_per_host=o.devices_per_host,
        search_budget=o.search_budget,
    )
    if o.max_peak_bytes is not None:
        out.max_peak_bytes = o.max_peak_bytes
    return out


def tensor_to_proto(shape: Sequence[int], dtype: str) -> Any:
    return pb.Tensor(shape=shape, dtype=_enum(pb.DType, "DTYPE_", dtype_name(dtype)))


def plan_request(
    mesh: Mesh | str,
    item: PlanItem,
    options: PlanOptions,
    program_position: int | None = None,
) -> Any:
    out = pb.PlanRequest(
        tensor=tensor_to_proto(item.shape, item.dtype),
        src=pb.DistState(text=state_text(item.src)),
        dst=pb.DistState(text=state_text(item.dst)),
        options=options_to_proto(options),
    )
    if program_position is not None:
        out.program_position = program_position
    if isinstance(mesh, str):
        out.mesh_id = mesh
    else:
        out.mesh.CopyFrom(mesh_to_proto(mesh))
    return out


def _reduce_op(op: str, value: int) -> str | None:
    if op in _NO_REDUCE_OP:
        return None
    return _enum_name(pb.ReduceOp, "REDUCE_OP_", value, "sum")


def _step_from(s: Any) -> Step:
    return Step(
        op=s.op,
        mesh_dims=tuple(s.mesh_dims),
        group=s.group,
        reduce_op=_reduce_op(s.op, s.reduce_op),
        avg_divisor=s.avg_divisor,
        src_tensor_dim=s.src_tensor_dim if s.HasField("src_tensor_dim") else None,
        dst_tensor_dim=s.dst_tensor_dim if s.HasField("dst_tensor_dim") else None,
        from_=getattr(s, "from"),
        to=s.to,
        bytes=s.bytes,
        time_us=s.time_us,
    )


def plan_from_proto(mesh: Mesh, p: Any) -> Plan:
    return Plan(
        mesh=mesh,
        shape=tuple(p.tensor.shape),
        dtype=_enum_name(pb.DType, "DTYPE_", p.tensor.dtype, "float32"),
        src=p.src,
        dst=p.dst,
        planner=p.planner,
        cost_model=p.cost_model,
        steps=tuple(_step_from(s) for s in p.steps),
        trace=p.trace,
        total_time_us=p.total_time_us,
        total_bytes=p.total_bytes,
        peak_bytes=p.peak_bytes,
        warnings=tuple(
            PlanWarning(w.code, tuple(w.dims), w.message, w.saving_us)
            for w in p.warnings
        ),
        planning_us=p.planning_us,
        states_expanded=p.states_expanded,
        cache_hit=p.cache_hit,
        torch_version=None if p.planner == "optimal" else _version.TORCH_VERSION,
    )


def cross_request(
    src_mesh: Mesh,
    dst_mesh: Mesh,
    item: PlanItem,
    unavailable_ranks: Sequence[int],
    cross_link: Link,
    options: PlanOptions,
    program_rank: int | None = None,
) -> Any:
    out = pb.PlanCrossMeshRequest(
        src_mesh=mesh_to_proto(src_mesh),
        dst_mesh=mesh_to_proto(dst_mesh),
        tensor=tensor_to_proto(item.shape, item.dtype),
        src=pb.DistState(text=state_text(item.src)),
        dst=pb.DistState(text=state_text(item.dst)),
        unavailable_ranks=list(unavailable_ranks),
        options=options_to_proto(options),
    )
    _link_to(cross_link, out.cross_link)
    if program_rank is not None:
        out.program_rank = program_rank
    return out


def cross_plan_from_proto(p: Any) -> CrossMeshPlan:
    """The plan of a PlanCrossMesh reply; its meshes come with it."""
    pre = plan_from_proto(mesh_from_proto(p.src_mesh), p.pre)
    return CrossMeshPlan(
        src_mesh=pre.mesh,
        dst_mesh=mesh_from_proto(p.dst_mesh),
        shape=pre.shape,
        dtype=pre.dtype,
        src=p.src,
        dst=p.dst,
        src_mid=p.src_mid,
        dst_mid=p.dst_mid,
        pre_steps=tuple(pre.steps),
        transfers=tuple(
            Transfer(getattr(t, "from"), t.to, tuple(t.offset), tuple(t.extent))
            for t in p.transfers
        ),
        transfers_omitted=p.transfers_omitted,
        post_steps=tuple(_step_from(s) for s in p.post.steps),
        transfer_time_us=p.transfer_time_us,
        total_time_us=p.total_time_us,
        total_bytes=p.total_bytes,
        peak_bytes=p.peak_bytes,
        bytes_by_rank=TransferBytes(
            p.bytes_by_rank.max_send,
            p.bytes_by_rank.mean_send,
            p.bytes_by_rank.max_recv,
        ),
        sender_rule=p.sender_rule.name,
        unavailable_ranks=tuple(p.sender_rule.unavailable_ranks),
        cross_link=_link_from(p.sender_rule.cross_link),
        layout_digest=p.layout_digest,
        warnings=tuple(
            PlanWarning(w.code, tuple(w.dims), w.message, w.saving_us)
            for w in p.warnings
        ),
        planning_us=p.planning_us,
    )


def plan_to_proto(plan: Plan) -> Any:
    out = pb.Plan(
        tensor=tensor_to_proto(plan.shape, plan.dtype),
        src=plan.src,
        dst=plan.dst,
        planner=plan.planner,
        cost_model=plan.cost_model,
        trace=plan.trace,
        total_time_us=plan.total_time_us,
        total_bytes=plan.total_bytes,
        peak_bytes=plan.peak_bytes,
        planning_us=plan.planning_us,
        states_expanded=plan.states_expanded,
        cache_hit=plan.cache_hit,
    )
    for s in plan.steps:
        step = out.steps.add(
            op=s.op,
            mesh_dims=s.mesh_dims,
            group=s.group,
            reduce_op=_enum(pb.ReduceOp, "REDUCE_OP_", s.reduce_op or "sum"),
            avg_divisor=s.avg_divisor,
            to=s.to,
            bytes=s.bytes,
            time_us=s.time_us,
        )
        setattr(step, "from", s.from_)
        if s.src_tensor_dim is not None:
            step.src_tensor_dim = s.src_tensor_dim
        if s.dst_tensor_dim is not None:
            step.dst_tensor_dim = s.dst_tensor_dim
    for w in plan.warnings:
        out.warnings.add(
            code=w.code, dims=w.dims, message=w.message, saving_us=w.saving_us
        )
    return out


def batch_from_proto(mesh: Mesh, r: Any, names: tuple[str, ...]) -> BatchPlan:
    errors = {e.item: Error(e.code, e.message) for e in r.errors}
    buckets = tuple(
        Bucket(
            op=b.op,
            mesh_dims=tuple(b.mesh_dims),
            group=b.group,
            reduce_op=_reduce_op("", b.reduce_op)
            if b.op in ("all_reduce", "reduce_scatter")
            else None,
            avg_divisor=b.avg_divisor,
            bytes=b.bytes,
            in_bytes=b.in_bytes,
            out_bytes=b.out_bytes,
            time_us=b.time_us,
            members=tuple(BucketMember(m.tensor, m.step) for m in b.members),
        )
        for b in r.buckets
    )
    return BatchPlan(
        plans=tuple(
            errors[i] if i in errors else plan_from_proto(mesh, p)
            for i, p in enumerate(r.plans)
        ),
        buckets=buckets,
        collectives_before=r.collectives_before,
        collectives_after=r.collectives_after,
        time_us_before=r.time_us_before,
        time_us_after=r.time_us_after,
        peak_bytes=r.peak_bytes,
        names=names,
    )


def _fill(cls: type, msg: Any, **given: Any) -> Any:
    """`cls` from the same-named fields of `msg`; repeated ones as tuples."""
    values = {}
    for f in dataclasses.fields(cls):
        if f.name in given:
            values[f.name] = given[f.name]
            continue
        value = getattr(msg, f.name)
        if not isinstance(value, str | bytes | int | float | bool):
            value = tuple(value)
        values[f.name] = value
    return cls(**values)


def _backend(value: int) -> str:
    return _enum_name(cpb.Backend, "BACKEND_", value, "gloo")


def job_run_from_proto(r: Any) -> JobRun:
    mesh = mesh_from_proto(r.mesh)
    ranks = tuple(
        _fill(
            RankReport,
            rank,
            tensors=tuple(_fill(TensorCheck, t) for t in rank.tensors),
        )
        for rank in r.ranks
    )
    return _fill(
        JobRun,
        r,
        mesh=mesh,
        plan=plan_from_proto(mesh, r.plan) if r.HasField("plan") else None,
        backend=_backend(r.backend),
        steps=tuple(_fill(StepResult, s) for s in r.steps),
        tensors=tuple(_fill(TensorResult, t) for t in r.tensors),
        ranks=ranks,
    )


def job_info_from_proto(j: Any) -> JobInfo:
    return _fill(
        JobInfo,
        j,
        backend=_backend(j.backend),
        agents=tuple(_fill(AgentInfo, a) for a in j.agents),
        recent_runs=tuple(_fill(RecentRun, run) for run in j.recent_runs),
        schedules=tuple(_fill(PreparedSchedule, s) for s in j.schedules),
        current_run_progress=_fill(RunProgress, j.current_run_progress)
        if j.HasField("current_run_progress")
        else None,
    )


def groups_from_proto(r: Any) -> list[ResolvedGroup]:
    return [_fill(ResolvedGroup, g) for g in r.groups]


def rank_failures(details: bytes | None) -> tuple[RankFailure, ...]:
    """The failing ranks a RunJob status carries (grpc-status-details-bin:
    a reshard.v1.RunFailure)."""
    if not details:
        return ()
    try:
        failure = cpb.RunFailure.FromString(details)
    except Exception:  # not ours: a proxy's, or garbled
        return ()
    return tuple(_fill(RankFailure, f) for f in failure.ranks)
