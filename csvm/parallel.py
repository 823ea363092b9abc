"""Where independent tasks run: local threads by default, or a Dask cluster.

The one-vs-one / one-vs-rest sub-problems of a fit and the cells of a sweep are
independent tasks, each seeded on its own before it is dispatched, so they give the same
results wherever they run.  Locally they run in a thread pool (LIBSVM, BLAS and the numpy
kernels release the GIL, and callbacks reach the caller live).  Inside :func:`backend` they
are submitted to a ``dask.distributed`` cluster instead::

    from csvm.parallel import backend
    with backend("tcp://scheduler:8786"):
        clf.fit(X, y)            # the 45 pairs run on the cluster's workers

On a cluster, callbacks cannot stream live: each task runs in a worker process, so its
events come back with its result and are replayed to the callback, in order, as each task
finishes.  A callback (or ``on_result``) that asks to stop cancels the tasks that have not
started; tasks already running finish on their workers and their results are ignored.

The explorer's Sweep page reads the scheduler's address from the environment variable
``CSVM_DASK_SCHEDULER`` through :func:`sweep_executor`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor
from contextvars import ContextVar
from typing import Any

from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits

from csvm.exceptions import CSVMError

__all__ = [
    "SCHEDULER_ENV",
    "backend",
    "check_scheduler",
    "current_client",
    "run_tasks",
    "sweep_executor",
    "one_blas_thread",
]

#: Environment variable naming the Dask scheduler the app's Sweep page should use.
SCHEDULER_ENV = "CSVM_DASK_SCHEDULER"
#: Seconds to wait for a scheduler before giving up with a clear message.
_CONNECT_TIMEOUT = 10

_client: ContextVar[Any] = ContextVar("csvm_dask_client", default=None)


def _connect(scheduler: str, timeout: float) -> Any:
    try:
        from distributed import Client
    except ImportError:  # the [dask] extra, not in a plain `pip install csvm-explorer`
        raise CSVMError(
            "Running on a Dask cluster needs dask.distributed: pip install "
            "'csvm-explorer[dask]' (or '.[dask]' from the checkout)."
        ) from None
    try:
        client = Client(scheduler, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise CSVMError(
            f"Cannot reach the Dask scheduler at {scheduler!r} ({exc}). Start one with "
            "`dask scheduler` and workers with `dask worker ADDRESS`, or check the address."
        ) from None
    try:
        check_scheduler(client)
    except CSVMError:
        client.close()
        raise
    return client


def check_scheduler(client: Any) -> None:
    """Raise a clear :class:`CSVMError` unless the scheduler's Python can import csvm.

    The scheduler unpickles every task graph it receives, and a csvm task's graph names
    csvm functions: without the package there, each task fails with a bare
    "deserialization" error long after the fit started.
    """
    # A lambda is pickled by value: the scheduler can run it without csvm.
    probe = lambda: __import__("importlib.util").util.find_spec("csvm") is not None  # noqa: E731
    try:
        ok = client.run_on_scheduler(probe)
    except Exception:  # noqa: BLE001 - a scheduler that forbids run_on_scheduler: try anyway
        return
    if not ok:
        raise CSVMError(
            f"The Dask scheduler at {client.scheduler.address!r} cannot import csvm. The "
            "scheduler unpickles every task, so install the package where `dask scheduler` "
            "runs (pip install csvm-explorer, or pip install . from the checkout), as on "
            "every worker, then start it again."
        )


@contextlib.contextmanager
def backend(scheduler: Any = None, *, timeout: float = _CONNECT_TIMEOUT) -> Iterator[Any]:
    """Run CSVM sub-problems and sweep cells on a Dask cluster inside this block.

    Parameters
    ----------
    scheduler : str, distributed.Client or None
        The scheduler's address (``"tcp://host:8786"``), a connected client (left open on
        exit), or None for the local thread pool (the block changes nothing).
    timeout : float
        Seconds to wait for the scheduler.

    Yields
    ------
    distributed.Client or None

    Raises
    ------
    CSVMError
        When the scheduler cannot be reached (the message says how to start one).
    """
    if scheduler is None:
        token = _client.set(None)
        try:
            yield None
        finally:
            _client.reset(token)
        return
    own = isinstance(scheduler, str)
    client = _connect(scheduler, timeout) if own else scheduler
    token = _client.set(client)
    try:
        yield client
    finally:
        _client.reset(token)
        if own:
            client.close()


def current_client() -> Any:
    """The Dask client tasks go to, or None (local threads).

    The innermost :func:`backend` block's client; else, inside scikit-learn's convention
    ``with joblib.parallel_config(backend="dask"):``, the client of joblib's Dask backend
    (the default ``distributed.Client``).
    """
    client = _client.get()
    return client if client is not None else _joblib_dask_client()


def _joblib_dask_client() -> Any:
    """The client of joblib's active Dask backend, or None when another backend is active."""
    try:
        from joblib.parallel import get_active_backend

        active, _ = get_active_backend()
    except Exception:  # noqa: BLE001 - an older joblib without the function: no backend
        return None
    # joblib's own class (joblib._dask.DaskDistributedBackend), matched by name so that
    # joblib's Dask module (which imports distributed) is never imported here.
    if type(active).__name__ != "DaskDistributedBackend":
        return None
    return getattr(active, "client", None)


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """One BLAS thread per task: parallelism comes from tasks side by side.

    Two reasons.  Two tasks each running a two-thread BLAS on two cores wait on each
    other's threads: on a busy machine a 2,000-image 10-class fit took 62 s instead of
    3 s (docs/scale.md).  And OpenBLAS's float32 sums depend on its thread count, so one
    thread everywhere makes a task's result the same locally and on a Dask worker
    (whose nanny also sets OPENBLAS_NUM_THREADS=1).  The limit is process-wide.
    """
    with threadpool_limits(1, user_api="blas"):
        yield


