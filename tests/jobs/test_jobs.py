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
from _pool_wait import wait_for

from csvm.jobs import JobPool, NotOwner, PoolSettings, QuotaExceeded


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
    # Jobs, said as jobs (a run is several), and what to do, in a sentence.
    assert message.startswith("This browser already has 2 jobs queued or running")
    assert "(2)" in message and message.endswith("press Start again.")
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
