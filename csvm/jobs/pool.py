"""Background training jobs in worker processes: a shared queue with owners and limits.

Why processes: CPU-bound training in a thread of the Streamlit server slows every session
(one process, the GIL), and only a process can be stopped for sure in the middle of a long
C-level SVM solve.  Each job runs in its own process, so Stop terminates just that job.

Why warm spares: starting a Python process that imports numpy and scikit-learn takes a
second or two.  The pool keeps idle processes that have already imported the libraries
and wait for a job, and replaces each one as it is used, so a run starts streaming
events almost at once.

Why owners: one server serves a class.  Every job belongs to the browser session that
submitted it (its ``owner``, an opaque id): only the owner may stop it or send it
commands, each owner may have a bounded number of jobs queued or running, and the
finished jobs of an owner whose tab is alive are not forgotten to make room for others.

Nothing here imports Streamlit; the pages call :class:`JobPool` from a
``st.cache_resource`` factory so one pool serves the whole server.
"""

from __future__ import annotations

import atexit
import pickle
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from csvm.jobs.compaction import EventStore
from csvm.jobs.records import (
    ACTIVE,
    FINAL,
    AddressQuotaExceeded,
    JobRecord,
    JobView,
    NotOwner,
    QuotaExceeded,
)
from csvm.jobs.scheduler import READ_LIMIT, Scheduler
from csvm.jobs.settings import PoolSettings
from csvm.jobs.shared import SharedWork, work_key

__all__ = ["AddressQuotaExceeded", "JobPool", "JobView", "NotOwner", "QuotaExceeded"]

_DEFAULT_PRELOAD = ("numpy", "sklearn.svm", "csvm.runs.targets")
_ADDRESS_COUNTS = ("queued", "running", "suspended")