def run_tasks(
    fn: Callable[..., Any],
    args: Sequence[tuple],
    n_jobs: int | None = None,
    on_result: Callable[[int, Any], Any] | None = None,
) -> list[Any]:
    """``[fn(*a) for a in args]``, in parallel: local threads, or the active cluster.

    Parameters
    ----------
    fn : callable
        A module-level function (it is pickled to the workers on a cluster).
    args : sequence of tuples
    n_jobs : int or None
        Local threads (None: 1, -1: one per core).  On a cluster every task is submitted
        at once and the cluster runs as many as it has worker threads.
    on_result : callable, optional
        ``on_result(index, result)`` in the caller's thread as each task finishes (in
        task order locally, in completion order on a cluster); returning False stops:
        tasks not yet started are cancelled and running ones' results are ignored.

    Returns
    -------
    list
        Results in task order; None for the tasks a stop cancelled.

    Every task runs with one BLAS thread (:func:`one_blas_thread`), locally and on a
    cluster, so its result does not depend on where it ran.
    """
    client = current_client()
    if client is None:
        return _run_local(fn, args, n_jobs, on_result)
    from distributed import as_completed

    futures = [client.submit(_one_thread_call, fn, *a, pure=False) for a in args]
    index = {f.key: i for i, f in enumerate(futures)}
    results: list[Any] = [None] * len(futures)
    try:
        for future in as_completed(futures, loop=client.loop):
            i = index[future.key]
            results[i] = future.result()
            if on_result is not None and on_result(i, results[i]) is False:
                break
    finally:
        # Stop (or an error): cancel what has not finished; running tasks' results are
        # dropped by the scheduler when they arrive.
        client.cancel([f for f in futures if not f.done()])
    return results


def _one_thread_call(fn: Callable[..., Any], *args: Any) -> Any:
    with one_blas_thread():
        return fn(*args)


def _run_local(fn, args, n_jobs, on_result) -> list[Any]:
    results: list[Any] = [None] * len(args)
    with one_blas_thread():
        # require="sharedmem": threads even inside a joblib process-backend block, so
        # that callbacks keep streaming.
        stream = Parallel(n_jobs=n_jobs, require="sharedmem", return_as="generator")(
            delayed(fn)(*a) for a in args
        )
        try:
            for i, result in enumerate(stream):
                results[i] = result
                if on_result is not None and on_result(i, result) is False:
                    break
        finally:
            stream.close()  # a stop: joblib drops the tasks not yet started
    return results


class _ClusterExecutor(Executor):
    """A ``concurrent.futures`` executor on a Dask cluster that owns its client."""

    def __init__(self, client: Any):
        self._executor = client.get_executor(pure=False)
        self.client = client

    def submit(self, fn, /, *args, **kwargs):
        return self._executor.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        # cancel_futures: pending tasks never start; running ones finish on their
        # workers but their results are dropped.
        self._executor.shutdown(wait=wait and not cancel_futures)
        self.client.close()


def sweep_executor(scheduler: str | None = None) -> Executor | None:
    """Where the Sweep page should run its cells: a Dask cluster, or None for its own pool.

    Parameters
    ----------
    scheduler : str, optional
        The scheduler's address; by default the environment variable
        ``CSVM_DASK_SCHEDULER`` (unset or empty: None).

    Returns
    -------
    concurrent.futures.Executor or None
        Submit ``csvm.runs.sweeps.run_validation`` cells to it; ``future.cancel()`` (or
        ``shutdown(cancel_futures=True)``) is the Stop button: cells not yet started
        never run, running ones finish on their workers and are ignored.
    """
    address = scheduler or os.environ.get(SCHEDULER_ENV, "").strip()
    if not address:
        return None
    return _ClusterExecutor(_connect(address, _CONNECT_TIMEOUT))
