"""Agents moving a job's own tensors (docs/DESIGN.md §6.6): local clusters of
4 and 8 Gloo agents with --tensors, one client process per rank
(tensor_client.py) registering memfd-backed tensors at its agent, and
`job run --tensor` through reshard.Client and reshardctl.

Every destination is read back by its client and compared with the
expected block of the full tensor; the conservation checksums must agree
and their label must be what the run can prove. Faults (a rank stopped
until its collectives time out, a cancel, a rank killed) must leave every
destination byte-identical; outsiders (another uid, no token) get nothing.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import reshard
from layout import State, box, coordinate, group_members, position
from reshard import Error, StatusCode
from reshard.agent import LocalAgent
from reshard_processes import CTL, ROOT, cluster, ctl, wait_until

CLIENT = Path(__file__).resolve().parent / "tensor_client.py"
SENTINEL = 77
INT_DTYPES = ("int32", "int64")
DTYPES = ("float32", "float64", "bfloat16", "float16", *INT_DTYPES)
MESHES = {4: [(4,), (2, 2)], 8: [(8,), (2, 4), (2, 2, 2)]}
NAMES = "abc"


class Ranks:
    """One tensor_client process per rank, each holding its agent's
    connection; stops exactly the processes it started."""

    def __init__(self, c: dict[str, Any], job: str, n: int, tmp: Path) -> None:
        self.tmp = tmp
        self.env = dict(c["env"], RESHARD_JOB_TOKEN=c["job_token"])
        self.sockets = [str(c["dir"] / f"agent-{r}.sock") for r in range(n)]
        self.job = job
        self.procs: list[subprocess.Popen[str] | None] = [None] * n
        for r in range(n):
            self.start(r)

    def start(self, r: int) -> None:
        proc = subprocess.Popen(
            [sys.executable, str(CLIENT), self.sockets[r], self.job, str(r)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=self.env,
        )
        self.procs[r] = proc
        first = json.loads(self._line(r))
        assert first["ok"], first

    def _line(self, r: int) -> str:
        proc = self.procs[r]
        assert proc is not None and proc.stdout is not None
        line = proc.stdout.readline()
        assert line, f"rank {r}'s client exited"
        return line

    def call(self, r: int, **command: Any) -> dict[str, Any]:
        proc = self.procs[r]
        assert proc is not None and proc.stdin is not None
        proc.stdin.write(json.dumps(command) + "\n")
        proc.stdin.flush()
        return dict(json.loads(self._line(r)))

    def ok(self, r: int, **command: Any) -> dict[str, Any]:
        answer = self.call(r, **command)
        assert answer["ok"], (r, command, answer)
        return answer

    def put(self, r: int, name: str, dtype: str, block: np.ndarray) -> None:
        path = self.tmp / f"put-{r}.npy"
        np.save(path, block)
        self.ok(r, op="put", name=name, dtype=dtype, file=str(path))

    def get(self, r: int, name: str) -> np.ndarray:
        path = self.tmp / f"get-{r}.npy"
        self.ok(r, op="get", name=name, file=str(path))
        return np.asarray(np.load(path))

    def kill(self, r: int) -> None:
        proc = self.procs[r]
        assert proc is not None
        proc.kill()
        proc.wait(10)
        self.procs[r] = None

    def stop(self) -> None:
        for proc in self.procs:
            if proc is None or proc.poll() is not None:
                continue
            assert proc.stdin is not None
            proc.stdin.close()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def numpy_dtype(dtype: str) -> Any:
    return np.uint16 if dtype == "bfloat16" else np.dtype(dtype)


def full_tensor(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> Any:
    """Random values whose sums with zeros are exact: no NaN, no -0."""
    if dtype in INT_DTYPES:
        return rng.integers(-1000, 1000, size=shape).astype(dtype)
    values = rng.normal(size=shape).astype(np.float32)
    values[values == 0] = 1
    if dtype == "bfloat16":
        return (values.view(np.uint32) >> 16).astype(np.uint16)
    return values.astype(dtype)


def as_float(x: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "bfloat16":
        return (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return x.astype(np.float64 if dtype not in INT_DTYPES else np.int64)


def random_state(rng: random.Random, ndim: int, rank: int, partial: bool) -> str:
    entries = []
    for _ in range(ndim):
        kind = rng.choice("SSRP" if partial else "SSR")
        entries.append(
            f"S({rng.randrange(rank)})"
            if kind == "S"
            else "P(sum)"
            if kind == "P"
            else "R"
        )
    return ",".join(entries)


def block(full: np.ndarray, b: tuple[tuple[int, int], ...]) -> np.ndarray:
    return full[tuple(slice(lo, hi) for lo, hi in b)]


def source_blocks(
    full: np.ndarray, src: State, sizes: tuple[int, ...]
) -> list[np.ndarray]:
    """Every position's source: a Partial dim's piece is the block at
    coordinate 0 of every Partial dim and zeros elsewhere."""
    out = []
    for p in range(int(np.prod(sizes))):
        coord = coordinate(p, sizes)
        piece = block(full, box(full.shape, src, sizes, coord)).copy()
        if any(coord[m] != 0 for m in src.partial_dims()):
            piece[...] = 0
        out.append(piece)
    return out


def check_destinations(
    got: list[np.ndarray],
    full: np.ndarray,
    dst: State,
    sizes: tuple[int, ...],
    dtype: str,
) -> None:
    """Each position's block (summed over its Partial group) is the full
    tensor's, bit for bit."""
    for p in range(len(got)):
        coord = coordinate(p, sizes)
        expected = block(full, box(full.shape, dst, sizes, coord))
        members = group_members(coord, dst.partial_dims(), sizes)
        if len(members) == 1:
            assert got[p].tobytes() == expected.tobytes(), (p, got[p], expected)
            continue
        total = sum(as_float(got[position(m, sizes)], dtype) for m in members)
        assert np.array_equal(total, as_float(expected, dtype)), (p, total, expected)


