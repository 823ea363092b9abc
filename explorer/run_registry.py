"""What a run's owner page publishes for every other page of the same run (server-wide,
bounded): the step it shows, whether it is paused there, and its ablation job.

A shared view or the owner's reload makes a new ``Run`` and a new playback for the same run
id.  It used to start without the ablation (a shared view showed no verdict and no table),
playing (a reload of a paused run ran on to the ending) and from step 0 (8-9 s behind the
owner at load 8).  The owner's page publishes all three here, in one record per run, and
every other page of the run finds them by the run's id.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace

from explorer.state import Playback, Run

__all__ = [
    "ablation_job",
    "follow_owner",
    "owner_shown",
    "publish_ablation",
    "publish_owner_view",
]

#: Runs remembered; the least recently published go first.
MAX_RUNS = 2000
_LOCK = threading.Lock()


@dataclass(frozen=True)
class _Published:
    shown: int | None = None  # steps the owner's page shows (None: not yet published)
    paused: bool = False
    ablation: str | None = None


_RUNS: dict[str, _Published] = {}


def _update(run_id: str, **fields) -> None:
    with _LOCK:  # every session's script thread writes here
        entry = _RUNS.pop(run_id, _Published())  # re-inserted last: the oldest go first
        _RUNS[run_id] = replace(entry, **fields)
        while len(_RUNS) > MAX_RUNS:
            _RUNS.pop(next(iter(_RUNS)))


def _get(run_id: str) -> _Published | None:
    with _LOCK:
        return _RUNS.get(run_id)


def publish_ablation(run: Run, job: str) -> None:
    """``job`` is ``run``'s ablation."""
    run.ablation = job
    _update(run.id, ablation=job)


def ablation_job(run: Run) -> str | None:
    """The run's ablation job: its own, or the one its owner's page started."""
    if run.ablation is None:
        entry = _get(run.id)
        run.ablation = entry.ablation if entry is not None else None
    return run.ablation


def publish_owner_view(run: Run, play: Playback, shown: int) -> None:
    """The owner's page shows ``shown`` steps of ``run``, paused there or not."""
    entry = _get(run.id)
    if entry is None or (entry.shown, entry.paused) != (shown, play.paused):
        _update(run.id, shown=shown, paused=play.paused)


def owner_shown(run_id: str) -> int | None:
    """The steps the owner's page last showed (None: it never published): where a viewer
    joining the run starts."""
    entry = _get(run_id)
    return entry.shown if entry is not None else None


def follow_owner(run: Run, play: Playback, owner_page: bool) -> None:
    """Pause ``play`` where the owner's page is paused, or resume it once the owner does.

    ``owner_page``: this is the owner's own browser after a reload (it takes the paused
    state once, then its own buttons rule); otherwise a shared view, which follows the
    owner's page at every tick.
    """
    entry = _get(run.id)
    if entry is None or entry.shown is None:
        return
    if entry.paused and not play.paused:
        play.cursor = min(play.cursor, entry.shown)
        play.pause()
    elif entry.paused and not owner_page:
        play.target = entry.shown  # the owner stepped on
    elif not entry.paused and play.paused and not owner_page:
        play.resume()
