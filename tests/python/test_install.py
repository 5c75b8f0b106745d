"""`pip install --no-build-isolation ./python` into a fresh virtual
environment: the wheel builds (scikit-build-core compiling the planner
itself, ccache warm after the first time), installs, plans in-process
exactly as reshardctl, runs its command line, and imports and reads plans
without torch, grpcio or the native module."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

from reshard_processes import BUILD, ROOT, ctl, text_without_timing, without_imports

# The bound for an install with ccache: three minutes.
INSTALL_TIMEOUT_S = 180
WITHOUT_EXTRAS = without_imports(
    ("torch", "grpc", "google", "reshard._native"),
    """
import reshard
plan = reshard.Plan.from_json(sys.stdin.read())
same = reshard.Plan.from_json(plan.to_json()) == plan
print(plan.steps[0].op, same, "reshard.client" in sys.modules)
try:
    reshard.plan(plan.mesh, [4], "S(0)", "R")
except reshard.Error as e:
    print("native:", e.code.name, e.message)
""",
)


def _fresh_venv(where: Path) -> Path:
    """A venv whose only extra is a path to the project environment's
    packages: the build backend, nanobind, grpcio-tools (and pip)."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(where)],
        check=True,
        timeout=60,
    )
    python = where / "bin" / "python"
    purelib = subprocess.run(
        [
            str(python),
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(purelib, "project-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def test_pip_install_into_a_fresh_venv(tmp_path: Path) -> None:
    python = _fresh_venv(tmp_path / "venv")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["CCACHE_BASEDIR"] = str(ROOT)
    build_dir = (BUILD / "python-wheel").resolve()
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-index", "--no-build-isolation"]
        + [f"--config-settings=build-dir={build_dir}", str(ROOT / "python")],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        env=env,
        cwd=tmp_path,
    )
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr
    where = subprocess.run(
        [
            str(python),
            "-c",
            "import reshard; print(reshard.__file__, reshard.__version__)",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert where.stdout.startswith(str(tmp_path / "venv")), where.stderr
    # In-process planning, and the console script, as reshardctl prints.
    args = ["plan", "--offline", "--mesh", "A=2,B=2", "--flatten", "A,B"]
    args += ["--shape", "8,8", "--from", "P(sum),S(0)", "--to", "R,R", "--json"]
    ours = subprocess.run(
        [str(tmp_path / "venv" / "bin" / "reshard"), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    theirs = ctl(*args)
    assert ours.returncode == 0, ours.stderr
    assert text_without_timing(ours.stdout) == text_without_timing(theirs.stdout)
    # Without torch, grpcio or the native module: values and plan JSON.
    pure = subprocess.run(
        [str(python), "-c", WITHOUT_EXTRAS],
        input=theirs.stdout,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert pure.returncode == 0, pure.stderr
    lines = pure.stdout.splitlines()
    assert lines[0] == "all_reduce True False", lines
    assert lines[1].startswith("native: UNIMPLEMENTED in-process planning needs")
    assert "reshard._native" in lines[1], lines
