"""`python -m reshard` against reshardctl: the same arguments give the same
exit status, stdout and stderr (the program's name aside), on a real
planner and on a local cluster of real agents over mutual TLS with a job
token; what a run measures is masked. Ctrl-C stops a `job run` (exit 130)."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import reshard
from reshard.cli import main
from reshard.client import Client
from reshard_processes import (
    cluster,
    ctl,
    ctl_plan_args,
    planner,
    random_request,
    tls_files,
    wait_until,
    without_imports,
)

ADMIN = "cli-admin-token-0123456789"
PLAN = [
    "--mesh",
    "A=2,B=2,C=2",
    "--flatten",
    "A,C",
    "--shape",
    "16,16",
    "--from",
    "P(sum),R,P(sum)",
    "--to",
    "R,R,R",
]
TINY = ["--shape", "4", "--from", "R", "--to", "R"]
_PROG = re.compile(
    r"^(?:reshardctl|reshard): |`(?:reshardctl|python -m reshard) ", re.M
)
_TIMING = re.compile(r'"planning_us":[^,]*,|,"cache_hit":(?:true|false)')


def normalized(text: str) -> str:
    """`text` with the program's name, and the two fields that differ
    between two plannings of one request, taken out."""
    text = _PROG.sub(
        lambda m: "PROG: " if m.group(0).endswith(": ") else "`PROG ", text
    )
    return _TIMING.sub("", text)


def py(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reshard", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def same(
    *args: str,
    env: dict[str, str] | None = None,
    mask: Callable[[str], str] = normalized,
) -> subprocess.CompletedProcess[str]:
    """Runs both programs; asserts they agree; returns ours."""
    theirs, ours = ctl(*args, env=env), py(*args, env=env)
    what = (args, ours.stderr, theirs.stderr)
    assert ours.returncode == theirs.returncode, what
    assert mask(ours.stdout) == mask(theirs.stdout), what
    assert mask(ours.stderr) == mask(theirs.stderr), what
    return ours


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("cli")
    (tmp / "admin").write_text(ADMIN + "\n")
    with planner(tmp, "--admin_token_file", str(tmp / "admin")) as address:
        yield address


def test_plans_and_their_errors(server: str) -> None:
    s = ["--server", server]
    ok = [
        ["plan", *PLAN],
        ["plan", *PLAN, "--json"],
        ["plan", *PLAN, "--planner", "torch_greedy", "--merge"],
        [
            "plan",
            "--offline",
            *PLAN,
            "--link",
            "A=100:1.5",
            "--link",
            "A,C=1:default:3",
        ],
        ["plan", "--offline", *PLAN, "--planner=torch_graph", "--cost_model", "torch"],
        ["plan", *PLAN, "--max_peak_bytes", "4KiB", "--search_budget", "3", "--json"],
        ["plan", *PLAN, "--flatten_policy", "none", "--devices_per_host", "2"],
    ]
    bad = [
        ["plan", *PLAN, "--plannr", "optimal"],
        ["plan", *PLAN, "--json=1"],
        ["plan", *PLAN, "stray"],
        ["plan", *PLAN, "--dtype"],
        ["plan", "--mesh", "A=2,B=x", *PLAN[2:]],
        ["plan", *PLAN, "--shape", "16,a"],
        ["plan", *PLAN, "--dtype", "f17", "--json"],
        ["plan", *PLAN, "--max_peak_bytes", "1XiB"],
        ["plan", *PLAN[:-2]],
        ["plan", "--shape", "4", "--from", "R", "--to", "R"],
        ["plan", *PLAN, "--link", "A=fast"],
        ["plan", *PLAN, "--link", "Q=1:1"],
        ["plan", *PLAN, "--copy_gbps", "x"],
        ["plan", *PLAN, "--planner", "best"],
        ["plan", *PLAN, "--cost_model", "exact"],
        ["plan", *PLAN, "--flatten_policy", "all"],
        ["plan", *PLAN, "--devices_per_host", "many"],
        ["plan", *PLAN[:-4], "--from", "S(2),R,R", "--to", "R,R,R", "--json"],
        ["plan", "--mesh", "A=2,A=2", "--shape", "4", "--from", "R,R", "--to", "R,R"],
        ["plan", "--offline", "--mesh_id", "m", *TINY],
        ["plan", "--mesh_id", "m", "--mesh", "A=2", "--shape", "4"],
        ["plan", "--mesh_id", "mesh-0", "--shape", "4", "--from", "R", "--to", "R"],
    ]
    for args in ok:
        assert same(*s, *args).returncode == 0, args
    for args in bad:
        assert same(*s, *args).returncode in (2, 3), args


def test_the_mesh_registry(server: str) -> None:
    s = ["--server", server]
    mesh = ["--mesh", "A=2,B=4", "--flatten", "A,B", "--link", "B=50:2"]
    mesh += ["--link", "A,B=default:9:30", "--copy_gbps", "100000", "--base_us", "3"]
    mesh_id = same(*s, "mesh", "register", *mesh).stdout.strip()
    assert mesh_id.startswith("mesh-")
    for args in (
        ["list"],
        ["list", "--json"],
        ["get", mesh_id],
        ["get", mesh_id, "--json"],
        ["get"],
        ["get", "mesh-0"],
        ["frob"],
        ["register", "--mesh", "A=0"],
        ["delete", mesh_id],  # no admin token
    ):
        same(*s, "mesh", *args)
    plan = ["--shape", "16,8", "--from", "S(0),S(1)", "--to", "R,R"]
    assert same(*s, "plan", "--mesh_id", mesh_id, *plan).returncode == 0
    same(*s, "plan", "--mesh_id", mesh_id, *plan, "--json")
    admin = dict(os.environ, RESHARD_ADMIN_TOKEN=ADMIN)
    theirs = ctl(*s, "mesh", "delete", mesh_id, "--json", env=admin)
    ctl(*s, "mesh", "register", *mesh)
    ours = py(*s, "mesh", "delete", mesh_id, "--json", env=admin)
    assert (ours.returncode, ours.stdout) == (0, theirs.stdout), ours.stderr
    assert json.loads(ours.stdout) == {"deleted": mesh_id}


def test_health_usage_and_global_flags(server: str, tmp_path: Path) -> None:
    s = ["--server", server]
    (tmp_path / "empty").write_text("\n")
    (tmp_path / "bad").write_bytes(b"tok\x01en")
    for args in (
        [*s, "health"],
        [*s, "health", "--json"],
        [*s, "job", "list"],
        [*s, "job", "list", "--json"],
        [*s, "job", "show", "nojob", "--json"],
        [*s, "job", "cancel", "nojob"],
        [*s, "job", "show"],
        [*s, "--deadline_seconds", "0", "health"],
        [*s, "plan", *PLAN, "--json", "--deadline_seconds=x"],
        ["--server", ":7", "health"],
        ["--server", server, "--server"],
        [*s, "--job_token_file", str(tmp_path / "none"), "job", "list"],
        [*s, "--job_token_file", str(tmp_path / "empty"), "job", "list"],
        [*s, "--admin_token_file", str(tmp_path / "bad"), "job", "list"],
        [*s, "--admin_token_file", str(tmp_path), "job", "list"],
        [*s, "--tls_cert", "c.pem", "health"],
    ):
        same(*args)
    env = dict(os.environ, RESHARD_SERVER="a,,b")
    same("health", env=env)
    env = dict(os.environ, RESHARD_SERVER=server, RESHARD_JOB_TOKEN="t\x7f")
    same("job", "list", env=env)
    calibrate = py(*s, "job", "calibrate", "j")
    assert calibrate.returncode == 2, calibrate.stderr
    assert "calibrate and token are reshardctl's" in calibrate.stderr
    # The usage texts and the lists of commands are each program's own.
    unknown = py(*s, "frob")
    assert unknown.returncode == 2 and unknown.stderr.startswith("usage: python -m")
    assert 'unknown command "frob"' in unknown.stderr.splitlines()[-1]
    down = py("--server", "127.0.0.1:1", "--deadline_seconds", "1", "health")
    assert down.returncode == 4 and "UNAVAILABLE" in down.stderr, down.stderr
    assert py().returncode == 2 and "usage:" in py().stderr
    assert py("--help").returncode == 0 and "plan" in py("--help").stdout
    for command in ("plan", "mesh", "job", "health"):
        usage = py(command, "--help")
        assert usage.returncode == 0 and usage.stdout.startswith("usage:"), command
    assert py("--version").stdout == f"reshard {reshard.__version__}\n"


WITHOUT_GRPC = without_imports(
    ("grpc", "google"),
    """
