"""The job that shows a stored run which has no result: its recorded steps, then how it
ended ("interrupted at step k"), as the job's error.

A worker imports this module by name to run :func:`replay_ended`; it imports neither
Streamlit nor the rest of the app, so a warm worker takes it at once.

Why an error and not a plain ending: a job that ends without a result reads "done at step
k, no result" on the Train page, which an interrupted run is not.  The Train page's
headline names a failed job by its exception's class and the last line of its report
("K-CSVM failed at step 12: Interrupted: the server stopped while it trained"), so the
classes have plain one-word names and the reason is the message's last line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from csvm.runs.replay import replay_model

__all__ = ["ENDINGS", "Failed", "Interrupted", "Stopped", "Unfinished", "replay_ended"]


class Interrupted(RuntimeError):
    """The server stopped while the run trained (its last checkpoint is shown)."""


class Unfinished(RuntimeError):
    """The run still trains on another server (its last checkpoint is shown)."""


class Failed(RuntimeError):
    """The run failed on the server that trained it, with no result."""


class Stopped(RuntimeError):
    """The run was stopped before it had a result."""


#: A stored run's status -> the exception that ends its replay, and the reason given.
ENDINGS: dict[str, tuple[type[RuntimeError], str]] = {
    "interrupted": (
        Interrupted,
        "the server stopped while it trained, its last saved step is shown",
    ),
    "running": (Unfinished, "it still trains on another server, its last saved step is shown"),
    "error": (Failed, "it failed on the server that trained it"),
    "stopped": (Stopped, "it was stopped before it had a result"),
}


def replay_ended(
    emit: Callable[[dict[str, Any]], Any],
    events: Sequence[dict[str, Any]],
    status: str,
    step: int,
) -> None:
    """Emit ``events`` in order, then end the job with how the run ended.

    Parameters
    ----------
    emit : callable
        The pool's emitter (:class:`csvm.jobs.worker.Emitter`).
    events : sequence of dict
        The run's recorded events (start, steps).
    status : {"interrupted", "running", "error", "stopped"}
        The stored run's status.
    step : int
        The step it reached.

    Raises
    ------
    Interrupted, Unfinished, Failed, Stopped
        Always, after the events: "<status> at step <step>" and, on a line of its own,
        the reason.

    Examples
    --------
    >>> seen = []
    >>> try:
    ...     replay_ended(seen.append, [{"kind": "start"}], "interrupted", 0)
    ... except Interrupted as exc:
    ...     print(exc)
    interrupted at step 0
    the server stopped while it trained, its last saved step is shown
    >>> seen
    [{'kind': 'start'}]
    """
    replay_model(emit, events, None)
    error, reason = ENDINGS.get(status, ENDINGS["error"])
    raise error(f"{status} at step {int(step)}\n{reason}")
