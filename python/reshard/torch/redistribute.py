"""reshard.torch.redistribute: DTensor.redistribute planned by Reshard and run
by its executor's rank programs, differentiable as PyTorch 2.15's is;
explain: Reshard's plan beside PyTorch's own transform sequence for the same
request.

The backward redistributes the gradient back to the source placements, with
a source Partial dim coming back as Replicate where the gradient is sharded
or replicated there (PyTorch's rule, _redistribute_backward), and is itself
differentiable (a nested redistribution, as NestedRedistribute). Each
direction's plan is Reshard's optimal plan for that request. Repeated
requests run from the steady-state cache (reshard.torch.steady)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import DTensor, Placement, Replicate, Shard
from torch.distributed.tensor._dtensor_spec import DTensorSpec, TensorMeta

from reshard._errors import Error, StatusCode, invalid_argument
from reshard._plan import Plan
from reshard.torch import steady
from reshard.torch.dtypes import dtype_name
from reshard.torch.groups import position_of
from reshard.torch.mesh import mesh_of
from reshard.torch.placements import placement_text, placements_of
from reshard.torch.program import prepare, run

if TYPE_CHECKING:
    from reshard.client import Client


def _request(
    mesh: DeviceMesh,
    shape: Sequence[int],
    src: Sequence[Placement],
    dst: Sequence[Placement],
    dtype: torch.dtype,
) -> tuple[Any, ...]:
    """The planner's request in its terms: mesh, shape, src and dst text,
    dtype name."""
    sizes = tuple(mesh.shape)
    return (
        mesh_of(mesh),
        tuple(shape),
        placement_text(src, sizes, len(shape)),
        placement_text(dst, sizes, len(shape)),
        dtype_name(dtype),
    )


def _plan(
    mesh: DeviceMesh,
    shape: Sequence[int],
    src: Sequence[Placement],
    dst: Sequence[Placement],
    dtype: torch.dtype,
    client: Client | None,
    options: dict[str, Any],
) -> Plan:
    request = _request(mesh, shape, src, dst, dtype)
    if client is not None:
        return client.plan(*request, **options)
    from reshard._inprocess import plan as plan_in_process

    return plan_in_process(*request, **options)


def plan_for(
    dtensor: DTensor,
    placements: Sequence[Placement],
    client: Client | None = None,
    **options: Any,
) -> Plan:
    """Reshard's plan taking `dtensor` to `placements`: in this process, or
    by `client`'s service when given (option keywords as reshard.plan's)."""
    return _plan(
        dtensor.device_mesh,
        dtensor.shape,
        dtensor.placements,
        placements,
        dtensor.dtype,
        client,
        options,
    )


def dst_placements(plan: Plan) -> tuple[Placement, ...]:
    """The DTensor placements a plan ends in (its dst)."""
    return placements_of(plan.dst, plan.mesh.shape)


@dataclass(frozen=True)
class _Settings:
    """Reshard's own options of one call: the planner, a client, the rest."""

    planner: str
    client: Client | None
    options: tuple[tuple[str, Any], ...]


def _compiled(
    mesh: DeviceMesh,
    src: tuple[Placement, ...],
    meta: TensorMeta,
    placements: tuple[Placement, ...],
    s: _Settings,
) -> steady.Compiled:
    """This rank's program for the request: from the cache, else planned and
    compiled in one native call, or by `s.client`'s service (not kept: a
    service may answer differently over time; no native module needed)."""
    key = (src, meta, placements, s.planner, s.options, steady.flattened_count(mesh))
    found = steady.lookup(mesh, key) if s.client is None else None
    if found is not None:
        return found
    request = (
        *_request(mesh, meta.shape, src, placements, meta.dtype),
        position_of(mesh),
    )
    options = dict(s.options, planner=s.planner)
    if s.client is not None:
        plan, program = s.client.plan_program(*request, **options)
        return steady.Compiled(prepare(program, mesh), dst_placements(plan))
    from reshard._inprocess import plan_program

    program, dst = plan_program(*request, **options)
    compiled = steady.Compiled(
        prepare(program, mesh), placements_of(dst, tuple(mesh.shape))
    )
    steady.store(mesh, key, compiled)
    return compiled


