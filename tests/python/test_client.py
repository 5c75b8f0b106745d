"""reshard.Client against real reshard-planner processes: every Planner
RPC with its errors (code and message), 500 random plans equal to
`reshardctl plan --json` over gRPC, and failover between two servers."""

from __future__ import annotations

import json
import os
import random
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
import reshard
from reshard.client import Client
from reshard_processes import (
    ctl,
    ctl_plan_args,
    planner,
    random_request,
    text_without_timing,
    wait_until,
    without_timing,
)

ADMIN = "py-admin-token-0123456789"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("planner")
    (tmp / "admin").write_text(ADMIN)
    with planner(tmp, "--admin_token_file", str(tmp / "admin")) as address:
        yield address


MESH = reshard.Mesh.from_text("A=2,B=2,C=2", ["A,C"])


def test_meshes_register_list_get_delete(server: str) -> None:
    client = Client(server)
    mesh_id = client.register_mesh(MESH)
    assert client.register_mesh(MESH) == mesh_id  # content-addressed
    assert client.get_mesh(mesh_id) == MESH
    assert (mesh_id, MESH) in client.list_meshes()
    with pytest.raises(reshard.Error) as e:
        client.delete_mesh(mesh_id)
    assert e.value.code == reshard.StatusCode.UNAUTHENTICATED, e.value
    assert "admin token" in e.value.message
    Client(server, admin_token=ADMIN).delete_mesh(mesh_id)
    with pytest.raises(reshard.Error) as e:
        client.get_mesh(mesh_id)
    assert e.value.code == reshard.StatusCode.NOT_FOUND
    assert mesh_id in e.value.message


def test_plan_inline_and_registered_and_errors(server: str) -> None:
    client = Client(server)
    inline = client.plan(MESH, [16, 16], "P(sum),R,P(sum)", "R,R,R")
    assert [s.op for s in inline.steps] == ["all_reduce"] and inline.steps[
        0
    ].group == "A_C"
    mesh_id = client.register_mesh(MESH)
    registered = client.plan(mesh_id, [16, 16], "P(sum),R,P(sum)", "R,R,R")
    assert registered.steps == inline.steps and registered.mesh == MESH
    assert (
        inline.summary()
        == reshard.plan(MESH, [16, 16], "P(sum),R,P(sum)", "R,R,R").summary()
    )
    with pytest.raises(reshard.Error) as e:
        client.plan(MESH, [16, 16], "S(5),R,R", "R,R,R")
    assert e.value.code == reshard.StatusCode.INVALID_ARGUMENT
    assert e.value.message.startswith("src[0]:"), e.value.message
    with pytest.raises(reshard.Error) as e:
        client.plan("no-such-mesh", [16], "R,R,R", "R,R,R")
    assert e.value.code == reshard.StatusCode.NOT_FOUND
    assert "Client.list_meshes()" in e.value.message


def test_plan_batch_and_resolve_groups_and_health(server: str) -> None:
    client = Client(server)
    items = [
        reshard.PlanItem((64, 32), "S(0),S(1),R", "R,R,R", name="w1"),
        reshard.PlanItem((8,), "S(3),R,R", "R,R,R", name="bad"),
    ]
    batch = client.plan_batch(MESH, items)
    local = reshard.plan_batch(MESH, items)
    assert isinstance(batch.plans[1], reshard.Error)
    assert batch.plans[1].message == local.plans[1].message
    assert without_timing(batch.plans[0].to_dict()) == without_timing(
        local.plans[0].to_dict()
    )
    assert batch.buckets == local.buckets
    assert batch.collectives_after == local.collectives_after
    groups = {g.name: g for g in client.resolve_groups(MESH, 5)}
    assert groups["A"].ranks == (1, 5) and groups["A"].index == 1
    assert groups["A_C"].ranks == (0, 1, 4, 5) and groups["A_C"].index == 3
    client.health()


def test_unreachable_server_is_unavailable_within_the_deadline() -> None:
    client = Client("127.0.0.1:1", deadline=1.0)
    with pytest.raises(reshard.Error) as e:
        client.health()
    assert e.value.code == reshard.StatusCode.UNAVAILABLE


