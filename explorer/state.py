"""The Train page's state as plain dataclasses: a :class:`Run` and its :class:`Playback`.

Neither imports Streamlit, so both can be unit-tested on their own
(``tests/app/test_state.py``).  The pages keep them in ``st.session_state`` (a run under
``"runs"``, its playback under ``"play_<run id>"``); both pickle like the dicts they
replace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Run:
    """One Train run of this browser session: its settings and its jobs in the pool.

    ``jobs`` maps a model (``"csvm"``, ``"svm"``, ``"cnn"``) to its job id; ``owner`` is
    the browser that started it (None: unknown); ``ablation`` is the job id of its
    fixed-filter ablation once one is asked for.  ``stored``: it is shown from the run
    store (:mod:`explorer.run_store`), its jobs replays; its link names the store instead
    of those jobs, so whoever opens it gets it from the store, with its true owner.
    """

    id: str
    config: Any  # csvm.runs.config.RunConfig
    jobs: dict[str, str]
    owner: str | None = None
    created: float = 0.0
    ablation: str | None = None
    stored: bool = False

    def jobs_param(self) -> str:
        """The run's jobs as one URL value, ``"csvm:ID,svm:ID"`` (``"store"`` for a run
        shown from the run store)."""
        if self.stored:
            return "store"
        return ",".join(f"{m}:{j}" for m, j in self.jobs.items())

    def owned_by(self, owner: str | None) -> bool:
        """Whether ``owner`` started the run (only then can it stop or step it)."""
        return self.owner == owner


@dataclass
class Playback:
    """The paced replay of a run's recorded steps.

    The worker trains at full speed and records every step; the page shows them one per
    tick of its live fragment (the tick's interval is the pace), all at once at the
    ``live`` pace (0 seconds).  ``cursor`` is the number of steps shown; while paused the
    cursor moves only up to ``target``, which Step raises by one.  A stopped run jumps to
    its last recorded step.
    """

    cursor: int = 0
    paused: bool = False
    target: int = 0
    stop_at: float | None = None  # when a stop was asked for (time.monotonic())
    jump: bool = False  # show every recorded step at once (after Stop)
    stopping: bool = False  # Stop was pressed: the headline says so until the run ends
    clock: float | None = None  # time.monotonic() of the last timed tick
    carry: float = 0.0  # a fraction of a step earned but not shown yet

    def advance(self, available: int, pace: float, now: float | None = None) -> int:
        """One tick: move the cursor on by the pace; returns the number of steps to show.

        ``available`` is the number of recorded steps, ``pace`` the seconds per step
        (0: show every step as soon as it arrives).  With ``now`` (``time.monotonic()``)
        the cursor moves by the time since the last tick, so a page that ticks less
        often on a busy server still plays at its pace (several steps a tick); without
        it, one step a tick.
        """
        if self.jump:
            self.cursor = available
        elif self.paused:
            self.cursor = min(self.target, available)
        elif pace == 0.0:
            self.cursor = available
        else:
            if now is None or self.clock is None:
                steps = 1
            else:
                self.carry += max(now - self.clock, 0.0) / pace
                steps = int(self.carry)
                self.carry -= steps
            self.clock = now
            self.cursor = min(self.cursor + steps, available)
            if self.cursor >= available:
                self.carry = 0.0  # waiting for the worker earns no burst later
        return self.cursor

    def pause(self) -> None:
        """Hold the cursor where it is."""
        self.paused = True
        self.target = self.cursor

    def resume(self) -> None:
        """Go on at the pace from where the cursor is."""
        self.paused = False
        self.clock = None  # the time paused earns no steps
        self.target = self.cursor

    def toggle(self) -> None:
        """Pause a playing run, resume a paused one."""
        if self.paused:
            self.resume()
        else:
            self.pause()

    def step(self, available: int) -> bool:
        """Show exactly one more step (pausing first if playing).

        Returns True when that step is not recorded yet: the worker must be asked for it.
        """
        if not self.paused:
            self.pause()
        self.target += 1
        return self.target > available

    def shown(self) -> int:
        """The steps the page is about to show: while paused the cursor catches up with
        ``target`` in the live fragment, drawn after the buttons."""
        return self.target if self.paused else self.cursor

    def behind(self, available: int) -> bool:
        """Whether recorded steps remain to be shown."""
        return self.cursor < available

    def stop(self, now: float) -> None:
        """A stop was asked for at ``now``: unpause, and show the last step at once."""
        self.stop_at = now
        self.paused = False
        self.jump = True
        self.stopping = True

    def stop_overdue(self, now: float, grace: float) -> bool:
        """True once (then forgotten) when a stop asked for ``grace`` seconds ago has not
        happened: the page then kills the run's jobs."""
        if self.stop_at is not None and now - self.stop_at > grace:
            self.stop_at = None
            return True
        return False
