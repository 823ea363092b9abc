"""Identical jobs computed once: a class pressing Start on one preset shares the work.

A Train job is deterministic given what it is asked (its target and keyword arguments:
the model's settings and seed) and what it reads (the data split, whose digest the caller
passes as ``share``).  Sixty students who press Start on the same preset submit sixty
copies of three such jobs; :meth:`JobPool.submit(..., share=...) <csvm.jobs.JobPool.submit>`
computes each once:

* every submission gets a **watcher** record of its own (its id, owner, name, meta, lease
  and controls), so a page sees and controls "its" job exactly as before;
* the first submission also makes the **work** record that is queued and runs on a
  worker (``internal``: no owner's listing shows it, no owner's cap counts it); the
  watchers' views show its phase, events and result as they come, and each page replays
  them at its own pace from its own :class:`~explorer.state.Playback`;
* a later identical submission while the work is queued or running **attaches** to it
  (from another browser: one browser's own tabs each compute, see below);
  after the work is done it takes the **finished result** from a bounded cache
  (:class:`ResultCache`: ``PoolSettings.shared_results`` results and
  ``shared_results_bytes`` bytes, least recently used out first).

What each watcher's controls do (each keeps its meaning for that student alone):

* **Pause / Resume / Step**: the page holds its own replay (as unshared).  The worker is
  paused only while *every* watcher holds a pause (a paused worker uses no CPU, as
  before); while one student plays, it trains on and the paused pages stay at their step.
  A Step that no watcher's replay has recorded yet is passed to a paused worker (one more
  step for all of them, who are all paused).
* **Stop**: from the only watcher, passed on as before (the run ends after its step with
  its best state).  While others watch, the stopping student **detaches**: its job is
  "stopped" at once with the events it had and no result (what a hard stop shows
  unshared), and the others' run goes on.  A watcher whose lease ends detaches the same
  way; the work ends when its last watcher has detached.  A second identical submission
  by the same owner (another tab of one browser) is computed on its own, so that the
  Stop of either tab keeps its run's best state as before.

Only work that ended "done" with no Stop passed on is cached (a stopped run's result
depends on when Stop came).  Memory: a finished watcher refers to the work's events and
result (no copy); the pool's retention still counts each watcher's full size against its
byte budget, so the bound on finished jobs holds as before, and the real memory of a
class's identical runs is one copy.
"""

from __future__ import annotations

import hashlib
import pickle
import time
import uuid
from collections import Counter, OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np

from csvm.jobs.compaction import EventStore
from csvm.jobs.records import ACTIVE, JobRecord

__all__ = ["ResultCache", "SharedWork", "digest", "work_key"]


def work_key(target: Any, kwargs: dict[str, Any], share: str) -> str:
    """The key of a job's work: a digest of its target, its arguments and ``share``.

    The arguments are hashed in a canonical form (mappings by sorted key, numbers by
    their exact ``repr``, arrays by dtype, shape and bytes), not as their pickle, whose
    bytes also depend on which equal strings happen to be one object.

    Parameters
    ----------
    target : callable
        The job's target (hashed by its module and name, as the worker imports it).
    kwargs : dict
        Its keyword arguments.
    share : str
        What else the result depends on (e.g. the digest of the data split it loads).

    Returns
    -------
    str
        A hex SHA-256 digest.

    Examples
    --------
    >>> work_key(len, {"a": 1, "b": [2.5]}, "") == work_key(len, {"b": [2.5], "a": 1}, "")
    True
    >>> work_key(len, {"a": 1}, "") == work_key(len, {"a": 1.0}, "")
    False
    """
    h = hashlib.sha256()
    _feed(h, target)
    _feed(h, kwargs)
    _feed(h, share)
    return h.hexdigest()


def digest(*values: Any) -> str:
    """A canonical digest of ``values`` (as :func:`work_key` hashes arguments): e.g. of a
    data split's arrays, for ``share``.

    Examples
    --------
    >>> digest(np.arange(3)) == digest(np.arange(3)), digest(np.arange(3)) == digest([0, 1, 2])
    (True, False)
    """
    h = hashlib.sha256()
    for value in values:
        _feed(h, value)
    return h.hexdigest()