from reshard.cli import main
sys.exit(main(sys.argv[1:]))
""",
)


def test_without_grpcio_offline_plans_and_the_rest_says_why() -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", WITHOUT_GRPC, *args],
            capture_output=True,
            text=True,
            timeout=60,
        )

    offline = run("plan", "--offline", *PLAN, "--json")
    theirs = ctl("plan", "--offline", *PLAN, "--json")
    assert offline.returncode == 0, offline.stderr
    assert normalized(offline.stdout) == normalized(theirs.stdout)
    online = run("--server", "127.0.0.1:1", "health")
    assert online.returncode == 5, online.stderr
    assert online.stderr.startswith(
        "reshard: FAILED_PRECONDITION: reshard.Client needs grpcio and protobuf"
    ), online.stderr


def test_random_requests_print_what_reshardctl_prints(
    server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(57)
    planned = 0
    for i in range(150):
        r = random_request(rng)
        args = ctl_plan_args(r)
        if i % 2:
            args = args[:-1]  # the table
        args += ["--offline"] if i % 3 == 0 else ["--server", server]
        theirs = ctl(*args)
        code = main(args)
        out, err = capsys.readouterr()
        assert code == theirs.returncode, (args, err, theirs.stderr)
        assert normalized(out) == normalized(theirs.stdout), args
        assert normalized(err) == normalized(theirs.stderr), args
        planned += code == 0
    assert planned >= 120, planned


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with cluster(tmp_path_factory.mktemp("clijobs"), 4, "clijob", "--tls") as c:
        files = tls_files(c)
        c["flags"] = ["--server", c["server"]]
        for name, path in files.items():
            c["flags"] += [f"--{name}", path]
        c["token"] = ["--job_token_file", str(c["dir"] / "job-token")]
        c["client"] = Client(c["server"], **files, job_token=c["job_token"])
        yield c


_MEASURED = re.compile(r" *\d+\.\d+| run [0-9a-f]+-\d+")


def measured_masked(text: str) -> str:
    """A run's table without what it measured, and without its run id."""
    return _MEASURED.sub(" N", normalized(text))


