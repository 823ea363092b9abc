"""Background jobs for the explorer: a process per job, a shared queue, owners and limits.

>>> from csvm.jobs import JobPool, PoolSettings  # doctest: +SKIP
>>> pool = JobPool(settings=PoolSettings.from_env())  # doctest: +SKIP
>>> job = pool.submit(target, {"n": 5}, owner=session_id)  # doctest: +SKIP

Modules: :mod:`~csvm.jobs.pool` (the pool and its views), :mod:`~csvm.jobs.settings` (every
limit, from ``CSVM_*`` environment variables), :mod:`~csvm.jobs.compaction` (bounded event
storage), :mod:`~csvm.jobs.process` (the parent's handle on a worker process) and
:mod:`~csvm.jobs.worker` (the child's side).
"""

from csvm.jobs.compaction import EventStore
from csvm.jobs.pool import JobPool, JobView, NotOwner, QuotaExceeded
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
