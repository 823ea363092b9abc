"""The child side of a job: import, wait for one job, run it with a CPU limit, report.

Messages to the parent are pickled ``(kind, payload)`` pairs on a one-way pipe:

``("phase", {"phase": p, "cpu": s})``  p is "importing" (the process has started and
    imports its preload), "ready" (waiting for a job) or "running" (the target starts;
    ``cpu`` is the CPU time used before it, which the job is not charged for)
``("event", dict)``                    one event the target emitted
``("done", result)`` / ``("error", dict)``  the last message; an error dict has "type",
    "message", "traceback" and "info" (the exception's cause/suggested_eta)

The parent writes the pickled job to the inbox pipe, then any commands sent with
``JobPool.send``; a reader thread forwards those to :meth:`Emitter.receive` and exits the
process when the inbox reaches end of file (the server died, or let this worker go).
"""

from __future__ import annotations

import importlib
import math
import os
import pickle
import queue as queue_module
import resource
import signal
import threading
import traceback
from typing import Any

__all__ = [
    "BLAS_ENV",
    "Emitter",
    "TimeLimitExceeded",
    "cpu_time",
    "worker_main",
    "time_limit_message",
]

BLAS_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
# Seconds between the soft CPU limit (SIGXCPU, reported as an error) and the hard one
# (SIGKILL by the kernel, should the job be stuck in C code that never returns to Python).
_HARD_GRACE = 5
# prctl(2)'s option: the signal this process gets when its parent ends.
_PR_SET_PDEATHSIG = 1


class TimeLimitExceeded(BaseException):
    """Raised in a job that used up its CPU time.

    A ``BaseException``, so a target's ``except Exception`` cannot swallow it.
    """


def time_limit_message(limit: float) -> str:
    """What a job that hit its CPU limit reports (the parent uses it too)."""
    return (
        f"this run used its {limit:g} s of CPU time, the server's limit per run; "
        f"choose a smaller run (fewer images, iterations or filters), or ask whoever runs "
        f"the server to raise CSVM_MAX_JOB_SECONDS"
    )


def cpu_time() -> float:
    """CPU seconds (user + system) this process has used, all threads together."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


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


class Emitter:
    """What a job target gets as ``emit``: send events, receive commands.

    ``emit(event)`` sends an event dict to the pool (it never waits for the parent);
    ``emit.receive(timeout)`` returns the next command sent with ``JobPool.send``, or None
    after ``timeout`` seconds (``None`` waits for ever); waiting uses no CPU, so a paused
    job is not charged against its time limit.  ``emit.pending()`` tells whether a command
    is waiting, without taking it.
    """

    def __init__(self, sender: _Sender, commands: queue_module.SimpleQueue):
        self._sender = sender
        self._commands = commands

    def __call__(self, event: dict[str, Any]) -> None:
        self._sender.put("event", event)

    def receive(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The next command, or None when none came within ``timeout`` seconds."""
        try:
            return self._commands.get(timeout=timeout)
        except queue_module.Empty:
            return None

    def pending(self) -> bool:
        """Whether a command is waiting to be received."""
        return not self._commands.empty()


def _read_commands(inbox, commands: queue_module.SimpleQueue) -> None:
    """Forward the parent's commands; end the process at end of file.

    End of file means the server died (even by SIGKILL, when no atexit runs) or let this
    worker go; either way nobody wants the result, and the core is freed at once.
    """
    while True:
        try:
            data = inbox.recv_bytes()
        except (EOFError, OSError):
            os._exit(0)
        try:
            commands.put(pickle.loads(data))
        except Exception:  # noqa: BLE001 - a command that does not unpickle is dropped
            pass


def _limit_cpu(limit: float) -> None:
    """Ask the kernel for SIGXCPU after ``limit`` more CPU seconds; raise it as an error."""
    soft = math.ceil(cpu_time() + limit)

    def on_xcpu(signum, frame):
        # Once: the kernel repeats SIGXCPU every CPU second until the hard limit.
        signal.signal(signal.SIGXCPU, signal.SIG_IGN)
        raise TimeLimitExceeded(time_limit_message(limit))

    signal.signal(signal.SIGXCPU, on_xcpu)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + _HARD_GRACE))


