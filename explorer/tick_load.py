"""How often a live page may tick on a busy server.

Every watching page reruns its live fragment about once a second.  While the Train page's
live figures were Plotly, one tick cost the server a fifth of a CPU second, and twenty
students watching at once asked for four CPU seconds a second from a two-core server that
also trains their runs: pages fell minutes behind.  With the figures drawn as SVG (stop 31,
:mod:`csvm.figures.chart_svg`) a tick costs about a twentieth (py-spy on the server, two
pages watching); twenty pages still ask for a core.  :class:`TickLoad` measures the
ticks' cost and counts the pages ticking, and stretches the interval so that page ticks
use at most ``share`` of the cores; the Train page's playback moves by elapsed time, so a
longer tick shows several steps at once instead of slowing the run down.

No Streamlit here: :mod:`explorer.live` keeps one instance for the server.
"""

from __future__ import annotations

import os
import threading
import time

#: The longest interval between two ticks, however busy the server.
MAX_INTERVAL = 5.0
#: A page that has not ticked for this long no longer counts as watching.
FORGET_AFTER = 6.0


class TickLoad:
    """The server's page ticks: their cost (a moving average) and the pages ticking.

    Parameters
    ----------
    share : float, default 0.5
        Fraction of the cores that page ticks may use together; the rest is left to
        training.
    cores : int, optional
        Default: the number of cores.

    Examples
    --------
    >>> load = TickLoad(share=0.5, cores=2)
    >>> for page in range(20):
    ...     load.record(f"page{page}", seconds=0.2, now=100.0)
    >>> round(load.interval(1.0, now=100.5), 1)
    4.0
    """

    def __init__(self, share: float = 0.5, cores: int | None = None) -> None:
        self.share = share
        self.cores = cores or os.cpu_count() or 1
        self._lock = threading.Lock()
        self._seen: dict[str, float] = {}
        self._cost = 0.0

    def record(self, page: str, seconds: float, now: float | None = None) -> None:
        """A page ticked and its tick took ``seconds`` of server time."""
        now = time.monotonic() if now is None else now
        with self._lock:
            self._seen[page] = now
            self._cost = seconds if not self._cost else 0.8 * self._cost + 0.2 * seconds

    def watching(self, now: float | None = None) -> int:
        """Pages that ticked in the last ``FORGET_AFTER`` seconds."""
        now = time.monotonic() if now is None else now
        with self._lock:
            for page, seen in list(self._seen.items()):
                if now - seen > FORGET_AFTER:
                    del self._seen[page]
            return len(self._seen)

    def interval(self, base: float, now: float | None = None) -> float:
        """Seconds between ticks: ``base``, stretched so that all pages' ticks use at
        most ``share`` of the cores (never beyond ``MAX_INTERVAL``)."""
        pages = self.watching(now)
        with self._lock:
            needed = pages * self._cost / (self.share * self.cores)
        return min(max(base, needed), max(base, MAX_INTERVAL))
