"""The worker pool: events, results, Stop inside a C-level solve, crashes, queue, leases."""

import multiprocessing as mp
import os
import subprocess
import sys
import threading
import time

import _job_targets as targets
import numpy as np
import pytest

from csvm.jobs import JobPool, NotOwner, PoolSettings, QuotaExceeded


def wait_for(pool, job_id, states, timeout=60.0, viewer=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        view = pool.poll(job_id, viewer=viewer)
        if view.state in states:
            return view
        time.sleep(0.05)
    raise AssertionError(f"job stayed {view.state}, expected {states}")


@pytest.fixture
def pool():
    p = JobPool(max_workers=2, lease_seconds=120, preload=("numpy",))
    yield p
    p.shutdown()


def test_events_arrive_in_order_with_the_result(pool):
    job = pool.submit(targets.count, {"n": 5}, name="count", group="g1")
    view = wait_for(pool, job, {"done"})
    assert [e["i"] for e in view.events] == [0, 1, 2, 3, 4]
    assert view.events[3]["square"][0] == 9
    assert view.result["total"] == 5
    np.testing.assert_array_equal(view.result["array"], np.arange(5))
    assert view.started_at >= view.submitted_at and view.finished_at >= view.started_at
    assert [v.id for v in pool.jobs(group="g1")] == [job]
    assert pool.jobs(group="other") == []


def test_stop_during_a_long_svm_solve(pool):
    job = pool.submit(targets.long_svm_solve, {})
    view = wait_for(pool, job, {"running"})
    deadline = time.time() + 60
    while not pool.poll(job).events and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # well inside SVC.fit now
    process = pool._jobs[job].worker.process
    assert process.is_alive()
    t0 = time.perf_counter()
    pool.cancel(job, None)  # the server itself
    # A generous guard, not a speed claim: bench/bench_stop.py measures the latency.
    while process.is_alive() and time.perf_counter() - t0 < 30.0:
        time.sleep(0.02)
    assert not process.is_alive(), "the worker must be terminated, not left to finish"
    assert process.pid not in [c.pid for c in mp.active_children()]
    view = pool.poll(job)
    assert view.state == "stopped"
    assert view.events == [{"started": True}], "what the job had sent is kept"


def test_errors_and_crashes_leave_the_pool_serving(pool):
    failing = pool.submit(targets.raises, {})
    view = wait_for(pool, failing, {"error"})
    assert view.error_type == "ValueError"
    assert "gamma must be positive" in view.error
    assert view.events == [{"about": "to fail"}]

    crashing = pool.submit(targets.crashes, {})
    view = wait_for(pool, crashing, {"error"})
    assert "exit code 3" in view.error

    diverging = pool.submit(targets.diverges, {})
    view = wait_for(pool, diverging, {"error"})
    assert view.error_type == "DivergenceError"
    assert view.error_info == {"cause": "norm-explosion", "suggested_eta": 1.0}

    after = pool.submit(targets.count, {"n": 2})
    assert wait_for(pool, after, {"done"}).result["total"] == 2


def test_third_job_waits_and_reports_its_place(pool):
    a = pool.submit(targets.sleeper, {"seconds": 30})
    b = pool.submit(targets.sleeper, {"seconds": 30})
    c = pool.submit(targets.count, {"n": 1})
    assert pool.poll(c).state == "queued"
    assert pool.poll(c).place == 1
    wait_for(pool, a, {"running"})
    pool.cancel(a, None)  # the server itself
    assert wait_for(pool, c, {"done"}).result["total"] == 1
    pool.cancel(b, None)  # the server itself
    assert pool.poll(b).state == "stopped"


def test_unpolled_job_loses_its_lease():
    pool = JobPool(max_workers=1, lease_seconds=1.0, preload=())
    try:
        job = pool.submit(targets.sleeper, {"seconds": 30})
        time.sleep(2.5)
        assert pool.get(job).state == "stopped"
    finally:
        pool.shutdown()


def test_shutdown_leaves_no_children():
    pool = JobPool(max_workers=2, preload=())
    job = pool.submit(targets.sleeper, {"seconds": 30})
    wait_for(pool, job, {"running"})
    processes = [pool._jobs[job].worker.process] + [w.process for w in pool._spares]
    assert all(p.is_alive() for p in processes)
    pool.shutdown()
    assert pool.get(job).state == "stopped"
    assert not any(p.is_alive() for p in processes)
    alive = {c.pid for c in mp.active_children()}
    assert not alive & {p.pid for p in processes}


def test_child_sees_our_sys_path_and_one_blas_thread(pool):
    import os
    import sys

    before = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    job = pool.submit(targets.child_info, {})
    info = wait_for(pool, job, {"done"}).result
    # spawn sends the parent's sys.path, which is how the child imports _job_targets
    tests_dir = os.path.dirname(os.path.abspath(targets.__file__))
    assert tests_dir in info["sys_path"] and tests_dir in sys.path
    assert info["env"] == {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    assert all(n == 1 for n in info["threads"])
    # the parent's environment is restored after each worker starts
    assert {k: os.environ.get(k) for k in before} == before


def test_unpicklable_result_is_an_error_and_queued_cancel_is_stopped():
    pool = JobPool(max_workers=1, lease_seconds=120, preload=())
    try:
        bad = pool.submit(targets.unpicklable_result, {})
        waiting = pool.submit(targets.count, {"n": 1})
        assert pool.poll(waiting).place == 1
        pool.cancel(waiting, None)  # the server itself
        view = pool.poll(waiting)
        assert view.state == "stopped" and view.place is None and view.started_at is None
        view = wait_for(pool, bad, {"error"})
        assert view.events == [{"ok": True}]
        assert "exited unexpectedly" not in view.error and view.error_type
    finally:
        pool.shutdown()


def test_unpicklable_target_is_refused_at_submit(pool):
    with pytest.raises(TypeError, match="picklable"):
        pool.submit(lambda emit: None, {})
    assert pool.jobs() == []


def test_only_the_newest_finished_jobs_are_kept():
    pool = JobPool(max_workers=1, preload=(), max_finished=2)
    try:
        ids = []
        for n in (1, 2, 3):
            ids.append(pool.submit(targets.count, {"n": n}))
            wait_for(pool, ids[-1], {"done"})
        assert pool.get(ids[0]) is None, "the oldest finished job is forgotten"
        assert pool.get(ids[1]).result["total"] == 2
        assert pool.get(ids[2]).result["total"] == 3
    finally:
        pool.shutdown()


def test_worker_dying_in_the_middle_of_a_message_does_not_hang_the_pool(pool):
    job = pool.submit(targets.torn_message, {})
    views = []

    def watch():
        views.append(wait_for(pool, job, {"done", "error", "stopped"}, timeout=30))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    watcher.join(30)
    assert not watcher.is_alive(), "poll() blocked on a half-written message"
    view = views[0]
    assert view.state == "error" and "exit code 9" in view.error
    assert view.events == [{"before": True}]
    after = pool.submit(targets.count, {"n": 2})
    assert wait_for(pool, after, {"done"}).result["total"] == 2


def test_many_events_and_a_large_result_arrive_whole(pool):
    job = pool.submit(targets.chatty, {"n_events": 300, "result_mb": 16})
    view = wait_for(pool, job, {"done"})
    assert [e["i"] for e in view.events] == list(range(300))
    assert view.events[-1]["image"][0, 0] == 299.0
    assert view.result["big"].nbytes == 16 * 2**20 and view.result["big"].sum() == 2**21
    # (How long emit() takes, with a thread in the child writing the pipe, is a speed
    # figure: bench/bench_jobs.py prints it.)


def test_more_events_than_one_tick_reads_still_end_done():
    # A tick reads at most 1000 messages per job; the rest, and the result behind them,
    # must still arrive (not be taken for a crash once the child has exited).
    settings = PoolSettings(max_workers=1, max_points_per_series=5000)
    pool = JobPool(settings=settings, preload=())
    try:
        job = pool.submit(targets.count, {"n": 2500})
        view = wait_for(pool, job, {"done", "error"})
        assert view.state == "done", view.error
        assert [e["i"] for e in view.events] == list(range(2500))
        assert view.n_events == 2500
    finally:
        pool.shutdown()


ORPHAN_SCRIPT = """
import os, signal, sys, time
import _job_targets as targets
from csvm.jobs import JobPool

pool = JobPool(max_workers=1, preload=())
job = pool.submit(targets.sleeper, {"seconds": 60})
while pool.poll(job).state != "running" or not pool.poll(job).events:
    time.sleep(0.05)
pids = [pool._jobs[job].worker.process.pid] + [w.process.pid for w in pool._spares]
if pool.settings.start_method == "forkserver":
    from multiprocessing import forkserver
    pids.append(forkserver._forkserver._forkserver_pid)
print(" ".join(map(str, pids)), flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # no atexit, no shutdown()
"""


def _pid_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_workers_exit_when_the_server_is_killed():
    here = os.path.dirname(os.path.abspath(__file__))  # tests/jobs, home of _job_targets
    root = os.path.dirname(os.path.dirname(here))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, here]))
    out = subprocess.run(
        [sys.executable, "-c", ORPHAN_SCRIPT], env=env, capture_output=True, text=True, timeout=60
    )
    pids = [int(p) for p in out.stdout.split()]
    assert len(pids) >= 2, out.stderr  # the running job, the warm spares, the fork server
    deadline = time.time() + 5
    while any(_pid_alive(p) for p in pids) and time.time() < deadline:
        time.sleep(0.05)
    assert not any(_pid_alive(p) for p in pids), "workers outlived their server"


