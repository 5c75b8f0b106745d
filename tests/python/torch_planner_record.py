"""Records what the installed PyTorch's own redistribute planners answer.

One process, one torch import: random requests (or the requests of an
earlier record) go through PyTorch's greedy and graph planners
(`_gen_transform_infos_non_cached`) and its merge pass over flattened meshes
(`_optimize_transform_infos`), on a fake process group as rank 0 (no
communication). Each answer is one JSON line in the format of
tests/data/torch_2_11_dev.jsonl (tests/data/README.md):

    torch_planner_record.py --seed S --count N --out FILE
    torch_planner_record.py --cases OLD.jsonl --out FILE

The random requests cover meshes of 1-4 dims, uneven tensor shapes, shard
orders, every Partial op, and flattened groups asked for in random dim orders
and registered in a random order.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import random
import re
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import _redistribute as redistribute
from torch.distributed.tensor._dtensor_spec import (
    DTensorSpec,
    ShardOrderEntry,
    TensorMeta,
)
from torch.distributed.tensor.placement_types import (
    Partial,
    Placement,
    Replicate,
    Shard,
)
from torch.testing._internal.distributed.fake_pg import FakeStore

DIM_NAMES = "ABCD"
PARTIAL_OPS = ("sum", "avg", "max", "min")
MAX_WORLD = 64


class WarningLog(logging.Handler):
    """Collects what the merge pass logs, message by message."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def random_mesh(rng: random.Random) -> dict[str, Any]:
    while True:
        ndim = rng.randint(1, 4)
        shape = [rng.choice((1, 2, 2, 3, 4)) for _ in range(ndim)]
        if math.prod(shape) <= MAX_WORLD:
            break
    names = list(DIM_NAMES[:ndim])
    groups: list[list[str]] = []
    if ndim >= 2:
        for _ in range(rng.randint(0, 3)):
            size = rng.randint(2, ndim)
            group = rng.sample(names, size)
            if rng.random() < 0.7:
                group.sort()
            if group not in groups:
                groups.append(group)
    return {"shape": shape, "dim_names": names, "flattened": groups}


def random_placements(rng: random.Random, ndim: int, rank: int, op: str) -> str:
    """DESIGN.md §2.2 list form; shard orders as [k] when not ascending."""
    kinds = [rng.choice("RRSSSP") for _ in range(ndim)]
    dims = [rng.randrange(rank) for _ in range(ndim)]
    order: dict[int, list[int]] = {}
    for m in range(ndim):
        if kinds[m] == "S":
            order.setdefault(dims[m], []).append(m)
    shuffle = rng.random() < 0.4
    position: dict[int, int] = {}
    for mesh_dims in order.values():
        if shuffle:
            rng.shuffle(mesh_dims)
        for k, m in enumerate(mesh_dims):
            position[m] = k
    out = []
    for m in range(ndim):
        if kinds[m] == "R":
            out.append("R")
        elif kinds[m] == "P":
            out.append(f"P({op})")
        else:
            text = f"S({dims[m]})"
            if shuffle and len(order[dims[m]]) > 1:
                text += f"[{position[m]}]"
            out.append(text)
    return ",".join(out)


def unit_dims_case(rng: random.Random) -> dict[str, Any]:
    """A merge over one dim of size > 1 and size-1 dims, served by a
    registered group that holds other (size-1) dims too: an all_gather or
    a reduction, where a reduction's first step may be P(avg) on a size-1
    dim (docs/PLAN_JSON.md, Deviations)."""
    ndim = rng.choice((3, 4))
    shape = [rng.choice((2, 3, 4)) for _ in range(ndim)]
    units = sorted(rng.sample(range(ndim), ndim - 2))
    for d in units:
        shape[d] = 1
    real = rng.choice([d for d in range(ndim) if d not in units])
    names = list(DIM_NAMES[:ndim])
    served = sorted([*units, real])
    groups = [[names[d] for d in served]]
    if rng.random() < 0.5:  # another group of the same layout, later
        groups.append([names[real], names[units[0]]])
    step = [units[0], real]
    rank = rng.randint(1, 2)
    if rng.random() < 0.4:
        src = ["R"] * ndim
        for d in step:
            src[d] = "S(0)"
        dst = ["R"] * ndim
    else:
        first, second = sorted(step)
        src = ["R"] * ndim
        src[first] = f"P({rng.choice(('avg', 'sum'))})"
        src[second] = f"P({rng.choice(('avg', 'sum'))})"
        dst = ["R"] * ndim
        if rng.random() < 0.3:
            dst[real] = "S(0)"
    return {
        "mesh": {"shape": shape, "dim_names": names, "flattened": groups},
        "tensor": {
            "shape": [rng.choice((4, 8, 12)) for _ in range(rank)],
            "dtype": "float32",
        },
        "src": ",".join(src),
        "dst": ",".join(dst),
    }


def random_case(rng: random.Random) -> dict[str, Any]:
    if rng.random() < 0.05:
        return unit_dims_case(rng)
    mesh = random_mesh(rng)
    rank = rng.randint(1, 3)
    shape = [rng.randint(1, 12) for _ in range(rank)]
    src_op = rng.choice(PARTIAL_OPS)
    dst_op = src_op if rng.random() < 0.6 else rng.choice(PARTIAL_OPS)
    ndim = len(mesh["shape"])
    return {
        "mesh": mesh,
        "tensor": {"shape": shape, "dtype": "float32"},
        "src": random_placements(rng, ndim, rank, src_op),
        "dst": random_placements(rng, ndim, rank, dst_op),
    }