def _pickled(target: Callable[..., Any], kwargs: dict[str, Any]) -> bytes:
    """The job as the worker receives it, pickled now: an error in the writer thread
    would leave the job waiting for a message that never comes."""
    try:
        return pickle.dumps((target, dict(kwargs)), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # noqa: BLE001 - re-raised with what to do about it
        raise TypeError(
            f"job target and kwargs must be picklable (target must be a top-level "
            f"function of an importable module): {exc}"
        ) from exc


class JobPool(SharedWork, Scheduler):
    """A server-wide pool of worker processes with one FIFO queue.

    Parameters
    ----------
    max_workers, lease_seconds, tick_seconds, max_finished : optional
        Override the same fields of ``settings`` (kept for callers of the first version).
    preload : sequence of str
        Modules the idle workers import in advance.
    settings : PoolSettings, optional
        Every limit (default :meth:`PoolSettings.from_env`, so the ``CSVM_*`` environment
        variables apply).
    """

    def __init__(
        self,
        max_workers: int | None = None,
        lease_seconds: float | None = None,
        preload: Sequence[str] = _DEFAULT_PRELOAD,
        tick_seconds: float | None = None,
        max_finished: int | None = None,
        *,
        settings: PoolSettings | None = None,
    ):
        merged = (settings or PoolSettings.from_env()).with_(
            max_workers=max_workers,
            lease_seconds=lease_seconds,
            tick_seconds=tick_seconds,
            max_finished=max_finished,
        )
        super().__init__(merged, preload)
        self._init_shared()
        atexit.register(self.shutdown)

    # Read-only views of the settings, as attributes of the first version.
    max_workers = property(lambda self: self.settings.max_workers)
    lease_seconds = property(lambda self: self.settings.lease_seconds)
    max_finished = property(lambda self: self.settings.max_finished)

    @property
    def closed(self) -> bool:
        """Whether :meth:`shutdown` has run: the server is stopping, every job it held is
        "stopped" and no job can be submitted."""
        return self._closed

    # -- public API -----------------------------------------------------------------------
    def submit(
        self,
        target: Callable[..., Any],
        kwargs: dict[str, Any],
        name: str = "",
        group: str | None = None,
        owner: str | None = None,
        meta: dict[str, Any] | None = None,
        address: str | None = None,
        share: str | None = None,
    ) -> str:
        """Queue ``target(emit, **kwargs)``; returns the job id.

        ``meta`` is kept with the job and shown in its views (never sent to the worker).
        ``address`` is the network address of the owner's browser (default: the one last
        given for ``owner`` with :meth:`note_address`): the fair share and the cap per
        address count by it.

        ``share`` (default None: not shared) declares the job deterministic given its
        target, its kwargs and this string (e.g. the digest of the data it reads): an
        identical job queued, running or finished is then computed once, this job watching
        it with its own id, owner, lease and controls (:mod:`csvm.jobs.shared`; a
        ``paused`` kwarg is the watcher's first Pause).  ``PoolSettings.share_jobs``
        False (``CSVM_SHARE_JOBS=0``) ignores it.

        ``target`` must be a top-level function of an importable module (workers import it
        by name), and its result must be picklable.  ``emit`` is an
        :class:`~csvm.jobs.worker.Emitter`: ``emit(event)``, ``emit.receive(timeout)``,
        ``emit.pending()``.

        Raises
        ------
        QuotaExceeded
            ``owner`` already has ``max_active_per_owner`` jobs queued or running;
            :class:`AddressQuotaExceeded` (a QuotaExceeded): its address already has
            ``settings.address_limit``.
        TypeError
            The target or kwargs cannot be pickled.
        """
        payload = _pickled(target, kwargs)
        with self._lock:
            if self._closed:
                raise RuntimeError("the job pool has been shut down")
            if owner is not None:
                self._owner_seen[owner] = time.monotonic()
                address = address or self._addresses.get(owner)
                active = sum(
                    j.owner == owner and j.state in ACTIVE and not j.internal
                    for j in self._jobs.values()
                )
                if active >= self.settings.max_active_per_owner:
                    raise QuotaExceeded(owner, active, self.settings.max_active_per_owner)
            self._check_address(owner, address)
            job = JobRecord(
                id=uuid.uuid4().hex[:12],
                name=name,
                group=group,
                owner=owner,
                payload=payload,
                meta=dict(meta or {}),
                address=address,
                store=EventStore(
                    self.settings.max_points_per_series,
                    self.settings.max_array_points_per_series,
                ),
            )
            if share is None or not self.settings.share_jobs:
                self._jobs[job.id] = job
                self._queue.append(job.id)
            else:
                job.hold = bool(kwargs.get("paused"))
                self._submit_shared(job, work_key(target, kwargs, share))
            self._start_queued()
            return job.id

    def _check_address(self, owner: str | None, address: str | None) -> None:
        """Raise AddressQuotaExceeded when ``address`` has no room for one more job."""
        limit = self.settings.address_limit
        if not limit or address is None:
            return
        active = sum(
            j.address == address and j.state in ACTIVE and not j.internal
            for j in self._jobs.values()
        )
        if active >= limit:
            raise AddressQuotaExceeded(owner or "", active, limit)

    def note_address(self, owner: str, address: str | None) -> None:
        """Remember the network address ``owner``'s browser connects from: its later
        jobs count against that address's cap and share (see
        :attr:`PoolSettings.max_active_per_address`).  None is ignored."""
        if address is None or owner is None:
            return
        with self._lock:
            if self._addresses.get(owner) != address:
                self._note_address(owner, address)

    def poll(self, job_id: str, viewer: str | None = None) -> JobView | None:
        """Drain the job's new events, renew its lease and return a snapshot.

        Any viewer renews the job's lease (watching a run from any page keeps it alive);
        a poll by the job's owner (``viewer``) is also a :meth:`heartbeat` of that owner.
        Returns None for a job the pool does not know, or has forgotten to make room.
        """
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return None
            now = time.monotonic()
            job.last_seen = now
            if viewer is not None and viewer == job.owner:
                self._heartbeat(viewer, now)
            work = job.source or job  # a watcher of shared work reads the work's messages
            if work.state == "running" and work.worker is not None:
                self._update_running(work)
                if work.state != "running":  # a slot is free: the next job need not wait
                    self._start_queued()
            return self._view(job)

    def get(self, job_id: str) -> JobView | None:
        """A snapshot of the job without renewing its lease (None if unknown)."""
        with self._lock:
            job = self._jobs.get(job_id)
            return None if job is None else self._view(job)

    def heartbeat(self, owner: str) -> int:
        """The owner's tab is alive: renew all its jobs' leases, protect its finished jobs.

        Returns the number of its jobs still queued or running.
        """
        with self._lock:
            return self._heartbeat(owner, time.monotonic())

    def jobs(self, owner: str | None = None, group: str | None = None) -> list[JobView]:
        """Snapshots of every job (of one owner and/or group, if given), oldest first."""
        with self._lock:
            self._tick()
            return [
                self._view(j)
                for j in self._jobs.values()
                if not j.internal
                and (owner is None or j.owner == owner)
                and (group is None or j.group == group)
            ]

    def cancel(self, job_id: str, owner: str | None) -> None:
        """Stop a job: a queued one leaves the queue, a running one's process ends.

        The job's state is "stopped" when this returns; its process is signalled and
        reaped by the pool's ticker, not waited for here.  Unknown or finished jobs are
        left alone.

        Parameters
        ----------
        job_id : str
        owner : str or None
            The session asking.  ``None`` is reserved for the server itself (no check):
            pages must pass the session's id.

        Raises
        ------
        NotOwner
            ``owner`` is not the session that submitted the job.
        """
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return
            self._check_owner(job, owner, "stop")
            if job.state in FINAL:
                return
            work = job.source or job
            if work.state == "running" and work.worker is not None:
                self._drain(work, limit=READ_LIMIT)
            if job.state in FINAL:  # it finished while we looked
                return
            self._finish(job, "stopped")  # a watcher of shared work detaches

    def cancel_owner(self, owner: str, group: str | None = None) -> int:
        """Stop every queued or running job of ``owner`` (in ``group``, if given).

        Returns the number of jobs stopped.
        """
        if owner is None:
            raise ValueError("cancel_owner needs an owner; use cancel(job_id, None) per job")
        with self._lock:
            victims = [
                j
                for j in self._jobs.values()
                if j.owner == owner
                and j.state in ACTIVE
                and not j.internal
                and (group is None or j.group == group)
            ]
            for job in victims:
                self._finish(job, "stopped")
            return len(victims)

    def send(self, job_id: str, command: dict[str, Any], owner: str | None) -> bool:
        """Send a command to a job; its target reads it with ``emit.receive``.

        A command sent to a queued job is delivered when it starts.  Returns False when
        the job has finished or is unknown (nobody will read the command).

        Raises
        ------
        NotOwner
            ``owner`` is not the job's owner (``None`` is reserved for the server).
        TypeError
            ``command`` is not a picklable dict.
        """
        if not isinstance(command, dict):
            raise TypeError(f"a command must be a dict such as {{'cmd': 'pause'}}, got {command!r}")
        try:
            pickle.dumps(command, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 - re-raised with what to do about it
            raise TypeError(f"a command must be picklable: {exc}") from exc
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return False
            self._check_owner(job, owner, "send commands to")
            if job.source is not None:  # a watcher of shared work: its own controls
                return self._send_shared(job, command)
            if job.state == "queued":
                job.commands.append(dict(command))
                return True
            if job.state == "running" and job.worker is not None:
                job.worker.send(dict(command))
                return True
            return False

    def stats(self) -> dict[str, Any]:
        """Counts for a status display or a benchmark.

        Keys: ``queued``, ``running``, ``finished``, ``finished_bytes`` (and its
        ``finished_bytes_budget``), ``evicted`` (finished jobs forgotten so far),
        ``owners`` (owner -> {"queued", "running", "finished", "bytes", "alive"}),
        ``addresses`` (network address -> {"queued", "running", "suspended"}, its jobs
        still active), ``suspended`` (jobs frozen for a fair share),
        ``workers`` ({"max", "spares", "dying"}), ``shared`` (:mod:`csvm.jobs.shared`:
        works ``computed``, submissions ``attached`` to one running or ``reused`` from a
        finished one, works ``live``, results ``cached`` and their ``cached_bytes``).

        ``queued`` and ``running`` count the work (shared work once); ``owners`` and
        ``addresses`` count each owner's own jobs, watchers of shared work included.
        """
        with self._lock:
            now = time.monotonic()
            states = Counter(
                j.state for j in self._jobs.values() if j.source is None or j.state in FINAL
            )
            owners: dict[str, dict[str, Any]] = {}
            for j in self._jobs.values():
                if j.owner is None or j.internal:
                    continue
                o = owners.setdefault(
                    j.owner,
                    {
                        "queued": 0,
                        "running": 0,
                        "finished": 0,
                        "bytes": 0,
                        "alive": self._alive(j.owner, now),
                    },
                )
                o["finished" if j.state in FINAL else j.state] += 1
                o["bytes"] += j.nbytes
            addresses: dict[str, dict[str, int]] = {}
            for j in self._jobs.values():
                if j.address is not None and j.state in ACTIVE and not j.internal:
                    a = addresses.setdefault(j.address, dict.fromkeys(_ADDRESS_COUNTS, 0))
                    frozen = (j.source or j).suspended_since is not None
                    a["suspended" if frozen else j.state] += 1
            return {
                "queued": states["queued"],
                "running": states["running"],
                "finished": sum(states[s] for s in FINAL),
                "finished_bytes": self._retention.total_bytes,
                "finished_bytes_budget": self.settings.finished_bytes_budget,
                "evicted": self._n_evicted,
                "owners": owners,
                "addresses": addresses,
                "suspended": sum(j.suspended_since is not None for j in self._jobs.values()),
                "workers": {
                    "max": self.settings.max_workers,
                    "spares": len(self._spares),
                    "dying": len(self._dying),
                },
                "shared": self._shared_stats(),
            }

    def shutdown(self) -> None:
        """Terminate every worker process; queued and running jobs become "stopped"."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for job in list(self._jobs.values()):  # a work that ends leaves the records
                if job.state not in FINAL:
                    self._finish(job, "stopped")
            workers = self._dying + self._spares
            self._dying, self._spares = [], []
            for worker in workers:  # signal all first, so they end in parallel
                worker.signal_stop()
            for worker in workers:
                worker.stop()
