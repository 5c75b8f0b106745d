"""What the service answers beyond plans: job runs, jobs, groups. Plain
frozen dataclasses, filled from the wire in one place (reshard/_wire.py)."""

from __future__ import annotations

from dataclasses import dataclass

from reshard._plan import Plan
from reshard._values import Mesh


@dataclass(frozen=True)
class ResolvedGroup:
    """One communicator group of a rank: its name ("A" or "A_C"), mesh
    dims in the group's order, global ranks in group order, and the rank's
    index among them."""

    name: str
    mesh_dims: tuple[int, ...]
    ranks: tuple[int, ...]
    index: int


@dataclass(frozen=True)
class StepResult:
    """One row of a run (docs/DESIGN.md §6.3): a plan's step or a batch's
    bucket, the slowest rank's seconds and the bandwidths in GB/s."""

    op: str
    group: str
    bytes: int
    seconds_min: float
    seconds_median: float
    algbw_gbps: float
    busbw_gbps: float
    members: int
    model_seconds: float
    slowest_median_seconds: float


@dataclass(frozen=True)
class TensorResult:
    """One tensor of a run over every rank: §6.2 checksums by rank; on
    registered tensors, its conservation checksum before and after
    (docs/DESIGN.md §6.5) and what their equality proves ("exact" or
    "skipped"; "" on generated data)."""

    name: str
    checksums: tuple[int, ...]
    validated: bool
    validation_error: str
    conservation: str = ""
    conservation_source: int = 0
    conservation_result: int = 0


@dataclass(frozen=True)
class TensorCheck:
    """One rank's verdict on one tensor: its §6.2 checksum and whether it
    validated (and why not)."""

    checksum: int
    validated: bool
    validation_error: str
    conservation: str = ""
    conservation_source: int = 0
    conservation_result: int = 0


@dataclass(frozen=True)
class RankReport:
    """One rank's result: its failure (code 0 when it ran), peak memory,
    executions finished, and its tensors' verdicts."""

    rank: int
    code: int
    error: str
    peak_bytes: int
    memory_bound_bytes: int
    executions_done: int
    local_seconds_median: float
    tensors: tuple[TensorCheck, ...]


@dataclass(frozen=True)
class JobRun:
    """One run on a job's agents, as the Coordinator aggregated it."""

    run_id: str
    mesh: Mesh
    plan: Plan | None  # what ran, for a plan (None for a batch)
    backend: str  # gloo or nccl
    iters: int
    warmup: int
    validated: bool
    validation_error: str
    steps: tuple[StepResult, ...]
    tensors: tuple[TensorResult, ...]
    ranks: tuple[RankReport, ...]
    peak_bytes: int
    memory_bound_bytes: int
    wall_seconds: float
    seconds_min: float
    seconds_median: float
    local_seconds_median: float
    interrupted: bool
    executions_completed: int
    # On registered tensors: every rank wrote its destinations.
    committed: bool = False
    # A run of a prepared schedule (Client.run_schedule): its id, and
    # whether the agents were sent its plan (the first run, or one after a
    # failure).
    schedule_id: str = ""
    plan_sent: bool = False


@dataclass(frozen=True)
class AgentInfo:
    """One agent of a job: its rank, version, host, and whether its
    dispatch stream is open."""

    rank: int
    version: str
    host: str
    connected: bool


@dataclass(frozen=True)
class RecentRun:
    """A finished run of a job: its id, its result (validated,
    not_validated, or a status code's name), why it failed, how long it
    took."""

    run_id: str
    result: str  # validated, not_validated, or a status code name
    error: str
    seconds: float


@dataclass(frozen=True)
class PreparedSchedule:
    """A schedule prepare_cross_mesh (or prepare_cross_batch) made: its id,
    how many tensors it moves, whether every agent holds its plans (its
    runs then send none)."""

    id: str
    tensors: int
    delivered: bool


@dataclass(frozen=True)
class RunProgress:
    """How far the run in flight is: executions done of all it will do."""

    executions_done: int
    executions_total: int
    seconds: float


@dataclass(frozen=True)
class JobInfo:
    """A job's state on its replica. ListJobs may hold only the first agents
    of a large job; get_job holds them all."""

    name: str
    world_size: int
    backend: str
    generation: int
    state: str  # joining, ready, running
    agents: tuple[AgentInfo, ...]
    agents_joined: int
    agents_connected: int
    current_run: str
    run_calls: int
    runs_total: int
    runs_failed: int
    store_keys: int
    store_bytes: int
    recent_runs: tuple[RecentRun, ...]
    current_run_progress: RunProgress | None = None  # while a run is in flight
    schedules: tuple[PreparedSchedule, ...] = ()  # of this generation, by id