# -- settings, owners, caps, commands -----------------------------------------------------


def test_settings_come_from_the_environment_with_clear_errors():
    env = {
        "CSVM_MAX_WORKERS": "3",
        "CSVM_LEASE_SECONDS": "90",
        "CSVM_MAX_ACTIVE_PER_SESSION": "4",
        "CSVM_MAX_JOB_SECONDS": "120",
        "CSVM_FINISHED_BYTES": "64M",
    }
    s = PoolSettings.from_env(env)
    assert (s.max_workers, s.lease_seconds, s.max_active_per_owner) == (3, 90.0, 4)
    assert (s.max_job_seconds, s.finished_bytes_budget) == (120.0, 64 * 2**20)
    assert s.spare_workers == 4, "enough warm workers for a run's three jobs"
    assert PoolSettings.from_env({}, max_workers=2).max_workers == 2
    assert PoolSettings.from_env({}).max_points_per_series == 1000
    with pytest.raises(ValueError, match="CSVM_MAX_JOB_SECONDS='ten'.*not a number"):
        PoolSettings.from_env({"CSVM_MAX_JOB_SECONDS": "ten"})
    with pytest.raises(ValueError, match="CSVM_FINISHED_BYTES.*256M"):
        PoolSettings.from_env({"CSVM_FINISHED_BYTES": "lots"})
    with pytest.raises(ValueError, match="max_workers.*CSVM_MAX_WORKERS"):
        PoolSettings(max_workers=-1)
    # the old keyword arguments still win over the settings
    pool = JobPool(max_workers=1, lease_seconds=5, preload=(), settings=s)
    try:
        assert (pool.settings.max_workers, pool.lease_seconds) == (1, 5.0)
        assert pool.settings.max_active_per_owner == 4
    finally:
        pool.shutdown()


