"""One rank of test_torch_cross_move's refusal: the case's one tensor, whose
destination placements rank 3 alone reads differently (Replicate), moved by
CrossMeshMove; prints the reshard.Error every rank raises as JSON.

  torch_cross_move_mismatch_rank.py --rank R --world N --store PATH --cases FILE
"""

from __future__ import annotations

from typing import Any

import reshard
import reshard.torch as rt
from reshard.torch.cross_move import CrossMeshMove, Layout
from torch_cross_move_rank import DTYPES, mesh_of_case
from torch_ranks import serve_cases


def run_case(case: dict[str, Any], rank: int, meshes: dict[Any, Any]) -> Any:
    t = case["tensors"][0]
    src_mesh = mesh_of_case(case["src_mesh"], meshes)
    dst_mesh = mesh_of_case(case["dst_mesh"], meshes)
    dst_text = "R" if rank == 3 else t["dst"]
    shape, dtype = tuple(t["shape"]), DTYPES[t["dtype"]]
    src = Layout(src_mesh, rt.placements_of(t["src"], [2, 2]), shape, dtype)
    dst = Layout(dst_mesh, rt.placements_of(dst_text, [4]), shape, dtype)
    try:
        CrossMeshMove({"w": src}, {"w": dst})
    except reshard.Error as e:
        return {"code": e.code.name, "message": str(e)}
    return {"code": "OK", "message": ""}


if __name__ == "__main__":
    serve_cases(run_case)
