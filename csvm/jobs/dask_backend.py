"""Train jobs on a Dask cluster: the pool's worker relays events and commands.

With ``CSVM_DASK_SCHEDULER`` set, each Train job still goes through the server's
:class:`~csvm.jobs.JobPool` (owners, caps, fair share, leases and the event store stay
as they are), but its target is :func:`relay`: the pool's worker process connects to the
cluster, submits the real target there, and forwards

* the events the target emits, **as they happen**, through a ``distributed.Queue``
  (pickled bytes, one item per event): the page draws each step while the cluster
  trains, as it does for a local job.  Returning the history at the end and replaying
  it would show nothing for a whole run and lose everything a run that is cut off did;
* the owner's commands (pause, resume, step, stop) through a second queue, so Pause,
  Step and Stop keep their meaning: a paused cluster job waits in ``emit.receive`` as a
  local one does, and Stop makes it end after its step with its best state.

A relay stopped by the pool (the run was dropped, its lease ran out, the server shut
down) asks the cluster job to stop and cancels its future.  A relay killed outright
cannot; the cluster job then notices that the relay's heartbeat (one item a second on
the command queue) has stopped and ends at its next wait for a command, or runs to its
end and its result is dropped.  A scheduler that cannot be reached when the job starts
makes the relay train the target here, in the pool's worker, as it would have without
a cluster.

What the cluster does not get: the pool's CPU limit per job (``CSVM_MAX_JOB_SECONDS``)
counts the relay's own CPU only, and a job frozen for a fair share freezes its relay,
not the cluster job (it trains on; its events wait in the queue).

Nothing here imports Streamlit or, until a job runs, ``distributed``.
"""

from __future__ import annotations

import pickle
import signal
import time
import uuid
from collections.abc import Callable
from typing import Any

__all__ = ["ClusterEmitter", "RelayGone", "relay", "run_remote"]

#: Seconds a relay waits for the scheduler before training here instead.
CONNECT_TIMEOUT = 5.0
#: What the relay puts on the command queue once a second (never given to the target).
_HEARTBEAT = {"cmd": "_relay_alive"}
_BEAT_SECONDS = 1.0
#: Seconds without a heartbeat after which a cluster job waiting for a command ends.
_ORPHAN_SECONDS = 30.0
#: How long the relay waits for an owner's command between two reads of the event queue.
_RELAY_TICK = 0.05


class RelayGone(RuntimeError):
    """The server's relay of a cluster job stopped beating: nobody will read its result."""


