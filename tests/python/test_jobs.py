"""The job calls from Python (RunJob, ListJobs, GetJob, CancelJob) against a
local cluster of real agents, over mutual TLS with issued job tokens:
results, errors (code and message) and per-rank failures."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import reshard
from reshard.client import Client
from reshard_processes import cluster, tls_files, wait_until

MESH = reshard.Mesh.from_text("A=2,B=2")


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with cluster(tmp_path_factory.mktemp("jobs"), 4, "pyjob", "--tls") as c:
        c["client"] = Client(c["server"], **tls_files(c), job_token=c["job_token"])
        yield c


def test_list_and_get_job(tls_cluster: dict[str, Any]) -> None:
    client: Client = tls_cluster["client"]
    jobs = {j.name: j for j in client.list_jobs()}
    assert jobs["pyjob"].world_size == 4 and jobs["pyjob"].backend == "gloo"
    job = client.get_job("pyjob")
    assert job.state == "ready" and [a.rank for a in job.agents] == [0, 1, 2, 3]
    assert all(a.connected for a in job.agents) and job.agents_connected == 4


def test_run_a_request_and_a_given_plan(tls_cluster: dict[str, Any]) -> None:
    client: Client = tls_cluster["client"]
    run = client.run_job(
        "pyjob", MESH, shape=[16, 8], src="S(0),S(1)", dst="R,R", iters=2
    )
    assert run.validated, run.validation_error
    assert run.backend == "gloo" and run.iters == 2 and len(run.ranks) == 4
    assert run.plan is not None and [s.op for s in run.plan.steps] == [
        r.op for r in run.steps
    ]
    assert all(r.code == 0 for r in run.ranks)
    assert len(run.tensors) == 1 and len(run.tensors[0].checksums) == 4
    given = reshard.plan(MESH, [12, 6], "P(sum),S(0)", "S(1),R")
    run = client.run_job("pyjob", MESH, given, iters=1, warmup=0)
    assert run.validated and run.plan is not None
    assert run.plan.steps == given.steps
    assert client.get_job("pyjob").runs_total >= 2


def test_job_errors(tls_cluster: dict[str, Any]) -> None:
    client: Client = tls_cluster["client"]
    with pytest.raises(reshard.Error) as e:
        client.get_job("no-such-job")
    assert e.value.code == reshard.StatusCode.NOT_FOUND
    assert '"no-such-job"' in e.value.message
    assert client.cancel_job("pyjob") == ""  # nothing running
    stranger = Client(tls_cluster["server"], **tls_files(tls_cluster), job_token="")
    with pytest.raises(reshard.Error) as e:
        stranger.run_job("pyjob", MESH, shape=[8], src="R,R", dst="S(0),R")
    assert e.value.code in (
        reshard.StatusCode.PERMISSION_DENIED,
        reshard.StatusCode.NOT_FOUND,
    )
    assert "pyjob" in e.value.message
    plaintext = Client(
        tls_cluster["server"], deadline=2.0, job_token=tls_cluster["job_token"]
    )
    with pytest.raises(reshard.Error) as e:
        plaintext.get_job("pyjob")
    assert e.value.code == reshard.StatusCode.UNAVAILABLE


def test_cancel_a_running_run(tls_cluster: dict[str, Any]) -> None:
    client: Client = tls_cluster["client"]
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["run"] = client.run_job(
                "pyjob",
                MESH,
                shape=[256, 256],
                src="S(0),S(1)",
                dst="S(1),S(0)",
                iters=100000,
            )
        except reshard.Error as e:
            result["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    wait_until(lambda: client.get_job("pyjob").current_run, 30, "the run to start")
    run_id = client.cancel_job("pyjob")
    thread.join(60)
    assert run_id and not thread.is_alive()
    assert result["error"].code == reshard.StatusCode.CANCELLED, result
    assert run_id in result["error"].message or "cancel" in result["error"].message


def test_a_lost_rank_is_named_in_the_error(tls_cluster: dict[str, Any]) -> None:
    client: Client = tls_cluster["client"]
    pids = (tls_cluster["dir"] / "pids").read_text().split("\n")
    lost = int(pids[-2].split()[0] if pids[-1] == "" else pids[-1].split()[0])
    os.kill(lost, signal.SIGKILL)
    wait_until(
        lambda: not client.get_job("pyjob").agents[3].connected, 30, "rank 3 gone"
    )
    with pytest.raises(reshard.Error) as e:
        client.run_job(
            "pyjob", MESH, shape=[8], src="R,R", dst="S(0),R", agent_wait_seconds=2
        )
    assert e.value.code == reshard.StatusCode.UNAVAILABLE
    assert "rank 3" in e.value.message
    assert [(r.rank, r.kind) for r in e.value.ranks] == [(3, "lost")]
    assert e.value.ranks[0].host and e.value.ranks[0].message.startswith(
        "its agent's dispatch stream closed"
    )
