"""The job that shows a reloaded run: it emits the run's recorded events and returns its
result, so the Train page draws a run from an export exactly as a run it trained (same
playback, same results panel, same shared links)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["replay_model"]


def replay_model(
    emit: Callable[[dict[str, Any]], Any],
    events: Sequence[dict[str, Any]],
    result: dict[str, Any] | None,
) -> dict[str, Any] | None:
    """Emit ``events`` in order, then return ``result`` (a :class:`csvm.jobs.JobPool`
    target, like :func:`csvm.runs.targets.run_model`).

    Examples
    --------
    >>> seen = []
    >>> replay_model(seen.append, [{"kind": "start"}], {"status": "done"})
    {'status': 'done'}
    >>> seen
    [{'kind': 'start'}]
    """
    for event in events:
        emit(dict(event))
    return result
