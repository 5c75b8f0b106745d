"""Real processes for the package's tests: reshard-planner on 127.0.0.1
port 0 (the port read back from its --port_file) and local clusters of
agents (scripts/local-cluster.sh). Each stops exactly what it started,
even when the test fails."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

BUILD = Path(os.environ.get("RESHARD_BUILD", "build"))
ROOT = Path(__file__).resolve().parents[2]
CTL = BUILD / "client" / "reshardctl"
PLANNER = BUILD / "server" / "reshard-planner"


def wait_until(condition: Any, seconds: float, what: str) -> Any:
    end = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {seconds} s waiting for {what}")
        time.sleep(0.05)


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def planner(tmp: Path, *flags: str, name: str = "planner") -> Iterator[str]:
    """A reshard-planner; yields its 127.0.0.1:PORT."""
    port_file = tmp / f"{name}.port"
    log = open(tmp / f"{name}.log", "wb")
    proc = subprocess.Popen(
        [
            str(PLANNER),
            "--listen",
            "127.0.0.1:0",
            "--port_file",
            str(port_file),
            *flags,
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    (tmp / f"{name}.pid").write_text(str(proc.pid))
    try:

        def port() -> str:
            assert proc.poll() is None, (tmp / f"{name}.log").read_text()
            text = port_file.read_text().strip() if port_file.exists() else ""
            return text

        yield f"127.0.0.1:{wait_until(port, 30, 'the planner port file')}"
    finally:
        stop(proc)
        log.close()


@contextmanager
def cluster(tmp: Path, ranks: int, job: str, *flags: str) -> Iterator[dict[str, Any]]:
    """scripts/local-cluster.sh start RANKS --job JOB: yields the server,
    the state folder and the job token; stops it after."""
    state = tmp / f"cluster-{job}"
    env = dict(os.environ, RESHARD_BUILD=str(BUILD), RESHARD_CLUSTER_DIR=str(state))
    script = str(ROOT / "scripts" / "local-cluster.sh")
    started = subprocess.run(
        [script, "start", str(ranks), "--job", job, *flags],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    try:
        assert started.returncode == 0, started.stderr
        yield {
            "server": started.stdout.strip(),
            "dir": state,
            "job_token": (state / "job-token").read_text().strip(),
            "admin_token": (state / "admin-token").read_text().strip(),
            "env": env,
        }
    finally:
        if (state / "pids").exists():
            subprocess.run([script, "stop"], env=env, capture_output=True, timeout=60)


def tls_files(c: dict[str, Any]) -> dict[str, str]:
    """A cluster's client TLS files (started with --tls) as Client's
    keywords."""
    tls = c["dir"] / "tls"
    return {
        "tls_ca": str(tls / "ca.pem"),
        "tls_cert": str(tls / "client.pem"),
        "tls_key": str(tls / "client.key"),
    }


def without_imports(refused: tuple[str, ...], script: str) -> str:
    """`script` run as on a machine without `refused` (top-level packages,
    or exact module names): importing one raises ImportError."""
    return (
        "import sys\n"
        "class _Refuse:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name in {refused!r} or name.split('.')[0] in {refused!r}:\n"
        "            raise ImportError('refused: ' + name)\n"
        "sys.meta_path.insert(0, _Refuse())\n"
    ) + script


def ctl(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CTL), *args], capture_output=True, text=True, timeout=120, env=env
    )


def random_request(rng: random.Random) -> dict[str, Any]:
    """A random plan request in reshardctl's terms: meshes of 1-3 dims,
    optional flattened groups, tensors of 1-3 dims with uneven sizes, and
    placements of every kind (some requests are invalid on purpose)."""
    ndim = rng.randint(1, 3)
    names = ["A", "B", "C"][:ndim]
    sizes = [rng.choice([1, 2, 2, 3, 4]) for _ in range(ndim)]
    flatten = []
    if ndim >= 2 and rng.random() < 0.5:
        flatten.append(",".join(rng.sample(names, 2)))
    rank = rng.randint(1, 3)
    shape = [rng.randint(1, 24) for _ in range(rank)]
    op = rng.choice(["sum", "sum", "avg", "max", "min"])

    def state() -> str:
        parts = []
        for _ in range(ndim):
            kind = rng.random()
            if kind < 0.45:
                parts.append(f"S({rng.randrange(rank)})")
            elif kind < 0.8:
                parts.append("R")
            else:
                parts.append(f"P({op})")
        return ",".join(parts)

    return {
        "mesh": ",".join(f"{n}={s}" for n, s in zip(names, sizes, strict=True)),
        "flatten": flatten,
        "shape": shape,
        "dtype": rng.choice(["float32", "bf16", "int64", "float64"]),
        "src": state(),
        "dst": state(),
        "planner": rng.choice(["optimal", "optimal", "torch_greedy", "torch_graph"]),
    }


def ctl_plan_args(r: dict[str, Any]) -> list[str]:
    args = ["plan", "--mesh", r["mesh"], "--shape", ",".join(map(str, r["shape"]))]
    for group in r["flatten"]:
        args += ["--flatten", group]
    args += ["--dtype", r["dtype"], "--from", r["src"], "--to", r["dst"]]
    return args + ["--planner", r["planner"], "--json"]


def without_timing(plan_json: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in plan_json.items() if k not in ("planning_us", "cache_hit")}


_TIMING = re.compile(r'"planning_us":[^,]*,|,"cache_hit":(true|false)')


def text_without_timing(plan_json: str) -> str:
    """A plan JSON line without the fields that differ between two plannings
    of one request, for byte-for-byte comparison."""
    return _TIMING.sub("", plan_json.strip())
