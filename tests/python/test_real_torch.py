"""Real PyTorch on this machine: four Gloo CPU ranks in separate processes
redistribute a DTensor on a 2x2 DeviceMesh, checked element by element."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import torch  # A missing torch fails here, naming the module: no skip.

RANK_SCRIPT = Path(__file__).with_name("dtensor_rank.py")
WORLD = 4
TIMEOUT_S = 120.0


def start_ranks(store: Path) -> list[subprocess.Popen[str]]:
    return [
        subprocess.Popen(
            [
                sys.executable,
                str(RANK_SCRIPT),
                f"--rank={rank}",
                f"--world={WORLD}",
                f"--store={store}",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for rank in range(WORLD)
    ]


def collect(ranks: list[subprocess.Popen[str]]) -> list[tuple[int, str]]:
    """Each rank's exit status and output; stops every rank still running
    at the deadline (only the processes this test started)."""
    deadline = time.monotonic() + TIMEOUT_S
    results = []
    try:
        for proc in ranks:
            out, _ = proc.communicate(timeout=max(deadline - time.monotonic(), 1))
            results.append((proc.returncode, out))
    finally:
        for proc in ranks:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return results


def test_dtensor_shard_shard_to_replicate_replicate(tmp_path: Path) -> None:
    print(f"torch {torch.__version__}")
    reports = []
    for rank, (code, out) in enumerate(collect(start_ranks(tmp_path / "store"))):
        assert code == 0, f"rank {rank} exited {code}:\n{out}"
        report = json.loads(out.strip().splitlines()[-1])
        reports.append(report)
        assert report["rank"] == rank
        assert report["torch"] == torch.__version__
        assert report["shard_ok"], f"rank {rank}: wrong shard before: {report}"
        assert report["placements"] == ["R", "R"]  # str(Replicate())
        assert report["mismatches"] == 0, f"rank {rank}: {report}"
    # Rows 7 split 4/3 over the first mesh dim, columns 10 split 5/5.
    shapes = [report["shard_shape"] for report in reports]
    assert shapes == [[4, 5], [4, 5], [3, 5], [3, 5]]
