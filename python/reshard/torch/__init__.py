"""Reshard from PyTorch: DeviceMeshes, DTensor placements and DTensors as
Reshard's meshes, placement text and plans; plans run on torch's process
groups; DTensor.redistribute planned by Reshard.

    import reshard.torch
    out = reshard.torch.redistribute(dtensor, [Replicate(), Shard(0)])
    print(reshard.torch.explain(dtensor, [Replicate(), Shard(0)]))

`move_state_dict(state_dict, device_mesh, placements)` moves DTensors to
another DeviceMesh of the same world (RL weight refit); `CrossMeshMove`
plans that once and moves many times. `run_plan(plan, local, device_mesh)`
runs a plan (a Plan or its JSON; no
gRPC needed; without the native module, a plan JSON with its ranks'
programs, `reshardctl plan --json --programs`). Imported only when asked for (`import
reshard` never imports torch). The guide is docs/PYTHON.md, "From
PyTorch"."""

from __future__ import annotations

from reshard.torch.cross_mesh import plan_cross_mesh, plan_state_dict_cross_mesh
from reshard.torch.cross_move import CrossMeshMove, Layout, move_state_dict
from reshard.torch.dtypes import DTYPES, dtype_name
from reshard.torch.mesh import mesh_of
from reshard.torch.placements import REDUCE_OPS, placement_text, placements_of
from reshard.torch.redistribute import dst_placements, explain, plan_for, redistribute
from reshard.torch.run_plan import run_plan

__all__ = [
    "CrossMeshMove",
    "DTYPES",
    "Layout",
    "REDUCE_OPS",
    "dst_placements",
    "dtype_name",
    "explain",
    "mesh_of",
    "move_state_dict",
    "placement_text",
    "placements_of",
    "plan",
    "plan_cross_mesh",
    "plan_state_dict_cross_mesh",
    "redistribute",
    "run_plan",
]

# Reshard's plan for a DTensor's redistribution (in-process, or by a client).
plan = plan_for