def exact_expected(dtype: str, src: str, dst: str) -> bool:
    """What the conservation checksum proves (docs/DESIGN.md §6.5)."""
    return "P(" not in src + dst or dtype in INT_DTYPES


@pytest.fixture(scope="module", params=[4, 8])
def world(request: Any, tmp_path_factory: Any) -> Iterator[dict[str, Any]]:
    n = request.param
    tmp = tmp_path_factory.mktemp(f"t{n}")
    job = f"tensors{n}"
    with cluster(tmp, n, job, "--tensors") as c:
        ranks = Ranks(c, job, n, tmp)
        client = reshard.Client(c["server"], job_token=c["job_token"])
        try:
            yield {"n": n, "c": c, "job": job, "ranks": ranks, "client": client}
        finally:
            client.close()
            ranks.stop()


def register_case(w: dict[str, Any], k: int, case: dict[str, Any]) -> None:
    ranks: Ranks = w["ranks"]
    sizes, full, dtype = case["sizes"], case["full"], case["dtype"]
    src, dst = State.parse(case["src"]), State.parse(case["dst"])
    for p, piece in enumerate(source_blocks(full, src, sizes)):
        ranks.put(p, f"s{k}", dtype, piece)
        shape = [
            hi - lo for lo, hi in box(full.shape, dst, sizes, coordinate(p, sizes))
        ]
        ranks.ok(p, op="fill", name=f"d{k}", dtype=dtype, shape=shape, value=SENTINEL)


def destinations(w: dict[str, Any], name: str) -> list[np.ndarray]:
    return [w["ranks"].get(p, name) for p in range(w["n"])]


def random_case(rng: random.Random, n: int) -> dict[str, Any]:
    sizes = rng.choice(MESHES[n])
    rank = rng.choice([1, 2, 3])
    shape = tuple(rng.randint(1, 9) for _ in range(rank))
    dtype = rng.choice(DTYPES)
    full = full_tensor(np.random.default_rng(rng.randrange(1 << 30)), shape, dtype)
    partial = rng.random() < 0.3
    return {
        "sizes": sizes,
        "shape": shape,
        "dtype": dtype,
        "full": full,
        "src": random_state(rng, len(sizes), rank, partial),
        "dst": random_state(rng, len(sizes), rank, partial),
    }


