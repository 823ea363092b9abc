"""The pool's machinery: the queue, the worker processes and the threads that move them.

:class:`Scheduler` holds every job's record and the workers, under one lock.  Three
daemon threads keep it moving without any page polling: the ticker (leases, reaping,
eviction, starting queued jobs), the pump (reads running jobs' messages as they arrive)
and the spare maker (starts warm workers outside the lock).  :class:`csvm.jobs.pool.JobPool`
adds the public, owner-checked API on top.
"""

from __future__ import annotations

import multiprocessing as mp
import multiprocessing.connection as mp_connection
import pickle
import signal
import threading
import time
from collections import deque
from collections.abc import Sequence

from csvm.jobs.messages import read_messages
from csvm.jobs.process import Worker, crash_message
from csvm.jobs.records import ACTIVE, JobRecord, JobView, NotOwner, snapshot
from csvm.jobs.retention import Retention
from csvm.jobs.settings import PoolSettings
from csvm.jobs.worker import time_limit_message

__all__ = ["READ_LIMIT", "Scheduler"]

# Messages read per job in one tick: a job emitting faster than the parent unpickles
# could otherwise hold the pool lock (and every other session's poll) indefinitely.
READ_LIMIT = 1000
# CPU seconds past the limit before the parent kills a job itself: the child's own
# SIGXCPU handler reports first when it can (it cannot inside a long C call).
_LIMIT_GRACE = 1.0
# How long the reader thread waits for a message before it looks for new jobs.
_PUMP_IDLE = 0.1
# Owners whose network address the pool remembers (a bound: a server runs for weeks).
_MAX_ADDRESSES = 10_000


