"""Cross-mesh batches on a job's own tensors (docs/DESIGN.md §9, §6.6): a
model's weights moved by one `reshardctl job run --offline --src_mesh ...
--batch FILE --tensor S1,S2,... --into D1,D2,...` on a local cluster of 8
Gloo agents with --tensors, one client process per rank
(tensor_client.py).

Random batches of 2 to 6 tensors (disjoint, overlapping and colocated
permuted meshes; some tensors on their own source mesh, a pipeline stage;
uneven shapes, Partial sources, every dtype; exchange bounds from one byte
to unbounded): every destination of every tensor is read back by its
client process and compared with its block of the full tensor bit for
bit, and each tensor's conservation checksums agree where they prove
anything. A batch prepared once (`job prepare --offline --batch`) moves
the model every step without planning or sending its plans, with no
growth in the agents' memory. One misshapen destination of the batch's
last tensor stops every rank before anything moves, naming the rank and
the tensor, and leaves every tensor's destinations as they were: the
batch commits together.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import reshard
from reshard_processes import cluster, ctl
from test_agent_cross_tensors import (
    RSS_SLACK_KIB,
    SIZES,
    compiled,
    destinations,
    landed,
    mesh_flag,
    random_move,
    register,
    rss_kib,
    unregister,
)
from test_agent_tensors import (
    SENTINEL,
    Ranks,
    agent_pid,
    exact_expected,
    full_tensor,
    random_state,
)

WORLD = 8
BATCHES = 30
SCHEDULED_RUNS = 40
# Exchange bounds: every piece its own exchange, a few tensors, one for all.
BOUNDS = ("1", "256", "25MiB")


@pytest.fixture(scope="module")
def world(tmp_path_factory: Any) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("batches")
    name = "batch8"
    with cluster(tmp, WORLD, name, "--tensors", "--metrics") as c:
        ranks = Ranks(c, name, WORLD, tmp)
        env = dict(c["env"], RESHARD_JOB_TOKEN=c["job_token"])
        try:
            yield {"c": c, "job": name, "ranks": ranks, "env": env, "tmp": tmp}
        finally:
            ranks.stop()


def own_stage(rng: random.Random, item: dict[str, Any], src_ranks: list[int]) -> None:
    """Moves `item`'s source onto a pipeline stage: 2 or 4 of the batch's
    source ranks, in a random order, with its own mesh shape."""
    count = rng.choice([n for n in (2, 4) if n <= len(src_ranks)])
    item["src_ranks"] = rng.sample(src_ranks, count)
    item["src_sizes"] = rng.choice(SIZES.get(count, [(count,)]))
    partial = rng.random() < 0.3
    item["src"] = random_state(rng, len(item["src_sizes"]), len(item["shape"]), partial)
    item["own_stage"] = True


def random_batch(rng: random.Random, kind: str) -> dict[str, Any]:
    """Tensors sharing the first one's destination mesh; the first keeps
    the batch's source mesh (so the union of rank maps is the job's), the
    others keep it or take a stage of it."""
    first = random_move(rng, kind)
    items = [first]
    for _ in range(rng.randint(1, 5)):
        item = random_move(rng, kind)
        for key in ("src_sizes", "src_ranks", "dst_sizes", "dst_ranks"):
            item[key] = first[key]
        ndim = len(item["shape"])
        for side in ("src", "dst"):
            partial = rng.random() < 0.3
            item[side] = random_state(rng, len(item[f"{side}_sizes"]), ndim, partial)
        if rng.random() < 0.3:
            own_stage(rng, item, first["src_ranks"])
        items.append(item)
    return {"kind": kind, "items": items, "bound": rng.choice(BOUNDS)}


def batch_file(path: Path, batch: dict[str, Any]) -> None:
    lines = []
    for t, item in enumerate(batch["items"]):
        line = {
            "name": f"t{t}",
            "shape": list(item["shape"]),
            "dtype": item["dtype"],
            "from": item["src"],
            "to": item["dst"],
        }
        if item.get("own_stage"):
            line["src_mesh"] = mesh_flag(item["src_sizes"], "pq")
            line["src_ranks"] = item["src_ranks"]
        lines.append(json.dumps(line))
    path.write_text("\n".join(lines) + "\n")


def names(k: int, batch: dict[str, Any], prefix: str) -> str:
    return ",".join(f"{prefix}{k}_{t}" for t in range(len(batch["items"])))


def batch_flags(w: dict[str, Any], k: int, batch: dict[str, Any]) -> list[str]:
    """The batch's cross-mesh flags, its file written."""
    first = batch["items"][0]
    path = w["tmp"] / f"batch-{k}.jsonl"
    batch_file(path, batch)
    return [
        "--offline",
        "--src_mesh",
        mesh_flag(first["src_sizes"], "abc"),
        "--src_ranks",
        ",".join(map(str, first["src_ranks"])),
        "--dst_mesh",
        mesh_flag(first["dst_sizes"], "xyz"),
        "--dst_ranks",
        ",".join(map(str, first["dst_ranks"])),
        "--batch",
        str(path),
        "--bucket_bytes",
        batch["bound"],
    ]


