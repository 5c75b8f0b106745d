"""The timing loops of the Python benchmarks: the median of n calls in one
process, and each run's time on its slowest rank across torch ranks."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_us(f: Callable[[], object], n: int) -> float:
    """The median wall time of `n` calls of `f`, in µs."""
    times = []
    for _ in range(n):
        start = time.perf_counter()
        f()
        times.append((time.perf_counter() - start) * 1e6)
    return statistics.median(times)


def slowest_rank_seconds(f: Callable[[], object], iters: int) -> list[float]:
    """Each of `iters` runs of `f` on every rank of the default torch
    process group (after a barrier), timed on its slowest rank, in seconds."""
    import torch
    import torch.distributed as dist

    times = []
    for _ in range(iters):
        dist.barrier()
        start = time.perf_counter()
        f()
        elapsed = torch.tensor([time.perf_counter() - start])
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
        times.append(float(elapsed))
    return times
