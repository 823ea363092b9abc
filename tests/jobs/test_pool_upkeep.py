"""The worker pool's upkeep: forgetting abandoned jobs, compacting long histories, the CPU
limit per job, reaping ended workers, and the phases and warm workers a run waits on
(split from test_jobs.py, which keeps events, results, crashes, owners and commands)."""

import os
import time

import _job_targets as targets
import numpy as np
import pytest
from _pool_wait import wait_for

from csvm.jobs import JobPool, PoolSettings


@pytest.fixture
def pool():
    p = JobPool(max_workers=2, lease_seconds=120, preload=("numpy",))
    yield p
    p.shutdown()


# -- eviction -----------------------------------------------------------------------------


def test_retention_spares_live_owners_unless_one_alone_is_over():
    from csvm.jobs.retention import Retention

    r = Retention(budget_bytes=250, max_count=100)
    alive = {"alice", "bob"}
    r.add("u1", None, 100)
    r.add("a1", "alice", 100)
    assert r.victims(alive.__contains__) == []
    r.add("u2", None, 100)
    assert r.victims(alive.__contains__) == ["u1"], "abandoned work goes first"
    r.add("a2", "alice", 100)
    assert r.victims(alive.__contains__) == ["u2"]
    r.add("a3", "alice", 100)
    assert r.victims(alive.__contains__) == ["a1"], "alice alone is over: her oldest"
    r.add("b1", "bob", 100)
    assert r.victims(alive.__contains__) == [], "no owner alone is over: all kept"
    assert r.total_bytes == 300
    alive.discard("alice")  # her tab closed
    assert r.victims(alive.__contains__) == ["a2"]
    r.add("big", "bob", 1000)  # bigger than the whole budget: his newest stays
    assert r.victims(alive.__contains__) == ["a3", "b1"]
    assert "big" in r and len(r) == 1
    counted = Retention(budget_bytes=10**9, max_count=2)
    for name in ("x", "y", "z"):
        counted.add(name, "carol", 1)
    assert counted.victims(lambda o: True) == ["x"], "the count bound still holds"


def test_pool_forgets_abandoned_jobs_first_and_says_none():
    kb = 100
    size = kb * 1024
    settings = PoolSettings(max_workers=1, lease_seconds=2.0, finished_bytes_budget=int(2.5 * size))
    pool = JobPool(settings=settings, preload=())
    try:
        done = {}
        for name, owner in (("u1", None), ("a1", "alice"), ("u2", None), ("a2", "alice")):
            done[name] = pool.submit(targets.blob, {"kb": kb}, owner=owner)
            # alice's tab stays open however long a job takes on a loaded machine
            wait_for(pool, done[name], {"done"}, viewer="alice", keep_alive=("alice",))
        assert pool.poll(done["u1"]) is None and pool.get(done["u2"]) is None
        assert pool.poll(done["a1"], viewer="alice").result == b"x" * size
        stats = pool.stats()
        assert stats["evicted"] == 2 and stats["finished"] == 2
        assert size * 2 <= stats["finished_bytes"] <= settings.finished_bytes_budget
        assert pool.get(done["a2"]).nbytes > size
        # alice's tab closes: after her lease her runs are abandoned work too
        time.sleep(2.5)
        b = pool.submit(targets.blob, {"kb": kb}, owner="bob")
        wait_for(pool, b, {"done"}, viewer="bob")
        assert pool.get(done["a1"]) is None and pool.get(done["a2"]) is not None
        assert pool.get(b).result == b"x" * size
    finally:
        pool.shutdown()


# -- compaction ---------------------------------------------------------------------------


def _event(i, classifier=0, step=None, maps=True):
    event = {"kind": "iteration", "model": "kcsvm", "classifier": classifier, "iteration": i}
    if step is not None:
        event.update(kind="half_step", model="lcsvm", step=step)
    event["objective"] = 1.0 / (i + 1)
    event["filters"] = np.full((8, 1, 5, 5), float(i))
    if maps:
        event["pinned_maps"] = np.zeros((6, 24, 24), np.float32)
    return event


