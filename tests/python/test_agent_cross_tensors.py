"""Cross-mesh runs on a job's own tensors (docs/DESIGN.md §9, §6.6): a
local cluster of 8 Gloo agents with --tensors, one client process per rank
(tensor_client.py). Trainer ranks register the source blocks, inference
ranks the destinations (filled with a sentinel), and `reshardctl job run
--src_mesh ... --tensor S --into D` moves them: disjoint (ranks 0-3 to
4-7), overlapping and colocated permuted meshes, uneven shapes, Partial
sources, every dtype.

Every destination is read back by its client process and compared with
its block of the full tensor bit for bit; the conservation checksums must
agree where the run can prove it. Every block is registered with its
layout (reshard.agent.RegisteredLayout). A rank whose destination is
registered with the wrong shape, or for another layout, stops every rank
before anything moves, naming the rank (and the tensor), and leaves every
destination as it was; so do a timed-out run, a
cancelled one and one whose destination rank's agent is killed mid-run.

A schedule prepared once (`job prepare`, Client.run_schedule) moves a
tensor 100 times: no run after the first plans or carries the plan, and
no agent's memory grows; once deleted, or once an agent has rejoined, a
run of it fails FAILED_PRECONDITION saying "prepare again". Agents whose
--max_run_bytes cannot keep two schedules' runners and staging free the
other's before each run, and every run still lands.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import reshard
from layout import State, box, coordinate
from reshard_processes import CTL, ROOT, cluster, ctl, wait_until
from test_agent_tensors import (
    DTYPES,
    SENTINEL,
    Ranks,
    agent_pid,
    check_destinations,
    exact_expected,
    full_tensor,
    random_state,
    source_blocks,
)

WORLD = 8
MOVES = 100
SCHEDULED_RUNS = 100
# What an agent's resident memory may grow by over SCHEDULED_RUNS - 10
# runs of a schedule (allocator noise; a leak of one staging buffer per
# run would be 100 x 3 KiB, a compile's more).
RSS_SLACK_KIB = 256
SIZES = {4: [(4,), (2, 2)], 6: [(6,), (2, 3), (3, 2)], 8: [(8,), (2, 4), (4, 2)]}


@pytest.fixture(scope="module")
def world(tmp_path_factory: Any) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("cross")
    job = "cross8"
    with cluster(tmp, WORLD, job, "--tensors", "--metrics") as c:
        ranks = Ranks(c, job, WORLD, tmp)
        env = dict(c["env"], RESHARD_JOB_TOKEN=c["job_token"])
        try:
            yield {"c": c, "job": job, "ranks": ranks, "env": env}
        finally:
            ranks.stop()


def shuffled(rng: random.Random, ranks: range) -> list[int]:
    out = list(ranks)
    rng.shuffle(out)
    return out


def random_move(rng: random.Random, kind: str) -> dict[str, Any]:
    """Rank maps of `kind` whose union is the job's 8 ranks."""
    if kind == "disjoint":
        src_ranks, dst_ranks = shuffled(rng, range(4)), shuffled(rng, range(4, 8))
    elif kind == "overlapping":
        src_ranks, dst_ranks = shuffled(rng, range(4)), shuffled(rng, range(2, 8))
    else:
        src_ranks, dst_ranks = shuffled(rng, range(8)), shuffled(rng, range(8))
    src_sizes = rng.choice(SIZES[len(src_ranks)])
    dst_sizes = rng.choice(SIZES[len(dst_ranks)])
    rank = rng.choice([1, 2, 3])
    shape = tuple(rng.randint(1, 11) for _ in range(rank))
    dtype = rng.choice(DTYPES)
    partial = rng.random() < 0.3
    return {
        "kind": kind,
        "src_sizes": src_sizes,
        "dst_sizes": dst_sizes,
        "src_ranks": src_ranks,
        "dst_ranks": dst_ranks,
        "shape": shape,
        "dtype": dtype,
        "full": full_tensor(
            np.random.default_rng(rng.randrange(1 << 30)), shape, dtype
        ),
        "src": random_state(rng, len(src_sizes), rank, partial),
        "dst": random_state(rng, len(dst_sizes), rank, partial),
    }


