"""Cross-mesh moves of a transformer-shaped model on 8 Gloo CPU ranks (one
process each, loopback), reshard.torch's CrossMeshMove against three ways
of doing it without Reshard, medians in one run:

- reshard: CrossMeshMove.run, planned and compiled once (one message per
  rank pair for every tensor together);
- per tensor: one CrossMeshMove per tensor, run one after another (one
  plan per tensor, unbucketed);
- gather + scatter: each tensor's source blocks sent to rank 0, which
  assembles the full tensor and sends every destination rank its block;
- NeMo-RL's approach: for each piece where a source block meets a
  destination block, a point-to-point send from the source block's first
  holder to the destination block's first replica, then a broadcast among
  the destination's replicas.

Two scenarios, as the cross-mesh execution issue sets them: disjoint (a
2x2 trainer on ranks 0-3 holding 2 replicas of each block, DDP x TP, to a
2x2 inference engine on ranks 4-7 sharding every weight 4 ways) and
colocated (a 2x4 FSDP x TP trainer on ranks 0-7 to a 4x2 inference engine
on the same ranks permuted, 4 replicas of TP=2). The model: LAYERS layers
of qkv, o, up, down (hidden size H, 4H MLP) and two norms, 6 tensors a
layer, f32: 33 layers of H=512 is 198 tensors and 400 MiB. Ranks run one
intra-op thread each (OMP_NUM_THREADS=1, as torchrun sets). Each method is
timed per run on its slowest rank, in ROUNDS alternating rounds of
`--iters` runs; a method's time is the median of its rounds' medians.
Every method's results are checked equal to Reshard's first.

  PYTHONPATH=python:build/python:tests/python /opt/reshard/venv/bin/python \\
      bench/torch_cross_move_bench.py [--hidden 512] [--layers 33] [--iters 3]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from median_timing import slowest_rank_seconds

if TYPE_CHECKING:
    import torch

Box = tuple[slice, ...]

ROUNDS = 3

# scenario: (src sizes, src ranks, dst sizes, dst ranks, {kind: (src, dst)})
SCENARIOS: dict[str, Any] = {
    "disjoint": (
        (2, 2), [0, 1, 2, 3], (2, 2), [4, 5, 6, 7],
        {"col": ("R,S(0)", "S(0),S(0)"), "row": ("R,S(1)", "S(1),S(1)"),
         "norm": ("R,R", "R,R")},
    ),
    "colocated": (
        (2, 4), [0, 1, 2, 3, 4, 5, 6, 7], (4, 2), [7, 5, 3, 1, 6, 4, 2, 0],
        {"col": ("S(1),S(0)", "R,S(0)"), "row": ("S(0),S(1)", "R,S(1)"),
         "norm": ("S(0),R", "R,R")},
    ),
}  # fmt: skip


def model(hidden: int, layers: int) -> list[tuple[str, tuple[int, int], str]]:
    """(name, shape, kind) of every tensor."""
    h = hidden
    out = []
    for i in range(layers):
        out += [
            (f"layers.{i}.qkv", (3 * h, h), "col"),
            (f"layers.{i}.o", (h, h), "row"),
            (f"layers.{i}.up", (4 * h, h), "col"),
            (f"layers.{i}.down", (h, 4 * h), "row"),
            (f"layers.{i}.norm1", (128, h), "norm"),
            (f"layers.{i}.norm2", (128, h), "norm"),
        ]
    return out


class Side:
    """One mesh of a scenario, and a tensor's blocks on it."""

    def __init__(self, sizes: tuple[int, ...], ranks: list[int]) -> None:
        import torch
        from torch.distributed.device_mesh import DeviceMesh

        self.sizes, self.ranks = sizes, ranks
        names = ("a", "b", "c")[: len(sizes)]
        self.mesh = DeviceMesh(
            "cpu", torch.tensor(ranks).reshape(sizes), mesh_dim_names=names
        )

    def box(self, shape: tuple[int, ...], text: str, rank: int) -> Box:
        from layout import box, coordinate
        from reshard.torch.placements import State

        coord = coordinate(self.ranks.index(rank), self.sizes)
        return tuple(
            slice(lo, hi) for lo, hi in box(shape, State.parse(text), self.sizes, coord)
        )

    def first_holder(self, text: str, rank: int) -> bool:
        """Whether `rank` is the first of its block's replicas."""
        from layout import coordinate

        coord = coordinate(self.ranks.index(rank), self.sizes)
        kinds = text.split(",")
        return all(
            c == 0 for c, k in zip(coord, kinds, strict=True) if not k.startswith("S")
        )

    def replicas(self, text: str, rank: int) -> list[int]:
        """The ranks holding the same block as `rank`, first holder first."""
        from layout import coordinate

        kinds = text.split(",")
        mine = coordinate(self.ranks.index(rank), self.sizes)
        same = []
        for p, r in enumerate(self.ranks):
            c = coordinate(p, self.sizes)
            if all(
                a == b
                for a, b, k in zip(c, mine, kinds, strict=True)
                if k.startswith("S")
            ):
                same.append(r)
        return same  # fmt: skip


