"""Background training jobs in worker processes, with a queue, cancel and leases.

Why processes: CPU-bound training in a thread of the Streamlit server slows every session
(one process, the GIL), and only a process can be stopped for sure in the middle of a long
C-level SVM solve.  Each job runs in its own process, so Stop terminates just that job.

Why warm spares: starting a Python process that imports numpy and scikit-learn takes a
second or two.  The pool keeps ``max_workers`` idle processes that have already imported
the libraries and wait for a job, and replaces each one as it is used, so a run starts
streaming events almost at once.

Nothing here imports Streamlit; the pages call :class:`JobPool` from a
``st.cache_resource`` factory so one pool serves the whole server.
"""

from __future__ import annotations

import atexit
import importlib
import multiprocessing as mp
import os
import pickle
import queue as queue_module
import signal
import threading
import time
import traceback
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["JobPool", "JobView"]

_BLAS_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
_FINAL = ("done", "error", "stopped")
# Payloads below this are written to a fresh pipe at once (its buffer is 64 KiB on Linux).
_INLINE_SEND = 32 * 1024
# Messages read per job in one tick: a job emitting faster than the parent unpickles
# could otherwise hold the pool lock (and every other session's poll) indefinitely.
_READ_LIMIT = 1000


@dataclass(frozen=True)
class JobView:
    """A snapshot of one job, safe to read from any thread.

    ``state`` is "queued", "running", "done", "error" or "stopped"; ``place`` is the
    1-based place in the queue while queued.  ``events`` holds every event received so
    far.  For a failed job ``error`` holds the message (with the traceback for
    exceptions), ``error_type`` the exception's class name and ``error_info`` its
    ``cause``/``suggested_eta`` attributes when it had them.
    """

    id: str
    name: str
    group: str | None
    state: str
    place: int | None
    events: list[dict[str, Any]]
    result: Any
    error: str
    error_type: str
    error_info: dict[str, Any]
    submitted_at: float
    started_at: float | None
    finished_at: float | None


@dataclass
class _Job:
    id: str
    name: str
    group: str | None
    payload: bytes  # pickled (target, kwargs), checked at submit
    state: str = "queued"
    events: list[dict[str, Any]] = field(default_factory=list)
    result: Any = None
    error: str = ""
    error_type: str = ""
    error_info: dict[str, Any] = field(default_factory=dict)
    submitted_at: float = field(default_factory=time.time)
    started_at: float | None = None
    finished_at: float | None = None
    last_seen: float = field(default_factory=time.monotonic)
    worker: _Worker | None = None


