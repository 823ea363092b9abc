"""A fair share between browsers: the queue serves the browsers with the fewest running
jobs first, and a browser with nothing running gets a worker by suspending a long job."""

import time

import _job_targets as targets
import pytest

from csvm.jobs import JobPool, PoolSettings


def _wait(predicate, timeout=30.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


@pytest.fixture
def one_worker():
    def make(**settings):
        settings = {"max_workers": 1, "lease_seconds": 120, "tick_seconds": 0.1} | settings
        pool = JobPool(settings=PoolSettings(**settings), preload=("numpy",))
        made.append(pool)
        return pool

    made: list[JobPool] = []
    yield make
    for pool in made:
        pool.shutdown()


def test_the_queue_serves_a_newcomer_before_a_busy_browsers_backlog(one_worker):
    pool = one_worker(fair_share_seconds=0)
    first = pool.submit(targets.count, {"n": 40, "pause": 0.1}, owner="A")
    backlog = [pool.submit(targets.count, {"n": 2}, owner="A") for _ in range(3)]
    _wait(lambda: pool.get(first).state == "running")
    newcomer = pool.submit(targets.count, {"n": 2}, owner="B")
    assert pool.get(newcomer).place == 1
    assert [pool.get(j).place for j in backlog] == [2, 3, 4]
    _wait(lambda: all(pool.get(j).state == "done" for j in backlog))
    started = [pool.get(j).started_at for j in [newcomer, *backlog]]
    assert started == sorted(started), "the newcomer went first"


def test_a_newcomer_suspends_a_long_job_which_then_goes_on(one_worker):
    pool = one_worker(fair_share_seconds=0.5)
    long = pool.submit(targets.count, {"n": 60, "pause": 0.1}, owner="A")
    _wait(lambda: pool.get(long).state == "running" and pool.get(long).events)
    # The newcomer takes 0.6 s, so the long job's suspended phase lasts long enough to be
    # seen by a 50 ms poll on a loaded machine (a 3-count newcomer was over unseen in CI).
    newcomer = pool.submit(targets.count, {"n": 3, "pause": 0.2}, owner="B")
    phases = set()

    def newcomer_done():
        phases.add(pool.get(long).phase)
        return pool.get(newcomer).state == "done"

    _wait(newcomer_done, timeout=20)
    assert any("fair share" in p for p in phases), phases
    _wait(lambda: pool.get(long).state == "done", timeout=60)
    done = pool.get(long)
    assert [e["i"] for e in done.events] == list(range(60)), "suspended, nothing lost"
    assert done.suspended_seconds > 0
    assert pool.get(newcomer).finished_at < done.finished_at


def test_a_suspended_job_can_still_be_stopped(one_worker):
    pool = one_worker(fair_share_seconds=0.3)
    long = pool.submit(targets.count, {"n": 400, "pause": 0.1}, owner="A")
    _wait(lambda: pool.get(long).state == "running" and pool.get(long).events)
    blocker = pool.submit(targets.count, {"n": 400, "pause": 0.1}, owner="B")
    _wait(lambda: "fair share" in pool.get(long).phase)
    pool.cancel(long, "A")
    _wait(lambda: pool.get(long).state == "stopped")
    pool.cancel(blocker, "B")
    _wait(lambda: pool.stats()["running"] == 0)


def test_suspension_is_bounded_and_can_be_turned_off():
    assert PoolSettings(max_workers=2).suspended_limit == 8
    assert PoolSettings(max_workers=2, max_suspended=0).suspended_limit == 0
    with pytest.raises(ValueError, match="fair_share_seconds"):
        PoolSettings(fair_share_seconds=-1)
    env = PoolSettings.from_env({"CSVM_FAIR_SHARE_SECONDS": "0", "CSVM_MAX_SUSPENDED": "3"})
    assert (env.fair_share_seconds, env.max_suspended) == (0.0, 3)