# What a run measures (and a plan's planning time and cache hit).
_MEASURED_KEYS = {
    "seconds_min",
    "seconds_median",
    "slowest_median_seconds",
    "local_seconds_median",
    "algbw_gbps",
    "busbw_gbps",
    "wall_seconds",
    "planning_us",
    "cache_hit",
}


def _json_masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: None if k in _MEASURED_KEYS else _json_masked(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_json_masked(v) for v in value]
    return value


def run_json_masked(text: str) -> str:
    return json.dumps(_json_masked(json.loads(text))) if text else ""


def test_job_calls_over_tls(tls_cluster: dict[str, Any], tmp_path: Path) -> None:
    g, token = tls_cluster["flags"], tls_cluster["token"]
    request = ["--mesh", "A=2,B=2", "--shape", "16,8", "--from", "S(0),S(1)"]
    request += ["--to", "R,R", "--iters", "2"]
    table = same(*g, *token, "job", "run", "clijob", *request, mask=measured_masked)
    assert "validated: yes" in table.stdout and table.returncode == 0
    run = same(
        *g, *token, "job", "run", "clijob", *request, "--json", mask=run_json_masked
    )
    assert json.loads(run.stdout)["checksums"] == [3094] * 4
    plan_file = tmp_path / "plan.json"
    plan = ctl("plan", "--offline", *request[:-2], "--json")
    plan_file.write_text(plan.stdout)
    same(
        *g,
        *token,
        "job",
        "run",
        "clijob",
        "--plan",
        str(plan_file),
        mask=measured_masked,
    )
    admin = ["--admin_token_file", str(tls_cluster["dir"] / "admin-token")]
    for args in (
        ["job", "list"],
        [*token, "job", "list"],
        [*admin, "job", "list", "--json"],
        [*token, "job", "show", "clijob"],
        [*token, "job", "show", "clijob", "--json"],
        ["job", "show", "clijob"],  # no token: not found
        [*token, "job", "cancel", "clijob"],
        [*token, "job", "run", "clijob", "--plan", str(plan_file), "--mesh", "A=2"],
        [*token, "job", "run", "clijob", "--plan", str(tmp_path / "none")],
        [*token, "job", "run", "clijob", "--iters", "0", "--mesh", "A=2"],
        [*token, "job", "run", "clijob"],
        [*token, "job", "run", "clijob", *request, "--agent_wait_seconds", "-1"],
        ["--deadline_seconds", "3", "job", "run", "nojob", *request],
        ["mesh", "delete", "mesh-0"],
    ):
        same(*g, *args)
    # Plaintext to a TLS server fails, as reshardctl's does.
    plain = py("--server", tls_cluster["server"], "--deadline_seconds", "2", "health")
    assert plain.returncode == 4, plain.stderr


