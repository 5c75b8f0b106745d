"""`job list|show|run|cancel`: jobs of reshard-agent processes on their
Coordinator, printed as `reshardctl job` prints them
(client/job_command.h). `job run` runs one plan: the plan flags (the
job's replica plans) or --plan FILE."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any, TextIO

from reshard._errors import Error, StatusCode, invalid_argument
from reshard._json_text import json_string, number_text
from reshard._plan import Plan
from reshard._results import AgentInfo, JobInfo, JobRun, RunProgress
from reshard.cli.args import Args, GlobalFlags, int_flag, number
from reshard.cli.connect import connect
from reshard.cli.exit_codes import PROG, Interrupted
from reshard.cli.plan_flags import PLAN_FLAGS, mesh_from_flags, request_from_flags
from reshard.cli.run_output import RunContext, print_run

USAGE = f"""\
usage: {PROG} [global flags] job list [--json]
       {PROG} [global flags] job show NAME [--json]
       {PROG} [global flags] job run NAME [plan flags | --plan FILE]
         [--iters K] [--warmup W] [--timeout_seconds T]
         [--agent_wait_seconds S] [--json]
       {PROG} [global flags] job cancel NAME
  As `reshardctl job`: jobs are the reshard-agent processes that joined the
  Coordinator under one name; job calls go to the job's replica of the
  --server list. `run` runs a plan on every agent (K timed runs after W
  warm-up runs, 10 and 2; T bounds every collective, 30 s; the global
  --deadline_seconds the whole call, 300 s) and prints reshardctl's table
  or JSON; Ctrl-C stops the run. A batch run, `calibrate` and `token` are
  reshardctl's.
"""

_DEFAULT_DEADLINE_S = 300.0
# The waiting report: how often, and how long each of its calls may take.
_WAIT_REPORT_PERIOD_S = 3.0
_WAIT_REPORT_DEADLINE_S = 2.0
_MOST_NAMED = 16
_NOT_HERE = ("batch", "bucket_bytes", "no-bucketing")
# The columns of `job list` and of `job show`'s agents (printf's widths).
_JOB_ROW = "{:<20} {:>6} {:<7} {:>5} {:<8} {:>7} {:>6} {:>6} {:>6} {:>10}\n"
_AGENT_ROW = "{:>6}  {:<9}  {:<10}  {}\n"


def _agent_json(a: AgentInfo) -> str:
    return (
        f'{{"rank": {a.rank}, "connected": {"true" if a.connected else "false"}, '
        f'"version": {json_string(a.version)}, "host": {json_string(a.host)}}}'
    )


def _progress(j: JobInfo) -> RunProgress:
    return j.current_run_progress or RunProgress(0, 0, 0.0)


def job_json(j: JobInfo) -> str:
    runs = ", ".join(
        f'{{"run_id": {json_string(r.run_id)}, "result": {json_string(r.result)}, '
        f'"error": {json_string(r.error)}, "seconds": {r.seconds:g}}}'
        for r in j.recent_runs
    )
    p = _progress(j)
    progress = (
        f'{{"executions_done": {p.executions_done}, "executions_total": '
        f'{p.executions_total}, "seconds": {number_text(p.seconds)}}}'
        if j.current_run
        else "null"
    )
    return (
        f'{{"name": {json_string(j.name)}, "world_size": {j.world_size}, '
        f'"backend": {json_string(j.backend)}, "generation": {j.generation}, '
        f'"state": {json_string(j.state)}, '
        f'"agents": [{", ".join(_agent_json(a) for a in j.agents)}], '
        f'"current_run": {json_string(j.current_run)}, '
        f'"current_run_progress": {progress}, "run_calls": {j.run_calls}, '
        f'"runs_total": {j.runs_total}, "runs_failed": {j.runs_failed}, '
        f'"store_keys": {j.store_keys}, "store_bytes": {j.store_bytes}, '
        f'"recent_runs": [{runs}]}}'
    )


def _list_scope(flags: GlobalFlags) -> str:
    """Which jobs a listing shows: an empty table is not an empty planner."""
    if flags.admin_token:
        return "listed: every job (the admin token)\n"
    if flags.job_token:
        return "listed: jobs without a job token and the job of the token presented\n"
    return (
        "listed: only jobs without a job token; one with a token is listed to "
        "callers presenting it (--job_token_file or $RESHARD_JOB_TOKEN) or the "
        "admin token\n"
    )


def _list(flags: GlobalFlags, args: Args, out: TextIO) -> None:
    with connect(flags) as client:
        jobs = client.list_jobs()
    if args.has("json"):
        out.write(f'{{"jobs": [{", ".join(job_json(j) for j in jobs)}]}}\n')
        return
    head = ("name", "world", "backend", "gen", "state", "agents", "runs")
    out.write(_JOB_ROW.format(*head, "failed", "keys", "bytes"))
    for j in jobs:
        agents = f"{j.agents_connected}/{j.world_size}"
        out.write(
            _JOB_ROW.format(
                j.name,
                j.world_size,
                j.backend,
                j.generation,
                j.state,
                agents,
                j.runs_total,
                j.runs_failed,
                j.store_keys,
                j.store_bytes,
            )
        )
    out.write(_list_scope(flags))


def _current_run(j: JobInfo) -> str:
    """The current run: none, or "RUN (37 of 120 executions, 4.2 s)"."""
    if not j.current_run:
        return "none"
    p = _progress(j)
    return (
        f"{j.current_run} ({p.executions_done} of {p.executions_total} "
        f"executions, {p.seconds:.1f} s)"
    )


def _show(j: JobInfo, out: TextIO) -> None:
    out.write(
        f"job {j.name}: world size {j.world_size}, backend {j.backend}, "
        f"generation {j.generation}, state {j.state}\n"
        f"runs: {j.runs_total} total, {j.runs_failed} failed; current run: "
        f"{_current_run(j)}; RunJob calls: {j.run_calls}\n"
        f"store: {j.store_keys} keys, {j.store_bytes} bytes\n"
        f"agents: {j.agents_connected} of {j.world_size} connected\n"
        + _AGENT_ROW.format("rank", "connected", "version", "host")
    )
    for a in j.agents:
        connected = "yes" if a.connected else "no"
        out.write(_AGENT_ROW.format(a.rank, connected, a.version, a.host))
    if j.recent_runs:
        out.write(f"recent runs (last {len(j.recent_runs)}):\n")
        for r in j.recent_runs:
            out.write(
                f"  {r.run_id:<20} {r.result:<18} {r.seconds:>9.3f} s  {r.error}\n"
            )


def waiting_for(j: JobInfo) -> str:
    """The ranks a run waits for: "job J: waiting for rank 2 (not
    connected), ..."; "" when every rank is connected."""
    state = [0] * j.world_size  # 0 never joined, 1 down, 2 up
    for a in j.agents:
        if 0 <= a.rank < j.world_size:
            state[a.rank] = 2 if a.connected else 1
    waiting = [
        f"rank {r} ({'not connected' if s == 1 else 'never joined'})"
        for r, s in enumerate(state)
        if s != 2
    ]
    if not waiting:
        return ""
    line = f"job {j.name}: waiting for {', '.join(waiting[:_MOST_NAMED])}"
    if len(waiting) > _MOST_NAMED:
        line += f" and {len(waiting) - _MOST_NAMED} more"
    return line


