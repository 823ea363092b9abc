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

from csvm.jobs import JobPool


def wait_for(pool, job_id, states, timeout=60.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        view = pool.poll(job_id)
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
    pool.cancel(job)
    while process.is_alive() and time.perf_counter() - t0 < 2.0:
        time.sleep(0.02)
    assert not process.is_alive(), "the worker must be gone within 2 s"
    assert time.perf_counter() - t0 < 2.0
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
    pool.cancel(a)
    assert wait_for(pool, c, {"done"}).result["total"] == 1
    pool.cancel(b)
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
        pool.cancel(waiting)
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
    # emit() does not wait for the parent to read (a thread in the child writes the pipe)
    assert view.result["emit_seconds"] < 1.0


def test_more_events_than_one_tick_reads_still_end_done(pool):
    # A tick reads at most 1000 messages per job; the rest, and the result behind them,
    # must still arrive (not be taken for a crash once the child has exited).
    job = pool.submit(targets.count, {"n": 2500})
    view = wait_for(pool, job, {"done", "error"})
    assert view.state == "done", view.error
    assert [e["i"] for e in view.events] == list(range(2500))


ORPHAN_SCRIPT = """
import os, signal, sys, time
import _job_targets as targets
from csvm.jobs import JobPool

pool = JobPool(max_workers=1, preload=())
job = pool.submit(targets.sleeper, {"seconds": 60})
while pool.poll(job).state != "running" or not pool.poll(job).events:
    time.sleep(0.05)
pids = [pool._jobs[job].worker.process.pid] + [w.process.pid for w in pool._spares]
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
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.path.join(root, "tests")]))
    out = subprocess.run(
        [sys.executable, "-c", ORPHAN_SCRIPT], env=env, capture_output=True, text=True, timeout=60
    )
    pids = [int(p) for p in out.stdout.split()]
    assert len(pids) == 2, out.stderr  # the running job and one warm spare
    deadline = time.time() + 5
    while any(_pid_alive(p) for p in pids) and time.time() < deadline:
        time.sleep(0.05)
    assert not any(_pid_alive(p) for p in pids), "workers outlived their server"
