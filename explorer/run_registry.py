"""What a run's owner page publishes for every other page of the same run (server-wide,
bounded): its ablation job, and whether it is paused and at which step.

A shared view or the owner's reload makes a new ``Run`` and a new playback for the same run
id.  It used to start without the ablation (a shared view showed no verdict and no table)
and playing (a reload of a paused run ran on to the ending).  The owner's page publishes
both here, and every other page of the run finds them by the run's id.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from explorer.state import Playback, Run

__all__ = ["ablation_job", "follow_owner", "publish_ablation", "publish_pause"]

_MAX = 2000
_LOCK = threading.Lock()


@dataclass(frozen=True)
class _Pause:
    paused: bool
    shown: int


_ABLATIONS: dict[str, str] = {}
_PAUSES: dict[str, _Pause] = {}


def _put(table: dict, key: str, value) -> None:
    with _LOCK:  # every session's script thread writes here
        table.pop(key, None)  # re-inserted last: the oldest entries go first
        table[key] = value
        while len(table) > _MAX:
            table.pop(next(iter(table)))


def publish_ablation(run: Run, job: str) -> None:
    """``job`` is ``run``'s ablation."""
    run.ablation = job
    _put(_ABLATIONS, run.id, job)


def ablation_job(run: Run) -> str | None:
    """The run's ablation job: its own, or the one its owner's page started."""
    if run.ablation is None:
        with _LOCK:
            run.ablation = _ABLATIONS.get(run.id)
    return run.ablation


def publish_pause(run: Run, play: Playback) -> None:
    """The owner's page is paused (or not) showing ``play.shown()`` steps."""
    entry = _Pause(play.paused, play.shown())
    with _LOCK:
        unchanged = _PAUSES.get(run.id) == entry
    if not unchanged:
        _put(_PAUSES, run.id, entry)


def follow_owner(run: Run, play: Playback, owner_page: bool) -> None:
    """Pause ``play`` where the owner's page is paused, or resume it once the owner does.

    ``owner_page``: this is the owner's own browser after a reload (it takes the paused
    state once, then its own buttons rule); otherwise a shared view, which follows the
    owner's page at every tick.
    """
    with _LOCK:
        entry = _PAUSES.get(run.id)
    if entry is None:
        return
    if entry.paused and not play.paused:
        play.cursor = min(play.cursor, entry.shown)
        play.pause()
    elif entry.paused and not owner_page:
        play.target = entry.shown  # the owner stepped on
    elif not entry.paused and play.paused and not owner_page:
        play.resume()