def _overlap(a: Box, b: Box) -> Box | None:
    pairs = zip(a, b, strict=True)
    out = tuple(slice(max(x.start, y.start), min(x.stop, y.stop)) for x, y in pairs)
    return out if all(s.start < s.stop for s in out) else None


def _local(s: Box, box: Box) -> Box:
    """`s` in the frame of `box`."""
    pairs = zip(s, box, strict=True)
    return tuple(slice(x.start - b.start, x.stop - b.start) for x, b in pairs)


class Bench:
    def __init__(self, scenario: str, hidden: int, layers: int, rank: int) -> None:
        import torch
        from reshard.torch import CrossMeshMove, Layout, placements_of

        src_sizes, src_ranks, dst_sizes, dst_ranks, kinds = SCENARIOS[scenario]
        self.rank = rank
        self.src, self.dst = Side(src_sizes, src_ranks), Side(dst_sizes, dst_ranks)
        self.tensors = model(hidden, layers)
        self.texts = {n: kinds[k] for n, _, k in self.tensors}
        sources, dests = {}, {}
        self.locals = {}
        for n, shape, _ in self.tensors:
            s_text, d_text = self.texts[n]
            sources[n] = Layout(
                self.src.mesh, placements_of(s_text, src_sizes), shape, torch.float32
            )
            dests[n] = Layout(
                self.dst.mesh, placements_of(d_text, dst_sizes), shape, torch.float32
            )
            if rank in src_ranks:
                full = torch.arange(shape[0] * shape[1], dtype=torch.float32).reshape(
                    shape
                )
                self.locals[n] = full[self.src.box(shape, s_text, rank)].clone()
        self.move = CrossMeshMove(sources, dests)
        self.single = {
            n: CrossMeshMove({n: sources[n]}, {n: dests[n]}) for n in sources
        }
        self.groups = {}
        for n, _, _ in self.tensors:  # every rank creates every group, in order
            for r in dst_ranks:
                key = tuple(self.dst.replicas(self.texts[n][1], r))
                if len(key) > 1 and key not in self.groups:
                    self.groups[key] = torch.distributed.new_group(list(key))

    def reshard(self) -> dict[str, Any]:
        return self.move.run(self.locals)

    def per_tensor(self) -> dict[str, Any]:
        out = {}
        for n, m in self.single.items():
            out.update(m.run({n: self.locals.get(n)}))
        return out

    def gather_scatter(self) -> dict[str, Any]:
        import torch
        import torch.distributed as dist

        out = {}
        for n, shape, _ in self.tensors:
            s_text, d_text = self.texts[n]
            full = self._gather(n, shape, s_text)
            ops, got = [], None
            if self.rank == 0:
                ops = [
                    dist.P2POp(
                        dist.isend, _block(full, self.dst.box(shape, d_text, r)), r
                    )
                    for r in self.dst.ranks
                    if r != 0
                ]
            if self.rank in self.dst.ranks:
                mine = self.dst.box(shape, d_text, self.rank)
                if self.rank == 0:
                    got = full[mine].clone()
                else:
                    got = torch.empty(_shape(mine))
                    ops = [dist.P2POp(dist.irecv, got, 0)]
            _wait(ops)
            out[n] = got
        return out

    def _gather(
        self, n: str, shape: tuple[int, ...], s_text: str
    ) -> torch.Tensor | None:
        """Rank 0's full tensor from every block's first holder (None on
        other ranks)."""
        import torch
        import torch.distributed as dist

        holders = [r for r in self.src.ranks if self.src.first_holder(s_text, r)]
        if self.rank != 0:
            if self.rank in holders:
                _wait([dist.P2POp(dist.isend, self.locals[n].contiguous(), 0)])
            return None
        full = torch.empty(shape)
        parts = {
            r: torch.empty(_shape(self.src.box(shape, s_text, r))) for r in holders
        }
        _wait([dist.P2POp(dist.irecv, t, r) for r, t in parts.items() if r != 0])
        for r, t in parts.items():
            full[self.src.box(shape, s_text, r)] = self.locals[n] if r == 0 else t
        return full

    def nemo(self) -> dict[str, Any]:
        import torch
        import torch.distributed as dist

        out = {}
        for n, shape, _ in self.tensors:
            s_text, d_text = self.texts[n]
            ops, recvs = [], []
            mine = (
                self.dst.box(shape, d_text, self.rank)
                if self.rank in self.dst.ranks
                else None
            )
            got = torch.empty(_shape(mine)) if mine is not None else None
            for s in self.src.ranks:
                if not self.src.first_holder(s_text, s):
                    continue
                sbox = self.src.box(shape, s_text, s)
                for d in self.dst.ranks:
                    if not self.dst.first_holder(d_text, d):
                        continue
                    piece = _overlap(sbox, self.dst.box(shape, d_text, d))
                    if piece is None:
                        continue
                    dbox = self.dst.box(shape, d_text, d)
                    if s == d == self.rank:
                        got[_local(piece, dbox)] = self.locals[n][_local(piece, sbox)]
                    elif s == self.rank:
                        data = self.locals[n][_local(piece, sbox)].contiguous()
                        ops.append(dist.P2POp(dist.isend, data, d))
                    elif d == self.rank:
                        buf = torch.empty(_shape(piece))
                        ops.append(dist.P2POp(dist.irecv, buf, s))
                        recvs.append((_local(piece, dbox), buf))
            _wait(ops)
            for where, buf in recvs:
                got[where] = buf
            if got is not None:
                group = tuple(self.dst.replicas(d_text, self.rank))
                if len(group) > 1:
                    dist.broadcast(got, src=group[0], group=self.groups[group])
            out[n] = got
        return out