def test_compaction_thins_each_series_uniformly_and_keeps_arrays_on_few_points():
    from csvm.jobs.compaction import EventStore

    store = EventStore(max_points=100, max_array_points=8)
    for i in range(1000):
        store.add(_event(i, classifier=0))
        store.add(_event(i, classifier=1))
        store.add(_event(i, step="svm"))
        store.add(_event(i, step="filter"))
        if i < 6:
            store.add(_event(i, classifier=2))  # a short series is kept whole
    events = store.events()
    assert store.n_received == 4006
    by_series = {}
    for e in events:
        by_series.setdefault((e["kind"], e["classifier"], e.get("step")), []).append(e)
    assert len(by_series) == 5, "L-CSVM half-steps are separate series"
    for key, series in by_series.items():
        its = [e["iteration"] for e in series]
        if key[1] == 2:
            assert its == list(range(6))
            assert all("filters" in e for e in series)
            continue
        assert 50 <= len(series) <= 100
        assert its[0] == 0 and its[-1] == 999, "first and last are kept"
        gaps = set(np.diff(its[:-1]))
        assert len(gaps) == 1, f"uniform thinning, got gaps {gaps}"
        with_arrays = [e["iteration"] for e in series if "filters" in e]
        assert its[-1] in with_arrays and 4 <= len(with_arrays) <= 9
        assert all("objective" in e for e in series), "scalars stay on every kept point"
        np.testing.assert_array_equal(series[-1]["filters"], np.full((8, 1, 5, 5), 999.0))
    # arrival order is kept across series
    arrival = [(e["iteration"], e["classifier"]) for e in events]
    assert [a[0] for a in arrival] == sorted(a[0] for a in arrival)


def test_a_long_job_holds_little_after_it_finishes(pool):
    job = pool.submit(targets.long_run, {"n_events": 20000})
    view = wait_for(pool, job, {"done", "error"}, timeout=120)
    assert view.state == "done", view.error
    assert view.n_events == 20000
    assert view.nbytes < 2 * 2**20, f"{view.nbytes / 2**20:.2f} MB held"
    assert len(view.events) <= 1000
    assert view.events[0]["iteration"] == 0 and view.events[-1]["iteration"] == 19999
    assert view.events[-1]["filters"].shape == (8, 1, 5, 5)
    assert view.events[-1]["pinned_maps"].shape == (6, 24, 24)
    assert 1 < sum("filters" in e for e in view.events) <= 33


def test_memory_is_flat_over_a_thousand_long_jobs():
    """The pool's two bounds together (compaction per job, retention across jobs) keep the
    memory of 1,000 finished long jobs at the budget, measured with tracemalloc."""
    import pickle
    import tracemalloc

    from csvm.jobs.compaction import EventStore
    from csvm.jobs.retention import Retention

    budget = 8 * 2**20
    retention = Retention(budget_bytes=budget, max_count=10**6)
    kept = {}
    filters = np.ones((8, 1, 5, 5))
    maps = np.ones((6, 24, 24), np.float32)
    samples = {}
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for n in range(1000):
            # thinned like a long job (fewer points, so 1,000 jobs take seconds)
            store = EventStore(max_points=20, max_array_points=8)
            for i in range(50):  # each event with its own arrays, as from a pipe
                store.add(_event(i) | {"filters": filters * i, "pinned_maps": maps * i})
            nbytes = len(pickle.dumps(store.events()))
            kept[n] = store
            retention.add(n, None, nbytes)
            for victim in retention.victims(lambda owner: False):
                del kept[victim]
            if n + 1 in (100, 250, 500, 1000):
                samples[n + 1] = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert retention.total_bytes <= budget
    assert samples[1000] < 2 * budget, samples
    assert samples[1000] < samples[100] * 1.25 + 2**20, f"memory grows: {samples}"


# -- CPU time limit -----------------------------------------------------------------------


@pytest.fixture
def limited():
    p = JobPool(settings=PoolSettings(max_workers=2, max_job_seconds=1.0), preload=())
    yield p
    p.shutdown()


def test_a_busy_job_ends_at_its_cpu_limit_but_a_waiting_one_does_not(limited):
    pool = limited
    busy = pool.submit(targets.spin, {"seconds": 60})
    waiting = pool.submit(targets.echo_commands, {"timeout": 30})
    view = wait_for(pool, busy, {"done", "error", "stopped"})
    assert view.state == "error" and view.error_type == "TimeLimit" and view.limit_hit
    assert "1 s of CPU time" in view.error and "CSVM_MAX_JOB_SECONDS" in view.error
    assert view.events == [{"spinning": True}], "what it emitted is kept"
    assert 1.0 <= view.cpu_seconds < 10
    # the waiting job has been alive as long (blocked in receive: no CPU), and runs on
    time.sleep(max(0.0, 3.0 - (time.time() - view.submitted_at)))
    assert pool.poll(waiting).state == "running"
    pool.send(waiting, {"cmd": "stop"}, None)
    assert wait_for(pool, waiting, {"done", "error"}).state == "done"


def test_the_cpu_limit_also_ends_a_job_inside_a_c_level_solve(limited):
    job = limited.submit(targets.long_svm_solve, {})
    view = wait_for(limited, job, {"done", "error", "stopped"})
    assert view.error_type == "TimeLimit" and view.limit_hit, view.error
    assert "CSVM_MAX_JOB_SECONDS" in view.error


