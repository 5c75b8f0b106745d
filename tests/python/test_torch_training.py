"""A training step through reshard.torch.redistribute: a small FSDP2 + TP
model (real fully_shard and parallelize_module on a (dp, tp) mesh of 4 Gloo
CPU ranks) whose forward gathers its hidden activation with
reshard.torch.redistribute where it would call DTensor.redistribute. After
each of three SGD steps the loss, every gradient and every parameter equal
those of the same model using DTensor's own: bit for bit with integer-valued
weights and inputs, within 1e-6 relative with random float32 ones; and the
same where the ranks have no native module and plan on a planner service,
which compiles their rank programs. A merged step's process group is
destroyed when its DeviceMesh is collected."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from reshard_processes import planner
from torch_ranks import run_ranks

RANK_SCRIPT = Path(__file__).with_name("torch_train_rank.py")


def flat(x: Any) -> list[float]:
    if isinstance(x, dict):
        return [v for k in sorted(x) for v in flat(x[k])]
    return [v for item in x for v in flat(item)] if isinstance(x, list) else [x]


def close(a: Any, b: Any, rel: float) -> bool:
    xs, ys = flat(a), flat(b)
    return len(xs) == len(ys) and all(
        math.isclose(x, y, rel_tol=rel, abs_tol=rel)
        for x, y in zip(xs, ys, strict=True)
    )


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with planner(tmp_path_factory.mktemp("planner")) as address:
        yield address


@pytest.mark.parametrize(
    "values,on_service", [("int", False), ("random", False), ("int", True)]
)
def test_three_steps_equal_dtensors_own(
    tmp_path: Path, values: str, on_service: bool, server: str
) -> None:
    args = [f"--store={tmp_path / 'store'}", f"--values={values}"]
    args += [f"--server={server}"] if on_service else []
    outputs = run_ranks(RANK_SCRIPT, 4, args, 300)
    for rank, out in enumerate(outputs):
        lines = [json.loads(line) for line in out.splitlines()]
        if not on_service:
            assert lines.pop() == {"groups_released": True}, rank
        runs = {r: [x for x in lines if x["run"] == r] for r in ("dtensor", "reshard")}
        assert len(runs["dtensor"]) == len(runs["reshard"]) == 3, (rank, lines)
        for theirs, ours in zip(runs["dtensor"], runs["reshard"], strict=True):
            where = (rank, values, ours["step"])
            if values == "int":
                assert ours["loss"] == theirs["loss"], where
                assert ours["grads"] == theirs["grads"], where
                assert ours["params"] == theirs["params"], where
            else:
                assert close(ours["loss"], theirs["loss"], 1e-6), where
                assert close(ours["grads"], theirs["grads"], 1e-6), where
                assert close(ours["params"], theirs["params"], 1e-6), where
        # The model learns: the loss moves.
        assert runs["reshard"][0]["loss"] != runs["reshard"][-1]["loss"], rank


def test_a_compiled_module_that_calls_it(tmp_path: Path) -> None:
    """torch.compile (dynamo, eager backend) of a module whose forward calls
    reshard.torch.redistribute: the call is a graph break, and the forward
    and the input's gradient equal the uncompiled module's."""
    script = Path(__file__).with_name("torch_compile_rank.py")
    outputs = run_ranks(script, 2, [f"--store={tmp_path / 'store'}"], 300)
    for rank, out in enumerate(outputs):
        line = json.loads(out.splitlines()[-1])
        assert line["forward_equal"] and line["grad_equal"], (rank, line)
        assert line["graph_breaks"] >= 1, (rank, line)