@pytest.fixture
def one_worker():
    p = JobPool(settings=PoolSettings(max_workers=1, max_active_per_owner=2), preload=())
    yield p
    p.shutdown()


def test_each_owner_has_a_cap_and_the_queue_stays_fifo(one_worker):
    pool = one_worker
    a1 = pool.submit(targets.sleeper, {"seconds": 30}, owner="alice")
    b1 = pool.submit(targets.count, {"n": 1}, owner="bob")
    a2 = pool.submit(targets.count, {"n": 1}, owner="alice")
    with pytest.raises(QuotaExceeded) as caught:
        pool.submit(targets.count, {"n": 1}, owner="alice")
    message = str(caught.value)
    assert "2 runs queued or running" in message and "(2," in message
    assert "CSVM_MAX_ACTIVE_PER_SESSION" in message
    assert "wait for your runs to finish or stop one" in message
    assert isinstance(caught.value, RuntimeError) and caught.value.limit == 2
    assert [pool.poll(j).place for j in (b1, a2)] == [1, 2], "one FIFO queue for everyone"
    assert pool.poll(b1).owner == "bob"
    stats = pool.stats()
    assert stats["owners"]["alice"]["queued"] + stats["owners"]["alice"]["running"] == 2
    assert stats["owners"]["bob"]["queued"] == 1
    assert {v.id for v in pool.jobs(owner="alice")} == {a1, a2}
    pool.cancel(a1, "alice")
    a3 = pool.submit(targets.count, {"n": 1}, owner="alice")  # room again
    views = [wait_for(pool, j, {"done"}) for j in (b1, a2, a3)]
    assert views[0].started_at <= views[1].started_at <= views[2].started_at
    assert pool.stats()["owners"]["alice"]["finished"] == 3