def _feed(h: Any, value: Any) -> None:
    """Hash ``value`` into ``h`` canonically, tagged by its type."""
    if isinstance(value, Mapping):
        h.update(b"{%d" % len(value))
        for key in sorted(value, key=repr):
            _feed(h, key)
            _feed(h, value[key])
    elif isinstance(value, (list, tuple)):
        h.update(b"[%d" % len(value) if isinstance(value, list) else b"(%d" % len(value))
        for item in value:
            _feed(h, item)
    elif value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        h.update(type(value).__name__.encode() + b":" + repr(value).encode() + b";")
    elif isinstance(value, np.ndarray):
        h.update(f"array:{value.dtype.str}:{value.shape}:".encode())
        h.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, np.generic):
        _feed(h, value.item())
    else:  # functions, classes and other objects: as the worker receives them
        h.update(b"pickle:" + pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


class ResultCache:
    """Finished work by key, bounded by count and bytes; the least recently used goes first.

    Parameters
    ----------
    max_count : int
        Results kept (0: none).
    max_bytes : int
        Their total size (each record's ``nbytes``: its events and result, pickled).

    Examples
    --------
    >>> from csvm.jobs.compaction import EventStore
    >>> cache = ResultCache(max_count=1, max_bytes=100)
    >>> a = JobRecord(id="a", name="", group=None, owner=None, payload=b"", store=EventStore())
    >>> a.nbytes = 10
    >>> cache.put("k", a)
    >>> cache.get("k") is a, len(cache), cache.nbytes
    (True, 1, 10)
    """

    def __init__(self, max_count: int, max_bytes: int):
        self.max_count = int(max_count)
        self.max_bytes = int(max_bytes)
        self._items: OrderedDict[str, JobRecord] = OrderedDict()
        self.nbytes = 0

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: str) -> JobRecord | None:
        """The finished work for ``key`` (now the most recently used), or None."""
        record = self._items.get(key)
        if record is not None:
            self._items.move_to_end(key)
        return record

    def put(self, key: str, record: JobRecord) -> None:
        """Keep ``record`` under ``key``; forget the least recently used while over a bound.

        A record larger than ``max_bytes`` alone is not kept.
        """
        old = self._items.pop(key, None)
        if old is not None:
            self.nbytes -= old.nbytes
        if record.nbytes > self.max_bytes or self.max_count < 1:
            return
        self._items[key] = record
        self.nbytes += record.nbytes
        while len(self._items) > self.max_count or self.nbytes > self.max_bytes:
            _, gone = self._items.popitem(last=False)
            self.nbytes -= gone.nbytes