def _check_work(args: Args) -> None:
    for flag in _NOT_HERE:
        if args.has(flag):
            raise Error(
                StatusCode.UNIMPLEMENTED,
                f"--{flag}: a batch run is reshardctl's (`reshardctl job run NAME "
                "--batch FILE`)",
            )
    if args.has("plan"):
        for flag in sorted(PLAN_FLAGS):
            if args.has(flag):
                raise invalid_argument(
                    f"--plan: cannot be combined with --{flag} (the plan file "
                    "fixes the mesh, the tensor and the states)"
                )
        if args.has("merge"):
            raise invalid_argument("--plan: cannot be combined with --merge")
    elif not args.has("mesh"):
        raise invalid_argument(
            "job run: --plan FILE or the plan flags (--mesh, --shape, --from, "
            "--to, ...) are required, or --batch FILE with --mesh"
        )


def _agent_wait(args: Args) -> float:
    text = args.get("agent_wait_seconds")
    if text is None:
        return 0.0
    seconds = number(text)
    if seconds is None or not 0 < seconds <= 86400:
        raise invalid_argument(
            f'--agent_wait_seconds: "{text}" is not a number of seconds in (0, 86400]'
        )
    return seconds


def _plan_file(path: str) -> Plan:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        raise Error(StatusCode.NOT_FOUND, f'--plan: cannot read "{path}"') from None
    try:
        return Plan.from_json(text)
    except Error as e:
        raise Error(e.code, f"--plan {path}: {e.message}") from None


class _Watched:
    """A RunJob call in a thread of its own, so that the main thread can
    report the ranks it waits for and take the user's Ctrl-C."""

    def __init__(self, call: Any) -> None:
        self.result: JobRun | None = None
        self.error: BaseException | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self._thread.start()

    def _run(self, call: Any) -> None:
        try:
            self.result = call()
        except BaseException as e:  # handed to the main thread
            self.error = e
        finally:
            self._done.set()

    def wait(self, seconds: float) -> bool:
        return self._done.wait(seconds)