class _Worker:
    """A spawned process that has imported the libraries and waits for one job.

    Both directions are one-way pipes, not ``multiprocessing.Queue``: the parent closes its
    copies of the child's ends after ``start``.  A child killed in the middle of a message
    (Stop, the OOM killer) then gives the reader "end of file" instead of a read that
    waits forever under the pool lock, and a spare whose server died sees end of file on
    its inbox and exits instead of lingering as an orphan.
    """

    def __init__(self, ctx, preload: Sequence[str]):
        # Pipe(duplex=False) returns (reading end, writing end).
        child_inbox, self.inbox = ctx.Pipe(duplex=False)
        self.outbox, child_outbox = ctx.Pipe(duplex=False)
        self.eof = False  # the outbox has reached end of file (or a torn message)
        self.process = ctx.Process(
            target=_worker_main, args=(child_inbox, child_outbox, tuple(preload)), daemon=True
        )
        saved = {k: os.environ.get(k) for k in _BLAS_ENV}
        # One BLAS thread per worker, so N jobs do not fight over N cores.  The variables
        # must be set before the child imports numpy; spawn copies the environment now.
        os.environ.update(dict.fromkeys(_BLAS_ENV, "1"))
        try:
            self.process.start()
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
            # The child has its own copies now; ours would hide the child's exit from us.
            child_inbox.close()
            child_outbox.close()

    def send_job(self, payload: bytes) -> None:
        """Hand the pickled job to the process without blocking the caller.

        A payload that fits the pipe's buffer (64 KiB on Linux) is written at once; a
        larger one is written by a short-lived thread, since a spare still importing its
        libraries does not read yet.  If the process ends first, the write fails with a
        broken pipe and the thread ends.
        """
        if len(payload) < _INLINE_SEND:
            self._send_quietly(payload)
        else:
            threading.Thread(
                target=self._send_quietly, args=(payload,), name="csvm-job-send", daemon=True
            ).start()

    def _send_quietly(self, payload: bytes) -> None:
        try:
            self.inbox.send_bytes(payload)
        except (OSError, TypeError):
            # The process ended (broken pipe) or stop() closed the pipe under us (the
            # handle becomes None); the pool reports the job from its state or exit code.
            pass

    def read(self, limit: int | None = None) -> list[bytes]:
        """The complete messages waiting in the outbox (at most ``limit``), without blocking
        on an empty pipe.

        A message that has begun arriving is read to its end (the child is writing it);
        a child that died in the middle of one gives end of file, recorded in ``eof``.
        """
        messages: list[bytes] = []
        while not self.eof and (limit is None or len(messages) < limit):
            try:
                if not self.outbox.poll():
                    break
                messages.append(self.outbox.recv_bytes())
            except (EOFError, OSError):
                self.eof = True
        return messages

    def stop(self, wait: bool = True) -> None:
        """End the process; ``wait=False`` only signals it, for one that already reported.

        Joining a child that is still tearing down numpy and scikit-learn takes tens of
        milliseconds, all spent under the pool lock that every ``poll`` needs; a child
        that has sent its final message is not waited for (``Process.start`` reaps it).
        """
        if not wait:
            if self.process.is_alive():
                self.process.terminate()
        elif self.process.is_alive():
            self.process.terminate()
            self.process.join(1.0)
            if self.process.is_alive():
                self.process.kill()
                self.process.join(1.0)
        else:
            self.process.join(0.1)
        self.eof = True
        for conn in (self.inbox, self.outbox):
            conn.close()


class _Sender:
    """The child's outbox: ``put`` never blocks the training, a thread writes the pipe.

    Writing the pipe directly would stall the target whenever the parent has not read
    for a while (the pipe holds 64 KiB, a few events with images); the thread plays the
    part of ``multiprocessing.Queue``'s feeder.  Messages are pickled by the caller, so a
    message that cannot be pickled is an ordinary exception in the job.
    """

    def __init__(self, conn):
        self._conn = conn
        self._pending: queue_module.SimpleQueue[bytes | None] = queue_module.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="csvm-job-out", daemon=True)
        self._thread.start()

    def put(self, kind: str, payload: Any) -> None:
        self._pending.put(pickle.dumps((kind, payload), protocol=pickle.HIGHEST_PROTOCOL))

    def _run(self) -> None:
        while (data := self._pending.get()) is not None:
            try:
                self._conn.send_bytes(data)
            except OSError:  # the parent went away; nobody is left to read
                return

    def close(self) -> None:
        """Wait until everything put has been written, so the last message is not lost."""
        self._pending.put(None)
        self._thread.join()
        self._conn.close()


def _exit_when_orphaned(inbox) -> None:
    try:
        inbox.poll(None)
    except OSError:
        pass
    os._exit(0)


def _worker_main(inbox, outbox, preload: tuple[str, ...]) -> None:
    """Child process: import the libraries, wait for a job, run it, report, exit."""
    # The parent sets these around ``Process.start``; setting them again is harmless and
    # covers a worker started some other way (before any numpy import below).
    for key in _BLAS_ENV:
        os.environ[key] = "1"
    for module in preload:
        try:
            importlib.import_module(module)
        except Exception:  # noqa: BLE001 - a failed preload shows up when the job runs
            pass
    try:
        job = inbox.recv_bytes()
    except (EOFError, OSError):  # shut down, or the server died, while this spare waited
        return
    # The parent writes nothing more to the inbox, so it becomes readable only at end of
    # file: the server died (even by SIGKILL, when no atexit runs) or let this worker go.
    # Either way nobody wants the result, and the core is freed at once.
    threading.Thread(
        target=_exit_when_orphaned, args=(inbox,), name="csvm-job-watch", daemon=True
    ).start()
    sender = _Sender(outbox)

    def emit(event: dict[str, Any]) -> None:
        sender.put("event", event)

    try:
        from threadpoolctl import threadpool_limits

        # Unpickled here, inside the try, so a target whose module does not import in
        # the child is reported as an ordinary error of this job.
        target, kwargs = pickle.loads(job)
        with threadpool_limits(1):
            result = target(emit, **kwargs)
        sender.put("done", result)
    except BaseException as exc:  # noqa: BLE001 - everything is reported to the parent
        info = {k: getattr(exc, k) for k in ("cause", "suggested_eta") if hasattr(exc, k)}
        error = {
            "type": type(exc).__name__,
            "message": str(exc),
            "traceback": traceback.format_exc(),
            "info": info,
        }
        try:
            sender.put("error", error)
        except Exception:  # noqa: BLE001 - e.g. an attribute that cannot be pickled
            error["info"] = {k: repr(v) for k, v in info.items()}
            sender.put("error", error)
    sender.close()