def test_random_requests_equal_reshardctl_over_grpc(server: str) -> None:
    client = Client(server)
    rng = random.Random(56)
    planned = 0
    for _ in range(520):
        r = random_request(rng)
        out = ctl("--server", server, *ctl_plan_args(r))
        line = out.stdout.strip().splitlines()[-1]
        theirs = json.loads(line)
        mesh = reshard.Mesh.from_text(r["mesh"], r["flatten"])
        try:
            ours = client.plan(
                mesh,
                r["shape"],
                r["src"],
                r["dst"],
                dtype=r["dtype"],
                planner=r["planner"],
            )
        except reshard.Error as e:
            assert (theirs["error"]["code"], theirs["error"]["message"]) == (
                e.code.name,
                e.message,
            ), r
            continue
        assert text_without_timing(ours.to_json()) == text_without_timing(line), r
        planned += 1
    assert planned >= 480, planned


def test_failover_reregisters_meshes_and_names_a_down_replica(tmp_path: Path) -> None:
    with planner(tmp_path, name="a") as a, planner(tmp_path, name="b") as b:
        both = Client([a, b], timeout=2.0)
        mesh_id = both.register_mesh(MESH)
        holder = a if _has_mesh(a, mesh_id) else b
        other = b if holder == a else a
        assert not _has_mesh(other, mesh_id)
        job_on_holder = next(
            f"job-{i}" for i in range(100) if both.replica_for(f"job-{i}") == holder
        )
        before = both.plan(mesh_id, [16, 16], "S(0),R,S(1)", "R,R,R")
        _kill(tmp_path, holder)
        for _ in range(6):  # round-robin passes the dead one; every call succeeds
            after = both.plan(mesh_id, [16, 16], "S(0),R,S(1)", "R,R,R")
            assert after.steps == before.steps
        assert _has_mesh(other, mesh_id)  # registered again on the survivor
        with pytest.raises(reshard.Error) as e:
            both.get_job(job_on_holder)
        assert e.value.code == reshard.StatusCode.UNAVAILABLE
        assert e.value.message.startswith(f"replica {holder}: "), e.value.message


def _has_mesh(server: str, mesh_id: str) -> bool:
    try:
        Client(server).get_mesh(mesh_id)
        return True
    except reshard.Error as e:
        assert e.code == reshard.StatusCode.NOT_FOUND, e
        return False


def _kill(tmp: Path, server: str) -> None:
    # The planner fixture logs its PID nowhere: find it by the port it owns.
    port = server.rsplit(":", 1)[1]
    for name in ("a", "b"):
        if (tmp / f"{name}.port").read_text().strip() == port:
            pid = int((tmp / f"{name}.pid").read_text())
            os.kill(pid, signal.SIGKILL)
            gone = Path(f"/proc/{pid}")
            wait_until(lambda: not gone.exists() or _zombie(pid), 10, "exit")  # noqa: B023
            return
    raise AssertionError(f"no planner on {server}")


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] in "ZX"
    except OSError:
        return True


def test_plan_program_is_the_executors_rank_program(server: str) -> None:
    """Client.plan_program: the service compiles the rank program that the
    native module compiles from the same plan (docs/PLAN_JSON.md, "Rank
    programs"); a position outside the mesh is refused naming the field."""
    from reshard._inprocess import native

    client = Client(server)
    mesh = reshard.Mesh.from_text("A=2,B=2,C=2", ["A,C"])
    shape, src, dst = (9, 13), "S(0),P(sum),S(1)", "R,S(1),S(0)"
    plan, program = client.plan_program(mesh, shape, src, dst, "bfloat16", 6)
    assert program == json.loads(native().rank_program(plan.to_json(), 6))
    assert program["position"] == 6 and program["steps"], program
    assert plan == reshard.plan(mesh, shape, src, dst, "bfloat16")
    with pytest.raises(reshard.Error) as e:
        client.plan_program(mesh, shape, src, dst, "bfloat16", 8)
    assert e.value.code == reshard.StatusCode.INVALID_ARGUMENT
    assert e.value.message == (
        "program_position: 8 is not -1 (every rank's) or a position of the 8-rank mesh"
    )
