"""The Python docs as users read them: README.md's "From Python" blocks run
as written against a real planner, and docs/PYTHON_API.md is what
scripts/python_api_doc.py generates from the package, every public name
and member documented."""

from __future__ import annotations

import importlib.util
import inspect
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
import reshard
from reshard_processes import BUILD, ROOT, planner


def readme_blocks(language: str, heading: str = "From Python") -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", section, re.S)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with planner(tmp_path_factory.mktemp("docs")) as address:
        yield address


def test_readme_from_python_runs_as_written(server: str) -> None:
    [python_block] = readme_blocks("python")
    env = dict(os.environ, RESHARD_SERVER=server)
    ran = subprocess.run(
        [sys.executable, "-c", python_block],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith("trace: P(sum)RP(sum)-->RRR\n"), ran.stdout
    assert ran.stdout.endswith(
        "INVALID_ARGUMENT src[0]: shard dim 2 out of range for a tensor of rank 2\n"
    ), ran.stdout
    [shell_block] = readme_blocks("sh")
    # The block names the default build folder; the test's may be another.
    shell_block = shell_block.replace("build/python", str(BUILD.resolve() / "python"))
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    ran = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", shell_block],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=ROOT,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith("trace: S(0)S(1)->RS(1)->RR\n"), ran.stdout
    assert '{"meshes": [{"mesh_id": "mesh-' in ran.stdout, ran.stdout


def run_readme_script(heading: str, tmp_path: Path) -> str:
    """The section's one Python block run as a script (mp.spawn needs a
    file to import); its stdout, once it exited 0."""
    [block] = readme_blocks("python", heading)
    script = tmp_path / "readme_block.py"
    script.write_text(block)
    ran = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=240
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    return ran.stdout


def test_readme_from_pytorch_runs_as_written(tmp_path: Path) -> None:
    out = run_readme_script("From PyTorch", tmp_path)
    assert out.startswith("Reshard (optimal):\ntrace: S(0)[1]S(0)[0]->"), out
    assert "\nPyTorch 2." in out and "mesh dim 0:" in out, out


def test_readme_moving_weights_runs_as_written(tmp_path: Path) -> None:
    out = run_readme_script("Moving weights between meshes", tmp_path)
    assert out == "refit: 3 steps, disjoint and colocated, weights equal\n"


def _api_doc_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "python_api_doc", ROOT / "scripts" / "python_api_doc.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_reference_is_the_generated_one() -> None:
    generated = _api_doc_script().document()
    committed = (ROOT / "docs" / "PYTHON_API.md").read_text()
    assert committed == generated, (
        "docs/PYTHON_API.md is stale: regenerate it with the command in "
        "scripts/python_api_doc.py"
    )
    for name in reshard.__all__:
        assert f"reshard.{name}" in committed, name


def test_every_public_name_and_member_has_a_docstring() -> None:
    import reshard.torch

    missing = []
    names = [(reshard, n) for n in reshard.__all__]
    names += [(reshard.torch, n) for n in reshard.torch.__all__]
    for module, name in names:
        obj = getattr(module, name)
        if not callable(obj):
            continue  # a constant: documented by its value
        doc = inspect.getdoc(obj) or ""
        # A dataclass without a docstring gets its signature as one.
        if not doc or (doc.startswith(f"{name}(") and "'" in doc):
            missing.append(name)
        if not isinstance(obj, type):
            continue
        for member, value in vars(obj).items():
            target = getattr(value, "__func__", value)
            public = not member.startswith("_")
            documentable = inspect.isfunction(target) or isinstance(value, property)
            if public and documentable and not inspect.getdoc(target):
                missing.append(f"{name}.{member}")
    assert not missing, missing
