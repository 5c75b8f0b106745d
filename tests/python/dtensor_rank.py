"""One rank of the real-PyTorch DTensor check (test_real_torch.py starts four).

Each rank joins a Gloo process group through a FileStore, builds a 2x2
DeviceMesh, shards a known tensor Shard(0), Shard(1), redistributes it to
Replicate(), Replicate() and checks every element against the full tensor.
It prints one JSON line with what it saw and exits 0 only when all matched.
"""

from __future__ import annotations

import argparse
import json
import sys

import torch
import torch.distributed as dist
from torch.distributed.tensor import (
    DeviceMesh,
    Replicate,
    Shard,
    distribute_tensor,
)

# Uneven on dim 0 (7 rows over 2), even on dim 1 (10 columns over 2); every
# element distinct so a misplaced one cannot match.
SHAPE = (7, 10)


def full_tensor() -> torch.Tensor:
    return torch.arange(SHAPE[0] * SHAPE[1], dtype=torch.float32).reshape(SHAPE)


def run(rank: int, world: int, store_path: str) -> dict[str, object]:
    store = dist.FileStore(store_path, world)
    dist.init_process_group("gloo", store=store, rank=rank, world_size=world)
    try:
        mesh = DeviceMesh("cpu", torch.arange(world).reshape(2, 2))
        full = full_tensor()
        sharded = distribute_tensor(full, mesh, [Shard(0), Shard(1)])
        row, col = rank // 2, rank % 2
        expected_shard = full.tensor_split(2, 0)[row].tensor_split(2, 1)[col]
        replicated = sharded.redistribute(mesh, [Replicate(), Replicate()])
        local = replicated.to_local()
        return {
            "rank": rank,
            "torch": torch.__version__,
            "shard_shape": list(sharded.to_local().shape),
            "shard_ok": torch.equal(sharded.to_local(), expected_shard),
            "placements": [str(p) for p in replicated.placements],
            "mismatches": int((local != full).sum().item())
            if local.shape == full.shape
            else -1,
        }
    finally:
        dist.destroy_process_group()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--store", required=True)
    args = parser.parse_args()
    result = run(args.rank, args.world, args.store)
    print(json.dumps(result), flush=True)
    ok = result["shard_ok"] and result["mismatches"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