def mesh_flag(sizes: tuple[int, ...], names: str) -> str:
    return ",".join(f"{names[d]}={s}" for d, s in enumerate(sizes))


def layout(move: dict[str, Any], side: str) -> dict[str, Any]:
    """tensor_client.py's "layout" of the move's `side` ("src", "dst")."""
    return {
        "global_shape": list(move["shape"]),
        "sizes": list(move[f"{side}_sizes"]),
        "ranks": move[f"{side}_ranks"],
        "placements": move[side],
    }


def register(w: dict[str, Any], k: int, move: dict[str, Any]) -> None:
    """Sources s{k} on the source ranks, destinations d{k} (the sentinel)
    on the destination ranks, each with its position's block shape and
    registered with its layout."""
    ranks: Ranks = w["ranks"]
    full, dtype = move["full"], move["dtype"]
    src = State.parse(move["src"])
    for p, piece in enumerate(source_blocks(full, src, move["src_sizes"])):
        path = ranks.tmp / f"put-{p}.npy"
        np.save(path, piece)
        r = move["src_ranks"][p]
        put = {"name": f"s{k}", "dtype": dtype, "file": str(path)}
        ranks.ok(r, op="put", **put, layout=layout(move, "src"))
    dst, sizes = State.parse(move["dst"]), move["dst_sizes"]
    for p, r in enumerate(move["dst_ranks"]):
        block = box(full.shape, dst, sizes, coordinate(p, sizes))
        fill = {"name": f"d{k}", "dtype": dtype, "value": SENTINEL}
        shape = [hi - lo for lo, hi in block]
        ranks.ok(r, op="fill", **fill, shape=shape, layout=layout(move, "dst"))


def run_args(w: dict[str, Any], k: int, move: dict[str, Any]) -> list[str]:
    return [
        "--server",
        w["c"]["server"],
        "job",
        "run",
        w["job"],
        "--src_mesh",
        mesh_flag(move["src_sizes"], "abc"),
        "--src_ranks",
        ",".join(map(str, move["src_ranks"])),
        "--dst_mesh",
        mesh_flag(move["dst_sizes"], "xyz"),
        "--dst_ranks",
        ",".join(map(str, move["dst_ranks"])),
        "--shape",
        ",".join(map(str, move["shape"])),
        "--dtype",
        move["dtype"],
        "--from",
        move["src"],
        "--to",
        move["dst"],
        "--tensor",
        f"s{k}",
        "--into",
        f"d{k}",
        "--json",
    ]


def run(w: dict[str, Any], k: int, move: dict[str, Any], *extra: str) -> Any:
    return ctl(*run_args(w, k, move), "--timeout_seconds", "20", *extra, env=w["env"])


def destinations(w: dict[str, Any], k: int, move: dict[str, Any]) -> list[np.ndarray]:
    """By destination position."""
    return [w["ranks"].get(r, f"d{k}") for r in move["dst_ranks"]]


def landed(w: dict[str, Any], k: int, move: dict[str, Any]) -> None:
    """Every destination of `move` read back equals its block bit for bit."""
    check_destinations(
        destinations(w, k, move),
        move["full"],
        State.parse(move["dst"]),
        move["dst_sizes"],
        move["dtype"],
    )


def unregister(w: dict[str, Any], k: int, move: dict[str, Any]) -> None:
    for r in move["src_ranks"]:
        w["ranks"].ok(r, op="unregister", name=f"s{k}")
    for r in move["dst_ranks"]:
        w["ranks"].ok(r, op="unregister", name=f"d{k}")


