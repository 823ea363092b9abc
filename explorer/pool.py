"""The server's one pool of worker processes (held in this module, never in
``st.cache_resource``: :func:`get_pool` says why) and the states a job ends in."""

from __future__ import annotations

import threading

from csvm.jobs import JobPool, PoolSettings

__all__ = [
    "FINAL_STATES",
    "get_pool",
    "shutdown_pool",
]

_POOL: JobPool | None = None


_POOL_LOCK = threading.Lock()


FINAL_STATES = {"done", "error", "stopped"}


def shutdown_pool() -> None:
    """End the server's pool: every worker, suspended ones too (the server is stopping).

    ``app.py`` calls it as the server shuts down: uvicorn ends the process by raising the
    SIGTERM it caught again, so ``atexit`` never runs, and three workers frozen for a
    fair share, the fork server and the resource tracker were left behind.
    """
    with _POOL_LOCK:
        pool = _POOL
    if pool is not None:
        pool.shutdown()


def get_pool() -> JobPool:
    """One pool of worker processes for the whole server (limits: ``PoolSettings``, read
    from ``CSVM_*`` environment variables; see the README's classroom section).

    Held in this module, not in ``st.cache_resource``: any browser can send Streamlit's
    ``clear_cache`` message (two bytes over the websocket, no login), which empties every
    ``st.cache_resource``; a pool kept there was rebuilt, every student's runs were lost
    and the old pool's workers lived on.  Nothing a browser sends reaches this one.

    Idle workers import the library and load the default dataset in advance
    (:mod:`explorer.worker_preload`), so a run starts streaming about a second after Start.
    """
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = JobPool(
                settings=PoolSettings.from_env(),
                preload=("numpy", "sklearn.svm", "csvm.runs.targets", "explorer.worker_preload"),
            )
        return _POOL
