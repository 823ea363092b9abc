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
import multiprocessing as mp
import multiprocessing.connection as mp_connection
import pickle
import signal
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from csvm.jobs.compaction import EventStore
from csvm.jobs.process import Worker, crash_message
from csvm.jobs.retention import Retention
from csvm.jobs.settings import ENV_VARS, PoolSettings
from csvm.jobs.worker import time_limit_message

__all__ = ["JobPool", "JobView", "NotOwner", "QuotaExceeded"]

_FINAL = ("done", "error", "stopped")
_ACTIVE = ("queued", "running")
# Messages read per job in one tick: a job emitting faster than the parent unpickles
# could otherwise hold the pool lock (and every other session's poll) indefinitely.
_READ_LIMIT = 1000
# CPU seconds past the limit before the parent kills a job itself: the child's own
# SIGXCPU handler reports first when it can (it cannot inside a long C call).
_LIMIT_GRACE = 1.0
# How long the reader thread waits for a message before it looks for new jobs.
_PUMP_IDLE = 0.1
_PHASES = {None: "waiting for a worker", "importing": "importing", "ready": "importing"}

_DEFAULT_PRELOAD = ("numpy", "sklearn.svm", "csvm.runs.targets")


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
        super().__init__(
            f"this session already has {active} runs queued or running, the most the server "
            f"allows per session ({limit}, set by {ENV_VARS['max_active_per_owner']}); wait "
            f"for your runs to finish or stop one"
        )
        self.owner, self.active, self.limit = owner, active, limit


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
    events and result kept for a finished job.
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


@dataclass
class _Job:
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
    nbytes: int = 0


