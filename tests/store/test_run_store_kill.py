"""A writer killed with SIGKILL at any moment leaves the store readable, each run whole (as
of its last write) or absent, and its training run findable as interrupted."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time

import numpy as np

from csvm.runs.config import RunConfig
from csvm.store import open_store

CONFIG = RunConfig().replace(eta=0.25)


def _writer(url: str, done, start: int) -> None:
    """Forked child: checkpoint and save runs in a loop until killed (30 s at most)."""
    try:
        store = open_store(url, server_id=f"writer-{os.getpid()}")
        rng = np.random.default_rng(os.getpid())
        deadline = time.monotonic() + 30
        index = start
        while time.monotonic() < deadline:
            steps = int(rng.integers(5, 40))
            # Up to 40 kB of filters, so a transaction is long enough to be cut into.
            filters = rng.normal(size=(int(rng.integers(1, 400)), 5, 5)).astype(np.float32)
            history = []
            for k in range(1, steps + 1):
                history.append({"step": k, "filters_sum": float(filters.sum() * k)})
                if k % 8 == 0:  # the filters at step k are k times the final ones
                    run_id, at_k = f"w{index}", filters * k
                    store.checkpoint(run_id, CONFIG, step=k, history=history, filters=at_k)
            filters_at_end = filters * steps
            result = {
                "test_accuracy": 0.5,
                "n_test": 2000,
                "test_predictions": rng.choice([-1, 1], 2000).astype(np.int8),
                "history": history,
                "filters": filters_at_end,
                "check": {"steps": steps, "sum": float(filters_at_end.sum())},
            }
            store.save(f"w{index}", CONFIG, {"csvm": result}, name=f"run {index}")
            index += 1
            done.value = index  # after the commit returned: every run below is stored
    finally:
        os._exit(0)


def _check_whole(run) -> None:
    """A run as one write left it: its parts agree with each other."""
    history = run.history
    assert run.step == len(history) and [r["step"] for r in history] == list(range(1, run.step + 1))
    total = float(run.filters.sum())
    if run.status == "done":
        check = run.results["csvm"]["check"]
        assert check["steps"] == run.step and np.isclose(total, check["sum"], rtol=1e-4, atol=1e-3)
        assert len(run.results["csvm"]["test_predictions"]) == 2000
    else:
        assert run.status in ("running", "interrupted")
        assert np.isclose(total, history[-1]["filters_sum"], rtol=1e-4, atol=1e-3)


def _kill_rounds(url: str, rounds: int = 3) -> int:
    # fork: the test process's imports come along (a spawned writer spends 5 s importing).
    # The child touches no lock another thread of this process could hold: it opens its
    # own connection and its own random generator.
    ctx = mp.get_context("fork")
    # No lock: a child killed while holding it would hang the parent; an int write is whole.
    done = ctx.Value("i", 0, lock=False)
    rng = np.random.default_rng(0)
    for _ in range(rounds):
        target = done.value + 4
        child = ctx.Process(target=_writer, args=(url, done, done.value))
        child.start()
        deadline = time.monotonic() + 30
        while done.value < target and child.is_alive() and time.monotonic() < deadline:
            time.sleep(0.002)
        assert done.value >= target, f"the writer saved {done.value} runs of {target} in 30 s"
        time.sleep(float(rng.uniform(0, 0.02)))  # somewhere inside a write, or between
        os.kill(child.pid, signal.SIGKILL)
        child.join(10)
        assert child.exitcode == -signal.SIGKILL, "the writer ended before it was killed"
        with open_store(url) as store:
            if store.backend == "sqlite":
                rows = store._do("check", lambda tx: tx.all("PRAGMA integrity_check"))
                assert rows == [("ok",)]
            for summary in store.list_runs(include_hidden=True, limit=5000):
                _check_whole(store.get(summary.id))
            for index in range(done.value):  # every save that returned is there, whole
                assert store.get(f"w{index}").status == "done"
    return done.value


def test_a_killed_writer_leaves_every_run_whole_or_absent(store_url):
    saved = _kill_rounds(store_url)
    with open_store(store_url) as store:
        running = [r.id for r in store.list_runs(statuses=["running"])]
        time.sleep(0.05)
        assert sorted(store.recover(stale_after=0.01)) == sorted(running)
        for run_id in running:
            run = store.get(run_id)
            assert run.interrupted and run.step > 0
            _check_whole(run)
        assert store.usage()[0] >= saved
