"""Random redistribution requests for the torch tests, in Reshard's terms:
meshes of 4 and 8 ranks (some with flattened groups), tensors of 1-3 dims
with uneven sizes, every dtype, and states with shard orders and every
Partial op (a mix the planner refuses is left to the caller to skip)."""

from __future__ import annotations

import random
from typing import Any

import reshard

MESHES: dict[int, list[tuple[tuple[int, ...], list[str]]]] = {
    4: [
        ((4,), []),
        ((2, 2), ["A,B"]),
        ((2, 2), ["A,B"]),
        ((1, 4), []),
        ((2, 1, 2), ["A,C"]),
    ],
    8: [
        ((8,), []),
        ((2, 4), ["A,B"]),
        ((4, 2), ["A,B"]),
        ((2, 2, 2), ["A,C", "A,B"]),
        ((2, 2, 2), ["A,B,C", "B,C"]),
    ],
}
DTYPES = ["float32", "float64", "bfloat16", "float16", "int32", "int64"]


def random_state(rng: random.Random, ndim: int, rank: int) -> str:
    parts: list[list[Any]] = []
    by_dim: dict[int, list[int]] = {}
    op = rng.choice(["sum", "avg", "max", "min"])
    for m in range(ndim):
        kind = rng.random()
        if kind < 0.5:
            d = rng.randrange(rank)
            by_dim.setdefault(d, []).append(m)
            parts.append([f"S({d})"])
        elif kind < 0.75:
            parts.append(["R"])
        else:
            parts.append([f"P({op if rng.random() < 0.8 else 'sum'})"])
    for mesh_dims in by_dim.values():
        if len(mesh_dims) >= 2 and rng.random() < 0.5:
            order = mesh_dims[:]
            rng.shuffle(order)
            for m in mesh_dims:
                parts[m][0] += f"[{order.index(m)}]"
    return ",".join(p[0] for p in parts)


def _merging_request(rng: random.Random, world: int) -> dict[str, Any]:
    """Both dims of a flattened 2-D mesh on one tensor dim and back: what a
    merged all_gather, reduce_scatter or all_reduce serves."""
    sizes = rng.choice([(2, 2)] if world == 4 else [(2, 4), (4, 2)])
    d = rng.randrange(2)
    sharded = rng.choice([f"S({d}),S({d})", f"S({d})[1],S({d})[0]"])
    partial = rng.choice(["P(sum),P(sum)", "P(avg),P(sum)", "P(max),P(max)"])
    src, dst = rng.choice([(sharded, "R,R"), (partial, sharded), (partial, "R,R")])
    return {
        "sizes": list(sizes),
        "flatten": ["A,B"],
        "shape": [rng.randint(1, 13) for _ in range(2)],
        "dtype": rng.choice(DTYPES),
        "src": src,
        "dst": dst,
    }


def random_request(rng: random.Random, world: int) -> dict[str, Any]:
    if rng.random() < 0.15:
        return _merging_request(rng, world)
    sizes, flatten = rng.choice(MESHES[world])
    rank = rng.randint(1, 3)
    return {
        "sizes": list(sizes),
        "flatten": list(flatten),
        "shape": [rng.randint(1, 13) for _ in range(rank)],
        "dtype": rng.choice(DTYPES),
        "src": random_state(rng, len(sizes), rank),
        "dst": random_state(rng, len(sizes), rank),
    }


def mesh_of(r: dict[str, Any]) -> reshard.Mesh:
    names = tuple("ABC"[: len(r["sizes"])])
    return reshard.Mesh(tuple(r["sizes"]), names, tuple(r["flatten"]))
