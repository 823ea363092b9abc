"""Background jobs for the explorer: a process per job, a shared queue, owners and limits.

>>> from csvm.jobs import JobPool, PoolSettings  # doctest: +SKIP
>>> pool = JobPool(settings=PoolSettings.from_env())  # doctest: +SKIP
>>> job = pool.submit(target, {"n": 5}, owner=session_id)  # doctest: +SKIP

Modules: :mod:`~csvm.jobs.pool` (the pool's public API), :mod:`~csvm.jobs.scheduler` (its
queue, workers and threads), :mod:`~csvm.jobs.records` (a job's record, its snapshot
:class:`JobView` and the pool's errors), :mod:`~csvm.jobs.messages` (the worker's messages
read into a record), :mod:`~csvm.jobs.settings` (every limit, from ``CSVM_*`` environment
variables), :mod:`~csvm.jobs.compaction` (bounded event storage), :mod:`~csvm.jobs.process`
(the parent's handle on a worker process) and :mod:`~csvm.jobs.worker` (the child's side).
"""

from csvm.jobs.compaction import EventStore
from csvm.jobs.pool import JobPool
from csvm.jobs.records import JobView, NotOwner, QuotaExceeded
from csvm.jobs.settings import ENV_VARS, PoolSettings
from csvm.jobs.worker import Emitter

__all__ = [
    "ENV_VARS",
    "Emitter",
    "EventStore",
    "JobPool",
    "JobView",
    "NotOwner",
    "PoolSettings",
    "QuotaExceeded",
]
