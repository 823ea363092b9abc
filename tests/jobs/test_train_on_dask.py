"""The Train page's jobs on a Dask cluster: events stream back, Pause/Step/Stop keep their
meaning, a cancelled job stops on the cluster, an unreachable cluster trains here."""

import contextlib
import time

import pytest

from csvm.jobs import JobPool
from csvm.jobs.dask_backend import relay
from csvm.runs.config import RunConfig
from csvm.runs.targets import run_model, step_events

distributed = pytest.importorskip("distributed")

SMALL = RunConfig(n_train=120, n_iter=5)
# A port of the range this module's tests may use, where nothing listens.
NOBODY = "tcp://127.0.0.1:8789"


def _until(check, seconds=60.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"not within {seconds} s")


@contextlib.contextmanager
def _pool():
    pool = JobPool(max_workers=2)
    try:
        yield pool
    finally:
        pool.shutdown()


def _on_cluster(cluster) -> list[str]:
    """Keys of the Train jobs the cluster is still running."""
    return [
        str(k)
        for k, ts in list(cluster.scheduler.tasks.items())
        if str(k).startswith("csvm-train-") and ts.state == "processing"
    ]


@pytest.mark.slow  # a real cluster and two relays: about 8 s
def test_a_paused_run_on_the_cluster_steps_stops_and_streams_its_events():
    with (
        distributed.LocalCluster(
            n_workers=2,
            processes=False,
            threads_per_worker=1,
            host="127.0.0.1",
            scheduler_port=8788,
            dashboard_address=None,
        ) as cluster,
        _pool() as pool,
    ):
        kwargs = {"config": SMALL.to_dict(), "model": "csvm", "paused": True}
        job = pool.submit(
            relay,
            {"scheduler": cluster.scheduler_address, "target": run_model, "kwargs": kwargs},
            owner="ada",
        )
        # Its first step arrives while it waits, paused, on the cluster.
        view = _until(lambda: (v := pool.poll(job)) and len(step_events(v.events)) == 1 and v)
        assert view.state == "running" and _until(lambda: _on_cluster(cluster))
        pool.send(job, {"cmd": "step"}, "ada")
        _until(lambda: len(step_events(pool.poll(job).events)) == 2)
        time.sleep(0.5)  # paused again: no third step comes
        assert len(step_events(pool.poll(job).events)) == 2
        pool.send(job, {"cmd": "stop"}, "ada")
        view = _until(lambda: (v := pool.poll(job)).state != "running" and v)
        assert view.state == "done", view.error
        assert view.result["status"] == "stopped" and view.result["test_accuracy"] > 0.5
        # Dropped by the pool (a lease that ran out, a queued run's Stop): the cluster
        # job is asked to stop and leaves the cluster too.
        other = pool.submit(
            relay,
            {"scheduler": cluster.scheduler_address, "target": run_model, "kwargs": kwargs},
            owner="bob",
        )
        _until(lambda: step_events(pool.poll(other).events))
        pool.cancel(other, "bob")
        _until(lambda: not _on_cluster(cluster), seconds=20)


def test_an_unreachable_cluster_trains_in_the_pools_worker():
    events = []
    result = relay(
        events.append,
        NOBODY,
        run_model,
        {"config": SMALL.replace(n_iter=2).to_dict(), "model": "csvm"},
        connect_timeout=0.5,
    )
    assert result["status"] == "done" and len(step_events(events)) == 2


def test_the_train_page_wraps_its_jobs_or_says_why_they_stay_here(monkeypatch):
    import streamlit as st

    import explorer.dask_jobs as dj

    targets = {"csvm": (run_model, {"model": "csvm"})}
    monkeypatch.delenv("CSVM_DASK_SCHEDULER", raising=False)
    assert dj.on_cluster(targets) == targets
    monkeypatch.setenv("CSVM_DASK_SCHEDULER", NOBODY)
    monkeypatch.setattr(dj, "cluster", lambda address: (None, "connection refused"))
    assert dj.on_cluster(targets) == targets
    assert "cannot be used (connection refused)" in st.session_state["cluster_note"]
    monkeypatch.setattr(dj, "cluster", lambda address: (object(), ""))
    (target, kwargs) = dj.on_cluster(targets)["csvm"]
    assert target is relay and kwargs == {
        "scheduler": NOBODY,
        "target": run_model,
        "kwargs": {"model": "csvm"},
    }
    assert "cluster_note" not in st.session_state