def _watch(flags: GlobalFlags, job: str, watched: _Watched) -> bool:
    """Waits for the run; returns whether the user interrupted it (the run
    was then asked to stop, and is waited for again)."""
    quick = connect(flags, deadline=_WAIT_REPORT_DEADLINE_S)
    # Ctrl-C stops the run even where SIGINT came ignored (a shell's
    # background job), as reshardctl's own handler does.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        while not watched.wait(_WAIT_REPORT_PERIOD_S):
            try:
                line = waiting_for(quick.get_job(job))
            except Error:
                line = ""
            if line:
                print(line, file=sys.stderr, flush=True)
        return False
    except KeyboardInterrupt:
        print(
            f"job {job}: interrupted; stopping the run (Ctrl-C again to quit at once)",
            file=sys.stderr,
            flush=True,
        )
        try:
            quick.cancel_job(job, stop=True)
        except Error as e:
            print(f"job {job}: could not stop the run: {e}", file=sys.stderr)
        while not watched.wait(0.1):
            pass
        return True
    finally:
        signal.signal(signal.SIGINT, previous)
        quick.close()


def _run(flags: GlobalFlags, job: str, argv: Sequence[str], out: TextIO) -> None:
    values = {*PLAN_FLAGS, "plan", "iters", "warmup", "timeout_seconds"}
    values |= {"agent_wait_seconds", "batch", "bucket_bytes"}
    args = Args(argv, values, {"merge", "json", "no-bucketing"})
    iters = int_flag(args, "iters", 1, 10)
    warmup = int_flag(args, "warmup", 0, 2)
    timeout = int_flag(args, "timeout_seconds", 1, 30)
    _check_work(args)
    agent_wait = _agent_wait(args)
    path = args.get("plan")
    if path is not None:
        plan = _plan_file(path)
        mesh, request = plan.mesh, None
    else:
        plan, mesh, request = None, mesh_from_flags(args), request_from_flags(args)
    client = connect(flags)
    kwargs: dict[str, Any] = dict(
        iters=iters,
        warmup=warmup,
        timeout_seconds=timeout,
        deadline=flags.deadline or _DEFAULT_DEADLINE_S,
        agent_wait_seconds=agent_wait,
    )
    if request is not None:
        kwargs.update(
            shape=request.shape,
            src=request.src,
            dst=request.dst,
            dtype=request.dtype,
            options=request.options,
        )
    watched = _Watched(lambda: client.run_job(job, mesh, plan, **kwargs))
    interrupted = _watch(flags, job, watched)
    client.close()
    run = watched.result
    if isinstance(watched.error, Error) and watched.error.run is not None:
        run = watched.error.run  # ran, did not validate: print_run raises
    elif watched.error is not None:
        if interrupted and isinstance(watched.error, Error):
            raise Interrupted(f"interrupted: {watched.error.message}")
        raise watched.error
    assert run is not None
    context = RunContext(
        launched_on=f"job {job}, {run.mesh.world_size} agents, run {run.run_id}",
        iters=run.iters if run.iters > 0 else iters,
        warmup=run.warmup if run.iters > 0 else warmup,
        interrupted_after=run.executions_completed if run.interrupted else -1,
    )
    print_run(run, context, args.has("json"), out)


def run_job_command(flags: GlobalFlags, argv: Sequence[str], out: TextIO) -> None:
    verb = argv[0] if argv else ""
    if verb not in ("list", "show", "run", "cancel"):
        raise invalid_argument(
            "job: expected list, show, run or cancel (calibrate and token are "
            "reshardctl's)" + (f', not "{verb}"' if verb else "")
        )
    rest = list(argv[1:])
    if verb == "list":
        _list(flags, Args(rest, set(), {"json"}), out)
        return
    if not rest or rest[0].startswith("--"):
        raise invalid_argument(f"job {verb}: NAME (the job) is required")
    job, rest = rest[0], rest[1:]
    if verb == "run":
        _run(flags, job, rest, out)
        return
    args = Args(rest, set(), {"json"} if verb == "show" else set())
    with connect(flags) as client:
        if verb == "cancel":
            run_id = client.cancel_job(job)
            out.write(
                f"job {job}: cancelled run {run_id}\n"
                if run_id
                else f"job {job}: no run was running\n"
            )
            return
        info = client.get_job(job)
    if args.has("json"):
        out.write(job_json(info) + "\n")
    else:
        _show(info, out)
