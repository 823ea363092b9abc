"""The fair share and the cap count people by network address (issue 37, row 3): a student
who clears the owner cookie before each run, or opens many private windows, is still one
address, with one browser's cap and one share of the workers."""

import time

import _job_targets as targets
import pytest

from csvm.jobs import JobPool, PoolSettings
from csvm.jobs.pool import AddressQuotaExceeded, QuotaExceeded


def _wait(predicate, timeout=30.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


@pytest.fixture
def pool_of():
    made: list[JobPool] = []

    def make(**settings):
        settings = {"max_workers": 1, "lease_seconds": 120, "tick_seconds": 0.1} | settings
        pool = JobPool(settings=PoolSettings(**settings), preload=("numpy",))
        made.append(pool)
        return pool

    yield make
    for pool in made:
        pool.shutdown()


def test_fresh_cookies_from_one_address_share_one_cap(pool_of):
    pool = pool_of(max_active_per_address=2, spares=0, fair_share_seconds=0)
    for i in range(2):
        pool.submit(targets.sleeper, {"seconds": 30}, owner=f"cookie{i}", address="10.0.0.7")
    with pytest.raises(AddressQuotaExceeded, match="CSVM_PER_ADDRESS_JOBS") as caught:
        pool.submit(targets.sleeper, {"seconds": 30}, owner="cookie2", address="10.0.0.7")
    assert isinstance(caught.value, QuotaExceeded)  # the pages' error path shows it too
    # Another address, and the same address once a job has ended, have room.
    pool.submit(targets.count, {"n": 1}, owner="other", address="10.0.0.8")
    assert pool.stats()["addresses"]["10.0.0.7"] == {"queued": 1, "running": 1, "suspended": 0}


def test_the_address_is_the_one_noted_for_the_owner(pool_of):
    pool = pool_of(max_active_per_address=1, spares=0, fair_share_seconds=0)
    pool.note_address("cookie0", "10.0.0.7")
    pool.note_address("cookie1", "10.0.0.7")
    pool.submit(targets.sleeper, {"seconds": 30}, owner="cookie0")
    with pytest.raises(AddressQuotaExceeded):
        pool.submit(targets.sleeper, {"seconds": 30}, owner="cookie1")


def test_zero_turns_the_address_off_for_a_class_behind_one_router(pool_of):
    pool = pool_of(max_active_per_address=0, spares=0, fair_share_seconds=0)
    for i in range(4):
        pool.submit(targets.count, {"n": 1}, owner=f"student{i}", address="10.0.0.1")
    assert len(pool.jobs()) == 4
    assert PoolSettings(max_active_per_owner=5).address_limit == 5  # default: one browser's
    env = PoolSettings.from_env({"CSVM_PER_ADDRESS_JOBS": "0"})
    assert env.address_limit == 0
    with pytest.raises(ValueError, match="CSVM_PER_ADDRESS_JOBS"):
        PoolSettings.from_env({"CSVM_PER_ADDRESS_JOBS": "many"})
    with pytest.raises(ValueError, match="max_active_per_address"):
        PoolSettings(max_active_per_address=-1)


def test_a_newcomer_address_goes_first_and_one_address_never_suspends_itself(pool_of):
    # One student (address .7) runs long jobs under four fresh cookies; by owner each
    # cookie was a newcomer that suspended the one before (4 running, 16 suspended in
    # the class).  By address only the other student is a newcomer.
    pool = pool_of(max_active_per_address=8, fair_share_seconds=0.3)
    hostile = [
        pool.submit(
            targets.count, {"n": 300, "pause": 0.05}, owner=f"cookie{i}", address="10.0.0.7"
        )
        for i in range(4)
    ]
    _wait(lambda: pool.get(hostile[0]).state == "running" and pool.get(hostile[0]).events)
    time.sleep(0.6)  # several fair-share slices: by owner, cookie1..3 would have cut in
    assert pool.stats()["suspended"] == 0
    assert [pool.get(j).state for j in hostile[1:]] == ["queued"] * 3
    newcomer = pool.submit(targets.count, {"n": 3}, owner="student", address="10.0.0.9")
    _wait(lambda: pool.get(newcomer).state == "done", timeout=20)
    # It got the worker by suspending the hostile job, not by waiting for the queue.
    assert pool.get(hostile[0]).suspended_seconds > 0
    assert all(pool.get(j).state == "queued" for j in hostile[1:])
    for i, job in enumerate(hostile):
        pool.cancel(job, f"cookie{i}")


def test_the_queue_takes_turns_between_addresses_not_cookies(pool_of):
    pool = pool_of(max_active_per_address=8, fair_share_seconds=0)
    first = pool.submit(targets.count, {"n": 30, "pause": 0.05}, owner="a0", address="10.0.0.7")
    _wait(lambda: pool.get(first).state == "running")
    more = [
        pool.submit(targets.count, {"n": 1}, owner=f"a{i}", address="10.0.0.7") for i in range(1, 4)
    ]
    other = pool.submit(targets.count, {"n": 1}, owner="b", address="10.0.0.9")
    # Three fresh cookies of .7 are not three newcomers: .9 goes first.
    assert pool.get(other).place == 1
    assert sorted(pool.get(j).place for j in more) == [2, 3, 4]
