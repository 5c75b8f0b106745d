"""Real PyTorch on this machine: four Gloo CPU ranks in separate processes
redistribute a DTensor on a 2x2 DeviceMesh, checked element by element."""

from __future__ import annotations

import json
from pathlib import Path

import torch  # A missing torch fails here, naming the module: no skip.
from torch_ranks import run_ranks

RANK_SCRIPT = Path(__file__).with_name("dtensor_rank.py")
WORLD = 4
TIMEOUT_S = 120.0


def test_dtensor_shard_shard_to_replicate_replicate(tmp_path: Path) -> None:
    print(f"torch {torch.__version__}")
    reports = []
    outputs = run_ranks(
        RANK_SCRIPT, WORLD, [f"--store={tmp_path / 'store'}"], TIMEOUT_S
    )
    for rank, out in enumerate(outputs):
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
