"""reshard.Client: the Planner service and the job calls over gRPC.

One or several servers: calls go round-robin, and an idempotent call that
finds its server UNAVAILABLE retries on the next one, with exponential
backoff (20 ms doubling to 500 ms), at most `max_attempts` times and never
past `deadline`. Plans on meshes registered through this client register the
mesh again when a server does not know it. Job calls go to the job's own
replica, chosen by the rendezvous hash the agents and reshardctl use
(common/job_replica.h); a job call whose replica is down fails UNAVAILABLE
naming it. RunJob runs things and is never retried.

Credentials and servers default to what reshardctl reads: $RESHARD_SERVER,
$RESHARD_JOB_TOKEN and $RESHARD_ADMIN_TOKEN.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from reshard._cross_plan import CrossBatchTensor, CrossMeshPlan, CrossSchedule
from reshard._errors import Error, RankFailure, StatusCode, invalid_argument
from reshard._plan import BatchPlan, Plan
from reshard._results import JobInfo, JobRun, ResolvedGroup, TensorCheck
from reshard._servers import DEFAULT_SERVER, server_target
from reshard._values import (
    DEFAULT_BUCKET_BYTES,
    Link,
    Mesh,
    PlanItem,
    PlanOptions,
    State,
    options_of,
)
from reshard.job_replica import replica_index, split_replicas

try:
    import grpc
except ImportError as e:  # the values and in-process planning work without it
    raise ImportError(
        f"reshard.Client needs grpcio and protobuf ({e}); pip install 'reshard[client]'"
    ) from None

from reshard import _wire
from reshard.v1 import coordinator_pb2 as cpb
from reshard.v1 import coordinator_pb2_grpc as cgrpc
from reshard.v1 import planner_pb2 as pb
from reshard.v1 import planner_pb2_grpc as pgrpc

ADMIN_TOKEN_HEADER = "x-reshard-admin-token"
JOB_TOKEN_HEADER = "x-reshard-job-token"
_INITIAL_BACKOFF_S = 0.02
_MAX_BACKOFF_S = 0.5
_MAX_MESSAGE_BYTES = 64 << 20


def _read(path: str | None, what: str) -> bytes | None:
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise Error(StatusCode.INVALID_ARGUMENT, f"{what}: {e}") from None


def _check_text(item: int, check: TensorCheck) -> str:
    text = f"tensors[{item}]: {check.validation_error or 'did not validate'}"
    if check.conservation:
        text += (
            f" (conservation checksum of the source {check.conservation_source},"
            f" of the result {check.conservation_result})"
        )
    return text


def _not_validated(run: JobRun) -> Error:
    """DATA_LOSS for a run that ran but did not validate, naming each rank
    and tensor that did not, as reshardctl exits for it."""
    ranks = tuple(
        RankFailure(report.rank, "", "validation", _check_text(t, check))
        for report in run.ranks
        for t, check in enumerate(report.tensors)
        if not check.validated
    )
    why = run.validation_error or "a result is wrong"
    return Error(
        StatusCode.DATA_LOSS,
        f"run {run.run_id} did not validate: {why}",
        ranks,
        run=run,
    )


def _error_of(e: grpc.RpcError, prefix: str = "") -> Error:
    code = StatusCode(e.code().value[0])
    details = dict(e.trailing_metadata() or ()).get("grpc-status-details-bin")
    return Error(code, prefix + (e.details() or ""), _wire.rank_failures(details))


class Client:
    """The Reshard service from Python. Safe for use from several threads."""

    def __init__(
        self,
        servers: str | Sequence[str] | None = None,
        *,
        timeout: float = 10.0,
        deadline: float | None = None,
        max_attempts: int = 5,
        tls_ca: str | None = None,
        tls_cert: str | None = None,
        tls_key: str | None = None,
        job_token: str | None = None,
        admin_token: str | None = None,
    ) -> None:
        """`servers`: "host:port", a comma-separated list, or a sequence
        (default $RESHARD_SERVER, else 127.0.0.1:50051). `timeout` bounds
        each attempt and `deadline` each call as a whole, in seconds. TLS:
        PEM file paths (`tls_ca` alone: server-authenticated TLS). Tokens
        default to $RESHARD_JOB_TOKEN and $RESHARD_ADMIN_TOKEN."""
        if servers is None:
            servers = os.environ.get("RESHARD_SERVER") or DEFAULT_SERVER
        listed = split_replicas(servers) if isinstance(servers, str) else list(servers)
        if not listed:
            raise Error(
                StatusCode.INVALID_ARGUMENT, f"servers: {servers!r} names no server"
            )
        if timeout <= 0 or (deadline is not None and deadline <= 0):
            raise Error(StatusCode.INVALID_ARGUMENT, "timeout, deadline: must be > 0")
        if max_attempts < 1:
            raise Error(StatusCode.INVALID_ARGUMENT, "max_attempts: must be >= 1")
        if (tls_cert is None) != (tls_key is None):
            raise Error(
                StatusCode.INVALID_ARGUMENT,
                "tls_cert, tls_key: a client certificate needs both",
            )
        self.servers = [server_target(s) for s in listed]
        self.timeout = timeout
        self.deadline = deadline
        self.max_attempts = max_attempts
        self._credentials = None
        if tls_ca is not None or tls_cert is not None:
            self._credentials = grpc.ssl_channel_credentials(
                root_certificates=_read(tls_ca, "tls_ca"),
                private_key=_read(tls_key, "tls_key"),
                certificate_chain=_read(tls_cert, "tls_cert"),
            )
        job_token = (
            job_token if job_token is not None else os.environ.get("RESHARD_JOB_TOKEN")
        )
        admin_token = (
            admin_token
            if admin_token is not None
            else os.environ.get("RESHARD_ADMIN_TOKEN")
        )
        self._metadata = tuple(
            (header, token)
            for header, token in (
                (ADMIN_TOKEN_HEADER, admin_token),
                (JOB_TOKEN_HEADER, job_token),
            )
            if token
        )
        self._lock = threading.Lock()
        self._channels: dict[str, grpc.Channel] = {}
        self._next = 0
        self._meshes: dict[str, Mesh] = {}

    # ---- plumbing ----

    def close(self) -> None:
        """Closes every channel; the client is not used after."""
        with self._lock:
            channels, self._channels = self._channels, {}
        for channel in channels.values():
            channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _channel(self, server: str) -> grpc.Channel:
        with self._lock:
            channel = self._channels.get(server)
            if channel is None:
                options = [("grpc.max_receive_message_length", _MAX_MESSAGE_BYTES)]
                channel = (
                    grpc.secure_channel(server, self._credentials, options)
                    if self._credentials is not None
                    else grpc.insecure_channel(server, options)
                )
                self._channels[server] = channel
            return channel

    def _rotate(self) -> str:
        with self._lock:
            server = self.servers[self._next % len(self.servers)]
            self._next += 1
            return server

    def _call(
        self,
        method: Callable[[Any], Callable[..., Any]],
        request: Any,
        server: str | None = None,
    ) -> Any:
        """`method(channel)(request)` with retries of UNAVAILABLE: on the
        next server round-robin, or on `server` alone (a job's replica,
        then named in the error)."""
        end = None if self.deadline is None else time.monotonic() + self.deadline
        backoff = _INITIAL_BACKOFF_S
        for attempt in range(1, self.max_attempts + 1):
            target = server or self._rotate()
            timeout = self.timeout
            if end is not None:
                timeout = min(timeout, max(end - time.monotonic(), 0.001))
            try:
                return method(self._channel(target))(
                    request, timeout=timeout, metadata=self._metadata
                )
            except grpc.RpcError as e:
                last = _error_of(e, self._replica_prefix(server))
                if last.code != StatusCode.UNAVAILABLE or attempt == self.max_attempts:
                    raise last from None
                if end is not None and time.monotonic() + backoff >= end:
                    raise last from None
                time.sleep(backoff)
                backoff = min(backoff * 2, _MAX_BACKOFF_S)
        raise AssertionError("unreachable")

    def _replica_prefix(self, server: str | None) -> str:
        """What a job call's error starts with: the replica, when the list
        has several."""
        return f"replica {server}: " if server and len(self.servers) > 1 else ""

    @staticmethod
    def _planner(name: str) -> Callable[[Any], Callable[..., Any]]:
        return lambda channel: getattr(pgrpc.PlannerStub(channel), name)

    @staticmethod
    def _coordinator(name: str) -> Callable[[Any], Callable[..., Any]]:
        return lambda channel: getattr(cgrpc.CoordinatorStub(channel), name)

    def replica_for(self, job: str) -> str:
        """The server that serves `job` (the agents' choice too)."""
        return self.servers[replica_index(job, self.servers)]

    # ---- meshes ----

    def register_mesh(self, mesh: Mesh) -> str:
        """Registers `mesh`; returns its content-addressed id (the same on
        every replica)."""
        request = pb.RegisterMeshRequest(mesh=_wire.mesh_to_proto(mesh))
        response = self._call(self._planner("RegisterMesh"), request)
        with self._lock:
            self._meshes[response.mesh_id] = mesh
        return str(response.mesh_id)

    def get_mesh(self, mesh_id: str) -> Mesh:
        """The registered mesh `mesh_id`; NOT_FOUND when the server has none."""
        response = self._call(
            self._planner("GetMesh"), pb.GetMeshRequest(mesh_id=mesh_id)
        )
        mesh = _wire.mesh_from_proto(response.mesh)
        with self._lock:
            self._meshes[mesh_id] = mesh
        return mesh

    def list_meshes(self) -> list[tuple[str, Mesh]]:
        """The meshes this caller's credential registered (an admin's: every
        mesh), by id."""
        out: list[tuple[str, Mesh]] = []
        token, seen = "", set()
        while True:
            request = pb.ListMeshesRequest(page_token=token)
            response = self._call(self._planner("ListMeshes"), request)
            out += [(m.mesh_id, _wire.mesh_from_proto(m.mesh)) for m in response.meshes]
            token = response.next_page_token
            if not token:
                return out
            if token in seen:
                raise Error(
                    StatusCode.INTERNAL, f'the server gave page token "{token}" twice'
                )
            seen.add(token)

    def delete_mesh(self, mesh_id: str) -> None:
        """Removes a mesh (the planner's admin token is needed)."""
        self._call(self._planner("DeleteMesh"), pb.DeleteMeshRequest(mesh_id=mesh_id))
        with self._lock:
            self._meshes.pop(mesh_id, None)

    def resolve_groups(self, mesh: Mesh | str, rank: int) -> list[ResolvedGroup]:
        """Every group (single dims and flattened ones) `rank` belongs to."""
        request = pb.ResolveGroupsRequest(rank=rank)
        if isinstance(mesh, str):
            request.mesh_id = mesh
        else:
            request.mesh.CopyFrom(_wire.mesh_to_proto(mesh))
        return _wire.groups_from_proto(
            self._call(self._planner("ResolveGroups"), request)
        )

    def health(self) -> None:
        """Returns when a server answers SERVING; raises reshard.Error
        otherwise."""

        def check(channel: grpc.Channel) -> Callable[..., Any]:
            return channel.unary_unary(
                "/grpc.health.v1.Health/Check",
                request_serializer=lambda _: b"",
                response_deserializer=lambda b: b,
            )

        status = _health_status(self._call(check, None))
        if status != 1:
            name = {0: "UNKNOWN", 2: "NOT_SERVING", 3: "SERVICE_UNKNOWN"}.get(
                status, str(status)
            )
            raise Error(StatusCode.UNAVAILABLE, f"server is {name}")

    # ---- plans ----

    def _mesh_of(self, mesh: Mesh | str) -> Mesh:
        if isinstance(mesh, Mesh):
            return mesh
        with self._lock:
            known = self._meshes.get(mesh)
        if known is None:
            known = self.get_mesh(mesh)
            with self._lock:
                self._meshes[mesh] = known
        return known

    def plan(
        self,
        mesh: Mesh | str,
        shape: Sequence[int],
        src: State,
        dst: State,
        dtype: str = "float32",
        options: PlanOptions | None = None,
        **option_kwargs: Any,
    ) -> Plan:
        """Plans on an inline mesh (any replica answers) or a registered
        mesh id; options as reshard.plan's."""
        item = PlanItem(tuple(shape), src, dst, dtype)
        response = self._plan(mesh, item, options_of(options, option_kwargs), None)
        return _wire.plan_from_proto(self._mesh_of(mesh), response.plan)

    def plan_program(
        self,
        mesh: Mesh | str,
        shape: Sequence[int],
        src: State,
        dst: State,
        dtype: str,
        position: int,
        options: PlanOptions | None = None,
        **option_kwargs: Any,
    ) -> tuple[Plan, dict[str, Any]]:
        """plan()'s plan with the rank program of the rank at mesh `position`
        (docs/PLAN_JSON.md, "Rank programs"), compiled by the service: what
        reshard.torch runs where this install has no native module."""
        item = PlanItem(tuple(shape), src, dst, dtype)
        opts = options_of(options, option_kwargs)
        response = self._plan(mesh, item, opts, position)
        plan = _wire.plan_from_proto(self._mesh_of(mesh), response.plan)
        return plan, json.loads(response.programs_json)[0]

    def _plan(
        self,
        mesh: Mesh | str,
        item: PlanItem,
        opts: PlanOptions,
        program_position: int | None,
    ) -> Any:
        request = _wire.plan_request(mesh, item, opts, program_position)
        try:
            return self._call(self._planner("Plan"), request)
        except Error as e:
            if e.code != StatusCode.NOT_FOUND or not isinstance(mesh, str):
                raise
            with self._lock:
                known = self._meshes.get(mesh)
            if known is None:
                raise Error(
                    e.code,
                    f"{e.message}; Client.list_meshes() shows the meshes registered "
                    "on this server",
                ) from None
            return self._replan(known, item, opts, program_position)

    def plan_cross_mesh(
        self,
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
        """Plans a cross-mesh move (docs/DESIGN.md §9) on the service, both
        meshes inline; arguments as reshard.plan_cross_mesh's."""
        request = _cross_request(
            src_mesh,
            dst_mesh,
            PlanItem(tuple(shape), src, dst, dtype),
            unavailable_ranks,
            cross_link,
            options_of(options, option_kwargs),
        )
        response = self._call(self._planner("PlanCrossMesh"), request)
        return _wire.cross_plan_from_proto(response.plan)

    def plan_cross_program(
        self,
        src_mesh: Mesh,
        dst_mesh: Mesh,
        shape: Sequence[int],
        src: State,
        dst: State,
        dtype: str,
        rank: int,
        unavailable_ranks: Sequence[int] = (),
        cross_link: Link | None = None,
        **option_kwargs: Any,
    ) -> tuple[CrossMeshPlan, dict[str, Any]]:
        """plan_cross_mesh, and global `rank`'s compiled program of the plan
        (docs/PLAN_JSON.md, "Cross-mesh programs"), read: what
        reshard.torch.CrossMeshMove runs where the native module is not."""
        request = _cross_request(
            src_mesh,
            dst_mesh,
            PlanItem(tuple(shape), src, dst, dtype),
            unavailable_ranks,
            cross_link,
            options_of(None, option_kwargs),
            rank,
        )
        response = self._call(self._planner("PlanCrossMesh"), request)
        plan = _wire.cross_plan_from_proto(response.plan)
        return plan, json.loads(response.program_json)

    def _replan(
        self,
        mesh: Mesh,
        item: PlanItem,
        opts: PlanOptions,
        program_position: int | None,
    ) -> Any:
        """A server did not know the mesh: register it again (round-robin
        reaches the replicas in turn) and plan, else plan it inline."""
        for _ in range(self.max_attempts):
            mesh_id = self.register_mesh(mesh)
            try:
                return self._call(
                    self._planner("Plan"),
                    _wire.plan_request(mesh_id, item, opts, program_position),
                )
            except Error as e:
                if e.code != StatusCode.NOT_FOUND:
                    raise
        return self._call(
            self._planner("Plan"),
            _wire.plan_request(mesh, item, opts, program_position),
        )

    def plan_batch(
        self,
        mesh: Mesh,
        items: Sequence[PlanItem],
        bucket_bytes: int | None = None,
        all_or_nothing: bool = False,
        options: PlanOptions | None = None,
        **option_kwargs: Any,
    ) -> BatchPlan:
        """Plans a batch on an inline mesh: each item's plan or its own
        error, and the bucketed schedule (docs/DESIGN.md §8)."""
        opts = options_of(options, option_kwargs)
        request = pb.PlanBatchRequest(
            mesh=_wire.mesh_to_proto(mesh),
            options=_wire.options_to_proto(opts),
            all_or_nothing=all_or_nothing,
        )
        if bucket_bytes is not None:
            request.bucket_bytes = bucket_bytes
        for item in items:
            one = _wire.plan_request(mesh, item, opts)
            request.items.add(tensor=one.tensor, src=one.src, dst=one.dst)
        response = self._call(self._planner("PlanBatch"), request)
        return _wire.batch_from_proto(mesh, response, tuple(i.name for i in items))

    # ---- jobs ----

    def run_job(
        self,
        job: str,
        mesh: Mesh,
        plan: Plan | None = None,
        *,
        shape: Sequence[int] | None = None,
        src: State | None = None,
        dst: State | None = None,
        dtype: str = "float32",
        options: PlanOptions | None = None,
        iters: int = 10,
        warmup: int = 2,
        timeout_seconds: float = 30,
        deadline: float = 300,
        agent_wait_seconds: float = 0,
        tensors: Sequence[tuple[str, str]] = (),
        no_staging: bool = False,
        allocate: bool = False,
    ) -> JobRun:
        """Runs `plan` as given, or the request (shape, src, dst) the job's
        replica plans, on every agent of `job`. Never retried; bounded by
        `deadline` seconds. A failed run raises reshard.Error whose `ranks`
        name each failing rank; a run that ran but did not validate (a
        conservation mismatch, a wrong result) raises it with DATA_LOSS,
        `ranks` naming each rank and tensor (with both conservation
        checksums) and `run` holding the result. A run without staging
        that validated returns (its `committed` is false by design).

        With `tensors`, one (source, into) pair of registered names
        (reshard.agent): the run moves the job's own tensors once, judged by
        the conservation checksum, and writes each rank's `into` only after
        every rank validated (`committed`), unless `no_staging`. With
        `allocate`, a rank where an `into` is not registered allocates it
        (read it with reshard.agent.LocalAgent.fetch)."""
        request = _run_request(
            job,
            tensors,
            iters,
            warmup,
            timeout_seconds,
            agent_wait_seconds,
            no_staging,
            allocate,
        )
        if plan is not None:
            request.plan.mesh.CopyFrom(_wire.mesh_to_proto(mesh))
            request.plan.plan.CopyFrom(_wire.plan_to_proto(plan))
        else:
            if shape is None or src is None or dst is None:
                raise Error(
                    StatusCode.INVALID_ARGUMENT,
                    "run_job: give a plan, or shape, src and dst to plan",
                )
            item = PlanItem(tuple(shape), src, dst, dtype)
            request.request.CopyFrom(
                _wire.plan_request(mesh, item, options or PlanOptions())
            )
        return self._run_job(request, deadline)

    def _run_job(self, request: Any, deadline: float) -> JobRun:
        """RunJob on the request's replica, never retried; a run that did
        not validate raises (see run_job)."""
        server = self.replica_for(request.job)
        try:
            response = self._coordinator("RunJob")(self._channel(server))(
                request, timeout=deadline, metadata=self._metadata
            )
        except grpc.RpcError as e:
            raise _error_of(e, self._replica_prefix(server)) from None
        run = _wire.job_run_from_proto(response)
        if not run.validated and not run.interrupted:
            raise _not_validated(run)
        return run

    def prepare_cross_mesh(
        self,
        job: str,
        src_mesh: Mesh,
        dst_mesh: Mesh,
        shape: Sequence[int],
        src: State,
        dst: State,
        dtype: str = "float32",
        unavailable_ranks: Sequence[int] = (),
        cross_link: Link | None = None,
        options: PlanOptions | None = None,
        deadline: float = 300,
        **option_kwargs: Any,
    ) -> CrossSchedule:
        """Plans a cross-mesh move once for `job` (arguments as
        plan_cross_mesh's; the union of both rank maps must be the job's
        ranks) and keeps it there as a schedule that run_schedule names
        (docs/DESIGN.md §9, "A static schedule"). A job keeps at most 16
        (RESOURCE_EXHAUSTED past them). Never retried."""
        request = cpb.PrepareCrossMeshRequest(
            job=job,
            cross=_cross_request(
                src_mesh,
                dst_mesh,
                PlanItem(tuple(shape), src, dst, dtype),
                unavailable_ranks,
                cross_link,
                options_of(options, option_kwargs),
            ),
        )
        response = self._prepare(request, deadline)
        return CrossSchedule(
            response.schedule_id,
            response.generation,
            response.schedules,
            _wire.cross_plan_from_proto(response.plan),
        )

    def prepare_cross_batch(
        self,
        job: str,
        tensors: Sequence[CrossBatchTensor],
        exchange_bytes: int = DEFAULT_BUCKET_BYTES,
        *,
        options: PlanOptions | None = None,
        deadline: float = 300,
    ) -> CrossSchedule:
        """prepare_cross_mesh for a whole batch (a model's weights): the
        job's replica plans every tensor (`options` for all) and keeps the
        batch as one schedule, its transfers in exchanges and its steps in
        buckets of at most `exchange_bytes`; run_schedule with `tensors`,
        one (source, into) pair per tensor, moves the registered tensors.
        A refused tensor is named ("cross_batch_request.tensors[t]."). Never
        retried."""
        request = cpb.PrepareCrossMeshRequest(
            job=job,
            cross_batch_request=_cross_batch_request(
                tensors, exchange_bytes, options or PlanOptions()
            ),
        )
        response = self._prepare(request, deadline)
        return CrossSchedule(
            response.schedule_id,
            response.generation,
            response.schedules,
            None,
            response.cross_batch.tensors,
        )

    def _prepare(self, request: Any, deadline: float) -> Any:
        server = self.replica_for(request.job)
        try:
            return self._coordinator("PrepareCrossMesh")(self._channel(server))(
                request, timeout=deadline, metadata=self._metadata
            )
        except grpc.RpcError as e:
            raise _error_of(e, self._replica_prefix(server)) from None

    def run_cross_batch_job(
        self,
        job: str,
        tensors: Sequence[CrossBatchTensor],
        exchange_bytes: int = DEFAULT_BUCKET_BYTES,
        *,
        options: PlanOptions | None = None,
        iters: int = 10,
        warmup: int = 2,
        timeout_seconds: float = 30,
        deadline: float = 300,
        agent_wait_seconds: float = 0,
        bindings: Sequence[tuple[str, str]] = (),
        no_staging: bool = False,
        allocate: bool = False,
    ) -> JobRun:
        """Moves a batch of tensors (a model's weights, one destination
        mesh, each tensor from its own source mesh) on every agent of
        `job` in one run: the job's replica plans every tensor, the agents
        run the transfers in exchanges and the steps in buckets of at most
        `exchange_bytes`. On generated data, or with `bindings`, one
        (source, into) pair of registered names per tensor, on the job's
        own tensors, committed together. The run's `tensors` are named
        after the batch's."""
        request = _run_request(
            job,
            bindings,
            iters,
            warmup,
            timeout_seconds,
            agent_wait_seconds,
            no_staging,
            allocate,
        )
        request.cross_batch_request.CopyFrom(
            _cross_batch_request(tensors, exchange_bytes, options or PlanOptions())
        )
        return self._run_job(request, deadline)

    def run_schedule(
        self,
        job: str,
        schedule_id: str,
        *,
        iters: int = 10,
        warmup: int = 2,
        timeout_seconds: float = 30,
        deadline: float = 300,
        agent_wait_seconds: float = 0,
        tensor: tuple[str, str] | None = None,
        tensors: Sequence[tuple[str, str]] = (),
        no_staging: bool = False,
        allocate: bool = False,
    ) -> JobRun:
        """Runs the schedule prepare_cross_mesh (or prepare_cross_batch)
        kept, on every agent of `job`, without planning; once every agent
        keeps it, without sending the plan either. `tensor`, one (source,
        into) pair of registered names (a batch's: `tensors`, one pair per
        tensor), moves the job's own tensors as run_job's `tensors` does.
        FAILED_PRECONDITION ("prepare again") once the schedule was deleted
        or an agent of the job joined or left since it was prepared."""
        if tensor and tensors:
            raise invalid_argument("run_schedule: give tensor or tensors, not both")
        request = _run_request(
            job,
            (tensor,) if tensor else tensors,
            iters,
            warmup,
            timeout_seconds,
            agent_wait_seconds,
            no_staging,
            allocate,
        )
        request.schedule_id = schedule_id
        return self._run_job(request, deadline)

    def run_cross_job(
        self,
        job: str,
        src_mesh: Mesh,
        dst_mesh: Mesh,
        shape: Sequence[int],
        src: State,
        dst: State,
        dtype: str = "float32",
        *,
        options: PlanOptions | None = None,
        iters: int = 10,
        warmup: int = 2,
        timeout_seconds: float = 30,
        deadline: float = 300,
        agent_wait_seconds: float = 0,
        tensor: tuple[str, str] | None = None,
        no_staging: bool = False,
        allocate: bool = False,
    ) -> JobRun:
        """Plans a cross-mesh move on the job's replica and runs it on every
        agent of `job` (the union of both rank maps must be the job's
        ranks), as run_schedule runs a prepared one; each call plans (the
        plan cache answers a repeat) and sends the plan."""
        request = _run_request(
            job,
            (tensor,) if tensor else (),
            iters,
            warmup,
            timeout_seconds,
            agent_wait_seconds,
            no_staging,
            allocate,
        )
        request.cross.CopyFrom(
            _cross_request(
                src_mesh,
                dst_mesh,
                PlanItem(tuple(shape), src, dst, dtype),
                (),
                None,
                options or PlanOptions(),
            )
        )
        return self._run_job(request, deadline)

    def delete_schedule(self, job: str, schedule_id: str) -> None:
        """Forgets a schedule of `job` (NOT_FOUND when it holds none)."""
        request = cpb.DeleteScheduleRequest(job=job, schedule_id=schedule_id)
        self._call(self._coordinator("DeleteSchedule"), request, self.replica_for(job))

    def list_jobs(self) -> list[JobInfo]:
        """Every job on every replica, by name."""
        jobs: list[JobInfo] = []
        for server in self.servers:
            token = ""
            while True:
                request = cpb.ListJobsRequest(page_token=token)
                response = self._call(self._coordinator("ListJobs"), request, server)
                jobs += [_wire.job_info_from_proto(j) for j in response.jobs]
                token = response.next_page_token
                if not token:
                    break
        return sorted(jobs, key=lambda j: j.name)

    def get_job(self, job: str) -> JobInfo:
        """The job's state on its replica, with every agent; NOT_FOUND for a job
        this caller cannot see."""
        server = self.replica_for(job)
        token, info, agents = "", None, []
        while True:
            request = cpb.GetJobRequest(job=job, page_token=token)
            response = self._call(self._coordinator("GetJob"), request, server)
            page = _wire.job_info_from_proto(response.job)
            info = info or page
            agents += page.agents
            token = response.next_page_token
            if not token:
                return dataclasses.replace(info, agents=tuple(agents))

    def cancel_job(self, job: str, stop: bool = False) -> str:
        """Cancels (or with `stop`, stops) the job's current run; returns its
        id, "" when none ran."""
        request = cpb.CancelJobRequest(job=job, stop=stop)
        response = self._call(
            self._coordinator("CancelJob"), request, self.replica_for(job)
        )
        return str(response.run_id)


def _cross_request(
    src_mesh: Mesh,
    dst_mesh: Mesh,
    item: PlanItem,
    unavailable_ranks: Sequence[int],
    cross_link: Link | None,
    options: PlanOptions,
    program_rank: int | None = None,
) -> Any:
    """A PlanCrossMeshRequest (no cross link given: the default link)."""
    return _wire.cross_request(
        src_mesh,
        dst_mesh,
        item,
        unavailable_ranks,
        cross_link or Link(),
        options,
        program_rank,
    )


def _cross_batch_request(
    tensors: Sequence[CrossBatchTensor], exchange_bytes: int, options: PlanOptions
) -> Any:
    """A CrossBatchRequest: every tensor's PlanCrossMeshRequest, named."""
    request = cpb.CrossBatchRequest(exchange_bytes=exchange_bytes)
    for t in tensors:
        request.tensors.append(
            _cross_request(
                t.src_mesh,
                t.dst_mesh,
                PlanItem(tuple(t.shape), t.src, t.dst, t.dtype),
                (),
                None,
                options,
            )
        )
        request.names.append(t.name)
    return request


def _run_request(
    job: str,
    tensors: Sequence[tuple[str, str]],
    iters: int,
    warmup: int,
    timeout_seconds: float,
    agent_wait_seconds: float,
    no_staging: bool,
    allocate: bool,
) -> Any:
    """A RunJobRequest's run knobs; on registered tensors one execution
    and no warm-up."""
    request = cpb.RunJobRequest(
        job=job,
        iters=1 if tensors else iters,
        warmup=0 if tensors else warmup,
        timeout_seconds=timeout_seconds,
        agent_wait_seconds=agent_wait_seconds,
        no_staging=no_staging,
    )
    for source, into in tensors:
        request.tensors.add(source=source, into=into, allocate=allocate)
    return request


def _health_status(response: bytes) -> int:
    """HealthCheckResponse.status (field 1, a varint) from its bytes."""
    i, status = 0, 0
    while i < len(response):
        key = response[i]
        i += 1
        value, shift = 0, 0
        while i < len(response):
            byte = response[i]
            i += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        if key == 0x08:
            status = value
    return status
