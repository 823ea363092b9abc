"""Which ablation job belongs to which run, server-wide (bounded).

A run's ablation is started by its owner's page and kept on the owner's ``Run``; a shared
view or the owner's reload makes a new ``Run`` for the same id, which used to start
without its ablation (a shared view showed no verdict and no table).  The owner's page
publishes the job here, and every other page of the run finds it by the run's id.
"""

from __future__ import annotations

import threading

from explorer.state import Run

__all__ = ["ablation_job", "publish_ablation"]

_JOBS: dict[str, str] = {}
_MAX = 2000
_LOCK = threading.Lock()


def publish_ablation(run: Run, job: str) -> None:
    """``job`` is ``run``'s ablation (the oldest entries go first past the bound)."""
    run.ablation = job
    with _LOCK:  # every session's script thread writes here
        _JOBS.pop(run.id, None)
        _JOBS[run.id] = job
        while len(_JOBS) > _MAX:
            _JOBS.pop(next(iter(_JOBS)))


def ablation_job(run: Run) -> str | None:
    """The run's ablation job: its own, or the one its owner's page started."""
    if run.ablation is None:
        with _LOCK:
            run.ablation = _JOBS.get(run.id)
    return run.ablation