def test_only_the_owner_may_stop_or_command_a_job(one_worker):
    pool = one_worker
    job = pool.submit(targets.echo_commands, {}, owner="alice", group="train")
    other = pool.submit(targets.count, {"n": 1}, owner="alice", group="sweep")
    with pytest.raises(NotOwner, match="shared view"):
        pool.cancel(job, "bob")
    with pytest.raises(NotOwner):
        pool.send(job, {"cmd": "stop"}, "bob")
    assert isinstance(NotOwner("x"), PermissionError)
    view = pool.poll(job, viewer="bob")  # anyone may watch
    assert view.state in ("queued", "running") and view.owner == "alice"
    assert pool.cancel_owner("alice", group="train") == 1
    assert pool.poll(job).state == "stopped"
    assert pool.poll(other).state in ("queued", "running", "done")
    admin = pool.submit(targets.sleeper, {"seconds": 30}, owner="carol")
    pool.cancel(admin, None)  # the server itself may stop anything
    assert pool.poll(admin).state == "stopped"


def test_commands_reach_the_running_job_in_order(one_worker):
    pool = one_worker
    job = pool.submit(targets.echo_commands, {}, owner="alice")
    # sent while still queued or starting: delivered when the job runs
    assert pool.send(job, {"cmd": "pause"}, "alice")
    view = wait_for(pool, job, {"running"})
    deadline = time.time() + 30
    while len(pool.poll(job).events) < 2 and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # the job now waits in receive(): no CPU used
    idle = pool.poll(job)
    assert idle.cpu_seconds < 0.5, idle.cpu_seconds
    for command in ({"cmd": "step"}, {"cmd": "resume"}, {"cmd": "stop"}):
        assert pool.send(job, command, "alice")
    view = wait_for(pool, job, {"done", "error"})
    assert view.state == "done", view.error
    assert view.result == [{"cmd": "pause"}, {"cmd": "step"}, {"cmd": "resume"}, {"cmd": "stop"}]
    assert view.events[0]["ready"] is True
    assert [e["got"]["cmd"] for e in view.events[1:]] == ["pause", "step", "resume", "stop"]
    assert pool.send(job, {"cmd": "pause"}, "alice") is False, "a finished job reads nothing"
    with pytest.raises(TypeError, match="dict"):
        pool.send(job, "pause", "alice")


def test_pending_tells_a_command_is_waiting(one_worker):
    pool = one_worker
    job = pool.submit(targets.wait_then_echo, {"seconds": 1.0})
    wait_for(pool, job, {"running"})
    pool.send(job, {"cmd": "a"}, None)
    pool.send(job, {"cmd": "b"}, None)
    view = wait_for(pool, job, {"done", "error"})
    assert view.result == {"pending": True, "received": [{"cmd": "a"}, {"cmd": "b"}]}


def test_heartbeat_renews_every_job_of_its_owner():
    pool = JobPool(settings=PoolSettings(max_workers=2, lease_seconds=1.0), preload=())
    try:
        a = pool.submit(targets.sleeper, {"seconds": 30}, owner="alice")
        b = pool.submit(targets.sleeper, {"seconds": 30}, owner="alice")
        lost = pool.submit(targets.sleeper, {"seconds": 30}, owner="bob")
        for _ in range(6):  # 3 s, well past the lease
            assert pool.heartbeat("alice") == 2
            time.sleep(0.5)
        assert pool.get(a).state == pool.get(b).state == "running"
        assert pool.get(lost).state == "stopped", "bob's tab is gone: his job is stopped"
        # a poll by any viewer renews that one job (watching from another page)
        for _ in range(6):
            assert pool.poll(a, viewer="bob").state == "running"
            time.sleep(0.5)
        assert pool.get(a).state == "running" and pool.get(b).state == "stopped"
    finally:
        pool.shutdown()


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
            wait_for(pool, done[name], {"done"}, viewer="alice")
            pool.heartbeat("alice")
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
        jobs = [pool.submit(targets.count, {"n": 1}) for _ in range(3)]
        assert [pool.poll(j).phase for j in jobs][2] == "queued (place 1)"
        assert [wait_for(pool, j, {"done"}).phase for j in jobs] == ["done"] * 3
    finally:
        pool.shutdown()