class SharedWork:
    """The pool's side of shared work (a mixin of :class:`csvm.jobs.JobPool`).

    It uses the scheduler's records, queue, retention and lock: every method here is
    called with the pool's lock held.
    """

    def _init_shared(self) -> None:
        self._live_work: dict[str, JobRecord] = {}  # key -> work queued or running
        self._results = ResultCache(
            self.settings.shared_results, self.settings.shared_results_bytes
        )
        # "computed": works started; "attached": submissions that joined one running;
        # "reused": submissions answered from the finished-result cache.
        self._share_counts: Counter[str] = Counter()

    def _submit_shared(self, job: JobRecord, key: str) -> None:
        """File the new watcher ``job`` under the work ``key`` names (:func:`work_key`):
        a running one, a finished one, or a new one queued for it."""
        work = self._live_work.get(key)
        if work is not None and any(w.owner == job.owner for w in work.watchers):
            # One browser's own tabs each compute: a tab's Stop (or a new Start, which stops
            # its old run) then keeps the run's best state, which a watcher who detaches
            # from work that others still watch cannot have (issue 37).
            self._share_counts["own"] += 1
            self._jobs[job.id] = job
            self._queue.append(job.id)
            return
        if work is None:
            finished = self._results.get(key)
            if finished is not None:
                self._share_counts["reused"] += 1
                job.payload = b""
                job.source, job.state = finished, finished.state
                job.finished_at, job.nbytes = time.time(), finished.nbytes
                self._jobs[job.id] = job
                self._retention.add(job.id, job.owner, job.nbytes)
                self._evict(time.monotonic())
                return
            work = self._new_work(job, key)
        else:
            self._share_counts["attached"] += 1
        job.payload = b""  # the work holds the one copy
        job.source, job.state = work, work.state
        work.watchers.append(job)
        self._jobs[job.id] = job
        self._steer(work)

    def _new_work(self, job: JobRecord, key: str) -> JobRecord:
        """The internal record that computes for ``job`` and those who join it; queued."""
        work = JobRecord(
            id=uuid.uuid4().hex[:12],
            name=job.name,
            group=job.group,
            owner=job.owner,  # the fair share counts the first submitter
            payload=job.payload,
            store=EventStore(
                self.settings.max_points_per_series,
                self.settings.max_array_points_per_series,
            ),
            address=job.address,
            internal=True,
            share_key=key,
            paused_sent=job.hold,  # a job submitted paused (``paused=True``) starts so
        )
        self._share_counts["computed"] += 1
        self._live_work[key] = work
        self._jobs[work.id] = work
        self._queue.append(work.id)
        return work

    def _steer(self, work: JobRecord) -> None:
        """Pause the work's worker while every watcher holds a pause, resume it otherwise."""
        if not work.watchers or work.state not in ACTIVE or work.stop_sent:
            return
        hold = all(w.hold for w in work.watchers)
        if hold != work.paused_sent:
            self._forward(work, {"cmd": "pause" if hold else "resume"})
            work.paused_sent = hold

    def _forward(self, work: JobRecord, command: dict[str, Any]) -> bool:
        """Pass a command to the work's worker (kept until it starts, when queued)."""
        if work.state == "queued":
            work.commands.append(dict(command))
            return True
        if work.state == "running" and work.worker is not None:
            work.worker.send(dict(command))
            return True
        return False

    def _send_shared(self, job: JobRecord, command: dict[str, Any]) -> bool:
        """A watcher's command (see the module's docstring); False when it has ended."""
        work = job.source
        if work is None or job.state not in ACTIVE:
            return False
        cmd = command.get("cmd")
        if cmd == "stop":
            if len(work.watchers) > 1:
                self._finish(job, "stopped")  # detaches this watcher only
                return True
            work.stop_sent = True
            if self._live_work.get(work.share_key) is work:
                del self._live_work[work.share_key]  # its result will be partial
            return self._forward(work, command)
        if cmd in ("pause", "resume", "step"):
            job.hold = cmd != "resume"
            if cmd == "step" and all(w.hold for w in work.watchers):
                work.paused_sent = True  # the worker pauses after that one step
                return self._forward(work, command)
            self._steer(work)
            return True
        # Anything else would change the work for every watcher: only a sole one may.
        return len(work.watchers) == 1 and self._forward(work, command)

    def _detach(self, job: JobRecord, state: str) -> None:
        """End a watcher before its work: it keeps the events so far, and no result; the
        work ends too when nobody else watches it."""
        work = job.source
        job.frozen_events = work.store.events()
        job.frozen_n_events = work.store.n_received
        job.started_at = work.started_at
        job.cpu_seconds = work.worker.cpu_seconds if work.worker is not None else work.cpu_seconds
        job.source = None
        work.watchers.remove(job)
        job.state, job.finished_at = state, time.time()
        job.nbytes = len(pickle.dumps(job.frozen_events, protocol=pickle.HIGHEST_PROTOCOL))
        self._retention.add(job.id, job.owner, job.nbytes)
        if work.state in ACTIVE:
            if work.watchers:
                self._steer(work)
            else:
                self._finish(work, "stopped")
        self._evict(time.monotonic())

    def _work_ended(self, work: JobRecord) -> None:
        """The work is final: its watchers end with it, and a clean result is cached."""
        if self._live_work.get(work.share_key) is work:
            del self._live_work[work.share_key]
        for job in work.watchers:
            job.state, job.finished_at, job.nbytes = work.state, work.finished_at, work.nbytes
            self._retention.add(job.id, job.owner, job.nbytes)
        work.watchers = []  # they keep ``source``: the one copy of events and result
        self._jobs.pop(work.id, None)
        if work.state == "done" and not work.stop_sent:
            self._results.put(work.share_key, work)

    def _shared_stats(self) -> dict[str, int]:
        """Counts of shared work for :meth:`JobPool.stats`."""
        return {
            "computed": self._share_counts["computed"],
            "attached": self._share_counts["attached"],
            "reused": self._share_counts["reused"],
            "live": len(self._live_work),
            "cached": len(self._results),
            "cached_bytes": self._results.nbytes,
        }
