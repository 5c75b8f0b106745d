"""One rank of test_torch_cross_move's fault: a 2x2 source on ranks 0-3
(no replicas) moved to Replicate on ranks 4-7, so that every destination
rank needs a block of every source rank. Every rank builds the move;
then rank 2 exits at once, and the others run it with staging into
outputs filled with 7. Prints one JSON line: what the run raised (its
code and message, or null) and whether this rank's outputs are as they
were. Exits without tearing the process group down (a peer is gone).

  torch_cross_move_fault_rank.py --rank R --world N --store PATH
"""

from __future__ import annotations

import json
import os

import reshard
import reshard.torch as rt
import torch
from reshard.torch.cross_move import CrossMeshMove, Layout
from torch.distributed.device_mesh import DeviceMesh
from torch_ranks import join_from_args

a = join_from_args()
src_mesh = DeviceMesh("cpu", torch.tensor([[0, 1], [2, 3]]))
dst_mesh = DeviceMesh("cpu", torch.tensor([4, 5, 6, 7]))
shape = (16, 8)
move = CrossMeshMove(
    {
        "w": Layout(
            src_mesh, rt.placements_of("S(0),S(1)", [2, 2]), shape, torch.float32
        )
    },
    {"w": Layout(dst_mesh, rt.placements_of("R", [4]), shape, torch.float32)},
)
if a.rank == 2:
    print(json.dumps({"raised": None, "unchanged": True}), flush=True)
    os._exit(0)
full = torch.arange(16 * 8, dtype=torch.float32).reshape(shape)
local = None
if a.rank < 4:
    r, c = divmod(a.rank, 2)
    local = full[r * 8 : r * 8 + 8, c * 4 : c * 4 + 4].clone()
out = {"w": torch.full(shape, 7.0)} if a.rank >= 4 else {}
raised = None
try:
    move.run({"w": local}, out, staging=True)
except reshard.Error as e:
    raised = {"code": e.code.name, "message": str(e)}
unchanged = all(bool((t == 7).all()) for t in out.values())
print(json.dumps({"raised": raised, "unchanged": unchanged}), flush=True)
os._exit(0)
