"""reshard.torch.run_plan on real torch.distributed Gloo CPU ranks (separate,
long-lived processes; 4 and 8 ranks): random plans (uneven shapes, shard
orders, every Partial op, merged groups, every dtype) end with §6.2's
checksums equal to those Reshard's own executor reports for the same
requests (`reshardctl exec --batch`, one batch per mesh), and with every
element equal to the data rule (the tests' own layout code, tests/python/
layout.py; the package derives no layouts)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import reshard
from reshard._inprocess import native
from reshard_processes import ctl
from torch_cases import mesh_of, random_request
from torch_ranks import run_ranks

RANK_SCRIPT = Path(__file__).with_name("torch_plan_rank.py")
# Every other case runs on a DeviceMesh of these ranks (row-major): torch's
# group ranks then differ from the plans' group orders.
PERMUTED = {4: [2, 0, 3, 1], 8: [5, 2, 7, 0, 3, 6, 1, 4]}
CASES_PER_WORLD = 130
RANKS_TIMEOUT_S = 400


def random_plans(world: int, rng: random.Random) -> list[reshard.Plan]:
    plans = []
    while len(plans) < CASES_PER_WORLD:
        r = random_request(rng, world)
        planner = rng.choice(["optimal", "optimal", "optimal", "torch_graph"])
        try:
            plans.append(
                reshard.plan(
                    mesh_of(r),
                    r["shape"],
                    r["src"],
                    r["dst"],
                    r["dtype"],
                    planner=planner,
                )
            )
        except reshard.Error:
            continue  # a mix of Partial ops the planner refuses, for one
    return plans


def executor_checksums(
    tmp: Path, world: int, plans: list[reshard.Plan]
) -> list[list[int]]:
    """Per plan, every rank's checksums as the executor reports them after
    running the same requests (their checksums depend on the request only),
    one `exec --batch` per mesh."""
    by_mesh: dict[reshard.Mesh, list[int]] = {}
    for i, plan in enumerate(plans):
        by_mesh.setdefault(plan.mesh, []).append(i)
    found: list[list[int]] = [[] for _ in plans]
    for m, (mesh, indices) in enumerate(by_mesh.items()):
        batch = tmp / f"batch-{world}-{m}.jsonl"
        batch.write_text(
            "".join(
                json.dumps(
                    {
                        "name": f"t{i}",
                        "shape": list(plans[i].shape),
                        "dtype": plans[i].dtype,
                        "from": plans[i].src,
                        "to": plans[i].dst,
                    }
                )
                + "\n"
                for i in indices
            )
        )
        dims = ",".join(
            f"{n}={s}" for n, s in zip(mesh.dim_names, mesh.shape, strict=True)
        )
        flatten = [a for g in mesh.flattened for a in ("--flatten", ",".join(g))]
        ran = ctl(
            "exec", "--local", str(world), "--batch", str(batch), "--mesh", dims,
            *flatten, "--threads", "--json", "--iters", "1", "--warmup", "0",
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        report = json.loads(ran.stdout)
        assert report["validated"], ran.stdout[-2000:]
        for t in report["tensors"]:
            found[int(t["name"][1:])] = t["checksums"]
    assert all(len(c) == world for c in found), found
    return found


def with_programs(plan: reshard.Plan) -> str:
    """The plan JSON with every rank's programs, as `reshardctl plan
    --programs` writes it (test_command_line checks that they agree)."""
    module = native()
    d = json.loads(plan.to_json())
    d["programs"] = [
        json.loads(module.rank_program(plan.to_json(), p))
        for p in range(plan.mesh.world_size)
    ]
    return json.dumps(d)


def rank_results(
    tmp: Path, world: int, plans: list[reshard.Plan], without_native: bool
) -> list[list[dict[str, Any]]]:
    """Each rank's lines; `without_native`: the ranks run without the native
    module, from plan JSON that carries the programs."""
    cases = tmp / f"cases-{world}.json"
    texts = [with_programs(p) if without_native else p.to_json() for p in plans]
    cases.write_text(
        json.dumps(
            [
                {"id": i, "plan": t, **({"ranks": PERMUTED[world]} if i % 2 else {})}
                for i, t in enumerate(texts)
            ]
        )
    )
    args = [f"--store={tmp / f'store-{world}'}", f"--cases={cases}"]
    args += ["--without-native"] if without_native else []
    outputs = run_ranks(RANK_SCRIPT, world, args, RANKS_TIMEOUT_S)
    return [[json.loads(line) for line in out.splitlines()] for out in outputs]


def test_random_plans_on_4_and_8_gloo_ranks(tmp_path: Path) -> None:
    rng = random.Random(2026)
    checked = merged = ordered = 0
    kinds: set[str] = set()
    for world in (4, 8):
        plans = random_plans(world, rng)
        results = rank_results(tmp_path, world, plans, without_native=world == 4)
        theirs = executor_checksums(tmp_path, world, plans)
        for r, lines in enumerate(results):
            assert len(lines) == len(plans), (world, r, len(lines))
            for line, plan, checksums in zip(lines, plans, theirs, strict=True):
                assert line["ok"], (world, r, plan.to_json())
                assert line["checksum"] == checksums[line["position"]], (
                    r,
                    plan.to_json(),
                )
        for plan in plans:
            kinds |= {s.op for s in plan.steps}
            merged += any(
                s.is_communicating(plan.mesh) and len(s.mesh_dims) >= 2
                for s in plan.steps
            )
            ordered += "[" in plan.src or "[" in plan.dst
        checked += len(plans)
    assert checked >= 200 and merged >= 20 and ordered >= 50, (checked, merged, ordered)
    assert {"all_gather", "all_reduce", "reduce_scatter", "all_to_all"} <= kinds, kinds