def _crash_message(code: int | None) -> str:
    """What the app shows for a worker that ended without a final message."""
    text = f"the worker process exited unexpectedly (exit code {code}"
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        # SIGKILL from outside is most often the kernel's out-of-memory killer.
        hint = ", perhaps out of memory" if -code == signal.SIGKILL else ""
        text += f": killed by {name}{hint}"
    return text + ")"


class JobPool:
    """A server-wide pool of worker processes with a FIFO queue.

    Parameters
    ----------
    max_workers : int, optional
        Jobs running at once (default: the number of cores).  Later jobs wait in a queue.
    lease_seconds : float
        A job nobody polls for this long is cancelled, so closed browser tabs free the
        cores.
    preload : sequence of str
        Modules the idle workers import in advance.
    tick_seconds : float
        How often a background thread starts queued jobs and expires leases.
    max_finished : int
        Finished jobs (with their events and results) kept for reattaching; beyond this
        the ones that finished longest ago are forgotten, so a server that runs for weeks
        does not grow without bound.
    """

    def __init__(
        self,
        max_workers: int | None = None,
        lease_seconds: float = 180.0,
        preload: Sequence[str] = ("numpy", "sklearn.svm", "csvm.experiments"),
        tick_seconds: float = 0.5,
        max_finished: int = 200,
    ):
        self.max_finished = int(max_finished)
        self.max_workers = max(1, int(max_workers or os.cpu_count() or 1))
        self.lease_seconds = float(lease_seconds)
        self._ctx = mp.get_context("spawn")
        self._preload = tuple(preload)
        self._lock = threading.RLock()
        self._jobs: dict[str, _Job] = {}
        self._queue: deque[str] = deque()
        self._spares: list[_Worker] = []
        self._closed = False
        self._ticker = threading.Thread(
            target=self._tick_forever, args=(tick_seconds,), name="csvm-job-ticker", daemon=True
        )
        self._ticker.start()
        atexit.register(self.shutdown)

    # -- public API -----------------------------------------------------------------------
    def submit(
        self,
        target: Callable[..., Any],
        kwargs: dict[str, Any],
        name: str = "",
        group: str | None = None,
    ) -> str:
        """Queue ``target(emit, **kwargs)``; returns the job id.

        ``target`` must be a top-level function of an importable module (spawned workers
        import it by name), and its result must be picklable.
        """
        try:
            # Pickle now: the queue's feeder thread would only print the error and the job
            # would wait for a message that never comes.
            payload = pickle.dumps((target, dict(kwargs)), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 - re-raised with what to do about it
            raise TypeError(
                f"job target and kwargs must be picklable (target must be a top-level "
                f"function of an importable module): {exc}"
            ) from exc
        with self._lock:
            if self._closed:
                raise RuntimeError("the job pool has been shut down")
            job = _Job(id=uuid.uuid4().hex[:12], name=name, group=group, payload=payload)
            self._jobs[job.id] = job
            self._queue.append(job.id)
            self._tick()
            return job.id

    def poll(self, job_id: str) -> JobView | None:
        """Drain the job's new events, renew its lease and return a snapshot."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return None
            job.last_seen = time.monotonic()
            self._tick()
            return self._view(job)

    def get(self, job_id: str) -> JobView | None:
        """A snapshot of the job without renewing its lease (None if unknown)."""
        with self._lock:
            job = self._jobs.get(job_id)
            return None if job is None else self._view(job)

    def jobs(self, group: str | None = None) -> list[JobView]:
        """Snapshots of every job (of one group, if given), oldest first."""
        with self._lock:
            self._tick()
            return [self._view(j) for j in self._jobs.values() if group is None or j.group == group]

    def cancel(self, job_id: str) -> None:
        """Stop a job: a queued one leaves the queue, a running one's process ends."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.state in _FINAL:
                return
            if job.state == "running":
                self._drain(job, limit=_READ_LIMIT)
            if job.state in _FINAL:  # it finished while we looked
                return
            self._finish(job, "stopped")
            self._tick()

    def shutdown(self) -> None:
        """Terminate every worker process; queued and running jobs become "stopped"."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for job in self._jobs.values():
                if job.state not in _FINAL:
                    self._finish(job, "stopped")
                elif job.worker is not None and job.worker.process.is_alive():
                    job.worker.stop()  # one that was only signalled when it finished
            for worker in self._spares:
                worker.stop()
            self._spares.clear()

    # -- scheduling -----------------------------------------------------------------------
    def _tick_forever(self, seconds: float) -> None:
        while not self._closed:
            time.sleep(seconds)
            try:
                with self._lock:
                    if not self._closed:
                        self._tick()
            except Exception:  # noqa: BLE001 - the ticker must outlive one bad tick
                # Without the ticker queued jobs would wait for the next poll and leases
                # would never expire; the next public call raises the error to a caller.
                pass

    def _tick(self) -> None:
        """Collect messages, reap ended processes, expire leases, start queued jobs."""
        now = time.monotonic()
        for job in list(self._jobs.values()):
            if job.state == "running":
                self._drain(job, limit=_READ_LIMIT)
                if job.state == "running" and not job.worker.process.is_alive():
                    # Everything the child wrote before it ended, so a final message
                    # behind many events is not taken for a crash.
                    self._drain(job)
                    if job.state == "running":
                        job.error = _crash_message(job.worker.process.exitcode)
                        job.error_type = "WorkerCrashed"
                        self._finish(job, "error")
            if job.state in ("queued", "running") and now - job.last_seen > self.lease_seconds:
                self._finish(job, "stopped")
        finished = [j for j in self._jobs.values() if j.state in _FINAL]
        if len(finished) > self.max_finished:
            finished.sort(key=lambda j: j.finished_at or 0.0)
            for job in finished[: len(finished) - self.max_finished]:
                del self._jobs[job.id]
        running = sum(j.state == "running" for j in self._jobs.values())
        while self._queue and running < self.max_workers and not self._closed:
            job = self._jobs[self._queue.popleft()]
            worker = self._spares.pop(0) if self._spares else _Worker(self._ctx, self._preload)
            if not worker.process.is_alive():
                worker.stop()
                worker = _Worker(self._ctx, self._preload)
            job.worker = worker
            job.state = "running"
            job.started_at = time.time()
            worker.send_job(job.payload)
            running += 1
        if not self._closed:
            # Keep warm spares for the next jobs (at most one per worker slot).
            self._spares = [w for w in self._spares if w.process.is_alive()]
            while len(self._spares) < self.max_workers:
                self._spares.append(_Worker(self._ctx, self._preload))

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
                job.events.append(payload)
            elif kind == "done":
                job.result = payload
                self._finish(job, "done")
                return
            else:
                job.error = payload["message"] + "\n\n" + payload["traceback"]
                job.error_type = payload["type"]
                job.error_info = payload["info"]
                self._finish(job, "error")
                return

    def _finish(self, job: _Job, state: str) -> None:
        if job.state == "queued" and job.id in self._queue:
            self._queue.remove(job.id)
        job.state = state
        job.finished_at = time.time()
        if job.worker is not None:
            # A worker that was terminated mid-write must not be read again: its queue
            # could hold half a message.  One that sent its final message is only
            # signalled; a stopped one is waited for, so Stop frees the core for sure.
            job.worker.stop(wait=state == "stopped" or self._closed)

    def _view(self, job: _Job) -> JobView:
        place = None
        if job.state == "queued":
            place = self._queue.index(job.id) + 1
        return JobView(
            id=job.id,
            name=job.name,
            group=job.group,
            state=job.state,
            place=place,
            events=list(job.events),
            result=job.result,
            error=job.error,
            error_type=job.error_type,
            error_info=dict(job.error_info),
            submitted_at=job.submitted_at,
            started_at=job.started_at,
            finished_at=job.finished_at,
        )
