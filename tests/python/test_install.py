"""`pip wheel --no-build-isolation ./python` writes a manylinux_2_34 wheel
(scikit-build-core builds the project's reshardctl and native module,
ccache serving the project build's objects; auditwheel repairs it), which
installs into a fresh venv and runs there with Debian's C++ libraries and
the build out of the loader's reach: reshardctl and in-process planning
print what the build's reshardctl prints. Beside torch, its vendored
libraries clash with none of torch's, and without torch, grpcio or the
native module it still reads and writes plans."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest
from reshard_processes import (
    BUILD,
    CTL,
    ROOT,
    ctl,
    text_without_timing,
    without_imports,
)

# A cold build here is ≤ 6 minutes (docs/GUIDE.md); warm, seconds.
WHEEL_TIMEOUT_S = 360
PLATFORM = "manylinux_2_34_x86_64"
# What a manylinux wheel may take from the machine (auditwheel's policy).
SYSTEM = re.compile(
    r"^(ld-linux|libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|libz)\."
)
PLAN = ["plan", "--offline", "--mesh", "A=2,B=2", "--flatten", "A,B", "--shape", "8,8"]
PLAN += ["--from", "P(sum),S(0)", "--to", "R,R", "--json"]
EXEC = ["exec", "--local", "4", "--mesh", "A=2,B=2", "--shape", "8,8", "--iters", "1"]
EXEC += ["--warmup", "0", "--from", "S(0),P(sum)", "--to", "R,R"]
IN_PROCESS = """
import reshard
mesh = reshard.Mesh.from_text("A=2,B=2", flatten=["A,B"])
print(reshard.plan(mesh, [8, 8], "P(sum),S(0)", "R,R").to_json())
"""
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
# torch and reshard in one process, in either order: both work, and every
# library loaded from reshard.libs is the only one of its name.
BESIDE_TORCH = """
import sys
first, second = sys.argv[1:]
__import__(first); __import__(second)
import reshard, torch
mesh = reshard.Mesh.from_text("A=2,B=2")
assert reshard.plan(mesh, [8], "S(0),R", "R,R").steps
assert float(torch.arange(4.0).sum()) == 6.0
loaded = {line.split()[-1] for line in open("/proc/self/maps") if ".so" in line}
ours = {p for p in loaded if "/reshard.libs/" in p}
stems = {p.rsplit("/", 1)[1].split("-")[0] for p in ours}
others = {p.rsplit("/", 1)[1].split(".")[0].split("-")[0] for p in loaded - ours}
print(len(ours), sorted(stems & others))
"""


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh venv with the wheel installed (and the project environment's
    packages, torch and pip among them, on its path)."""
    where = tmp_path_factory.mktemp("install")
    wheel = _built_wheel(where / "wheels")
    shown = _run([sys.executable, "-m", "auditwheel", "show", str(wheel)])
    assert f'consistent with the following platform tag: "{PLATFORM}"' in " ".join(
        shown.stdout.split()
    ), shown.stdout
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(where / "venv")],
        check=True,
        timeout=60,
    )
    python = where / "venv" / "bin" / "python"
    purelib = _run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
    )
    Path(purelib.stdout.strip(), "project-env.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n"
    )
    _run([str(python), "-m", "pip", "install", "--no-index", "--no-deps", str(wheel)])
    yield where / "venv"


def _built_wheel(out: Path) -> Path:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["CCACHE_BASEDIR"] = str(ROOT)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-index", "--no-build-isolation"]
        + ["--no-deps", "-w", str(out), str(ROOT / "python")],
        capture_output=True,
        text=True,
        timeout=WHEEL_TIMEOUT_S,
        env=env,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (wheel,) = out.glob("*.whl")
    assert wheel.name == f"reshard-{_version()}-cp311-cp311-{PLATFORM}.whl"
    return wheel


def _version() -> str:
    return ctl("--version").stdout.split()[-1]


def _run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=120, env=env, cwd="/", **kwargs
    )
    assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
    return done


def _libraries_of_the_build() -> list[str]:
    """The shared libraries the build's reshardctl and native module load,
    but for those a manylinux wheel takes from the machine."""
    found: set[str] = set()
    for binary in [CTL, *BUILD.glob("python/reshard/_native*.so")]:
        for line in _run(["ldd", str(binary)]).stdout.splitlines():
            parts = line.split()
            if (
                len(parts) >= 3
                and parts[2].startswith("/")
                and not SYSTEM.match(parts[0])
            ):
                found.add(os.path.realpath(parts[2]))
    return sorted(found)


def out_of_reach(command: list[str]) -> subprocess.CompletedProcess[str]:
    """`command` in a mount namespace where each of the build's libraries
    is an empty file and the build folder is empty."""
    hidden = _libraries_of_the_build()
    assert any("libabsl" in p for p in hidden) and any("libgrpc" in p for p in hidden)
    script = 'for f in "$@"; do mount --bind /dev/null "$f" || exit 99; done\n'
    script += f'mount -t tmpfs none "{BUILD.resolve()}" || exit 99\n'
    script += f"exec {' '.join(_quoted(c) for c in command)}\n"
    return _run(["unshare", "--mount", "sh", "-c", script, "sh", *hidden])


def _quoted(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"


def test_reshardctl_from_the_wheel_runs_with_the_build_out_of_reach(venv: Path) -> None:
    version = out_of_reach([str(venv / "bin" / "reshard"), "--version"])
    assert version.stdout == ctl("--version").stdout
    ours = out_of_reach([str(venv / "bin" / "reshard"), *PLAN])
    assert text_without_timing(ours.stdout) == text_without_timing(ctl(*PLAN).stdout)
    module = out_of_reach([str(venv / "bin" / "python"), "-m", "reshard", "--version"])
    assert module.stdout == version.stdout


def test_gloo_ranks_from_the_wheel_run_a_plan(venv: Path) -> None:
    """Four Gloo ranks of the wheel's reshardctl (its grafted, retargeted
    libgloo) validate a plan and end with the build's checksums."""
    run = EXEC + ["--json"]
    ours = json.loads(out_of_reach([str(venv / "bin" / "reshard"), *run]).stdout)
    theirs = json.loads(ctl(*run).stdout)
    assert ours["validated"] is True, ours
    assert ours["checksums"] == theirs["checksums"], (ours, theirs)


def test_in_process_planning_from_the_wheel(venv: Path) -> None:
    ours = out_of_reach([str(venv / "bin" / "python"), "-c", IN_PROCESS])
    assert text_without_timing(ours.stdout) == text_without_timing(ctl(*PLAN).stdout)


@pytest.mark.parametrize("order", [("torch", "reshard"), ("reshard", "torch")])
def test_beside_torch_no_vendored_library_clashes(
    venv: Path, order: tuple[str, str]
) -> None:
    done = _run([str(venv / "bin" / "python"), "-c", BESIDE_TORCH, *order])
    count, clashes = done.stdout.split(" ", 1)
    assert int(count) >= 10, done.stdout  # the native module's Abseil, at least
    assert clashes.strip() == "[]", done.stdout


def test_without_torch_grpcio_or_the_native_module(venv: Path) -> None:
    theirs = ctl(*PLAN)
    pure = _run(
        [str(venv / "bin" / "python"), "-c", WITHOUT_EXTRAS], input=theirs.stdout
    )
    lines = pure.stdout.splitlines()
    assert lines[0] == "all_reduce True False", lines
    assert lines[1].startswith("native: UNIMPLEMENTED in-process planning needs"), lines
    assert "reshard._native" in lines[1], lines
