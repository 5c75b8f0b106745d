"""reshard.torch.run_plan: a plan run on torch process groups, one rank's
local tensor in, its local tensor under the plan's dst out.

The rank's program is the C++ executor's (reshard.torch.program runs it):
compiled by the native module, or read from a plan JSON that carries every
rank's programs (`reshardctl plan --programs`, docs/PLAN_JSON.md)."""

from __future__ import annotations

import json
from typing import Any

import torch
from torch.distributed.device_mesh import DeviceMesh

from reshard._errors import Error, StatusCode, invalid_argument
from reshard._plan import Plan
from reshard.torch.groups import position_of
from reshard.torch.program import Program, prepare, run


def rank_program(plan: Plan | str, mesh: DeviceMesh) -> dict[str, Any]:
    """This rank's program of `plan` (a Plan or its JSON) on `mesh`, read:
    from the JSON's `programs` where it has them, else from the native
    module (UNIMPLEMENTED where there is neither)."""
    text = plan if isinstance(plan, str) else None
    sizes = (Plan.from_json(plan) if text is not None else plan).mesh.shape
    if tuple(mesh.shape) != tuple(sizes):
        raise invalid_argument(
            f"mesh: the DeviceMesh is {tuple(mesh.shape)}, the plan's {tuple(sizes)}"
        )
    position = position_of(mesh)
    if text is not None:
        programs = json.loads(text).get("programs")
        if programs:
            return _program_at(programs, position)
    from reshard._inprocess import native_or_none

    module = native_or_none()
    if module is None:
        raise Error(
            StatusCode.UNIMPLEMENTED,
            "plan: without the native module reshard._native, run_plan needs a "
            "plan JSON with every rank's programs (reshardctl plan --programs)",
        )
    if text is None:
        assert isinstance(plan, Plan)
        text = plan.to_json()
    return json.loads(module.rank_program(text, position))


def _program_at(programs: list[dict[str, Any]], position: int) -> dict[str, Any]:
    for p in programs:
        if p.get("position") == position:
            return p
    raise invalid_argument(f"plan.programs: none for mesh position {position}")


def compile_plan(plan: Plan | str, mesh: DeviceMesh) -> Program:
    """`plan` compiled for this rank of `mesh`, its process groups made:
    what run_plan runs, kept by callers that run one plan many times."""
    return prepare(rank_program(plan, mesh), mesh)


def run_plan(plan: Plan | str, local: torch.Tensor, mesh: DeviceMesh) -> torch.Tensor:
    """Runs `plan` (a Plan or its JSON) on `mesh`'s process groups: `local`
    is this rank's block of the tensor under the plan's src; returns its
    block under dst. Every rank of the mesh calls it with the same plan."""
    return run(compile_plan(plan, mesh), local)