def test_random_moves_land_every_block(world: dict[str, Any]) -> None:
    """≥ 100 random moves, every destination read back bit for bit."""
    rng = random.Random(79)
    kinds, labels = set(), set()
    for k in range(MOVES):
        move = random_move(rng, ("disjoint", "overlapping", "colocated")[k % 3])
        register(world, k, move)
        done = run(world, k, move)
        assert done.returncode == 0, (move, done.stderr)
        out = json.loads(done.stdout)
        assert out["validated"] and out["committed"], (move, out)
        conservation = out["conservation"]
        expected = exact_expected(move["dtype"], move["src"], move["dst"])
        assert conservation["label"] == ("exact" if expected else "skipped"), move
        if expected:
            assert conservation["source"] == conservation["result"], (move, out)
        landed(world, k, move)
        kinds.add(move["kind"])
        labels.add(conservation["label"])
        unregister(world, k, move)
    assert kinds == {"disjoint", "overlapping", "colocated"}
    assert labels == {"exact", "skipped"}


def test_a_misshapen_destination_stops_every_rank(world: dict[str, Any]) -> None:
    """Rank 6 registers its destination one row short: the run fails in
    pre-flight naming rank 6, and no destination changes."""
    rng = random.Random(6)
    move = random_move(rng, "disjoint")
    move.update(
        shape=(8, 4),
        src="S(0)",
        dst="S(1)",
        dtype="int32",
        src_sizes=(4,),
        dst_sizes=(4,),
    )
    move["full"] = full_tensor(np.random.default_rng(1), (8, 4), "int32")
    k = 1000
    register(world, k, move)
    p = move["dst_ranks"].index(6)
    world["ranks"].ok(6, op="unregister", name=f"d{k}")
    world["ranks"].ok(
        6, op="fill", name=f"d{k}", dtype="int32", shape=[7, 1], value=SENTINEL
    )
    done = run(world, k, move)
    assert done.returncode != 0
    assert "rank 6" in done.stderr and "FAILED_PRECONDITION" in done.stderr, done.stderr
    for got in destinations(world, k, move):
        assert (got == SENTINEL).all(), got
    assert destinations(world, k, move)[p].shape == (7, 1)
    unregister(world, k, move)


def test_a_destination_laid_out_otherwise_stops_every_rank(
    world: dict[str, Any],
) -> None:
    """Rank 5 registers its destination, of the right shape, for another
    rank map: the run fails before anything moves, naming rank 5 and the
    tensor, and no destination changes."""
    move = random_move(random.Random(5), "disjoint")
    move.update(shape=(8, 4), src="S(0)", dst="S(1)", dtype="float32")
    move.update(src_sizes=(4,), dst_sizes=(4,), dst_ranks=[4, 5, 6, 7])
    move["full"] = full_tensor(np.random.default_rng(5), (8, 4), "float32")
    k = 1001
    register(world, k, move)
    other = dict(layout(move, "dst"), ranks=[4, 5, 7, 6])
    world["ranks"].ok(
        5,
        op="fill",
        name=f"d{k}",
        dtype="float32",
        shape=[8, 1],
        value=SENTINEL,
        layout=other,
    )
    done = run(world, k, move)
    assert done.returncode != 0
    for text in (
        "FAILED_PRECONDITION",
        "rank 5",
        f'"d{k}" is registered as',
        "ranks [4, 5, 7, 6]",
    ):
        assert text in done.stderr, (text, done.stderr)
    untouched(world, k, move)
    # A layout whose block at the rank is not the registered shape is
    # refused when registered, naming the layout.
    bad = world["ranks"].call(
        5,
        op="fill",
        name=f"d{k}",
        dtype="float32",
        shape=[8, 2],
        value=SENTINEL,
        layout=layout(move, "dst"),
    )
    assert not bad["ok"] and bad["code"] == "INVALID_ARGUMENT", bad
    assert "layout: rank 5's block of [8, 4] as S(1)" in bad["message"], bad
    assert "not the registered shape [8, 2]" in bad["message"], bad
    unregister(world, k, move)