def _moved(
    x: DTensor,
    mesh: DeviceMesh,
    placements: tuple[Placement, ...],
    op_dtype: torch.dtype,
    s: _Settings,
) -> tuple[torch.Tensor, tuple[Placement, ...]]:
    """`x`'s local tensor at `op_dtype`, redistributed to `placements`, and
    the placements it ends in."""
    local = x._local_tensor
    if local.dtype != op_dtype:
        local = local.to(op_dtype)
    src = tuple(x.placements)
    if src == placements:
        return local, placements
    meta = TensorMeta(x.shape, x.stride(), op_dtype)
    compiled = _compiled(mesh, src, meta, placements, s)
    return run(compiled.program, local), compiled.placements


def _dtensor(
    local: torch.Tensor,
    mesh: DeviceMesh,
    placements: tuple[Placement, ...],
    like: DTensor,
) -> DTensor:
    meta = TensorMeta(like.shape, like.stride(), local.dtype)
    spec = DTensorSpec(mesh, placements, tensor_meta=meta)
    return DTensor(local, spec, requires_grad=like.requires_grad)


def backward_placements(
    grad: Sequence[Placement], source: Sequence[Placement]
) -> tuple[Placement, ...]:
    """Where a gradient goes back to: the forward's source placements, but
    a Partial dim comes back Replicate where the gradient is sharded or
    replicated (PyTorch 2.15's _redistribute_backward)."""
    return tuple(
        Replicate() if target.is_partial() and not g.is_partial() else target
        for g, target in zip(grad, source, strict=True)
    )


class _Redistribute(torch.autograd.Function):
    @staticmethod
    def forward(  # type: ignore[override]
        ctx: Any,
        x: DTensor,
        mesh: DeviceMesh,
        placements: tuple[Placement, ...],
        s: _Settings,
        op_dtype: torch.dtype,
        backward_dtypes: tuple[torch.dtype, torch.dtype],
    ) -> DTensor:
        ctx.mesh, ctx.settings, ctx.source = mesh, s, tuple(x.placements)
        ctx.backward_dtypes = backward_dtypes
        local, ends_in = _moved(x, mesh, placements, op_dtype, s)
        return _dtensor(local, mesh, ends_in, x)

    @staticmethod
    def backward(ctx: Any, grad: DTensor) -> tuple[Any, ...]:  # type: ignore[override]
        op_dtype, out_dtype = ctx.backward_dtypes
        back = _Nested.apply(
            grad, ctx.mesh, ctx.source, ctx.settings, op_dtype, out_dtype
        )
        return back, None, None, None, None, None


class _Nested(torch.autograd.Function):
    """The backward's redistribution, differentiable in turn (double
    backward), as PyTorch's NestedRedistribute."""

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: Any,
        grad: DTensor,
        mesh: DeviceMesh,
        source: tuple[Placement, ...],
        s: _Settings,
        op_dtype: torch.dtype,
        out_dtype: torch.dtype,
    ) -> DTensor:
        ctx.mesh, ctx.settings, ctx.op_dtype = mesh, s, op_dtype
        ctx.original_dtype = grad._local_tensor.dtype
        target = backward_placements(grad.placements, source)
        local, ends_in = _moved(grad, mesh, target, op_dtype, s)
        if local.dtype != out_dtype:
            local = local.to(out_dtype)
        ctx.current = ends_in
        return _dtensor(local, mesh, ends_in, grad)

    @staticmethod
    def backward(ctx: Any, grad2: DTensor) -> tuple[Any, ...]:  # type: ignore[override]
        back = _Nested.apply(
            grad2, ctx.mesh, ctx.current, ctx.settings, ctx.op_dtype, ctx.original_dtype
        )
        return back, None, None, None, None, None