def mesh_of(sizes: tuple[int, ...]) -> reshard.Mesh:
    return reshard.Mesh(tuple(sizes), tuple(NAMES[: len(sizes)]))


def run_case(w: dict[str, Any], k: int, case: dict[str, Any], **kw: Any) -> Any:
    return w["client"].run_job(
        w["job"],
        mesh_of(case["sizes"]),
        shape=case["shape"],
        src=case["src"],
        dst=case["dst"],
        dtype=case["dtype"],
        tensors=[(f"s{k}", f"d{k}")],
        **kw,
    )


def test_random_plans_move_every_block(world: dict[str, Any]) -> None:
    """≥ 200 random plans over both worlds (120 on 4 agents, 90 on 8)."""
    n = world["n"]
    rng = random.Random(58 + n)
    count = 120 if n == 4 else 90
    labels = set()
    for k in range(count):
        case = random_case(rng, n)
        register_case(world, k, case)
        run = run_case(world, k, case)
        (t,) = run.tensors
        assert run.validated and run.committed, (case, run)
        assert (
            t.conservation_source == t.conservation_result
            or t.conservation == "skipped"
        )
        assert t.conservation == (
            "exact"
            if exact_expected(case["dtype"], case["src"], case["dst"])
            else "skipped"
        ), case
        labels.add(t.conservation)
        got = destinations(world, f"d{k}")
        check_destinations(
            got, case["full"], State.parse(case["dst"]), case["sizes"], case["dtype"]
        )
        for p in range(n):
            world["ranks"].ok(p, op="unregister", name=f"s{k}")
            world["ranks"].ok(p, op="unregister", name=f"d{k}")
    assert labels == {"exact", "skipped"}


