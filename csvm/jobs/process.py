"""The parent's handle on one worker process: its pipes, its CPU time, its end."""

from __future__ import annotations

import contextlib
import os
import pickle
import queue as queue_module
import signal
import sys
import threading
import time
import types
from collections.abc import Sequence
from typing import Any

from csvm.jobs.worker import BLAS_ENV, worker_main

__all__ = ["Worker", "crash_message", "process_cpu_seconds"]

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
# A process sent SIGTERM that has not ended after this long gets SIGKILL.
_KILL_AFTER = 1.0
_PIPE_BYTES = 2**20


@contextlib.contextmanager
def _environment(values: dict[str, str]):
    """Set environment variables for the duration of a process start, then restore them."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _start(process, ctx, preload: Sequence[str]) -> None:
    """Start a worker process with one BLAS thread (and the fork server, the first time).

    One BLAS thread per worker, so N jobs do not fight over N cores.  The variables must be
    set before numpy is imported: spawn copies the environment at ``start``; a forked
    worker inherits it from the fork server, which is started by the first ``start`` and
    imports :mod:`csvm.jobs.preload` with the parent's ``sys.path`` (Python 3.11's fork
    server does not take it over itself).
    """
    values = dict.fromkeys(BLAS_ENV, "1")
    if ctx.get_start_method() == "forkserver":
        values["CSVM_JOBS_PRELOAD"] = ",".join(preload)
        values["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        # Global to the interpreter and read only when the server starts: the first pool's
        # preload is the server's; later pools' workers import theirs themselves.
        ctx.set_forkserver_preload(["csvm.jobs.preload"])
    with _environment(values), _without_main():
        process.start()


@contextlib.contextmanager
def _without_main():
    """Hide the entry script while a worker (or the fork server) starts.

    multiprocessing re-imports ``__main__`` in the fork server and in spawned children.
    Job targets are importable functions, so no worker needs it, and under Streamlit
    ``__main__`` is the page being run (AppTest runs a page file as ``__main__``): importing
    it would draw the page, in bare mode, in every worker.
    """
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved


def _widen_pipe(conn) -> None:
    """Grow a pipe's buffer from 64 KiB to 1 MiB where Linux allows it.

    A job emitting images fills 64 KiB in four events; each full pipe costs the child a
    wait and both processes a context switch.  Best effort: other systems keep the default.
    """
    try:
        import fcntl

        fcntl.fcntl(conn.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_BYTES)
    except (ImportError, OSError):
        pass


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a live (or not yet reaped) process, from /proc.

    None where /proc is not available (not Linux) or the process is gone.
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            # The command name (field 2) may hold spaces; fields after ")" are fixed.
            fields = fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # utime and stime are fields 14 and 15 of the file, 12 and 13 after the name.
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


class Worker:
    """A worker process that has imported the libraries and waits for one job.

    It is forked from the fork server (``start_method="forkserver"``) or spawned.

    Both directions are one-way pipes, not ``multiprocessing.Queue``: the parent closes its
    copies of the child's ends after ``start``.  A child killed in the middle of a message
    (Stop, the OOM killer) then gives the reader "end of file" instead of a read that
    waits forever under the pool lock, and a spare whose server died sees end of file on
    its inbox and exits instead of lingering as an orphan.

    Everything the parent writes (the job, then commands) goes through one writer thread,
    in order, so a large job still being written to a spare that is importing cannot
    block the caller or be interleaved with a command.
    """

    def __init__(self, ctx, preload: Sequence[str]):
        # Pipe(duplex=False) returns (reading end, writing end).
        child_inbox, self.inbox = ctx.Pipe(duplex=False)
        self.outbox, child_outbox = ctx.Pipe(duplex=False)
        _widen_pipe(self.outbox)
        self.eof = False  # the outbox has reached end of file (or a torn message)
        self.phase: str | None = None  # the last phase the child reported
        self.cpu_base = 0.0  # CPU seconds the child had used when the target started
        self.cpu_seconds = 0.0  # CPU seconds charged to the job so far
        self.stop_deadline: float | None = None  # when a signalled process gets SIGKILL
        self.suspended = False  # frozen with SIGSTOP for a fair share
        self._outgoing: queue_module.SimpleQueue[bytes | None] | None = None
        self.process = ctx.Process(
            target=worker_main, args=(child_inbox, child_outbox, tuple(preload)), daemon=True
        )
        try:
            _start(self.process, ctx, preload)
        finally:
            # The child has its own copies now; ours would hide the child's exit from us.
            child_inbox.close()
            child_outbox.close()

    # -- writing --------------------------------------------------------------------------
    def send(self, message: Any) -> None:
        """Queue a message for the child (pickled now; written by the writer thread)."""
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        if self._outgoing is None:
            self._outgoing = queue_module.SimpleQueue()
            threading.Thread(
                target=self._write, args=(self._outgoing,), name="csvm-job-send", daemon=True
            ).start()
        self._outgoing.put(data)

    def _write(self, outgoing: queue_module.SimpleQueue) -> None:
        while (data := outgoing.get()) is not None:
            try:
                self.inbox.send_bytes(data)
            except (OSError, TypeError, ValueError):
                # The process ended (broken pipe) or stop() closed the pipe under us; the
                # pool reports the job from its state or exit code.
                return

    # -- reading --------------------------------------------------------------------------
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

    def update_cpu(self) -> float:
        """Refresh and return the CPU seconds charged to the job (the import excluded)."""
        total = process_cpu_seconds(self.process.pid) if self.process.pid else None
        if total is not None and self.phase == "running":
            self.cpu_seconds = max(self.cpu_seconds, total - self.cpu_base)
        return self.cpu_seconds

    # -- a fair share -----------------------------------------------------------------------
    def suspend(self) -> None:
        """Freeze the process (SIGSTOP): it keeps its memory and uses no CPU."""
        self._signal(signal.SIGSTOP)
        self.suspended = True

    def resume(self) -> None:
        """Let a suspended process go on (SIGCONT)."""
        self._signal(signal.SIGCONT)
        self.suspended = False

    def _signal(self, signum: int) -> None:
        try:
            if self.process.pid and self.process.exitcode is None:
                os.kill(self.process.pid, signum)
        except (OSError, ValueError):  # already gone: the pool notices at its next tick
            pass

    # -- ending ---------------------------------------------------------------------------
    def signal_stop(self) -> None:
        """Ask the process to end (SIGTERM) and close the pipes; do not wait.

        The pool reaps it later with :meth:`reaped`, which sends SIGKILL to one still
        alive after a second.  Closing the inbox also ends a child that ignored the signal
        at once (its reader thread exits at end of file).
        """
        if self.stop_deadline is None:
            self.stop_deadline = time.monotonic() + _KILL_AFTER
            try:
                if self.process.exitcode is None:
                    self.process.terminate()
            except (OSError, ValueError):
                pass
            if self.suspended:  # a stopped process acts on SIGTERM only once continued
                self.resume()
        self.eof = True
        if self._outgoing is not None:
            self._outgoing.put(None)
        for conn in (self.inbox, self.outbox):
            conn.close()

    def reaped(self) -> bool:
        """Whether the process has ended and been waited for (no zombie); kills a laggard."""
        try:
            if self.process.is_alive():  # waitpid(WNOHANG): reaps one that has ended
                if self.stop_deadline is not None and time.monotonic() > self.stop_deadline:
                    self.process.kill()
                return False
        except ValueError:  # closed by someone else
            return True
        # Not Process.close(): a caller may still hold the object and ask is_alive(); the
        # pool drops its reference, and the sentinel descriptor goes with the object.
        return True

    def stop(self, timeout: float = 1.0) -> None:
        """End the process and wait for it (shutdown only: it blocks)."""
        self.signal_stop()
        try:
            self.process.join(timeout)
            if self.process.is_alive():
                self.process.kill()
                self.process.join(timeout)
        except ValueError:  # already closed
            pass


def crash_message(code: int | None) -> str:
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
