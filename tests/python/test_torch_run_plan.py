"""reshard.torch.run_plan on real torch.distributed Gloo CPU ranks (separate,
long-lived processes; 4 and 8 ranks): random plans (uneven shapes, shard
orders, every Partial op, merged groups, every dtype) end with every
element equal to the data rule, and with §6.2's checksums, which equal
Reshard's own executor's (`reshardctl exec`) on a sample."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import reshard
from data_rule import checksum, linear_index, source_value
from reshard.torch.layout import State, box, coordinate
from reshard_processes import ctl
from torch_cases import mesh_of, random_request
from torch_ranks import run_ranks

RANK_SCRIPT = Path(__file__).with_name("torch_plan_rank.py")
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


def expected_checksum(plan: reshard.Plan, r: int) -> int:
    sizes = tuple(plan.mesh.shape)
    b = box(plan.shape, State.parse(plan.dst), sizes, coordinate(r, sizes))
    return checksum(source_value(linear_index(plan.shape, b)))


def rank_results(
    tmp: Path, world: int, plans: list[reshard.Plan]
) -> list[list[dict[str, Any]]]:
    cases = tmp / f"cases-{world}.json"
    cases.write_text(
        json.dumps([{"id": i, "plan": p.to_json()} for i, p in enumerate(plans)])
    )
    args = [f"--store={tmp / f'store-{world}'}", f"--cases={cases}"]
    outputs = run_ranks(RANK_SCRIPT, world, args, RANKS_TIMEOUT_S)
    return [[json.loads(line) for line in out.splitlines()] for out in outputs]


def test_random_plans_on_4_and_8_gloo_ranks(tmp_path: Path) -> None:
    rng = random.Random(2026)
    checked = merged = ordered = 0
    kinds: set[str] = set()
    for world in (4, 8):
        plans = random_plans(world, rng)
        results = rank_results(tmp_path, world, plans)
        for r, lines in enumerate(results):
            assert len(lines) == len(plans), (world, r, len(lines))
            for line, plan in zip(lines, plans, strict=True):
                assert line["ok"], (world, r, plan.to_json())
                assert line["checksum"] == expected_checksum(plan, r), (
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
        # Reshard's own executor reports the same checksums.
        for i, plan in enumerate(plans[:6]):
            path = tmp_path / f"plan-{world}-{i}.json"
            path.write_text(plan.to_json())
            ran = ctl(
                "exec", "--local", str(world), "--plan", str(path), "--json",
                "--iters", "1", "--warmup", "0",
            )  # fmt: skip
            assert ran.returncode == 0, ran.stderr
            theirs = json.loads(ran.stdout)["checksums"]
            assert theirs == [lines[i]["checksum"] for lines in results], plan.to_json()
    assert checked >= 200 and merged >= 20 and ordered >= 50, (checked, merged, ordered)
    assert {"all_gather", "all_reduce", "reduce_scatter", "all_to_all"} <= kinds, kinds
