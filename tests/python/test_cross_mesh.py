"""Cross-mesh plans from Python (docs/DESIGN.md §9): in-process and through
reshard.Client on a real planner, each equal to `reshardctl plan --src_mesh
... --json` (planning time aside), read back from its JSON, and refused
with the field named."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import reshard
from reshard.client import Client
from reshard_processes import ctl, planner

SRC = reshard.Mesh((4, 2), ("A", "B"), rank_map=tuple(range(8)))
DST = reshard.Mesh((2, 4), ("X", "Y"), rank_map=tuple(range(8, 16)))
OVERLAP = reshard.Mesh((2, 2), ("P", "Q"), rank_map=(6, 7, 8, 9))
# (source mesh, destination mesh, shape, src, dst, unavailable ranks)
CASES = [
    (SRC, DST, [16, 16], "S(0),R", "R,S(1)", []),
    (SRC, OVERLAP, [9, 7], "S(1),P(sum)", "S(0),P(avg)", []),
    (DST, SRC, [5, 3, 2], "S(2),R", "R,S(0)", [8, 13]),
    (OVERLAP, DST, [8], "R,R", "S(0),R", [6, 9]),
]


def ctl_args(src_mesh: reshard.Mesh, dst_mesh: reshard.Mesh) -> list[str]:
    def side(name: str, mesh: reshard.Mesh) -> list[str]:
        dims = ",".join(
            f"{n}={s}" for n, s in zip(mesh.dim_names, mesh.shape, strict=True)
        )
        ranks = ",".join(str(r) for r in mesh.rank_map)
        return [f"--{name}_mesh", dims, f"--{name}_ranks", ranks]

    return ["plan", "--offline", *side("src", src_mesh), *side("dst", dst_mesh)]


def without_timing(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != "planning_us"}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    with planner(tmp_path_factory.mktemp("planner")) as address:
        yield Client(address)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[3]}->{c[4]}")
def test_every_entry_point_gives_reshardctls_plan(client: Client, case: Any) -> None:
    src_mesh, dst_mesh, shape, src, dst, unavailable = case
    args = ctl_args(src_mesh, dst_mesh)
    args += ["--shape", ",".join(map(str, shape)), "--from", src, "--to", dst]
    if unavailable:
        args += ["--unavailable_ranks", ",".join(map(str, unavailable))]
    printed = ctl(*args, "--json")
    assert printed.returncode == 0, printed.stderr
    theirs = json.loads(printed.stdout)
    ours = reshard.plan_cross_mesh(
        src_mesh, dst_mesh, shape, src, dst, unavailable_ranks=unavailable
    )
    served = client.plan_cross_mesh(
        src_mesh, dst_mesh, shape, src, dst, unavailable_ranks=unavailable
    )
    assert without_timing(ours.to_dict()) == without_timing(theirs)
    assert without_timing(json.loads(served.to_json())) == without_timing(theirs)
    assert served == ours == reshard.CrossMeshPlan.from_json(printed.stdout)
    assert reshard.CrossMeshPlan.from_json(ours.to_json()) == ours


def test_the_plan_as_values() -> None:
    plan = reshard.plan_cross_mesh(SRC, DST, [16, 16], "S(0),R", "R,S(1)")
    assert plan.src_mid == "S(0),R" and not plan.pre_steps
    assert len(plan.transfers) == 32
    assert {t.from_ for t in plan.transfers} == set(range(8))
    assert plan.bytes_by_rank.max_send == plan.bytes_by_rank.mean_send == 256
    assert plan.sender_rule == "least_loaded_holder"
    assert len(plan.layout_digest) == 16


def test_refusals_name_the_field(client: Client, tmp_path: Path) -> None:
    for plan in (reshard.plan_cross_mesh, client.plan_cross_mesh):
        with pytest.raises(reshard.Error) as e:
            plan(SRC, DST, [16, 16], "S(0),R", "R,P(max)")
        assert e.value.code == reshard.StatusCode.INVALID_ARGUMENT
        assert e.value.message.startswith("dst[1]: P(max) cannot be a cross-mesh")
        with pytest.raises(reshard.Error) as e:
            plan(SRC, DST, [16, 16], "S(0),R", "R,S(1)", unavailable_ranks=[0, 1])
        assert e.value.code == reshard.StatusCode.FAILED_PRECONDITION
        assert "held only by unavailable ranks 0, 1" in e.value.message
    with pytest.raises(reshard.Error) as e:
        reshard.CrossMeshPlan.from_json('{"kind": "plan"}')
    assert e.value.code == reshard.StatusCode.INVALID_ARGUMENT


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[3]}->{c[4]}")
def test_the_service_compiles_every_ranks_program_as_in_process(
    client: Client, case: Any
) -> None:
    from reshard._inprocess import plan_cross_program

    src_mesh, dst_mesh, shape, src, dst, unavailable = case
    ranks = sorted(set(src_mesh.rank_map) | set(dst_mesh.rank_map))
    for rank in ranks:
        args = (src_mesh, dst_mesh, shape, src, dst, "float32", rank, unavailable)
        plan, served = client.plan_cross_program(*args)
        _, ours = plan_cross_program(*args)
        assert served == ours, rank
        assert served["rank"] == rank and served["kind"] == "cross_mesh"
        assert (served["source"] is not None) == (rank in src_mesh.rank_map)
        assert served["layout_digest"] == plan.layout_digest
    with pytest.raises(reshard.Error) as e:
        client.plan_cross_program(src_mesh, dst_mesh, shape, src, dst, "float32", 99)
    assert e.value.code == reshard.StatusCode.INVALID_ARGUMENT
    assert "program_rank: rank 99 is in neither mesh of the plan" in str(e.value)
