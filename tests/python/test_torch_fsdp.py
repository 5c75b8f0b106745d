"""FSDP2 over a tensor-parallel module, on the pinned torch's CPU Gloo ranks
(fully_shard accepts CPU meshes): on a 2-D (dp, tp) and a 3-D
(dp_replicate, dp_shard, tp) mesh, even and uneven, every parameter's placements
(_StridedShard among them) map to the shard order whose blocks are the
ranks' own, and redistribute to the TP-only layout gives the right blocks,
equal to DTensor's own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from torch_ranks import run_ranks

RANK_SCRIPT = Path(__file__).with_name("torch_fsdp_rank.py")
TIMEOUT_S = 180


def run(tmp: Path, world: int, rows: int) -> list[list[dict[str, Any]]]:
    args = [f"--store={tmp / f'store-{world}-{rows}'}", f"--rows={rows}"]
    outputs = run_ranks(RANK_SCRIPT, world, args, TIMEOUT_S)
    return [[json.loads(line) for line in out.splitlines()] for out in outputs]


def test_fsdp2_over_tp_layouts_map_to_shard_orders(tmp_path: Path) -> None:
    expected = {
        4: {"0.weight": "S(0)[1],S(0)[0]", "1.weight": "S(0),S(1)"},
        8: {"0.weight": "R,S(0)[1],S(0)[0]", "1.weight": "R,S(0),S(1)"},
    }
    # 16 rows split evenly; 10 unevenly (5 per TP rank, then 3 and 2).
    for world, rows in ((4, 16), (4, 10), (8, 10)):
        results = run(tmp_path, world, rows)
        for r, lines in enumerate(results):
            texts = {line["param"]: line["text"] for line in lines}
            assert texts == expected[world], (world, r, lines)
            for line in lines:
                assert line["layout_ok"], (world, r, line)
                assert line["tp_only_ok"] and line["torch_equal"], (world, r, line)