def test_ctrl_c_stops_a_job_run(tls_cluster: dict[str, Any]) -> None:
    g, token = tls_cluster["flags"], tls_cluster["token"]
    client: Client = tls_cluster["client"]
    request = ["--mesh", "A=2,B=2", "--shape", "512,512", "--from", "S(0),S(1)"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "reshard", *g, *token, "job", "run", "clijob"]
        + [*request, "--to", "S(1),S(0)", "--iters", "100000", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: client.get_job("clijob").current_run, 30, "the run")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "interrupted; stopping the run" in err
    assert "reshard: CANCELLED: interrupted after " in err
    result = json.loads(out)
    assert result["interrupted"] is True and result["validated"] is False
    assert result["checksums"] == [] and result["executions_completed"] >= 0
    assert client.get_job("clijob").current_run == ""


def test_a_lost_rank_is_waited_for_then_named(tls_cluster: dict[str, Any]) -> None:
    """Last in the module: it kills rank 3's agent."""
    g, token = tls_cluster["flags"], tls_cluster["token"]
    client: Client = tls_cluster["client"]
    lines = (tls_cluster["dir"] / "pids").read_text().splitlines()
    [pid] = [int(line.split()[0]) for line in lines if line.endswith("reshard-agent 3")]
    os.kill(pid, signal.SIGKILL)
    wait_until(
        lambda: not client.get_job("clijob").agents[3].connected, 30, "rank 3 gone"
    )
    request = ["--mesh", "A=2,B=2", "--shape", "8", "--from", "R,R", "--to", "S(0),R"]
    ran = py(*g, *token, "job", "run", "clijob", *request, "--agent_wait_seconds", "8")
    assert ran.returncode == 4, ran.stderr
    err = ran.stderr.splitlines()
    assert "job clijob: waiting for rank 3 (not connected)" in err, err
    assert err[-2].startswith("reshard: UNAVAILABLE: ") and "rank 3" in err[-2], err
    assert re.fullmatch(
        r"  rank 3 on \S+: lost: its agent's dispatch stream .*", err[-1]
    )