class Scheduler:
    """Jobs, queue and workers of a pool, and the threads that run them.

    Parameters
    ----------
    settings : PoolSettings
        Every limit.
    preload : sequence of str
        Modules the idle workers import in advance.
    """

    def __init__(self, settings: PoolSettings, preload: Sequence[str]):
        self.settings = settings
        self._ctx = mp.get_context(self.settings.start_method)
        self._preload = tuple(preload)
        self._lock = threading.RLock()
        self._jobs: dict[str, JobRecord] = {}
        self._queue: deque[str] = deque()
        self._spares: list[Worker] = []
        self._dying: list[Worker] = []  # signalled, not yet reaped
        self._owner_seen: dict[str, float] = {}
        # owner -> the network address its browser last connected from (bounded, oldest
        # first out): a job takes its owner's address when submitted
        self._addresses: dict[str, str] = {}
        # person (see _person) -> when a job of theirs last got a worker (round robin)
        self._served: dict[str | None, float] = {}
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

    def _view(self, job: JobRecord) -> JobView:
        return snapshot(job, self._fair_order() if job.state == "queued" else ())

    # -- owners ---------------------------------------------------------------------------
    def _heartbeat(self, owner: str, now: float) -> int:
        self._owner_seen[owner] = now
        active = 0
        for job in self._jobs.values():
            if job.owner == owner and job.state in ACTIVE and not job.internal:
                job.last_seen = now
                active += 1
        return active

    def _alive(self, owner: str | None, now: float) -> bool:
        seen = self._owner_seen.get(owner) if owner is not None else None
        return seen is not None and now - seen <= self.settings.lease_seconds

    def _note_address(self, owner: str, address: str) -> None:
        self._addresses.pop(owner, None)  # re-inserted last: the oldest go first
        self._addresses[owner] = address
        while len(self._addresses) > _MAX_ADDRESSES:
            self._addresses.pop(next(iter(self._addresses)))

    def _person(self, job: JobRecord) -> str | None:
        """Whom a fair share counts: the job's network address (every browser and cookie
        of one address together), or its owner where addresses are not counted
        (``CSVM_PER_ADDRESS_JOBS=0``, or a job submitted without one)."""
        if self.settings.address_limit and job.address is not None:
            return "@" + job.address
        return job.owner

    @staticmethod
    def _check_owner(job: JobRecord, owner: str | None, action: str) -> None:
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
            if job.state == "running" and job.source is None:  # a watcher has no worker
                self._update_running(job)
            # Shared work has no lease of its own: it ends when its last watcher's ends.
            expired = now - job.last_seen > self.settings.lease_seconds
            if job.state in ACTIVE and not job.internal and expired:
                self._finish(job, "stopped")
        self._start_queued()
        self._evict(now)
        # Forget owners that are silent and have no jobs left (a server runs for weeks).
        with_jobs = {j.owner for j in self._jobs.values()}
        for owner, seen in list(self._owner_seen.items()):
            if owner not in with_jobs and now - seen > self.settings.lease_seconds:
                del self._owner_seen[owner]
        persons = {self._person(j) for j in self._jobs.values()}
        for person in [p for p in self._served if p not in persons]:
            del self._served[person]

    def _update_running(self, job: JobRecord) -> None:
        """Read a running job's messages; notice its end, a crash or its CPU limit."""
        worker = job.worker
        self._drain(job, limit=READ_LIMIT)
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

    def _fail_time_limit(self, job: JobRecord) -> None:
        job.error = time_limit_message(self.settings.max_job_seconds)
        job.error_type = "TimeLimit"
        job.error_info = {"limit_seconds": self.settings.max_job_seconds}
        job.limit_hit = True
        self._finish(job, "error")

    def _start_queued(self) -> None:
        """Give free worker slots fairly, suspend for newcomers, ask for spares.

        Free slots go first to the browsers with the fewest running jobs (a suspended
        job goes on before a queued one of the same browser), oldest first among equals.
        Then a browser with nothing running that still waits gets a slot by suspending
        the longest-running job that has had ``fair_share_seconds`` since it started.
        """
        if self._closed:
            return
        self._fill_slots()
        self._share()
        for worker in [w for w in self._spares if not w.process.is_alive()]:
            self._spares.remove(worker)
            worker.signal_stop()
            self._dying.append(worker)
        if len(self._spares) < self.settings.spare_workers:
            self._spares_wanted.set()

    def _running_counts(self) -> tuple[dict[str | None, int], dict[str | None, int]]:
        """Jobs running (not suspended) by person and by owner."""
        persons: dict[str | None, int] = {}
        owners: dict[str | None, int] = {}
        for j in self._jobs.values():
            if j.state == "running" and j.suspended_since is None and j.source is None:
                person = self._person(j)
                persons[person] = persons.get(person, 0) + 1
                owners[j.owner] = owners.get(j.owner, 0) + 1
        return persons, owners

    def _waiting(self) -> list[JobRecord]:
        """Suspended and queued jobs, in the order they will get a worker."""
        persons, owners = self._running_counts()
        order = {job_id: i for i, job_id in enumerate(self._queue)}
        waiting = [j for j in self._jobs.values() if j.suspended_since is not None]
        waiting += [self._jobs[job_id] for job_id in self._queue]
        # Among people with as many jobs running, the one served longest ago goes first
        # (round robin); then, among one address's browsers, the one with fewer running;
        # a suspended job before a queued one of the same browser.
        return sorted(
            waiting,
            key=lambda j: (
                persons.get(self._person(j), 0),
                self._served.get(self._person(j), float("-inf")),
                owners.get(j.owner, 0),
                j.suspended_since is None,
                order.get(j.id, -1),
            ),
        )

    def _fair_order(self) -> list[str]:
        """Queued job ids in the order they will start (for their place in the queue)."""
        return [j.id for j in self._waiting() if j.state == "queued"]

    def _fill_slots(self) -> None:
        running = sum(self._running_counts()[0].values())
        while running < self.settings.max_workers:
            waiting = self._waiting()
            if not waiting:
                return
            job = waiting[0]
            self._served[self._person(job)] = time.monotonic()
            if job.suspended_since is not None:
                job.suspended_seconds += time.monotonic() - job.suspended_since
                job.suspended_since = None
                job.slice_start = time.monotonic()
                job.worker.resume()
            else:
                self._queue.remove(job.id)
                self._launch(job)
            running += 1

    def _share(self) -> None:
        """Suspend long-running jobs while a person with nothing running waits."""
        limit = self.settings.fair_share_seconds
        if not limit:
            return
        while self._queue:
            persons, _ = self._running_counts()
            # A person with nothing started at all: one whose job was suspended already
            # has its share, and must not suspend another's in turn.  Counted by address,
            # so twenty sessions of one student (a fresh cookie each) are one newcomer,
            # not twenty that suspend each other's jobs in turn.
            started = set(persons) | {
                self._person(j) for j in self._jobs.values() if j.suspended_since is not None
            }
            newcomer = next(
                (self._jobs[i] for i in self._queue if self._person(self._jobs[i]) not in started),
                None,
            )
            suspended = sum(j.suspended_since is not None for j in self._jobs.values())
            if newcomer is None or suspended >= self.settings.suspended_limit:
                return
            now = time.monotonic()
            victims = [
                j
                for j in self._jobs.values()
                if j.state == "running"
                and j.suspended_since is None
                and j.worker is not None
                and now - j.slice_start >= limit
            ]
            if not victims:
                return
            victim = max(
                victims, key=lambda j: (persons.get(self._person(j), 0), now - j.slice_start)
            )
            victim.worker.suspend()
            victim.suspended_since = now
            self._served[self._person(newcomer)] = now
            self._queue.remove(newcomer.id)
            self._launch(newcomer)

    def _launch(self, job: JobRecord) -> None:
        """Start a queued job on a warm spare, or on a new process when none is left."""
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
        job.slice_start = time.monotonic()
        job.worker.send({"cpu_limit": self.settings.max_job_seconds, "payload": job.payload})
        for command in job.commands:
            job.worker.send(command)
        job.commands.clear()
        for watcher in job.watchers:  # shared work: its watchers run with it
            watcher.state = "running"
        self._drain(job, limit=READ_LIMIT)  # the phase the spare has reached

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

    def _drain(self, job: JobRecord, limit: int | None = None) -> None:
        """Read a running job's messages; make it final when one of them ends it."""
        final = read_messages(job, limit)
        if final is not None:
            self._finish(job, final)

    def _finish(self, job: JobRecord, state: str) -> None:
        """Make a job final at once; its process is signalled, and reaped by a later tick.

        A watcher of shared work detaches from it instead (:mod:`csvm.jobs.shared`); a
        shared work that ends ends its watchers with it.
        """
        if job.source is not None:
            self._detach(job, state)
            return
        if job.state == "queued" and job.id in self._queue:
            self._queue.remove(job.id)
        job.state = state
        job.finished_at = time.time()
        job.commands.clear()
        if job.suspended_since is not None:  # its worker is continued to end (signal_stop)
            job.suspended_seconds += time.monotonic() - job.suspended_since
            job.suspended_since = None
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
        if job.internal:
            job.payload = b""
            self._work_ended(job)
        else:
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
