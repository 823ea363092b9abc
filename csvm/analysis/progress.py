"""A text progress bar with an ETA for long command-line runs (on stderr).

    bar = ProgressBar(total=45 * 25, unit="iterations")
    clf.fit(X, y, callback=bar.callback)     # one step per recorded iteration
    bar.close()

On a terminal the bar redraws in place; into a file or pipe it writes a line at most every
``interval`` seconds, so a log of a one-hour run stays short.  Thread-safe: the callbacks
of sub-problems trained in parallel threads update it concurrently.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import IO, Any

__all__ = ["ProgressBar", "format_seconds"]


def format_seconds(seconds: float) -> str:
    """``3725`` -> ``"1:02:05"``, ``65`` -> ``"1:05"``."""
    seconds = max(0, int(round(seconds)))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class ProgressBar:
    """Steps done out of ``total``, elapsed time and the time left at the rate so far.

    Parameters
    ----------
    total : int
        Steps expected (a run that ends early simply closes the bar).
    unit : str
        What a step is, for the label.
    stream : file, optional
        Default ``sys.stderr``.
    interval : float
        Least seconds between two lines when the stream is not a terminal.
    width : int
        Characters of the bar itself.
    """

    def __init__(
        self,
        total: int,
        unit: str = "steps",
        stream: IO[str] | None = None,
        interval: float = 10.0,
        width: int = 30,
    ):
        self.total = max(1, int(total))
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.interval = float(interval)
        self.width = int(width)
        self.done = 0
        self.note = ""
        self.start = time.perf_counter()
        self._last_line = -1e300
        self._lock = threading.Lock()
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def eta(self) -> float | None:
        """Seconds left at the average rate so far (None before the first step)."""
        if self.done == 0:
            return None
        elapsed = time.perf_counter() - self.start
        return elapsed / self.done * max(0, self.total - self.done)

    def render(self) -> str:
        """The current line, e.g. ``[#####-----] 12/45 pairs 27 % 3:10 elapsed, ETA 8:20``."""
        frac = min(1.0, self.done / self.total)
        filled = int(round(frac * self.width))
        eta = self.eta()
        text = (
            f"[{'#' * filled}{'-' * (self.width - filled)}] {self.done}/{self.total} "
            f"{self.unit} {100 * frac:3.0f} % "
            f"{format_seconds(time.perf_counter() - self.start)} elapsed, ETA "
            f"{'?' if eta is None else format_seconds(eta)}"
        )
        return f"{text}  {self.note}" if self.note else text

    def update(self, steps: int = 1, note: str | None = None) -> None:
        """Count ``steps`` more and redraw (in place on a terminal, else now and then)."""
        with self._lock:
            self.done += int(steps)
            if note is not None:
                self.note = note
            now = time.perf_counter()
            if self._tty:
                self.stream.write("\r" + self.render() + "\x1b[K")
            elif now - self._last_line >= self.interval or self.done >= self.total:
                self.stream.write(self.render() + "\n")
                self._last_line = now
            else:
                return
            self.stream.flush()

    def callback(self, event: dict[str, Any]) -> None:
        """A CSVM ``fit`` callback: one step per recorded iteration (or half-step)."""
        pair = event.get("pair")
        self.update(1, note=f"last: pair {tuple(pair)}" if pair is not None else None)

    def close(self) -> None:
        """Finish the line with the final elapsed time."""
        with self._lock:
            elapsed = format_seconds(time.perf_counter() - self.start)
            end = f"\r{self.render()}\x1b[K\n" if self._tty else ""
            self.stream.write(f"{end}done: {self.done} {self.unit} in {elapsed}\n")
            self.stream.flush()
