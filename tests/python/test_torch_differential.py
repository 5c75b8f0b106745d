"""The torch modes against the installed PyTorch, live (docs/PLAN_JSON.md).

PyTorch's own planners and merge pass answer >= 2,000 fresh random requests
(a new seed each run, printed; RESHARD_TORCH_SEED repeats one) and the kept
cases (tests/data/torch_kept_cases.jsonl), in this one process; then the
torch_differential binary compares Reshard's torch_greedy and torch_graph,
with and without --merge, step for step and warning code for warning code.
A disagreement fails the test and is written out, to be kept as a case.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import time
from pathlib import Path

import torch
import torch_planner_record

RANDOM_REQUESTS = 2000


def run_differential(record: Path, disagreements: Path) -> tuple[int, str]:
    binary = os.environ["RESHARD_TORCH_DIFFERENTIAL"]
    result = subprocess.run(
        [binary, str(record), "--disagreements", str(disagreements)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    print(result.stdout[-6000:], result.stderr[-2000:])
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, result.stdout


def reached_cases(record: Path) -> dict[str, int]:
    """How many records reach the two cases the merge pass is easy to get
    wrong on (docs/PLAN_JSON.md): a merged step whose serving flattened mesh
    holds dims the step does not span (size-1 ones), and a merged reduction
    that keeps Partial(avg) without a scale."""
    reached = {"named by a wider group": 0, "avg over a merged group": 0}
    for line in record.read_text().splitlines():
        r = json.loads(line)
        names = r["case"]["mesh"]["dim_names"]
        for key in ("greedy", "graph"):
            for info in r.get(key, {}).get("merged", []):
                if info["type"] == "_TransformInfo":
                    continue
                dims = json.loads(
                    info["attr_original_mesh_dims"]
                    .replace("(", "[")
                    .replace(",)", "]")
                    .replace(")", "]")
                )
                spanned = "_".join(names[d] for d in dims)
                if info["attr_mesh_name"] != spanned:
                    reached["named by a wider group"] += 1
                placements = info["src_dst_placements"]
                if (
                    "Partial(avg)" in placements.split(",")[0]
                    and info["attr_avg_scale"] == "None"
                ):
                    reached["avg over a merged group"] += 1
    return reached


def test_modes_agree_with_installed_torch(tmp_path: Path) -> None:
    seed = int(os.environ.get("RESHARD_TORCH_SEED", time.time_ns() % 2**31))
    print(f"torch {torch.__version__}; seed {seed} (RESHARD_TORCH_SEED={seed})")
    kept = Path(os.environ["RESHARD_TEST_DATA"]) / "torch_kept_cases.jsonl"
    # Kept cases keep their ids apart from the random ones.
    kept_cases = [
        (1_000_000 + k, case)
        for k, (_, case) in enumerate(torch_planner_record.cases_in(str(kept)))
    ]
    record = tmp_path / "record.jsonl"
    cases = itertools.chain(
        torch_planner_record.random_cases(seed, RANDOM_REQUESTS), kept_cases
    )
    count = torch_planner_record.record(cases, str(record))
    assert count == RANDOM_REQUESTS + len(kept_cases)
    reached = reached_cases(record)
    print(f"reached: {reached}")
    assert all(n >= 1 for n in reached.values()), reached
    disagreements = tmp_path / "disagreements.jsonl"
    returncode, stdout = run_differential(record, disagreements)
    pin = stdout.splitlines()[0].removeprefix("torch_version ")
    assert torch.__version__.split("+")[0] == pin, (
        f"the project environment has torch {torch.__version__} but the modes"
        f" follow {pin}: bump the pin as docs/PLAN_JSON.md says"
    )
    assert returncode == 0, (
        f"seed {seed}: the torch modes disagree with torch {torch.__version__}"
        f" (above); keep the records of {disagreements} in {kept}"
    )
    assert f"{count} requests, 0 with an unlisted disagreement" in stdout


def test_random_requests_are_reproducible_by_seed() -> None:
    seed = random.randrange(2**31)
    first = list(torch_planner_record.random_cases(seed, 50))
    again = list(torch_planner_record.random_cases(seed, 50))
    assert first == again
