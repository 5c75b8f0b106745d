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