class ClusterEmitter:
    """The ``emit`` a target gets on a Dask worker: the pool's :class:`Emitter`, over queues.

    Parameters
    ----------
    events, commands : distributed.Queue
        Events go to ``events`` as pickled bytes; ``commands`` brings the owner's commands
        and the relay's heartbeats (swallowed here).
    """

    def __init__(self, events: Any, commands: Any):
        self._events = events
        self._commands = commands
        self._stash: list[dict[str, Any]] = []
        self._beat = time.monotonic()

    def __call__(self, event: dict[str, Any]) -> None:
        self._events.put(pickle.dumps(event, protocol=pickle.HIGHEST_PROTOCOL))

    def _take(self, timeout: float | None) -> dict[str, Any] | None:
        """One item of the command queue (None after ``timeout``); notes heartbeats."""
        try:
            if timeout is not None and timeout <= 0:
                if self._commands.qsize() == 0:
                    return None
                return self._commands.get()
            return self._commands.get(timeout=timeout)
        except TimeoutError:
            return None

    def receive(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The next command, or None when none came within ``timeout`` seconds
        (``None`` waits until one comes, or raises :class:`RelayGone` once the relay has
        been silent for :data:`_ORPHAN_SECONDS`)."""
        if self._stash:
            return self._stash.pop(0)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            item = self._take(_BEAT_SECONDS if left is None else min(left, _BEAT_SECONDS))
            now = time.monotonic()
            if item == _HEARTBEAT:
                self._beat = now
            elif item is not None:
                return item
            if now - self._beat > _ORPHAN_SECONDS:
                raise RelayGone("the server stopped relaying this run; it ends here")
            if deadline is not None and now >= deadline:
                return None

    def pending(self) -> bool:
        """Whether a command is waiting (heartbeats do not count)."""
        while not self._stash:
            item = self._take(0)
            if item is None:
                return False
            if item == _HEARTBEAT:
                self._beat = time.monotonic()
            else:
                self._stash.append(item)
        return True


def run_remote(
    target: Callable[..., Any], kwargs: dict[str, Any], events: str, commands: str
) -> Any:
    """What a Dask worker runs: ``target(emit, **kwargs)`` with a :class:`ClusterEmitter`
    on the queues named ``events`` and ``commands``, with one BLAS thread (as in the
    pool's workers: a cluster worker's threads must not fight over its cores)."""
    from distributed import Queue, get_client
    from threadpoolctl import threadpool_limits

    client = get_client()
    emitter = ClusterEmitter(Queue(events, client=client), Queue(commands, client=client))
    with threadpool_limits(1):
        return target(emitter, **kwargs)


def _connect(scheduler: str, timeout: float) -> Any:
    """A client of ``scheduler``, or None when it cannot be reached."""
    try:
        from distributed import Client

        return Client(scheduler, timeout=timeout, set_as_default=False)
    except (ImportError, OSError, TimeoutError):
        return None


def _ended_by_pool(signum: int, frame: Any) -> None:
    # Raised in the relay's loop, so its ``finally`` asks the cluster job to stop.
    raise SystemExit(0)


def relay(
    emit: Any,
    scheduler: str,
    target: Callable[..., Any],
    kwargs: dict[str, Any],
    connect_timeout: float = CONNECT_TIMEOUT,
) -> Any:
    """Run ``target(emit, **kwargs)`` on the Dask cluster at ``scheduler``, relaying its
    events to ``emit`` and ``emit``'s commands to it; returns its result.

    Parameters
    ----------
    emit : csvm.jobs.worker.Emitter
        The pool's emitter of this job.
    scheduler : str
        The scheduler's address, e.g. ``"tcp://10.0.0.5:8786"``.
    target, kwargs
        The job as it would have been submitted to the pool (``target`` must be
        importable on the cluster's workers: install csvm there).
    connect_timeout : float
        Seconds to wait for the scheduler; past them the target trains here.

    Raises
    ------
    Exception
        Whatever the target raised on the cluster (the pool reports it as the job's error).
    """
    client = _connect(scheduler, connect_timeout)
    if client is None:  # the page said so when it submitted; train as without a cluster
        return target(emit, **kwargs)
    from distributed import Queue

    key = uuid.uuid4().hex[:12]
    events = Queue(f"csvm-events-{key}", client=client)
    commands = Queue(f"csvm-commands-{key}", client=client)
    future = client.submit(
        run_remote, target, kwargs, events.name, commands.name, key=f"csvm-train-{key}", pure=False
    )
    previous = signal.signal(signal.SIGTERM, _ended_by_pool)
    try:
        beat = 0.0
        while True:
            done = future.done()  # read before the queue: no event is left behind
            for raw in events.get(batch=True):
                emit(pickle.loads(raw))
            while (command := emit.receive(0)) is not None:
                commands.put(command)
            if done:
                return future.result()
            if time.monotonic() - beat >= _BEAT_SECONDS:
                commands.put(_HEARTBEAT)
                beat = time.monotonic()
            if (command := emit.receive(_RELAY_TICK)) is not None:
                commands.put(command)
    finally:
        signal.signal(signal.SIGTERM, previous)
        if not future.done():
            try:
                commands.put({"cmd": "stop"}, timeout=1)
                future.cancel()
            except Exception:  # noqa: BLE001 - the cluster is gone: nothing left to stop
                pass
        client.close(timeout=2)