def _checked_placements(
    x: DTensor, placements: Sequence[Placement] | None, mesh: DeviceMesh | None
) -> tuple[Placement, ...]:
    if mesh is not None and mesh != x.device_mesh:
        raise Error(
            StatusCode.UNIMPLEMENTED,
            "device_mesh: a mesh other than the DTensor's is a cross-mesh "
            "redistribution; plan it with reshard.torch.plan_cross_mesh",
        )
    if placements is None:
        raise invalid_argument("placements: needed (one per mesh dim)")
    if len(placements) != x.device_mesh.ndim:
        raise invalid_argument(
            f"placements: {len(placements)} for a mesh of {x.device_mesh.ndim} dims"
        )
    return tuple(
        Shard(p.dim + x.ndim) if type(p) is Shard and p.dim < 0 else p
        for p in placements
    )


@torch.compiler.disable
def redistribute(
    x: DTensor,
    placements: Sequence[Placement] | None = None,
    *,
    device_mesh: DeviceMesh | None = None,
    async_op: bool = False,
    forward_dtype: torch.dtype | None = None,
    backward_dtype: torch.dtype | None = None,
    planner: str = "optimal",
    client: Client | None = None,
    **options: Any,
) -> DTensor:
    """`x.redistribute(device_mesh, placements, async_op=...,
    forward_dtype=..., backward_dtype=...)` as PyTorch 2.15 defines it,
    planned by Reshard (in-process, or by `client`; `planner` and the option
    keywords as reshard.plan's) and run by its executor's rank programs on
    the mesh's process groups. Every rank of the mesh calls it.

    Differentiable (twice) where `x` requires grad. `forward_dtype` casts
    before the forward collectives and the result keeps it;
    `backward_dtype` casts the gradient before the backward collectives,
    and the gradient returns in `x`'s dtype. `async_op` is accepted; the
    collectives run before the call returns. Under torch.compile the call
    is a graph break."""
    del async_op  # the result is complete on return, which 2.15 allows
    target = _checked_placements(x, placements, device_mesh)
    settings = _Settings(planner, client, tuple(sorted(options.items())))
    input_dtype = x._local_tensor.dtype
    result: DTensor = _Redistribute.apply(
        x,
        x.device_mesh,
        target,
        settings,
        forward_dtype or input_dtype,
        (backward_dtype or input_dtype, input_dtype),
    )
    return result


def _torch_steps(dtensor: DTensor, placements: Sequence[Placement]) -> list[str]:
    """PyTorch's own transform sequence for the request (its private
    _gen_transform_infos; a change in the pin fails test_torch_redistribute)."""
    from torch.distributed.tensor import _redistribute

    src = dtensor._spec
    dst = DTensorSpec(src.mesh, tuple(placements), tensor_meta=src.tensor_meta)
    infos = _redistribute._gen_transform_infos_non_cached(src, dst)
    lines = []
    for info in infos:
        before, after = info.src_dst_placements
        lines.append(f"mesh dim {info.mesh_dim}: {before} -> {after}")
    return lines


def explain(
    dtensor: DTensor,
    placements: Sequence[Placement],
    planner: str = "optimal",
    client: Client | None = None,
    **options: Any,
) -> str:
    """Reshard's plan (its step table and modelled time) and, below it,
    PyTorch's transform sequence for the same request."""
    plan = plan_for(dtensor, placements, client, planner=planner, **options)
    theirs = _torch_steps(dtensor, placements)
    lines = "".join(f"  {line}\n" for line in theirs) or "  (nothing to do)\n"
    return (
        f"Reshard ({plan.planner}):\n{plan.summary()}"
        f"PyTorch {torch.__version__} ({len(theirs)} transforms):\n{lines}"
    )
