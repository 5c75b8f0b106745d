"""`plan`: one tensor on the service, on a registered mesh, or in-process
with --offline; prints the step table or the plan JSON, as `reshardctl
plan` (client/plan_command.h)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from reshard._errors import Error, StatusCode, invalid_argument
from reshard._plan import Plan
from reshard.cli.args import Args, GlobalFlags
from reshard.cli.connect import connect
from reshard.cli.exit_codes import PROG
from reshard.cli.plan_flags import (
    MESH_FLAGS,
    PLAN_FLAGS,
    mesh_from_flags,
    request_from_flags,
)

USAGE = f"""\
usage: {PROG} [global flags] plan [--offline] --mesh A=2,B=2,C=2 [--flatten A,C]...
         [--link DIM[,DIM...]=GBPS:US[:A2A_US]]... [--copy_gbps X] [--base_us X]
         [--reduce_gbps X]
         --shape 16,16 [--dtype f32]
         --from 'P(sum),R,P(sum)' --to 'R,R,R'
         [--planner optimal|torch_greedy|torch_graph] [--merge]
         [--cost_model alpha_beta|torch] [--devices_per_host N]
         [--flatten_policy existing|any|none] [--max_peak_bytes N]
         [--search_budget N] [--json]
       {PROG} [global flags] plan --mesh_id MESH_ID --shape ... --from ...
         --to ... [options]
  Plans a redistribution on the service (--offline: in-process) and
  prints the trace, one row per step and the warnings, or the plan JSON
  (docs/PLAN_JSON.md), as `reshardctl plan` does. A batch (--batch FILE)
  is `reshardctl plan --batch`'s.
"""


def _check_required(args: Args) -> None:
    by_id = args.has("mesh_id")
    if by_id and args.has("offline"):
        raise invalid_argument(
            "--mesh_id: the registry is the service's; cannot be combined with "
            "--offline"
        )
    for flag in MESH_FLAGS:
        if by_id and args.has(flag):
            raise invalid_argument(
                f"--mesh_id: cannot be combined with --{flag} (the registered "
                "mesh fixes the mesh)"
            )
    if not by_id and not args.has("mesh"):
        raise invalid_argument("plan: --mesh or --mesh_id is required")
    for required in ("shape", "from", "to"):
        if not args.has(required):
            raise invalid_argument(f"plan: --{required} is required")


def _plan_registered(flags: GlobalFlags, mesh_id: str, args: Args) -> Plan:
    with connect(flags) as client:
        try:
            client.get_mesh(mesh_id)
        except Error as e:
            if e.code != StatusCode.NOT_FOUND:
                raise
            raise Error(
                e.code,
                f"{e.message}; `{PROG} mesh list` shows the meshes registered on "
                "this server",
            ) from None
        r = request_from_flags(args)
        return client.plan(mesh_id, r.shape, r.src, r.dst, r.dtype, r.options)


def _plan_inline(flags: GlobalFlags, args: Args) -> Plan:
    mesh = mesh_from_flags(args)
    r = request_from_flags(args)
    if args.has("offline"):
        from reshard._inprocess import plan as plan_in_process

        return plan_in_process(mesh, r.shape, r.src, r.dst, r.dtype, r.options)
    with connect(flags) as client:
        return client.plan(mesh, r.shape, r.src, r.dst, r.dtype, r.options)


def run_plan(flags: GlobalFlags, argv: Sequence[str], out: TextIO) -> None:
    if any(a == "--batch" or a.startswith("--batch=") for a in argv):
        raise Error(
            StatusCode.UNIMPLEMENTED,
            f"plan --batch: not in {PROG}; reshardctl plan --batch plans a batch "
            "(or reshard.plan_batch and Client.plan_batch from Python)",
        )
    args = Args(argv, {*PLAN_FLAGS, "mesh_id"}, {"offline", "merge", "json"})
    _check_required(args)
    mesh_id = args.get("mesh_id")
    plan = (
        _plan_registered(flags, mesh_id, args)
        if mesh_id is not None
        else _plan_inline(flags, args)
    )
    out.write(plan.to_json() + "\n" if args.has("json") else plan.summary())