PLACEMENT = re.compile(r"^(R|S\((\d+)\)(?:\[(\d+)\])?|P\((\w+)\))$")


def parse_placements(text: str) -> tuple[tuple[Placement, ...], Any]:
    """Placements and PyTorch's shard order for one list-form state."""
    placements: list[Placement] = []
    by_dim: dict[int, list[tuple[int, int]]] = {}
    for m, item in enumerate(text.split(",")):
        match = PLACEMENT.match(item)
        if match is None:
            raise ValueError(f"cannot read placement {item!r} in {text!r}")
        if item == "R":
            placements.append(Replicate())
        elif match.group(4) is not None:
            placements.append(Partial(match.group(4)))
        else:
            dim = int(match.group(2))
            placements.append(Shard(dim))
            k = int(match.group(3)) if match.group(3) is not None else m
            by_dim.setdefault(dim, []).append((k, m))
    order = tuple(
        ShardOrderEntry(tensor_dim=d, mesh_dims=tuple(m for _, m in sorted(e)))
        for d, e in sorted(by_dim.items())
    )
    return tuple(placements), order


class Meshes:
    """One fake world; a DeviceMesh per request with its flattened groups."""

    def __init__(self) -> None:
        dist.init_process_group("fake", rank=0, world_size=MAX_WORLD, store=FakeStore())

    def make(self, spec: dict[str, Any]) -> tuple[DeviceMesh, list[list[str]]]:
        shape = spec["shape"]
        ranks = torch.arange(math.prod(shape)).reshape(shape)
        mesh = DeviceMesh("cpu", ranks, mesh_dim_names=tuple(spec["dim_names"]))
        done = []
        for group in spec["flattened"]:
            try:
                mesh[tuple(group)]._flatten()
            except (RuntimeError, ValueError, KeyError, AssertionError):
                continue
            done.append(group)
        return mesh, done


def info_json(info: redistribute._TransformInfo) -> dict[str, Any]:
    out = {
        "type": type(info).__name__,
        "mesh_dim": info.mesh_dim,
        "src_dst_placements": repr(info.src_dst_placements),
        "logical_shape": [int(x) for x in info.logical_shape],
    }
    if isinstance(info, redistribute._FlattenedTransformInfo):
        out["attr_original_mesh_dims"] = repr(info.original_mesh_dims)
        out["attr_avg_scale"] = repr(info.avg_scale)
        out["attr_mesh_name"] = "_".join(info.mesh.mesh_dim_names or ())
    return out


def plan_mode(
    mesh: DeviceMesh, case: dict[str, Any], graph: bool, log: WarningLog
) -> dict[str, Any]:
    """One planner's answer, its merge pass, warnings and time, or its error."""
    shape = tuple(case["tensor"]["shape"])
    meta = TensorMeta(torch.Size(shape), torch.empty(shape).stride(), torch.float32)
    src, src_order = parse_placements(case["src"])
    dst, dst_order = parse_placements(case["dst"])
    redistribute.clear_redistribute_planner_cache()
    redistribute._warned_flatten_issues.clear()
    log.messages.clear()
    try:
        src_spec = DTensorSpec(mesh, src, meta, shard_order=src_order)
        dst_spec = DTensorSpec(mesh, dst, meta, shard_order=dst_order)
        start = time.perf_counter()
        infos = redistribute._gen_transform_infos_non_cached(src_spec, dst_spec, graph)
        us = (time.perf_counter() - start) * 1e6
        merged = redistribute._optimize_transform_infos(infos, mesh, src, dst)
    except Exception as error:  # noqa: BLE001 - recorded as PyTorch's answer
        return {"error": f"{type(error).__name__}: {error}"[:400]}
    return {
        "infos": [info_json(i) for i in infos],
        "merged": [info_json(i) for i in merged],
        "warnings": list(log.messages),
        "us": us,
    }


def random_cases(seed: int, count: int) -> Iterator[tuple[int, dict[str, Any]]]:
    rng = random.Random(seed)
    for i in range(count):
        yield i, random_case(rng)


def cases_in(path: str) -> Iterator[tuple[int, dict[str, Any]]]:
    with open(path) as f:
        for line in f:
            if line.strip():
                record = json.loads(line)
                yield record["i"], record["case"]


def record(cases: Iterable[tuple[int, dict[str, Any]]], out_path: str) -> int:
    """Writes PyTorch's answers for `cases` to `out_path`; returns how many.

    Starts (and ends) its own fake process group, so that it runs once per
    process at a time.
    """
    log = WarningLog()
    logger = logging.getLogger(redistribute.__name__)
    logger.addHandler(log)
    propagate, logger.propagate = logger.propagate, False
    meshes = Meshes()
    count = 0
    try:
        with open(out_path, "w") as out:
            for i, case in cases:
                mesh, done = meshes.make(case["mesh"])
                answer = {"i": i, "case": case, "flattened_done": done}
                for mode, graph in (("greedy", False), ("graph", True)):
                    planned = plan_mode(mesh, case, graph, log)
                    if "error" in planned:
                        answer[f"{mode}_error"] = planned["error"]
                    else:
                        answer[mode] = planned
                out.write(json.dumps(answer) + "\n")
                count += 1
    finally:
        dist.destroy_process_group()
        logger.removeHandler(log)
        logger.propagate = propagate
    return count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--cases", help="re-record the requests of this file")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    cases = cases_in(args.cases) if args.cases else random_cases(args.seed, args.count)
    count = record(cases, args.out)
    print(f"torch {torch.__version__}: recorded {count} requests to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