def test_batches_of_fifty_tensors(world: dict[str, Any]) -> None:
    """Three batches of 52 tensors each, run through reshardctl."""
    n, tmp = world["n"], world["ranks"].tmp
    rng = random.Random(7 * n)
    for b in range(3):
        sizes = rng.choice(MESHES[n])
        cases, lines = [], []
        for i in range(52):
            case = random_case(rng, n)
            case["sizes"] = sizes
            case["src"] = random_state(rng, len(sizes), len(case["shape"]), False)
            case["dst"] = random_state(rng, len(sizes), len(case["shape"]), False)
            k = 1000 * (b + 1) + i
            register_case(world, k, case)
            cases.append((k, case))
            lines.append(
                json.dumps(
                    {
                        "name": f"t{k}",
                        "shape": list(case["shape"]),
                        "dtype": case["dtype"],
                        "from": case["src"],
                        "to": case["dst"],
                    }
                )
            )
        batch = tmp / f"batch{b}.jsonl"
        batch.write_text("\n".join(lines) + "\n")
        mesh = ",".join(f"{NAMES[d]}={s}" for d, s in enumerate(sizes))
        out = subprocess.run(
            [
                str(CTL),
                "--server",
                world["c"]["server"],
                "--job_token_file",
                str(world["c"]["dir"] / "job-token"),
                "job",
                "run",
                world["job"],
                "--batch",
                str(batch),
                "--mesh",
                mesh,
                "--tensor",
                ",".join(f"s{k}" for k, _ in cases),
                "--into",
                ",".join(f"d{k}" for k, _ in cases),
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        result = json.loads(out.stdout)
        assert result["validated"] and result["committed"], out.stdout[:2000]
        assert len(result["tensors"]) == 52
        for t in result["tensors"]:
            c = t["conservation"]
            assert c["label"] == "exact" and c["source"] == c["result"], t
        for k, case in cases:
            got = destinations(world, f"d{k}")
            check_destinations(
                got,
                case["full"],
                State.parse(case["dst"]),
                case["sizes"],
                case["dtype"],
            )


FAULT_CASE = {
    "sizes": (2, 2),
    "shape": (64, 48),
    "dtype": "float32",
    "src": "S(0),R",
    "dst": "R,S(1)",
}


@contextmanager
def fault_cluster(
    tmp: Path, job: str, seed: int, *flags: str
) -> Iterator[dict[str, Any]]:
    """4 agents with the local endpoint (and `flags`), the fault case
    registered as s0/d0."""
    with cluster(tmp, 4, job, "--tensors", *flags) as c:
        ranks = Ranks(c, job, 4, tmp)
        client = reshard.Client(c["server"], job_token=c["job_token"])
        case = dict(FAULT_CASE)
        case["full"] = full_tensor(
            np.random.default_rng(seed), case["shape"], "float32"
        )
        w = {"n": 4, "c": c, "job": job, "ranks": ranks, "client": client, "case": case}
        register_case(w, 0, case)
        try:
            yield w
        finally:
            client.close()
            ranks.stop()


@pytest.fixture(scope="module")
def faults(tmp_path_factory: Any) -> Iterator[dict[str, Any]]:
    with fault_cluster(tmp_path_factory.mktemp("faults"), "faults", 5) as w:
        yield w


def agent_pid(w: dict[str, Any], rank: int) -> int:
    for line in (w["c"]["dir"] / "pids").read_text().splitlines():
        pid, name, *r = line.split()
        if name == "reshard-agent" and r == [str(rank)]:
            found = int(pid)
    return found


def untouched(w: dict[str, Any]) -> None:
    for p, got in enumerate(destinations(w, "d0")):
        assert (got == SENTINEL).all(), f"rank {p}'s destination was written"


def run_while_stopped(w: dict[str, Any], then: Any, **kw: Any) -> BaseException | None:
    """Runs the fault case with rank 3's agent stopped (SIGSTOP), calls
    `then` once the run is in flight, and resumes the agent; the run's
    error, if any."""
    pid = agent_pid(w, 3)
    outcome: list[BaseException | None] = [None]

    def run() -> None:
        try:
            run_case(w, 0, w["case"], **kw)
        except BaseException as e:  # noqa: BLE001 (handed to the test)
            outcome[0] = e

    os.kill(pid, signal.SIGSTOP)
    try:
        thread = threading.Thread(target=run)
        thread.start()
        wait_until(
            lambda: w["client"].get_job(w["job"]).current_run, 30, "the run in flight"
        )
        then()
        thread.join(60)
        assert not thread.is_alive()
    finally:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass  # the test killed it
    return outcome[0]


def settled(w: dict[str, Any]) -> None:
    """The job ready and free again: every agent connected, no run."""

    def ready() -> bool:
        job = w["client"].get_job(w["job"])
        return job.state == "ready" and not job.current_run

    wait_until(ready, 60, "the job ready again")


def test_a_timed_out_run_writes_nothing(faults: dict[str, Any]) -> None:
    error = run_while_stopped(faults, lambda: None, timeout_seconds=2, deadline=40)
    assert isinstance(error, Error), error
    assert error.code in (StatusCode.DEADLINE_EXCEEDED, StatusCode.UNAVAILABLE), error
    untouched(faults)
    settled(faults)


def test_a_cancelled_run_writes_nothing(faults: dict[str, Any]) -> None:
    error = run_while_stopped(
        faults, lambda: faults["client"].cancel_job(faults["job"])
    )
    assert isinstance(error, Error) and error.code == StatusCode.CANCELLED, error
    untouched(faults)
    settled(faults)


def test_a_killed_rank_leaves_every_destination(faults: dict[str, Any]) -> None:
    pid = agent_pid(faults, 3)
    error = run_while_stopped(
        faults, lambda: os.kill(pid, signal.SIGKILL), agent_wait_seconds=1
    )
    assert isinstance(error, Error) and error.code == StatusCode.UNAVAILABLE, error
    assert any(f.rank == 3 and f.kind == "lost" for f in error.ranks), error.ranks
    ranks: Ranks = faults["ranks"]
    faults["ranks"].kill(3)  # its agent, and so its registrations, are gone
    for p in range(3):
        assert (ranks.get(p, "d0") == SENTINEL).all()
    restart = subprocess.run(
        [str(ROOT / "scripts" / "local-cluster.sh"), "restart", "3"],
        env=faults["c"]["env"],
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert restart.returncode == 0, restart.stderr
    ranks.start(3)
    register_case(faults, 0, faults["case"])
    run = run_case(faults, 0, faults["case"])
    assert run.validated and run.committed
    check_destinations(
        destinations(faults, "d0"),
        faults["case"]["full"],
        State.parse("R,S(1)"),
        (2, 2),
        "float32",
    )
    register_case(faults, 0, faults["case"])  # back to the sentinel


def test_missing_and_misshapen_tensors_fail_before_anything_moves(
    faults: dict[str, Any],
) -> None:
    mesh = mesh_of((2, 2))
    client = faults["client"]
    with pytest.raises(Error) as missing:
        client.run_job(
            "faults",
            mesh,
            shape=(64, 48),
            src="S(0),R",
            dst="R,S(1)",
            tensors=[("nope", "d0")],
        )
    assert missing.value.code == StatusCode.NOT_FOUND, missing.value
    assert 'tensors[0].source: no tensor "nope" is registered' in missing.value.message
    assert {f.rank for f in missing.value.ranks} == {0, 1, 2, 3}
    faults["ranks"].ok(2, op="fill", name="odd", dtype="float32", shape=[3, 3], value=0)
    with pytest.raises(Error) as misshapen:
        client.run_job(
            "faults",
            mesh,
            shape=(64, 48),
            src="S(0),R",
            dst="R,S(1)",
            tensors=[("s0", "odd")],
        )
    message = misshapen.value.message
    assert (
        'rank 2: tensors[0].into: "odd" is registered as float32 [3, 3]; '
        "the plan needs float32 [64, 24] on this rank" in message
    ), message
    untouched(faults)
    settled(faults)


def test_without_staging_results_land_in_place(faults: dict[str, Any]) -> None:
    run = run_case(faults, 0, faults["case"], no_staging=True)
    assert run.validated and not run.committed
    check_destinations(
        destinations(faults, "d0"),
        faults["case"]["full"],
        State.parse("R,S(1)"),
        (2, 2),
        "float32",
    )
    register_case(faults, 0, faults["case"])


def test_a_client_that_exits_is_freed(faults: dict[str, Any]) -> None:
    ranks: Ranks = faults["ranks"]
    ranks.ok(1, op="fill", name="gone", dtype="float32", shape=[2], value=1)
    ranks.kill(1)
    local = LocalAgent(
        ranks.sockets[1], job="faults", rank=1, token=faults["c"]["job_token"]
    )
    wait_until(lambda: "gone" not in [t.name for t in local.list()], 10, "gone freed")
    local.close()
    with pytest.raises(Error) as refused:
        faults["client"].run_job(
            "faults",
            mesh_of((4,)),
            shape=(8,),
            src="S(0)",
            dst="S(0)",
            tensors=[("gone", "gone")],
        )
    assert 'rank 1: tensors[0].source: no tensor "gone"' in refused.value.message
    ranks.start(1)
    register_case(faults, 0, faults["case"])
    settled(faults)


def raw_register(path: str, token: str, fd: int, length: int) -> Any:
    """A register request sent by hand, with `fd`, as an old or hostile
    client could send it."""
    from reshard.v1 import agent_local_pb2 as lpb

    request = lpb.LocalRequest(token=token, job="faults", rank=0)
    request.register.name = "raw"
    request.register.dtype = 1
    request.register.shape.append(length // 4)
    request.register.length = length
    body = request.SerializeToString()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(path)
        socket.send_fds(s, [struct.pack("<I", len(body)) + body], [fd])
        size = struct.unpack("<I", s.recv(4, socket.MSG_WAITALL))[0]
        response = lpb.LocalResponse()
        response.ParseFromString(s.recv(size, socket.MSG_WAITALL))
    return response


def test_an_unsealed_memfd_and_a_wrong_token_are_refused(
    faults: dict[str, Any],
) -> None:
    path, token = faults["ranks"].sockets[0], faults["c"]["job_token"]
    fd = os.memfd_create("unsealed", os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, 64)
    try:
        response = raw_register(path, token, fd, 64)
        assert response.code == StatusCode.FAILED_PRECONDITION, response
        assert "not sealed with F_SEAL_SHRINK" in response.error
        response = raw_register(path, "not-the-token", fd, 64)
        assert response.code == StatusCode.UNAUTHENTICATED, response
        assert response.error == "token: not this job's token"
    finally:
        os.close(fd)
    with pytest.raises(Error) as no_token:
        LocalAgent(path, job="faults", rank=0, token="").list()
    assert no_token.value.code == StatusCode.UNAUTHENTICATED


def test_another_uid_can_neither_register_nor_run(faults: dict[str, Any]) -> None:
    # The outsider needs nothing of ours to try: the system's Python, which
    # another uid can run wherever this checkout lives.
    attempt = (
        "import socket, sys\n"
        "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
        "try:\n"
        "    s.connect(sys.argv[1])\n"
        "    print('connected')\n"
        "except OSError as e:\n"
        "    print('refused', e.strerror)\n"
    )
    outsider = subprocess.run(
        [
            "setpriv",
            "--reuid",
            "65534",
            "--regid",
            "65534",
            "--clear-groups",
            "/usr/bin/python3",
            "-c",
            attempt,
            faults["ranks"].sockets[0],
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert outsider.stdout.strip() == "refused Permission denied", outsider
    anonymous = reshard.Client(faults["c"]["server"], job_token="")
    with pytest.raises(Error) as refused:
        run_case({**faults, "client": anonymous}, 0, faults["case"])
    assert refused.value.code in (StatusCode.NOT_FOUND, StatusCode.UNAUTHENTICATED)
    anonymous.close()
    untouched(faults)


def test_agents_without_the_endpoint_are_refused(tmp_path: Path) -> None:
    with cluster(tmp_path, 2, "plain") as c:
        client = reshard.Client(c["server"], job_token=c["job_token"])
        with pytest.raises(Error) as refused:
            client.run_job(
                "plain",
                mesh_of((2,)),
                shape=(4,),
                src="S(0)",
                dst="R",
                tensors=[("a", "b")],
            )
        client.close()
    assert refused.value.code == StatusCode.FAILED_PRECONDITION
    assert 'ranks 0, 1 do not advertise "registered_tensors"' in refused.value.message


def test_memfd_arrays_and_torch_views_register_without_a_copy(
    faults: dict[str, Any],
) -> None:
    import torch
    from reshard.agent import empty

    local = LocalAgent(
        faults["ranks"].sockets[0], job="faults", rank=0, token=faults["c"]["job_token"]
    )
    a = empty((4, 6), "float32")
    assert local.register("mine", a) is a
    view = torch.from_numpy(a)
    assert local.register("mine", view) is view  # the same memory again
    plain = np.arange(6, dtype=np.int64)
    copy = local.register("copied", plain)
    assert copy is not plain and copy.ctypes.data != plain.ctypes.data
    assert np.array_equal(copy, plain)
    bf16 = local.register("bf16", torch.ones(3, dtype=torch.bfloat16))
    assert bf16.dtype == np.uint16 and (bf16 == 0x3F80).all()
    listed = {t.name: t for t in local.list()}
    assert listed["mine"].shape == (4, 6) and listed["mine"].bytes == 96
    assert listed["bf16"].dtype == "bfloat16" and listed["copied"].dtype == "int64"
    with pytest.raises(Error) as negative:
        empty((2, -1), "float32")
    assert negative.value.message == "shape: -1 is negative"
    local.close()


def test_destinations_the_agents_allocate_are_fetched_without_a_copy(
    faults: dict[str, Any],
) -> None:
    ranks: Ranks = faults["ranks"]
    case = faults["case"]
    with pytest.raises(Error) as missing:
        run_case_into(faults, "made", allocate=False)
    assert 'tensors[0].into: no tensor "made" is registered' in missing.value.message
    run = run_case_into(faults, "made", allocate=True)
    assert run.validated and run.committed
    shapes = [ranks.ok(p, op="fetch", name="made")["shape"] for p in range(4)]
    assert shapes == [[64, 24]] * 4
    check_destinations(
        destinations(faults, "made"),
        case["full"],
        State.parse("R,S(1)"),
        (2, 2),
        "float32",
    )
    # The next run into it reuses it; the fetched arrays show its result.
    for p in (0, 1):  # rows 0-31 and their replica
        ranks.put(p, "s0", "float32", np.zeros((32, 48), np.float32))
    assert run_case_into(faults, "made", allocate=True).committed
    for p in range(4):
        assert (ranks.get(p, "made")[:32] == 0).all()
        assert (ranks.get(p, "made")[32:] != 0).all()
    register_case(faults, 0, case)
    answer = ranks.call(0, op="fetch", name="d0")
    assert answer["code"] == "FAILED_PRECONDITION", answer
    assert "was registered by a client" in answer["message"]


def run_case_into(w: dict[str, Any], into: str, allocate: bool) -> Any:
    case = w["case"]
    return w["client"].run_job(
        w["job"],
        mesh_of(case["sizes"]),
        shape=case["shape"],
        src=case["src"],
        dst=case["dst"],
        tensors=[("s0", into)],
        allocate=allocate,
    )


# ---- refusals in pre-flight (docs/DESIGN.md §6.4): the same whatever ran before


@pytest.fixture(scope="module")
def refusals(tmp_path_factory: Any) -> Iterator[dict[str, Any]]:
    """The fault cluster, with each agent's /metrics."""
    tmp = tmp_path_factory.mktemp("refusals")
    with fault_cluster(tmp, "refusals", 6, "--metrics") as w:
        yield w


def communicators_created(w: dict[str, Any]) -> list[float]:
    """Each agent's reshard_communicators_created_total, scraped."""
    counts = []
    for r in range(w["n"]):
        port = (w["c"]["dir"] / f"agent-{r}.metrics-port").read_text().strip()
        address = port if ":" in port else f"127.0.0.1:{port}"
        with socket.create_connection(tuple(address.rsplit(":", 1)), timeout=10) as s:
            s.sendall(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
            text = b"".join(iter(lambda: s.recv(65536), b"")).decode()
        (line,) = [
            x
            for x in text.splitlines()
            if x.startswith("reshard_communicators_created_total")
        ]
        counts.append(float(line.split()[-1]))
    return counts


def ctl_run(w: dict[str, Any], source: str) -> tuple[int, dict[str, Any]]:
    """reshardctl job run of the fault case from `source` into d0: its
    exit status and its JSON error, the run id taken out."""
    out = ctl(
        "--server",
        w["c"]["server"],
        "--job_token_file",
        str(w["c"]["dir"] / "job-token"),
        "job",
        "run",
        w["job"],
        "--mesh",
        "a=2,b=2",
        "--shape",
        "64,48",
        "--dtype",
        "float32",
        "--from",
        "S(0),R",
        "--to",
        "R,S(1)",
        "--tensor",
        source,
        "--into",
        "d0",
        "--json",
    )
    error = json.loads(out.stdout)["error"] if out.returncode else {}
    if error:
        error["message"] = error["message"].split(" failed: ", 1)[-1]
    return out.returncode, error


def break_rank_1(w: dict[str, Any], how: str) -> None:
    ranks: Ranks = w["ranks"]
    if how == "missing":
        ranks.ok(1, op="unregister", name="s0")
    elif how == "killed":
        ranks.kill(1)
        local = LocalAgent(
            ranks.sockets[1], job=w["job"], rank=1, token=w["c"]["job_token"]
        )
        wait_until(lambda: not local.list(), 10, "rank 1's tensors freed")
        local.close()
    elif how == "dtype":
        ranks.ok(1, op="fill", name="s0", dtype="float64", shape=[32, 48], value=0)
    else:
        ranks.ok(1, op="fill", name="s0", dtype="float32", shape=[31, 48], value=0)


REFUSALS = {
    "missing": (3, 'tensors[0].source: no tensor "s0" is registered at this agent'),
    "killed": (3, 'tensors[0].source: no tensor "s0" is registered at this agent'),
    "dtype": (
        5,
        'tensors[0].source: "s0" is registered as float64 [32, 48]; the plan '
        "needs float32 [32, 48] on this rank",
    ),
    "shape": (
        5,
        'tensors[0].source: "s0" is registered as float32 [31, 48]; the plan '
        "needs float32 [32, 48] on this rank",
    ),
}


@pytest.mark.parametrize("how", sorted(REFUSALS))
def test_a_refusal_is_the_same_after_a_successful_run_or_a_failed_one(
    refusals: dict[str, Any], how: str
) -> None:
    """A binding refused on rank 1, right after a run that committed and
    again right after that failed run: the same exit status, code, kind
    `binding` and message naming rank 1 once, never a peer's transport
    error; nothing is written, and the next correct run reuses the
    communicators (reshard_communicators_created_total unchanged)."""
    w = refusals
    if w["ranks"].procs[1] is None:
        w["ranks"].start(1)
    register_case(w, 0, w["case"])
    run = run_case(w, 0, w["case"])
    assert run.validated and run.committed
    created = communicators_created(w)
    register_case(w, 0, w["case"])  # the destinations back to the sentinel
    break_rank_1(w, how)
    exit_code, message = REFUSALS[how]
    code = "NOT_FOUND" if exit_code == 3 else "FAILED_PRECONDITION"
    answers = [ctl_run(w, "s0"), ctl_run(w, "s0")]  # after a success, a failure
    for status, error in answers:
        assert status == exit_code, (how, status, error)
        assert error["code"] == code, error
        assert error["message"] == f"rank 1: {message}", error
        assert [(f["rank"], f["kind"], f["message"]) for f in error["ranks"]] == [
            (1, "binding", message)
        ], error
    with pytest.raises(Error) as refused:
        run_case(w, 0, w["case"])
    assert refused.value.code == StatusCode[code]
    assert [(f.rank, f.kind, f.message) for f in refused.value.ranks] == [
        (1, "binding", message)
    ]
    for p in range(w["n"]):
        if w["ranks"].procs[p] is not None:
            assert (w["ranks"].get(p, "d0") == SENTINEL).all(), p
    if how == "killed":
        w["ranks"].start(1)
    register_case(w, 0, w["case"])
    run = run_case(w, 0, w["case"])
    assert run.validated and run.committed
    assert communicators_created(w) == created


def test_a_conservation_mismatch_raises_data_loss(faults: dict[str, Any]) -> None:
    """int32 P(sum) pieces of 2^30 on 4 ranks sum past int32 (wrapping to
    0): the run completes, but the conservation checksum of the result is
    not the source's. run_job raises DATA_LOSS naming each rank and tensor
    with both checksums, the result in `run`; nothing is committed."""
    ranks: Ranks = faults["ranks"]
    for p in range(4):
        ranks.put(p, "big", "int32", np.full((8, 4), 1 << 30, dtype=np.int32))
        ranks.ok(p, op="fill", name="sum", dtype="int32", shape=[8, 4], value=SENTINEL)
    with pytest.raises(Error) as lost:
        faults["client"].run_job(
            "faults",
            mesh_of((4,)),
            shape=(8, 4),
            src="P(sum)",
            dst="R",
            dtype="int32",
            tensors=[("big", "sum")],
        )
    error = lost.value
    assert error.code == StatusCode.DATA_LOSS, error
    assert error.run is not None and not error.run.committed
    (t,) = error.run.tensors
    assert t.conservation == "exact" and t.conservation_source != t.conservation_result
    assert error.ranks, error
    for f in error.ranks:
        assert f.kind == "validation", f
        assert f.message.startswith("tensors[0]: "), f
        assert (
            f"conservation checksum of the source {t.conservation_source}, "
            f"of the result {t.conservation_result}" in f.message
        ), f
    for p in range(4):
        assert (ranks.get(p, "sum") == SENTINEL).all()
        ranks.ok(p, op="unregister", name="big")
        ranks.ok(p, op="unregister", name="sum")
    settled(faults)