def _block(full: torch.Tensor, box: Box) -> torch.Tensor:
    return full[box].contiguous()


def _shape(box: Box) -> tuple[int, ...]:
    return tuple(s.stop - s.start for s in box)


def _wait(ops: list[Any]) -> None:
    import torch.distributed as dist

    if ops:
        for request in dist.batch_isend_irecv(ops):
            request.wait()


def rank_main(a: argparse.Namespace) -> None:
    import torch
    import torch.distributed as dist

    dist.init_process_group(
        "gloo", init_method=f"file://{a.store}", rank=a.rank, world_size=8,
        timeout=datetime.timedelta(seconds=600),
    )  # fmt: skip
    b = Bench(a.scenario, a.hidden, a.layers, a.rank)
    methods = {"reshard": b.reshard, "per_tensor": b.per_tensor,
               "gather_scatter": b.gather_scatter, "nemo": b.nemo}  # fmt: skip
    want = b.reshard()
    for name, f in methods.items():
        got = f()
        for n, w in want.items():
            assert (w is None) == (got[n] is None), (name, n)
            assert w is None or torch.equal(w, got[n]), (name, n)
    rounds: dict[str, list[float]] = {k: [] for k in methods}
    for _ in range(ROUNDS):
        for name, f in methods.items():
            rounds[name].append(statistics.median(slowest_rank_seconds(f, a.iters)))
    if a.rank == 0:
        mib = sum(s[0] * s[1] for _, s, _ in b.tensors) * 4 / 2**20
        medians = {k: statistics.median(v) for k, v in rounds.items()}
        print(json.dumps({"tensors": len(b.tensors), "mib": mib, **medians}))
    dist.destroy_process_group()


def scenario(name: str, a: argparse.Namespace) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        args = ["--scenario", name, "--store", str(Path(tmp) / "store"),
                "--hidden", str(a.hidden), "--layers", str(a.layers),
                "--iters", str(a.iters)]  # fmt: skip
        # One intra-op thread per rank, as torchrun sets for several ranks a
        # node (8 ranks' default threads on few cores spin against each other).
        env = dict(os.environ, OMP_NUM_THREADS="1")
        command = [sys.executable, __file__, *args]
        ranks = [
            subprocess.Popen(
                [*command, "--rank", str(r)], stdout=subprocess.PIPE, text=True, env=env
            )
            for r in range(8)
        ]
        outs = [p.communicate(timeout=3000)[0] for p in ranks]
    r = json.loads(outs[0])
    base = r["reshard"]
    rows = [f"{name}: {r['tensors']} tensors, {r['mib']:.0f} MiB: "
            f"Reshard {base * 1e3:.0f} ms"]  # fmt: skip
    labels = {"per_tensor": "per tensor", "gather_scatter": "gather+scatter",
              "nemo": "NeMo-RL's"}  # fmt: skip
    for key, label in labels.items():
        rows.append(f"{label} {r[key] * 1e3:.0f} ms ({r[key] / base:.2f}x)")
    return "; ".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int)
    parser.add_argument("--scenario")
    parser.add_argument("--store")
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--layers", type=int, default=33)
    parser.add_argument("--iters", type=int, default=3)
    a = parser.parse_args()
    if a.rank is not None:
        rank_main(a)
        return
    for name in SCENARIOS:
        print(scenario(name, a), flush=True)


if __name__ == "__main__":
    main()
