"""What `job run` prints for a plan's run, as reshardctl prints it
(client/run_output.h): the plan's trace, one row per step (the slowest
rank's times, the bandwidths), the checksums and the verdict; or the same
as one JSON object."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TextIO

from reshard._errors import Error, StatusCode
from reshard._json_text import json_string, number_text
from reshard._plan import Plan
from reshard._results import JobRun, StepResult
from reshard.cli.exit_codes import Interrupted


@dataclass(frozen=True)
class RunContext:
    """What the output says about a run beside its results."""

    launched_on: str  # "job NAME, W agents, run ID"
    iters: int
    warmup: int
    interrupted_after: int  # executions finished when stopped; -1: not stopped


def _header(plan: Plan, run: JobRun, c: RunContext) -> str:
    model = f"{plan.total_time_us:.2f}"
    out = f"plan: {plan.trace}  ({plan.planner}, model {model} us)\n"
    out += "".join(f"warning [{w.code}]: {w.message}\n" for w in plan.warnings)
    return out + (
        f"backend {run.backend}, {c.launched_on}, {c.iters} iters after "
        f"{c.warmup} warm-up\n"
    )


def _rows(run: JobRun) -> str:
    out = (
        f"{'step':>5}  {'op':<15} {'group':<8} "
        f"{'bytes':>12} {'min_us':>12} {'median_us':>12} {'slowest_us':>12} "
        f"{'model_us':>12} {'algbw_GB/s':>11} {'busbw_GB/s':>11}\n"
    )
    for k, r in enumerate(run.steps):
        out += (
            f"{k:>5}  {r.op:<15} {r.group:<8} {r.bytes:>12} "
            f"{r.seconds_min * 1e6:>12.2f} {r.seconds_median * 1e6:>12.2f} "
            f"{r.slowest_median_seconds * 1e6:>12.2f} {r.model_seconds * 1e6:>12.2f} "
            f"{r.algbw_gbps:>11.3f} {r.busbw_gbps:>11.3f}\n"
        )
    return out


def _checksums(run: JobRun, separator: str) -> str:
    return separator.join(map(str, run.tensors[0].checksums)) if run.tensors else ""


def _footer(plan: Plan, run: JobRun, c: RunContext) -> str:
    steps = len(run.steps)
    out = (
        f"plan per run: min {run.seconds_min * 1e6:.2f} us, median "
        f"{run.seconds_median * 1e6:.2f} us ({steps} step{'' if steps == 1 else 's'}, "
        f"local steps {run.local_seconds_median * 1e6:.2f} us)\n"
    )
    interrupted = c.interrupted_after >= 0
    if not interrupted:
        out += f"checksums: {_checksums(run, ' ')}\n"
    verdict = (
        f"interrupted after {c.interrupted_after} of "
        f"{c.warmup + max(1, c.iters)} executions (warmup included): not validated"
        if interrupted
        else "validated: " + ("yes" if run.validated else f"NO: {run.validation_error}")
    )
    return out + (
        f"{verdict}   peak bytes per rank: {run.peak_bytes} measured, "
        f"{plan.peak_bytes} planned   wall: {run.wall_seconds:.3f} s\n"
    )


def _row_json(k: int, r: StepResult) -> str:
    numbers = (
        "seconds_min",
        "seconds_median",
        "slowest_median_seconds",
        "model_seconds",
        "algbw_gbps",
        "busbw_gbps",
    )
    fields = "".join(f', "{f}": {number_text(getattr(r, f))}' for f in numbers)
    return (
        f'{{"index": {k}, "op": {json_string(r.op)}, "group": {json_string(r.group)}, '
        f'"bytes": {r.bytes}{fields}}}'
    )


def _json(plan: Plan, run: JobRun, c: RunContext) -> str:
    steps = ", ".join(_row_json(k, r) for k, r in enumerate(run.steps))
    validated = run.validated and c.interrupted_after < 0
    out = (
        f'{{"plan": {plan.to_json()}, "backend": {json_string(run.backend)}, '
        f'"world_size": {run.mesh.world_size}, "iters": {c.iters}, '
        f'"warmup": {c.warmup}, "steps": [{steps}], '
        f'"seconds_min": {number_text(run.seconds_min)}, '
        f'"seconds_median": {number_text(run.seconds_median)}, '
        f'"local_seconds_median": {number_text(run.local_seconds_median)}, '
        f'"checksums": [{_checksums(run, ", ")}], '
        f'"validated": {"true" if validated else "false"}, '
        f'"peak_bytes_measured": {run.peak_bytes}, '
        f'"peak_bytes_planned": {plan.peak_bytes}, '
        f'"wall_seconds": {number_text(run.wall_seconds)}'
    )
    if c.interrupted_after >= 0:
        out += f', "interrupted": true, "executions_completed": {c.interrupted_after}'
    return out + "}\n"


def print_run(run: JobRun, c: RunContext, json: bool, out: TextIO) -> None:
    """Prints the run; raises what the command then fails with: interrupted
    (exit 130), or DATA_LOSS when the result did not validate."""
    if run.plan is None:
        raise Error(StatusCode.INTERNAL, "the run holds no plan")
    if c.interrupted_after >= 0:
        run = _without_checksums(run)
    if json:
        out.write(_json(run.plan, run, c))
    else:
        out.write(_header(run.plan, run, c) + _rows(run) + _footer(run.plan, run, c))
    if c.interrupted_after >= 0:
        raise Interrupted(
            f"interrupted after {c.interrupted_after} of "
            f"{c.warmup + max(1, c.iters)} executions"
        )
    if not run.validated:
        raise Error(
            StatusCode.DATA_LOSS,
            f"the result did not validate: {run.validation_error}",
        )


def _without_checksums(run: JobRun) -> JobRun:
    """An interrupted run has no results to judge."""
    tensors = tuple(dataclasses.replace(t, checksums=()) for t in run.tensors)
    return dataclasses.replace(run, tensors=tensors)