class JobPool:
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
        self.settings = (settings or PoolSettings.from_env()).with_(
            max_workers=max_workers,
            lease_seconds=lease_seconds,
            tick_seconds=tick_seconds,
            max_finished=max_finished,
        )
        self._ctx = mp.get_context(self.settings.start_method)
        self._preload = tuple(preload)
        self._lock = threading.RLock()
        self._jobs: dict[str, _Job] = {}
        self._queue: deque[str] = deque()
        self._spares: list[Worker] = []
        self._dying: list[Worker] = []  # signalled, not yet reaped
        self._owner_seen: dict[str, float] = {}
        self._retention = Retention(self.settings.finished_bytes_budget, self.settings.max_finished)
        self._n_evicted = 0
        self._closed = False
        self._spares_wanted = threading.Event()  # set when spares are missing
        self._spares_wanted.set()
        self._ticker = threading.Thread(
            target=self._tick_forever, name="csvm-job-ticker", daemon=True
        )
        self._ticker.start()
        self._pump = threading.Thread(target=self._pump_forever, name="csvm-job-pump", daemon=True)
        self._pump.start()
        self._spare_maker = threading.Thread(
            target=self._make_spares_forever, name="csvm-job-spares", daemon=True
        )
        self._spare_maker.start()
        atexit.register(self.shutdown)

    # Read-only views of the settings, as attributes of the first version.
    max_workers = property(lambda self: self.settings.max_workers)
    lease_seconds = property(lambda self: self.settings.lease_seconds)
    max_finished = property(lambda self: self.settings.max_finished)

    # -- public API -----------------------------------------------------------------------
    def submit(
        self,
        target: Callable[..., Any],
        kwargs: dict[str, Any],
        name: str = "",
        group: str | None = None,
        owner: str | None = None,
    ) -> str:
        """Queue ``target(emit, **kwargs)``; returns the job id.

        ``target`` must be a top-level function of an importable module (workers import it
        by name), and its result must be picklable.  ``emit`` is an
        :class:`~csvm.jobs.worker.Emitter`: ``emit(event)``, ``emit.receive(timeout)``,
        ``emit.pending()``.

        Raises
        ------
        QuotaExceeded
            ``owner`` already has ``max_active_per_owner`` jobs queued or running.
        TypeError
            The target or kwargs cannot be pickled.
        """
        try:
            # Pickle now: an error in the writer thread would leave the job waiting for a
            # message that never comes.
            payload = pickle.dumps((target, dict(kwargs)), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 - re-raised with what to do about it
            raise TypeError(
                f"job target and kwargs must be picklable (target must be a top-level "
                f"function of an importable module): {exc}"
            ) from exc
        with self._lock:
            if self._closed:
                raise RuntimeError("the job pool has been shut down")
            if owner is not None:
                self._owner_seen[owner] = time.monotonic()
                active = sum(j.owner == owner and j.state in _ACTIVE for j in self._jobs.values())
                if active >= self.settings.max_active_per_owner:
                    raise QuotaExceeded(owner, active, self.settings.max_active_per_owner)
            job = _Job(
                id=uuid.uuid4().hex[:12],
                name=name,
                group=group,
                owner=owner,
                payload=payload,
                store=EventStore(
                    self.settings.max_points_per_series,
                    self.settings.max_array_points_per_series,
                ),
            )
            self._jobs[job.id] = job
            self._queue.append(job.id)
            self._start_queued()
            return job.id

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
            if job.state == "running":
                self._update_running(job)
                if job.state != "running":  # a slot is free: the next job need not wait
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
                if (owner is None or j.owner == owner) and (group is None or j.group == group)
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
            if job.state in _FINAL:
                return
            if job.state == "running":
                self._drain(job, limit=_READ_LIMIT)
            if job.state in _FINAL:  # it finished while we looked
                return
            self._finish(job, "stopped")

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
                if j.owner == owner and j.state in _ACTIVE and (group is None or j.group == group)
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
        ``workers`` ({"max", "spares", "dying"}).
        """
        with self._lock:
            now = time.monotonic()
            states = Counter(j.state for j in self._jobs.values())
            owners: dict[str, dict[str, Any]] = {}
            for j in self._jobs.values():
                if j.owner is None:
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
                o["finished" if j.state in _FINAL else j.state] += 1
                o["bytes"] += j.nbytes
            return {
                "queued": states["queued"],
                "running": states["running"],
                "finished": sum(states[s] for s in _FINAL),
                "finished_bytes": self._retention.total_bytes,
                "finished_bytes_budget": self.settings.finished_bytes_budget,
                "evicted": self._n_evicted,
                "owners": owners,
                "workers": {
                    "max": self.settings.max_workers,
                    "spares": len(self._spares),
                    "dying": len(self._dying),
                },
            }

    def shutdown(self) -> None:
        """Terminate every worker process; queued and running jobs become "stopped"."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for job in self._jobs.values():
                if job.state not in _FINAL:
                    self._finish(job, "stopped")
            workers = self._dying + self._spares
            self._dying, self._spares = [], []
            for worker in workers:  # signal all first, so they end in parallel
                worker.signal_stop()
            for worker in workers:
                worker.stop()

    # -- owners ---------------------------------------------------------------------------
    def _heartbeat(self, owner: str, now: float) -> int:
        self._owner_seen[owner] = now
        active = 0
        for job in self._jobs.values():
            if job.owner == owner and job.state in _ACTIVE:
                job.last_seen = now
                active += 1
        return active

    def _alive(self, owner: str | None, now: float) -> bool:
        seen = self._owner_seen.get(owner) if owner is not None else None
        return seen is not None and now - seen <= self.settings.lease_seconds

    @staticmethod
    def _check_owner(job: _Job, owner: str | None, action: str) -> None:
        if owner is not None and job.owner != owner:
            raise NotOwner(
                f"only the session that started job {job.id} may {action} it; "
                f"this session can watch it (shared view) but not change it"
            )

    # -- scheduling -----------------------------------------------------------------------
    def _tick_forever(self) -> None:
        while not self._closed:
            time.sleep(self.settings.tick_seconds)
            try:
                with self._lock:
                    if not self._closed:
                        self._tick()
            except Exception:  # noqa: BLE001 - the ticker must outlive one bad tick
                # Without the ticker queued jobs would wait for the next poll and leases
                # would never expire; the next public call raises the error to a caller.
                pass

    def _pump_forever(self) -> None:
        """Read running jobs' messages as they arrive, not only when someone polls.

        A job's pipe holds 1 MiB; read only at each poll or tick, a job emitting images
        would stream at a few MB/s and its events would reach the page late.  The wait
        is outside the lock; a pipe closed meanwhile (Stop) only makes it return early,
        and the job is looked at again under the lock.
        """
        while not self._closed:
            with self._lock:
                watched = {
                    j.worker.outbox: j
                    for j in self._jobs.values()
                    if j.state == "running" and j.worker is not None and not j.worker.eof
                }
            if not watched:
                time.sleep(_PUMP_IDLE)
                continue
            try:
                ready = mp_connection.wait(list(watched), timeout=_PUMP_IDLE)
            except (OSError, ValueError):  # a pipe closed before or during the wait
                ready = list(watched)
            if not ready:
                continue
            try:
                with self._lock:
                    for conn in ready:
                        job = watched[conn]
                        if job.state == "running" and job.worker is not None:
                            self._update_running(job)
                    if any(watched[c].state != "running" for c in ready):
                        self._start_queued()
            except Exception:  # noqa: BLE001 - like the ticker, outlive one bad read
                time.sleep(_PUMP_IDLE)

    def _tick(self) -> None:
        """Collect messages, reap ended processes, expire leases, start queued jobs."""
        now = time.monotonic()
        self._dying = [w for w in self._dying if not w.reaped()]
        for job in list(self._jobs.values()):
            if job.state == "running":
                self._update_running(job)
            if job.state in _ACTIVE and now - job.last_seen > self.settings.lease_seconds:
                self._finish(job, "stopped")
        self._start_queued()
        self._evict(now)
        # Forget owners that are silent and have no jobs left (a server runs for weeks).
        with_jobs = {j.owner for j in self._jobs.values()}
        for owner, seen in list(self._owner_seen.items()):
            if owner not in with_jobs and now - seen > self.settings.lease_seconds:
                del self._owner_seen[owner]

    def _update_running(self, job: _Job) -> None:
        """Read a running job's messages; notice its end, a crash or its CPU limit."""
        worker = job.worker
        self._drain(job, limit=_READ_LIMIT)
        if job.state != "running":
            return
        cpu = worker.update_cpu()  # before is_alive(), which reaps: /proc vanishes then
        if not worker.process.is_alive():
            # Everything the child wrote before it ended, so a final message behind
            # many events is not taken for a crash.
            self._drain(job)
            if job.state == "running":
                limit = self.settings.max_job_seconds
                code = worker.process.exitcode
                if limit and cpu >= limit and code in (-signal.SIGKILL, -signal.SIGXCPU):
                    # Killed by the kernel at the CPU limit (the hard one, or SIGXCPU
                    # before the child's handler was installed).
                    self._fail_time_limit(job)
                else:
                    job.error = crash_message(code)
                    job.error_type = "WorkerCrashed"
                    self._finish(job, "error")
        elif self.settings.max_job_seconds and cpu > self.settings.max_job_seconds + _LIMIT_GRACE:
            # Stuck in C code, where the child's SIGXCPU handler cannot run.
            self._fail_time_limit(job)

    def _fail_time_limit(self, job: _Job) -> None:
        job.error = time_limit_message(self.settings.max_job_seconds)
        job.error_type = "TimeLimit"
        job.error_info = {"limit_seconds": self.settings.max_job_seconds}
        job.limit_hit = True
        self._finish(job, "error")

    def _start_queued(self) -> None:
        """Give free worker slots to the oldest queued jobs; ask for spares to replace them.

        A job takes a warm spare; only when none is left is a process started here, under
        the lock.  Replacements are started by :meth:`_make_spares_forever`, outside it:
        on a loaded box a fork takes up to a few hundred milliseconds, which every
        session's poll would otherwise wait for.
        """
        if self._closed:
            return
        running = sum(j.state == "running" for j in self._jobs.values())
        while self._queue and running < self.settings.max_workers:
            job = self._jobs[self._queue.popleft()]
            worker = None
            while self._spares and worker is None:
                worker = self._spares.pop(0)
                if not worker.process.is_alive():  # a spare that died while it waited
                    worker.signal_stop()
                    self._dying.append(worker)
                    worker = None
            job.worker = worker or Worker(self._ctx, self._preload)
            job.state = "running"
            job.started_at = time.time()
            job.worker.send({"cpu_limit": self.settings.max_job_seconds, "payload": job.payload})
            for command in job.commands:
                job.worker.send(command)
            job.commands.clear()
            self._drain(job, limit=_READ_LIMIT)  # the phase the spare has reached
            running += 1
        for worker in [w for w in self._spares if not w.process.is_alive()]:
            self._spares.remove(worker)
            worker.signal_stop()
            self._dying.append(worker)
        if len(self._spares) < self.settings.spare_workers:
            self._spares_wanted.set()

    def _make_spares_forever(self) -> None:
        """Start spare workers, one at a time and outside the lock, when some are missing."""
        while not self._closed:
            self._spares_wanted.wait(self.settings.tick_seconds)
            self._spares_wanted.clear()
            while True:
                with self._lock:
                    if self._closed or len(self._spares) >= self.settings.spare_workers:
                        break
                try:
                    worker = Worker(self._ctx, self._preload)
                except Exception:  # noqa: BLE001 - e.g. out of processes; retry next tick
                    break
                with self._lock:
                    if self._closed:
                        worker.stop()
                        return
                    self._spares.append(worker)

    def _drain(self, job: _Job, limit: int | None = None) -> None:
        for raw in job.worker.read(limit):
            try:
                kind, payload = pickle.loads(raw)
            except Exception as exc:  # noqa: BLE001 - e.g. a class that does not import here
                job.error = f"a message from the worker could not be read: {exc!r}"
                job.error_type = type(exc).__name__
                self._finish(job, "error")
                return
            if kind == "event":
                job.store.add(payload)
            elif kind == "phase":
                job.worker.phase = payload["phase"]
                if payload["phase"] == "running":
                    job.worker.cpu_base = payload["cpu"]
            elif kind == "done":
                job.result = payload
                job.result_bytes = len(raw)
                self._finish(job, "done")
                return
            else:
                job.error = payload["message"]
                if payload["traceback"]:
                    job.error += "\n\n" + payload["traceback"]
                job.error_type = payload["type"]
                job.error_info = payload["info"]
                job.limit_hit = payload["type"] == "TimeLimit"
                job.result_bytes = len(raw)
                self._finish(job, "error")
                return

    def _finish(self, job: _Job, state: str) -> None:
        """Make a job final at once; its process is signalled, and reaped by a later tick."""
        if job.state == "queued" and job.id in self._queue:
            self._queue.remove(job.id)
        job.state = state
        job.finished_at = time.time()
        job.commands.clear()
        if job.worker is not None:
            job.cpu_seconds = job.worker.update_cpu()
            # A worker that was terminated mid-write must not be read again: its pipe
            # could hold half a message.  Stop does not wait for the process to die
            # under the lock that every poll needs; the ticker reaps it.
            job.worker.signal_stop()
            self._dying.append(job.worker)
            job.worker = None
        # Counted once, now: the pickled size of what the pool keeps for this job.
        job.nbytes = len(pickle.dumps(job.store.events(), protocol=pickle.HIGHEST_PROTOCOL))
        job.nbytes += job.result_bytes
        self._retention.add(job.id, job.owner, job.nbytes)
        self._evict(time.monotonic())

    def _evict(self, now: float) -> None:
        """Forget finished jobs while over the byte budget or the count bound (see
        :mod:`csvm.jobs.retention`: abandoned work first, a live owner's only when it
        alone is over a bound)."""
        if not self._retention.over():
            return
        for job_id in self._retention.victims(lambda owner: self._alive(owner, now)):
            del self._jobs[job_id]
            self._n_evicted += 1

    def _view(self, job: _Job) -> JobView:
        place = None
        phase = job.state
        cpu = job.cpu_seconds
        if job.state == "queued":
            place = self._queue.index(job.id) + 1
            phase = f"queued (place {place})"
        elif job.state == "running":
            phase = _PHASES.get(job.worker.phase, job.worker.phase)
            cpu = job.worker.cpu_seconds
        return JobView(
            id=job.id,
            name=job.name,
            group=job.group,
            owner=job.owner,
            state=job.state,
            phase=phase,
            place=place,
            events=job.store.events(),
            n_events=job.store.n_received,
            result=job.result,
            error=job.error,
            error_type=job.error_type,
            error_info=dict(job.error_info),
            submitted_at=job.submitted_at,
            started_at=job.started_at,
            finished_at=job.finished_at,
            cpu_seconds=cpu,
            limit_hit=job.limit_hit,
            nbytes=job.nbytes,
        )