def job(w: dict[str, Any], *args: str) -> Any:
    """`reshardctl job ARGS...` on the world's job."""
    return ctl(
        "--server", w["c"]["server"], "job", args[0], w["job"], *args[1:], env=w["env"]
    )


def bindings(k: int, batch: dict[str, Any]) -> list[str]:
    return ["--tensor", names(k, batch, "s"), "--into", names(k, batch, "d")]


def run_batch(w: dict[str, Any], k: int, batch: dict[str, Any]) -> Any:
    return job(
        w,
        "run",
        *batch_flags(w, k, batch),
        *bindings(k, batch),
        "--timeout_seconds",
        "20",
        "--json",
    )


def item_key(k: int, t: int) -> str:
    """register()'s `k` for tensor t of batch k: names s{k}_{t}, d{k}_{t}."""
    return f"{k}_{t}"


def test_random_batches_land_every_block(world: dict[str, Any]) -> None:
    """Every tensor of every batch read back bit for bit on its ranks."""
    rng = random.Random(792)
    tensors, stages, labels = 0, 0, set()
    for k in range(BATCHES):
        batch = random_batch(rng, ("disjoint", "overlapping", "colocated")[k % 3])
        for t, item in enumerate(batch["items"]):
            register(world, item_key(k, t), item)
        done = run_batch(world, k, batch)
        assert done.returncode == 0, (batch, done.stderr)
        out = json.loads(done.stdout)
        assert out["kind"] == "cross_mesh_batch", out
        assert out["validated"] and out["committed"], (batch, out)
        for t, item in enumerate(batch["items"]):
            row = out["tensors"][t]
            assert row["name"] == f"t{t}" and row["validated"], (item, row)
            exact = exact_expected(item["dtype"], item["src"], item["dst"])
            conservation = row["conservation"]
            assert conservation["label"] == ("exact" if exact else "skipped")
            if exact:
                assert conservation["source"] == conservation["result"], row
            labels.add(conservation["label"])
            landed(world, item_key(k, t), item)
            unregister(world, item_key(k, t), item)
            stages += bool(item.get("own_stage"))
        tensors += len(batch["items"])
    assert tensors >= 100 and stages >= 10, (tensors, stages)
    assert labels == {"exact", "skipped"}


def test_one_misshapen_destination_stops_the_whole_batch(
    world: dict[str, Any],
) -> None:
    """Rank 5 registers the last tensor's destination one row short: the
    batch fails in pre-flight naming rank 5 and the tensor, and no
    destination of any tensor changes."""
    rng = random.Random(5)
    batch = random_batch(rng, "disjoint")
    for item in batch["items"]:
        item.update(dst_sizes=(4,), dst_ranks=[4, 5, 6, 7], dst="R")
    last = batch["items"][-1]
    last.update(shape=(8, 4), dtype="int32", dst="S(0)")
    last["full"] = full_tensor(np.random.default_rng(2), (8, 4), "int32")
    last["src"] = ",".join("R" for _ in last["src_sizes"])
    k = 1000
    for t, item in enumerate(batch["items"]):
        register(world, item_key(k, t), item)
    t_last = len(batch["items"]) - 1
    name = f"d{item_key(k, t_last)}"
    world["ranks"].ok(5, op="unregister", name=name)
    world["ranks"].ok(
        5, op="fill", name=name, dtype="int32", shape=[1, 4], value=SENTINEL
    )
    done = run_batch(world, k, batch)
    assert done.returncode != 0
    for text in ("FAILED_PRECONDITION", "rank 5", f"tensors[{t_last}].into"):
        assert text in done.stderr, (text, done.stderr)
    for t, item in enumerate(batch["items"]):
        for got in destinations(world, item_key(k, t), item):
            assert (got == SENTINEL).all(), (t, got)
        unregister(world, item_key(k, t), item)