# -- reaping, stop latency ------------------------------------------------------------------


def _zombie_children():
    me = os.getpid()
    zombies = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == "Z" and int(fields[1]) == me:
            zombies.append(int(entry))
    return zombies


def _wait_until_reaped(pool, seconds=3.0):
    deadline = time.time() + seconds
    while time.time() < deadline:  # no poll: the ticker alone must reap them
        if not _zombie_children() and pool.stats()["workers"]["dying"] == 0:
            break
        time.sleep(0.1)
    assert _zombie_children() == []
    assert pool.stats()["workers"]["dying"] == 0


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc (Linux)")
def test_ended_workers_are_reaped_promptly():
    # Under the fork server, workers are its children, not ours; the spawn case, where
    # they are ours, is checked at the end of the phase test below.
    pool = JobPool(settings=PoolSettings(max_workers=2, spares=0), preload=())
    try:
        done = pool.submit(targets.count, {"n": 2})
        stopped = pool.submit(targets.sleeper, {"seconds": 30})
        wait_for(pool, done, {"done"})
        wait_for(pool, stopped, {"running"})
        pool.cancel(stopped, None)  # the server itself
        _wait_until_reaped(pool)
    finally:
        pool.shutdown()


def test_stop_shows_at_once_on_a_loaded_pool():
    pool = JobPool(settings=PoolSettings(max_workers=4), preload=())
    try:
        # Load: a busy job, and a chatty one keeping the reader thread and the lock busy.
        busy = pool.submit(targets.spin, {"seconds": 60})
        chatty = pool.submit(targets.long_run, {"n_events": 20000})
        for _ in range(3):
            victim = pool.submit(targets.long_svm_solve, {})
            deadline = time.time() + 60
            while not pool.poll(victim).events and time.time() < deadline:
                time.sleep(0.05)
            process = pool._jobs[victim].worker.process
            t0 = time.perf_counter()
            pool.cancel(victim, None)  # the server itself
            # The very next poll says "stopped": cancel does not wait for the process.
            assert pool.poll(victim).state == "stopped"
            while process.is_alive() and time.perf_counter() - t0 < 30.0:
                time.sleep(0.02)
            assert not process.is_alive(), "the process ends soon after, outside the lock"
        assert pool.poll(chatty).state in ("running", "done")
        pool.cancel(busy, None)  # the server itself
    finally:
        pool.shutdown()


# -- phases and warm workers ---------------------------------------------------------------


def test_phase_says_what_a_job_is_waiting_for(monkeypatch):
    monkeypatch.setenv("CSVM_TEST_IMPORT_DELAY", "1.5")
    settings = PoolSettings(max_workers=1, spares=0, start_method="spawn")
    pool = JobPool(settings=settings, preload=("_job_targets",))
    try:
        first = pool.submit(targets.echo_commands, {})
        second = pool.submit(targets.count, {"n": 1})
        assert pool.poll(second).phase == "queued (place 1)"
        phases = []
        deadline = time.time() + 60
        while time.time() < deadline:
            phase = pool.poll(first).phase
            if not phases or phases[-1] != phase:
                phases.append(phase)
            if phase == "running":
                break
            time.sleep(0.02)
        assert phases == ["waiting for a worker", "importing", "running"], phases
        assert pool.poll(second).phase == "queued (place 1)"
        pool.cancel(first, None)  # the server itself
        assert wait_for(pool, second, {"done"}).phase == "done"
        # spawned workers are this process's children: a stopped one and one that
        # ended by itself must both be reaped with no further poll
        if os.path.isdir("/proc"):
            _wait_until_reaped(pool)
    finally:
        pool.shutdown()


def test_enough_warm_workers_for_a_runs_three_jobs():
    pool = JobPool(settings=PoolSettings(max_workers=2), preload=())
    try:
        deadline = time.time() + 10
        while pool.stats()["workers"]["spares"] < 3 and time.time() < deadline:
            time.sleep(0.05)
        assert pool.stats()["workers"]["spares"] == 3
        # the first two sleep, so the third is still queued when polled however slowly
        # a loaded machine gets there (a job of 1 count once ended first, and the third ran)
        first_two = [pool.submit(targets.sleeper, {"seconds": 60.0}) for _ in range(2)]
        third = pool.submit(targets.count, {"n": 1})
        assert pool.poll(third).phase == "queued (place 1)"
        for job in first_two:
            pool.cancel(job, None)
        assert wait_for(pool, third, {"done"}).phase == "done"
    finally:
        pool.shutdown()