def _error_report(exc: BaseException, limit: float) -> dict[str, Any]:
    if isinstance(exc, TimeLimitExceeded):
        return {
            "type": "TimeLimit",
            "message": time_limit_message(limit),
            "traceback": "",
            "info": {"limit_seconds": limit},
        }
    info = {k: getattr(exc, k) for k in ("cause", "suggested_eta") if hasattr(exc, k)}
    return {
        "type": type(exc).__name__,
        "message": str(exc),
        "traceback": traceback.format_exc(),
        "info": info,
    }


def _die_with_fork_server() -> None:
    """End this worker when its fork server ends, even while it is suspended (SIGSTOP).

    A worker forked by the fork server holds the server's "alive" pipe, which keeps the
    fork server (and through it the resource tracker) running for as long as any worker
    lives.  A running or waiting worker exits when its inbox reaches end of file, but a
    worker frozen for a fair share runs nothing: after a server that was killed (or that
    died of SIGTERM before its pool shut down) three frozen workers of 177 MB each, the
    fork server and the resource tracker lived on for good.  So each worker lets go of the
    alive pipe (it never starts processes of its own through it) and asks the kernel for
    SIGKILL, which a stopped process cannot ignore, when the fork server exits; the fork
    server exits as soon as the server process is gone.  Linux only; elsewhere a no-op.
    """
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    fd = getattr(server, "_forkserver_alive_fd", None)
    if fd is None:  # spawned, not forked: the parent is the server, no fork server
        return
    try:
        os.close(fd)
    except OSError:
        pass
    server._forkserver_alive_fd = None
    server._forkserver_address = None  # a target's own processes start a fresh one
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        parent = os.getppid()
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
    except (OSError, AttributeError):  # not Linux: the inbox's end of file must do
        return
    if os.getppid() != parent:  # the fork server ended before the request took effect
        os._exit(0)


def worker_main(inbox, outbox, preload: tuple[str, ...]) -> None:
    """Child process: import the libraries, wait for a job, run it, report, exit."""
    _die_with_fork_server()
    # The parent sets these around ``Process.start``; setting them again is harmless and
    # covers a worker started some other way (before any numpy import below).
    for key in BLAS_ENV:
        os.environ[key] = "1"
    sender = _Sender(outbox)
    sender.put("phase", {"phase": "importing", "cpu": cpu_time()})
    for module in preload:
        try:
            importlib.import_module(module)
        except Exception:  # noqa: BLE001 - a failed preload shows up when the job runs
            pass
    sender.put("phase", {"phase": "ready", "cpu": cpu_time()})
    try:
        job = pickle.loads(inbox.recv_bytes())
    except (EOFError, OSError):  # shut down, or the server died, while this spare waited
        return
    commands: queue_module.SimpleQueue = queue_module.SimpleQueue()
    threading.Thread(
        target=_read_commands, args=(inbox, commands), name="csvm-job-inbox", daemon=True
    ).start()
    limit = float(job.get("cpu_limit") or 0.0)
    try:
        from threadpoolctl import threadpool_limits

        # Unpickled here, inside the try, so a target whose module does not import in
        # the child is reported as an ordinary error of this job.
        target, kwargs = pickle.loads(job["payload"])
        if limit > 0:
            _limit_cpu(limit)
        sender.put("phase", {"phase": "running", "cpu": cpu_time()})
        with threadpool_limits(1):
            result = target(Emitter(sender, commands), **kwargs)
        sender.put("done", result)
    except BaseException as exc:  # noqa: BLE001 - everything is reported to the parent
        if limit > 0:
            signal.signal(signal.SIGXCPU, signal.SIG_IGN)  # let the report get out
        error = _error_report(exc, limit)
        try:
            sender.put("error", error)
        except Exception:  # noqa: BLE001 - e.g. an attribute that cannot be pickled
            error["info"] = {k: repr(v) for k, v in error["info"].items()}
            sender.put("error", error)
    sender.close()