def test_a_prepared_batch_moves_the_model_every_step(world: dict[str, Any]) -> None:
    """A batch prepared once (`job prepare --offline --batch`) and run
    SCHEDULED_RUNS times on the registered tensors, the trainer's weights
    replaced every 10 runs: every tensor lands bit for bit, only the first
    run sends the plans, each agent compiles its runner once and its RSS
    stays flat; deleted, the schedule is refused saying "prepare again"."""
    rng = random.Random(4)
    batch = random_batch(rng, "colocated")
    while len(batch["items"]) < 4:
        batch = random_batch(rng, "colocated")
    k = 3000
    for t, item in enumerate(batch["items"]):
        register(world, item_key(k, t), item)
    prepared = job(world, "prepare", *batch_flags(world, k, batch), "--json")
    assert prepared.returncode == 0, prepared.stderr
    schedule = json.loads(prepared.stdout)
    assert schedule["plan"]["kind"] == "cross_mesh_batch", schedule
    pids = [agent_pid(world, r) for r in range(WORLD)]
    compiles = compiled(world)
    data = np.random.default_rng(k)
    rss: list[int] = []
    for i in range(SCHEDULED_RUNS):
        if i % 10 == 9:  # new weights, registered in place of the old
            for t, item in enumerate(batch["items"]):
                unregister(world, item_key(k, t), item)
                item["full"] = full_tensor(data, item["shape"], item["dtype"])
                register(world, item_key(k, t), item)
        done = job(
            world,
            "run",
            "--schedule",
            schedule["schedule_id"],
            *bindings(k, batch),
            "--json",
        )
        assert done.returncode == 0, (i, done.stderr)
        out = json.loads(done.stdout)
        assert out["validated"] and out["committed"], out
        assert out["plan_sent"] == (i == 0), (i, out["plan_sent"])
        assert [r["name"] for r in out["tensors"]] == [
            f"t{t}" for t in range(len(batch["items"]))
        ]
        if i in (9, SCHEDULED_RUNS - 1):
            rss.append(sum(rss_kib(pid) for pid in pids))
        if i % 10 in (0, 9):
            for t, item in enumerate(batch["items"]):
                landed(world, item_key(k, t), item)
    assert [b - a for a, b in zip(compiles, compiled(world), strict=True)] == [
        1.0
    ] * WORLD
    growth = rss[1] - rss[0]
    print(f"RSS of {WORLD} agents over runs 10-{SCHEDULED_RUNS}: {growth:+d} KiB")
    assert growth <= WORLD * RSS_SLACK_KIB, rss
    assert job(world, "prepare", "--delete", schedule["schedule_id"]).returncode == 0
    refused = job(
        world, "run", "--schedule", schedule["schedule_id"], *bindings(k, batch)
    )
    assert refused.returncode != 0
    assert "prepare again" in refused.stderr, refused.stderr
    for t, item in enumerate(batch["items"]):
        unregister(world, item_key(k, t), item)


def batch_tensors(batch: dict[str, Any]) -> list[reshard.CrossBatchTensor]:
    """The batch's tensors as reshard.Client takes them."""
    out = []
    for t, item in enumerate(batch["items"]):
        names = "pq" if item.get("own_stage") else "abc"
        src_mesh = reshard.Mesh(
            tuple(item["src_sizes"]),
            tuple(names[: len(item["src_sizes"])]),
            rank_map=tuple(item["src_ranks"]),
        )
        dst_mesh = reshard.Mesh(
            tuple(item["dst_sizes"]),
            tuple("xyz"[: len(item["dst_sizes"])]),
            rank_map=tuple(item["dst_ranks"]),
        )
        out.append(
            reshard.CrossBatchTensor(
                f"t{t}",
                src_mesh,
                dst_mesh,
                tuple(item["shape"]),
                item["src"],
                item["dst"],
                item["dtype"],
            )
        )
    return out


def pairs(k: int, batch: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f"s{k}_{t}", f"d{k}_{t}") for t in range(len(batch["items"]))]


def test_the_python_client_moves_and_prepares_batches(world: dict[str, Any]) -> None:
    """Client.run_cross_batch_job and prepare_cross_batch + run_schedule:
    the job's replica plans every tensor, every destination lands bit for
    bit, a schedule's plans go to the agents once; a tensor the replica
    cannot plan is refused by its index."""
    client = reshard.Client(world["c"]["server"], job_token=world["c"]["job_token"])
    rng = random.Random(11)
    for k, kind in ((4000, "overlapping"), (4001, "disjoint")):
        batch = random_batch(rng, kind)
        for t, item in enumerate(batch["items"]):
            register(world, item_key(k, t), item)
        run = client.run_cross_batch_job(
            world["job"], batch_tensors(batch), 256, bindings=pairs(k, batch)
        )
        assert run.validated and run.committed, run
        assert [t.name for t in run.tensors] == [
            f"t{t}" for t in range(len(batch["items"]))
        ]
        for t, item in enumerate(batch["items"]):
            landed(world, item_key(k, t), item)
        schedule = client.prepare_cross_batch(world["job"], batch_tensors(batch))
        assert schedule.plan is None and schedule.tensors == len(batch["items"])
        for i in range(2):
            run = client.run_schedule(
                world["job"], schedule.id, tensors=pairs(k, batch)
            )
            assert run.validated and run.committed and run.plan_sent == (i == 0)
        client.delete_schedule(world["job"], schedule.id)
        for t, item in enumerate(batch["items"]):
            landed(world, item_key(k, t), item)
            unregister(world, item_key(k, t), item)
    bad = batch_tensors(batch)
    bad[1] = dataclasses.replace(bad[1], src="S(7)")
    with pytest.raises(reshard.Error) as refused:
        client.run_cross_batch_job(world["job"], bad)
    assert refused.value.code == reshard.StatusCode.INVALID_ARGUMENT
    assert "cross_batch_request.tensors[1]." in str(refused.value), refused.value
    client.close()
