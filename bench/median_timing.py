"""The one timing loop of the Python benchmarks: the median of n calls."""

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
