"""reshard.torch cross-mesh moves (CrossMeshMove) on 8 real Gloo CPU ranks
in one torch world (separate, long-lived processes): >= 200 random tensor
moves in state dicts of three, disjoint (a 4-rank mesh on ranks 0-3 to one
on ranks 4-7, both rank maps shuffled) and colocated (8 ranks to the same
8 permuted), uneven shapes, shard orders (strided shards on the torch
side), Partial sources of every op, every dtype. Every destination rank's
result equals its block of the full tensor element for element, on the
first run and on a second run written in place into the caller's tensors
(a quarter of the cases planned and compiled by a planner service);
a rank outside the destination mesh gets none; and a third run staged
into fresh outputs. A rank given another layout makes every rank refuse
before any data moves, naming it; a source rank gone mid-move makes every
destination rank that needs it raise UNAVAILABLE with its staged outputs
as they were."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import reshard
from reshard_processes import planner
from torch_cases import MESHES, random_state
from torch_ranks import run_cases, run_ranks

RANK_SCRIPT = Path(__file__).with_name("torch_cross_move_rank.py")
CASES = 80
TENSORS_PER_CASE = 3
RANKS_TIMEOUT_S = 400
DTYPES = ["float32", "float64", "bfloat16", "int32", "int64"]


def side(rng: random.Random, world: int, first: int, names: str) -> dict[str, Any]:
    sizes, _ = rng.choice(MESHES[world])
    ranks = list(range(first, first + world))
    rng.shuffle(ranks)
    return {"sizes": list(sizes), "ranks": ranks, "names": names}


def reshard_mesh(s: dict[str, Any]) -> reshard.Mesh:
    names = tuple(s["names"][: len(s["sizes"])])
    return reshard.Mesh(tuple(s["sizes"]), names, rank_map=tuple(s["ranks"]))


def random_tensor(
    rng: random.Random, src: dict[str, Any], dst: dict[str, Any], name: str
) -> dict[str, Any] | None:
    rank = rng.randint(1, 3)
    dst_state = random_state(rng, len(dst["sizes"]), rank)
    if "P" in dst_state:  # destinations are whole blocks here
        return None
    t = {
        "name": name,
        "shape": [rng.randint(1, 11) for _ in range(rank)],
        "dtype": rng.choice(DTYPES),
        "src": random_state(rng, len(src["sizes"]), rank),
        "dst": dst_state,
        "seed": rng.randrange(1000),
    }
    try:  # a Partial mix the planner refuses is no case
        reshard.plan_cross_mesh(
            reshard_mesh(src), reshard_mesh(dst), t["shape"], t["src"], t["dst"],
            t["dtype"])  # fmt: skip
    except reshard.Error:
        return None
    return t


def random_cases(rng: random.Random) -> list[dict[str, Any]]:
    cases = []
    while len(cases) < CASES:
        disjoint = len(cases) % 2 == 0
        src = side(rng, 4 if disjoint else 8, 0, "ABC")
        dst = side(rng, 4 if disjoint else 8, 4 if disjoint else 0, "XYZ")
        tensors: list[dict[str, Any]] = []
        while len(tensors) < TENSORS_PER_CASE:
            t = random_tensor(rng, src, dst, f"layers.{len(tensors)}.weight")
            if t is not None:
                tensors.append(t)
        cases.append({"src_mesh": src, "dst_mesh": dst, "tensors": tensors})
    return cases


def test_random_state_dict_moves_equal_the_full_tensors_blocks(
    tmp_path: Path,
) -> None:
    cases = random_cases(random.Random(20261207))
    with planner(tmp_path) as address:
        for case in cases[3::4]:  # these plan on the service, not natively
            case["planner"] = address
        results = run_cases(RANK_SCRIPT, tmp_path, 8, cases, RANKS_TIMEOUT_S)
    moved = 0
    for i, case in enumerate(cases):
        dst_ranks = set(case["dst_mesh"]["ranks"])
        for rank, lines in enumerate(results):
            verdict = lines[i]
            for t in case["tensors"]:
                want = True if rank in dst_ranks else None
                assert verdict[t["name"]] is want, (rank, case, t, verdict)
        moved += len(case["tensors"])
    assert moved >= 200
    kinds = {("P" in t["src"], "[" in t["src"] or "[" in t["dst"])
             for c in cases for t in c["tensors"]}  # fmt: skip
    assert kinds == {(False, False), (True, False), (False, True), (True, True)}


def test_a_rank_given_another_layout_is_named_before_data_moves(
    tmp_path: Path,
) -> None:
    case = {
        "src_mesh": {"sizes": [2, 2], "ranks": [0, 1, 2, 3], "names": "AB"},
        "dst_mesh": {"sizes": [4], "ranks": [4, 5, 6, 7], "names": "X"},
        "tensors": [
            {
                "name": "w",
                "shape": [8, 4],
                "dtype": "float32",
                "src": "S(0),S(1)",
                "dst": "S(1)",
                "seed": 1,
            }  # fmt: skip
        ],
    }
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([case]))
    outputs = run_ranks(
        RANK_SCRIPT.with_name("torch_cross_move_mismatch_rank.py"),
        8,
        [f"--store={tmp_path / 'store'}", f"--cases={path}"],
        RANKS_TIMEOUT_S,
    )
    for rank, out in enumerate(outputs):
        line = json.loads(out)
        assert line["code"] == "FAILED_PRECONDITION", (rank, line)
        assert "no data was moved" in line["message"], line
        assert (
            f"rank {3 if rank != 3 else 0} moves tensors of another layout"
            in (line["message"])
        ), (rank, line)


def test_a_rank_gone_mid_move_leaves_staged_outputs_as_they_were(
    tmp_path: Path,
) -> None:
    outputs = run_ranks(
        RANK_SCRIPT.with_name("torch_cross_move_fault_rank.py"),
        8,
        [f"--store={tmp_path / 'store'}"],
        RANKS_TIMEOUT_S,
    )
    lines = [json.loads(out) for out in outputs]
    for rank in (4, 5, 6, 7):  # each needs rank 2's block
        raised = lines[rank]["raised"]
        assert raised is not None and raised["code"] == "UNAVAILABLE", lines[rank]
        assert "this rank exchanges with ranks [0, 1, 2, 3]" in raised["message"]
        assert "out is as it was" in raised["message"], raised
        assert lines[rank]["unchanged"], lines[rank]
