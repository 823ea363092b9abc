"""Bounded storage of one job's events: thin long series, keep arrays on few points.

A 1000-iteration K-CSVM with 8 filters emits 1000 events each carrying its filters and the
pinned images' feature maps: about 144 MB if every event were kept.  The pages plot
scalars (objective, accuracy, filter norm) over the whole run and show arrays (filters,
maps, gradients) for the current or a chosen step, so a job keeps

* for every **series** -- events with the same ``(kind, model, classifier, step)`` -- at
  most ``max_points`` events, thinned uniformly: the events whose index in the series is a
  multiple of a stride that doubles whenever the series would exceed ``max_points``
  (between ``max_points / 2`` and ``max_points`` points, always the first), plus the
  series' **last** event;
* their **array payloads** (any numpy array of more than :data:`LARGE_BYTES` bytes, or a
  list/tuple of more than :data:`LARGE_ITEMS` items) only on the last event of the series
  and on the kept events whose index is a multiple of a second, coarser stride chosen the
  same way for at most ``max_array_points`` events; on the other kept events those keys
  are absent (read them with ``event.get``).

So memory is bounded while a job runs, not only once it ends, and a short run (fewer
events than both bounds, e.g. the 15-iteration classroom preset) keeps everything.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Hashable
from typing import Any

import numpy as np

__all__ = ["LARGE_BYTES", "LARGE_ITEMS", "EventStore", "is_large", "series_key"]

#: numpy arrays above this many bytes are payloads (a 16x16 float32 image is 1 KiB).
LARGE_BYTES = 512
#: lists and tuples above this many items are payloads.
LARGE_ITEMS = 64


def is_large(value: Any) -> bool:
    """Whether an event value is an array payload that compaction may drop."""
    if isinstance(value, np.ndarray):
        return value.nbytes > LARGE_BYTES
    if isinstance(value, (list, tuple)):
        return len(value) > LARGE_ITEMS
    return False


def series_key(event: Any) -> Hashable:
    """The series an event belongs to: ``(kind, model, classifier, step)``.

    ``step`` is part of the key so an L-CSVM's alternating "svm" and "filter" half-steps
    are thinned separately (a stride of 2 must not keep only one of them).
    """
    if not isinstance(event, dict):
        return ("?",)
    key = []
    for name in ("kind", "model", "classifier", "step"):
        value = event.get(name)
        key.append(value if isinstance(value, Hashable) else repr(value))
    return tuple(key)


class _Series:
    __slots__ = ("array_stride", "count", "kept", "last", "n_arrays", "stride")

    def __init__(self) -> None:
        self.stride = 1  # kept events have index % stride == 0
        self.array_stride = 1  # ... and keep their arrays when index % array_stride == 0
        self.count = 0
        self.n_arrays = 0  # kept events whose index is a multiple of array_stride
        # (arrival number, index in series, event); event arrays are already stripped
        # from those whose index is not a multiple of array_stride.
        self.kept: list[tuple[int, int, dict]] = []
        self.last: tuple[int, int, dict] | None = None  # newest, with its arrays


class EventStore:
    """The compacted events of one job (see the module docstring for the rule).

    Parameters
    ----------
    max_points : int
        Events kept per series (at least 2), the last one included.
    max_array_points : int
        Events per series that keep their array payloads, besides the last one.
    """

    def __init__(self, max_points: int = 1000, max_array_points: int = 32):
        if max_points < 2 or max_array_points < 1:
            raise ValueError(
                f"EventStore needs max_points >= 2 and max_array_points >= 1, got "
                f"{max_points} and {max_array_points}"
            )
        self.max_points = int(max_points)
        self.max_array_points = int(max_array_points)
        self.n_received = 0
        self._series: dict[Hashable, _Series] = {}
        self._arrival = itertools.count()
        self._cache: list[dict] | None = []

    def add(self, event: Any) -> None:
        """Take one event (the store keeps a reference; callers must not change it)."""
        self.n_received += 1
        self._cache = None
        s = self._series.setdefault(series_key(event), _Series())
        item = (next(self._arrival), s.count, event)
        s.count += 1
        if s.last is not None:
            self._retire(s, s.last)
        s.last = item

    def _retire(self, s: _Series, item: tuple[int, int, dict]) -> None:
        """The previous last event gives way: keep it thinned, or drop it."""
        arrival, index, event = item
        if index % s.stride:
            return
        with_arrays = index % s.array_stride == 0
        s.kept.append((arrival, index, event if with_arrays else _strip(event)))
        s.n_arrays += with_arrays
        # Room for the last event too: at most max_points - 1 kept before it.
        if len(s.kept) > self.max_points - 1:
            s.stride *= 2
            s.kept = [k for k in s.kept if k[1] % s.stride == 0]
            s.n_arrays = sum(k[1] % s.array_stride == 0 for k in s.kept)
        if s.n_arrays > self.max_array_points:
            s.array_stride *= 2
            s.kept = [
                k if k[1] % s.array_stride == 0 else (k[0], k[1], _strip(k[2])) for k in s.kept
            ]
            s.n_arrays = sum(k[1] % s.array_stride == 0 for k in s.kept)

    def events(self) -> list[dict]:
        """The kept events in arrival order (a new list each call)."""
        if self._cache is None:
            runs = [
                s.kept + ([s.last] if s.last is not None else []) for s in self._series.values()
            ]
            self._cache = [item[2] for item in heapq.merge(*runs, key=lambda item: item[0])]
        return list(self._cache)

    def __len__(self) -> int:
        return sum(len(s.kept) + (s.last is not None) for s in self._series.values())


def _strip(event: Any) -> Any:
    """The event without its array payloads (the same object when it has none)."""
    if not isinstance(event, dict) or not any(is_large(v) for v in event.values()):
        return event
    return {k: v for k, v in event.items() if not is_large(v)}
