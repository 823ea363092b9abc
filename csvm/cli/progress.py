"""Progress of the long commands: each finished step or cell as a line, and a bar with
the time left (:class:`csvm.analysis.progress.ProgressBar`, on stderr) below the lines.

On a terminal the bar is redrawn in place under the lines; into a file or pipe it writes a
line at most every ``interval`` seconds.  Steps may carry weights (what each costs) so the
time left follows the work, not the count: a curve's 2,000-image cell costs a hundred of
its 200-image ones.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence
from typing import IO

from csvm.analysis.progress import ProgressBar

__all__ = ["LineProgress"]


class LineProgress(ProgressBar):
    """A :class:`~csvm.analysis.progress.ProgressBar` that also prints a line per step.

    Parameters
    ----------
    weights : sequence of float
        One per step expected (all 1.0 when they cost alike); the ETA is the elapsed
        time scaled by the weight still to do.
    unit : str
        What a step is, for the bar's label.
    out : file, optional
        Where the lines go (default ``sys.stdout``); the bar goes to ``stream``.
    stream : file, optional
        Where the bar goes (default ``sys.stderr``).
    interval : float, default=10.0
        Least seconds between two bar lines when ``stream`` is not a terminal.
    """

    def __init__(
        self,
        weights: Sequence[float],
        unit: str,
        out: IO[str] | None = None,
        stream: IO[str] | None = None,
        interval: float = 10.0,
    ):
        super().__init__(total=len(weights), unit=unit, stream=stream, interval=interval)
        self.out = out if out is not None else sys.stdout
        self.weights = [max(float(w), 0.0) for w in weights]
        self.weight_total = sum(self.weights) or 1.0
        self.weight_done = 0.0
        self._weight_lock = threading.Lock()

    def eta(self) -> float | None:
        """Seconds left: the elapsed time per unit of weight done, times the weight left."""
        if self.done == 0 or self.weight_done <= 0:
            return None
        elapsed = time.perf_counter() - self.start
        return elapsed / self.weight_done * max(0.0, self.weight_total - self.weight_done)

    def remark(self, text: str) -> None:
        """Print ``text`` on the bar's stream (stderr) as a line of its own, above the bar:
        a remark on the run, not a result."""
        with self._lock:
            self.stream.write(("\r\x1b[K" if self._tty else "") + text + "\n")
            self.stream.flush()

    def line(self, text: str, index: int | None = None) -> None:
        """Print ``text`` (the step's result) above the bar, then count step ``index``
        (the next one in order when None) and redraw the bar."""
        with self._lock:
            if self._tty:  # clear the bar's line so the text does not run into it
                self.stream.write("\r\x1b[K")
                self.stream.flush()
            self.out.write(text + "\n")
            self.out.flush()
        with self._weight_lock:
            k = self.done if index is None else index
            self.weight_done += self.weights[k] if 0 <= k < len(self.weights) else 1.0
        self.update(1)
