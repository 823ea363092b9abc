"""What the pool knows of a job: its record, the snapshot pages read, the pool's errors.

A :class:`JobRecord` is mutable and only touched under the pool's lock; a
:class:`JobView` is a frozen copy made under that lock, safe to read from any thread.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from csvm.jobs.compaction import EventStore
from csvm.jobs.process import Worker
from csvm.jobs.settings import ENV_VARS

__all__ = [
    "ACTIVE",
    "FINAL",
    "AddressQuotaExceeded",
    "JobRecord",
    "JobView",
    "NotOwner",
    "QuotaExceeded",
    "snapshot",
]

#: States of a job that has ended, and of one that still holds a place or a worker.
FINAL = ("done", "error", "stopped")
ACTIVE = ("queued", "running")
# What a running job's phase is called while its worker has not started the target.
_PHASES = {None: "waiting for a worker", "importing": "importing", "ready": "importing"}


class QuotaExceeded(RuntimeError):
    """An owner already has as many queued and running jobs as the server allows.

    Attributes
    ----------
    owner : str
    active : int
        Its queued plus running jobs.
    limit : int
        The cap (``CSVM_MAX_ACTIVE_PER_SESSION``).
    """

    def __init__(self, owner: str, active: int, limit: int):
        # Jobs, not runs: a Train run is the CSVM and each baseline, one job each.
        super().__init__(
            f"This browser already has {active} jobs queued or running (a Train run is one "
            f"job for the CSVM and one for each baseline), the most this server allows "
            f"({limit}). Wait for one to finish, or stop one, and press Start again."
        )
        self.owner, self.active, self.limit = owner, active, limit


class AddressQuotaExceeded(QuotaExceeded):
    """The browsers of one network address already have as many queued and running jobs
    as the server allows one address (``CSVM_PER_ADDRESS_JOBS``).

    A :class:`QuotaExceeded`, so every page that shows that error shows this one too.
    """

    def __init__(self, owner: str, active: int, limit: int):
        super().__init__(owner, active, limit)
        self.args = (
            f"The browsers on your network address already have {active} jobs queued or "
            f"running (a Train run is one job for the CSVM and one for each baseline), the "
            f"most this server allows one address ({limit}). Wait for one to finish, or "
            f"stop one, and press Start again. If a whole class reaches the server through "
            f"one router, the teacher can raise this limit "
            f"({ENV_VARS['max_active_per_address']}).",
        )


class NotOwner(PermissionError):
    """Only the session that submitted a job may stop it or send it commands."""


@dataclass(frozen=True)
class JobView:
    """A snapshot of one job, safe to read from any thread.

    ``state`` is "queued", "running", "done", "error" or "stopped"; ``phase`` says more
    while it is not final: "queued (place N)", "waiting for a worker" (its process is
    starting), "importing" (the process imports its libraries or the job's module) or
    "running" (the target has started); for a final job it equals ``state``.  ``place``
    is the 1-based place in the queue while queued.

    ``events`` are the events kept so far, compacted (see :mod:`csvm.jobs.compaction`:
    long series are thinned and array payloads kept on few events, so read them with
    ``event.get``); ``n_events`` counts every event received.  For a failed job ``error``
    holds the message (with the traceback for exceptions), ``error_type`` the exception's
    class name ("TimeLimit" when the job used up its CPU time, with ``limit_hit`` True;
    "WorkerCrashed" when its process died) and ``error_info`` its ``cause`` and
    ``suggested_eta`` attributes when it had them.  ``cpu_seconds`` is the CPU time the
    job has used (its process's import not included); ``nbytes`` the pickled size of the
    events and result kept for a finished job; ``suspended_seconds`` how long it was frozen
    for a fair share (its own timings include that time); ``meta`` what its submitter filed with it
    (the Train page: the run's settings, so a shared link shows the run as it was trained).
    """

    id: str
    name: str
    group: str | None
    owner: str | None
    state: str
    phase: str
    place: int | None
    events: list[dict[str, Any]]
    n_events: int
    result: Any
    error: str
    error_type: str
    error_info: dict[str, Any]
    submitted_at: float
    started_at: float | None
    finished_at: float | None
    cpu_seconds: float
    limit_hit: bool
    nbytes: int
    meta: dict[str, Any] = field(default_factory=dict)
    suspended_seconds: float = 0.0


# Compared by identity: a watcher and the record it follows refer to each other.
@dataclass(eq=False)
class JobRecord:
    """The pool's own, mutable record of one job; read and written under its lock only."""

    id: str
    name: str
    group: str | None
    owner: str | None
    payload: bytes  # pickled (target, kwargs), checked at submit
    store: EventStore
    state: str = "queued"
    result: Any = None
    result_bytes: int = 0
    error: str = ""
    error_type: str = ""
    error_info: dict[str, Any] = field(default_factory=dict)
    submitted_at: float = field(default_factory=time.time)
    started_at: float | None = None
    finished_at: float | None = None
    last_seen: float = field(default_factory=time.monotonic)
    worker: Worker | None = None
    commands: list[dict[str, Any]] = field(default_factory=list)  # sent while queued
    cpu_seconds: float = 0.0
    limit_hit: bool = False
    meta: dict[str, Any] = field(default_factory=dict)  # what the submitter filed with it
    nbytes: int = 0
    slice_start: float = 0.0  # time.monotonic() at its last start or resume
    suspended_since: float | None = None  # frozen for a fair share since (monotonic)
    suspended_seconds: float = 0.0  # total time frozen so far
    address: str | None = None  # the network address its browser connected from
    # Shared work (csvm.jobs.shared): a watcher's record follows the record that computes
    # (``source``) and holds no worker; the computing record is ``internal`` (no owner's
    # view lists it) and knows its ``watchers``.
    source: JobRecord | None = None
    internal: bool = False
    watchers: list[JobRecord] = field(default_factory=list)
    share_key: str | None = None
    hold: bool = False  # this watcher asked for a pause (its page holds its replay)
    paused_sent: bool = False  # the computing worker was told to pause
    stop_sent: bool = False  # the computing worker was told to stop (its result is partial)
    frozen_events: list[dict[str, Any]] | None = None  # a detached watcher's events
    frozen_n_events: int = 0


def snapshot(job: JobRecord, queue: Sequence[str]) -> JobView:
    """A frozen copy of ``job``; ``queue`` (job ids, in the order they will start) gives a
    queued job's place."""
    # A watcher of shared work shows the computing record's progress and outcome under
    # its own id, owner, name and meta; its own state follows the computing record's.
    work = job.source or job
    place = None
    phase = job.state
    cpu = work.cpu_seconds
    if job.state == "queued":
        place = queue.index(work.id) + 1
        phase = f"queued (place {place})"
    elif job.state == "running" and work.suspended_since is not None:
        phase = "paused for a fair share (another browser's first run goes first)"
        cpu = work.worker.cpu_seconds
    elif job.state == "running":
        phase = _PHASES.get(work.worker.phase, work.worker.phase)
        cpu = work.worker.cpu_seconds
    frozen = job.frozen_events is not None
    return JobView(
        id=job.id,
        name=job.name,
        group=job.group,
        owner=job.owner,
        state=job.state,
        phase=phase,
        place=place,
        events=list(job.frozen_events) if frozen else work.store.events(),
        n_events=job.frozen_n_events if frozen else work.store.n_received,
        result=work.result,
        error=work.error,
        error_type=work.error_type,
        error_info=dict(work.error_info),
        submitted_at=job.submitted_at,
        started_at=work.started_at,
        finished_at=job.finished_at,
        cpu_seconds=cpu,
        limit_hit=work.limit_hit,
        nbytes=job.nbytes,
        meta=dict(job.meta),
        suspended_seconds=work.suspended_seconds
        + (time.monotonic() - work.suspended_since if work.suspended_since is not None else 0.0),
    )
