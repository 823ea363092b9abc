"""Timing for the benchmarks: the best of a few repeats (the least disturbed by other work
on the machine), and what the timed call returned."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def best_of(fn: Callable[[], Any], repeats: int = 3) -> tuple[float, Any]:
    """The fewest seconds ``fn()`` took over ``repeats`` calls, and its last result."""
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out