def scrape(w: dict[str, Any], port_file: str) -> str:
    port = (w["c"]["dir"] / port_file).read_text().strip()
    address = port if ":" in port else f"127.0.0.1:{port}"
    with socket.create_connection(tuple(address.rsplit(":", 1)), timeout=10) as s:
        s.sendall(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
        return b"".join(iter(lambda: s.recv(65536), b"")).decode()


def planning(w: dict[str, Any]) -> dict[str, float]:
    """The planner's counts of plan requests and of the plan cache's hits
    and misses (every planning goes through the cache)."""
    text = scrape(w, "planner.metrics-port")
    counts: dict[str, float] = {}
    for family in (
        "reshard_plan_requests_total",
        "reshard_plan_cache_hits_total",
        "reshard_plan_cache_misses_total",
    ):
        counts[family] = sum(
            float(line.split()[-1])
            for line in text.splitlines()
            if line.startswith(family)
        )
    return counts


def compiled(w: dict[str, Any]) -> list[float]:
    """Each agent's reshard_cross_runners_compiled_total."""
    counts = []
    for r in range(WORLD):
        text = scrape(w, f"agent-{r}.metrics-port")
        (line,) = [
            x
            for x in text.splitlines()
            if x.startswith("reshard_cross_runners_compiled_total")
        ]
        counts.append(float(line.split()[-1]))
    return counts


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def prepare(w: dict[str, Any], move: dict[str, Any]) -> dict[str, Any]:
    """`job prepare` of `move` (run_args' cross-mesh flags): its JSON."""
    args = run_args(w, 0, move)
    flags = args[args.index("--src_mesh") : args.index("--tensor")]
    done = ctl(
        "--server",
        w["c"]["server"],
        "job",
        "prepare",
        w["job"],
        *flags,
        "--json",
        env=w["env"],
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_a_prepared_schedule_plans_once(world: dict[str, Any]) -> None:
    """100 runs of one schedule on registered tensors: every destination
    lands bit for bit each time (the sources change between runs), only
    the first run carries the plan, none plans, only the first compiles,
    every agent's RSS stays flat; deleted, the schedule is refused naming
    it."""
    move = random_move(random.Random(3), "disjoint")
    move.update(shape=(48, 40), src="S(0),S(1)", dst="S(1)", dtype="float32")
    move.update(src_sizes=(2, 2), dst_sizes=(4,))
    k = 3000
    move["full"] = full_tensor(np.random.default_rng(k), (48, 40), "float32")
    register(world, k, move)
    schedule = prepare(world, move)
    assert schedule["schedules"] >= 1 and schedule["plan"]["kind"] == "cross_mesh"
    client = reshard.Client(world["c"]["server"], job_token=world["c"]["job_token"])
    pids = [agent_pid(world, r) for r in range(WORLD)]
    before = planning(world)
    compiles = compiled(world)
    rss: list[int] = []
    rng = np.random.default_rng(k + 1)
    for i in range(SCHEDULED_RUNS):
        if i % 25 == 24:  # new weights, registered in place of the old
            move["full"] = full_tensor(rng, (48, 40), "float32")
            unregister(world, k, move)
            register(world, k, move)
        run = client.run_schedule(
            world["job"], schedule["schedule_id"], tensor=(f"s{k}", f"d{k}")
        )
        assert run.validated and run.committed, run
        assert run.schedule_id == schedule["schedule_id"]
        assert run.plan_sent == (i == 0), (i, run.plan_sent)
        if i in (9, SCHEDULED_RUNS - 1):
            rss.append(sum(rss_kib(pid) for pid in pids))
        if i % 25 in (0, 23):
            landed(world, k, move)
    assert planning(world) == before
    listed = client.get_job(world["job"]).schedules
    assert reshard.PreparedSchedule(schedule["schedule_id"], 1, True) in listed
    # The first run compiled each agent's runner; the others reused it.
    assert [b - a for a, b in zip(compiles, compiled(world), strict=True)] == [
        1.0
    ] * WORLD
    growth = rss[1] - rss[0]
    print(f"RSS of {WORLD} agents over runs 10-{SCHEDULED_RUNS}: {growth:+d} KiB")
    assert growth <= WORLD * RSS_SLACK_KIB, rss
    client.delete_schedule(world["job"], schedule["schedule_id"])
    with pytest.raises(reshard.Error) as refused:
        client.run_schedule(
            world["job"], schedule["schedule_id"], tensor=(f"s{k}", f"d{k}")
        )
    assert refused.value.code == reshard.StatusCode.FAILED_PRECONDITION
    assert schedule["schedule_id"] in str(refused.value)
    assert "prepare again" in str(refused.value)
    client.close()
    unregister(world, k, move)


def peak_bytes(move: dict[str, Any]) -> int:
    """The plan's peak bytes on a rank, as `reshardctl plan --offline`
    gives them for `move` (run_args' cross-mesh flags)."""
    args = run_args({"c": {"server": ""}, "job": ""}, 0, move)
    flags = args[args.index("--src_mesh") : args.index("--tensor")]
    done = ctl("plan", "--offline", *flags, "--json")
    assert done.returncode == 0, done.stderr
    return int(json.loads(done.stdout)["peak_bytes"])


def test_kept_schedules_stay_within_max_run_bytes(tmp_path: Any) -> None:
    """Agents whose --max_run_bytes holds one schedule's run but not two
    schedules' kept runners and staging: two prepared schedules run in
    turn, each lands bit for bit every time; before each run an agent
    frees the other schedule's runner and staging (its log says so) and
    compiles its own again, where an unbounded agent compiles each once
    (the `world` test above); the schedules themselves stay."""
    moves = []
    for k in (4000, 4001):
        move = random_move(random.Random(k), "disjoint")
        move.update(shape=(256, 128), src="S(0),S(1)", dst="S(1)", dtype="float32")
        move.update(src_sizes=(2, 2), dst_sizes=(4,))
        move["full"] = full_tensor(np.random.default_rng(k), (256, 128), "float32")
        moves.append(move)
    bound = max(peak_bytes(m) for m in moves) * 3 // 2
    flags = ("--tensors", "--metrics", "--max_run_bytes", str(bound))
    with cluster(tmp_path, WORLD, "tight8", *flags) as c:
        ranks = Ranks(c, "tight8", WORLD, tmp_path)
        w = {"c": c, "job": "tight8", "ranks": ranks,
             "env": dict(c["env"], RESHARD_JOB_TOKEN=c["job_token"])}  # fmt: skip
        try:
            ids = []
            for k, move in zip((4000, 4001), moves, strict=True):
                register(w, k, move)
                ids.append(prepare(w, move)["schedule_id"])
            client = reshard.Client(c["server"], job_token=c["job_token"])
            for i in range(6):
                k = 4000 + i % 2
                run = client.run_schedule(
                    "tight8", ids[i % 2], tensor=(f"s{k}", f"d{k}")
                )
                assert run.validated and run.committed, (i, run)
                landed(w, k, moves[i % 2])
            client.close()
            assert compiled(w) == [6.0] * WORLD
            freed = [
                (c["dir"] / f"agent-{r}.log")
                .read_text()
                .count("to fit --max_run_bytes")
                for r in range(WORLD)
            ]
            assert freed == [5] * WORLD, freed
        finally:
            ranks.stop()


def job_state(w: dict[str, Any]) -> dict[str, Any]:
    shown = ctl(
        "--server", w["c"]["server"], "job", "show", w["job"], "--json", env=w["env"]
    )
    return dict(json.loads(shown.stdout)) if shown.returncode == 0 else {}


def fault_move(w: dict[str, Any], k: int) -> dict[str, Any]:
    """A disjoint int32 move, registered; rank 6 is a destination."""
    move = random_move(random.Random(k), "disjoint")
    move.update(shape=(64, 48), src="S(0)", dst="S(1)", dtype="int32")
    move.update(src_sizes=(4,), dst_sizes=(4,))
    move["full"] = full_tensor(np.random.default_rng(k), (64, 48), "int32")
    register(w, k, move)
    return move


def run_while_stopped(
    w: dict[str, Any], k: int, move: dict[str, Any], then: Any, *extra: str
) -> subprocess.CompletedProcess[str]:
    """Runs `move` with rank 6's agent stopped (SIGSTOP), calls `then` once
    the run is in flight and resumes the agent; what reshardctl did."""
    pid = agent_pid(w, 6)
    os.kill(pid, signal.SIGSTOP)
    try:
        proc = subprocess.Popen(
            [str(CTL), *run_args(w, k, move), *extra],
            env=w["env"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_until(lambda: job_state(w).get("current_run"), 30, "the run in flight")
        then()
        out, err = proc.communicate(timeout=90)
    finally:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass  # the test killed it
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def untouched(w: dict[str, Any], k: int, move: dict[str, Any]) -> None:
    for r, got in zip(move["dst_ranks"], destinations(w, k, move), strict=True):
        assert (got == SENTINEL).all(), f"rank {r}'s destination was written"


def settled(w: dict[str, Any]) -> None:
    def ready() -> bool:
        job = job_state(w)
        return job.get("state") == "ready" and not job.get("current_run")

    wait_until(ready, 60, "the job ready again")


def test_a_timed_out_run_writes_nothing(world: dict[str, Any]) -> None:
    move = fault_move(world, 2000)
    done = run_while_stopped(
        world,
        2000,
        move,
        lambda: None,
        "--timeout_seconds",
        "2",
        "--deadline_seconds",
        "40",
    )
    assert done.returncode != 0
    assert "DEADLINE_EXCEEDED" in done.stderr or "UNAVAILABLE" in done.stderr, (
        done.stderr
    )
    untouched(world, 2000, move)
    settled(world)
    unregister(world, 2000, move)


def test_a_cancelled_run_writes_nothing(world: dict[str, Any]) -> None:
    move = fault_move(world, 2001)

    def cancel() -> None:
        ctl(
            "--server",
            world["c"]["server"],
            "job",
            "cancel",
            world["job"],
            env=world["env"],
        )

    done = run_while_stopped(world, 2001, move, cancel, "--timeout_seconds", "20")
    assert done.returncode != 0 and "CANCELLED" in done.stderr, done.stderr
    untouched(world, 2001, move)
    settled(world)
    unregister(world, 2001, move)


def test_a_killed_destination_rank_leaves_every_destination(
    world: dict[str, Any],
) -> None:
    move = fault_move(world, 2002)
    kept = prepare(world, move)
    pid = agent_pid(world, 6)
    done = run_while_stopped(
        world,
        2002,
        move,
        lambda: os.kill(pid, signal.SIGKILL),
        "--timeout_seconds",
        "20",
        "--agent_wait_seconds",
        "1",
    )
    assert done.returncode != 0 and "UNAVAILABLE" in done.stderr, done.stderr
    assert "rank 6" in done.stderr, done.stderr
    ranks: Ranks = world["ranks"]
    ranks.kill(6)  # its agent, and so its registrations, are gone
    for r in move["dst_ranks"]:
        if r != 6:
            assert (ranks.get(r, "d2002") == SENTINEL).all(), r
    restart = subprocess.run(
        [str(ROOT / "scripts" / "local-cluster.sh"), "restart", "6"],
        env=world["c"]["env"],
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert restart.returncode == 0, restart.stderr
    ranks.start(6)
    settled(world)
    # Rank 6 rejoined: the job's generation changed, and its schedules ended.
    again = ctl(
        "--server",
        world["c"]["server"],
        "job",
        "run",
        world["job"],
        "--schedule",
        kept["schedule_id"],
        env=world["env"],
    )
    assert again.returncode != 0, again.stdout
    for text in ("FAILED_PRECONDITION", kept["schedule_id"], "prepare again"):
        assert text in again.stderr, (text, again.stderr)
    register(world, 2002, move)
    done = run(world, 2002, move)
    assert done.returncode == 0, done.stderr
    check_destinations(
        destinations(world, 2002, move),
        move["full"],
        State.parse("S(1)"),
        (4,),
        "int32",
    )
    unregister(world, 2002, move)
