"""Identical jobs computed once (csvm/jobs/shared.py): each submitter watches the one
computation with its own id, owner, lease and controls; finished results are reused from
a bounded cache."""

import time

import _shared_targets as targets
import numpy as np
import pytest

from csvm.jobs import JobPool, PoolSettings, QuotaExceeded
from csvm.jobs.compaction import EventStore
from csvm.jobs.records import JobRecord
from csvm.jobs.shared import ResultCache, work_key

FINAL = ("done", "error", "stopped")


def _wait(predicate, timeout=60.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


def _done(pool, *jobs):
    _wait(lambda: all(pool.poll(j).state in FINAL for j in jobs))
    return [pool.get(j) for j in jobs]


@pytest.fixture
def make_pool():
    made: list[JobPool] = []

    def make(**settings):
        settings = {"max_workers": 2, "lease_seconds": 120, "tick_seconds": 0.1} | settings
        pool = JobPool(settings=PoolSettings(**settings), preload=("numpy", "csvm.runs.targets"))
        made.append(pool)
        return pool

    yield make
    for pool in made:
        pool.shutdown()


def _submit(pool, calls, owner, share="split-1", **kwargs):
    return pool.submit(
        targets.stepper,
        {"calls": str(calls), **kwargs},
        name=f"{owner}:csvm",
        group="train",
        owner=owner,
        meta={"run": owner},
        share=share,
    )


def test_identical_submissions_are_computed_once(make_pool, tmp_path):
    pool = make_pool()
    calls = tmp_path / "calls"
    jobs = [_submit(pool, calls, f"student{i}", n=6, pause=0.05) for i in range(5)]
    assert len(set(jobs)) == 5, "each student has a job id of its own"
    views = _done(pool, *jobs)
    assert targets.calls(calls) == 1
    assert [v.state for v in views] == ["done"] * 5
    assert [v.owner for v in views] == [f"student{i}" for i in range(5)]
    assert [v.meta["run"] for v in views] == [f"student{i}" for i in range(5)]
    assert all(v.result == views[0].result for v in views)
    assert all(len(v.events) == 6 for v in views)
    # After the end, the same job is answered from the finished result, not run again.
    late = _submit(pool, calls, "late", n=6, pause=0.05)
    view = pool.get(late)
    assert view.state == "done" and view.result == views[0].result and len(view.events) == 6
    assert targets.calls(calls) == 1
    shared = pool.stats()["shared"]
    assert (shared["computed"], shared["attached"], shared["reused"]) == (1, 4, 1)
    # The computing record is the pool's own: no listing shows it, no cap counts it.
    assert sorted(v.owner for v in pool.jobs()) == sorted(
        [*(f"student{i}" for i in range(5)), "late"]
    )


def test_different_jobs_or_data_are_not_shared(make_pool, tmp_path):
    pool = make_pool()
    calls = tmp_path / "calls"
    jobs = [
        _submit(pool, calls, "a", n=3),
        _submit(pool, calls, "b", n=3, seed=1),  # another setting
        _submit(pool, calls, "c", n=3, share="split-2"),  # another data split
        pool.submit(targets.stepper, {"calls": str(calls), "n": 3}, owner="d"),  # unshared
    ]
    _done(pool, *jobs)
    assert targets.calls(calls) == 4


def test_shared_results_equal_an_unshared_run(make_pool, tmp_path):
    pool = make_pool()
    calls = tmp_path / "calls"
    shared = [_submit(pool, calls, o, n=8, seed=3) for o in ("a", "b")]
    alone = pool.submit(targets.stepper, {"calls": str(calls), "n": 8, "seed": 3}, owner="c")
    a, b, c = _done(pool, *shared, alone)
    assert targets.calls(calls) == 2
    assert a.result == b.result == c.result
    for x, y in zip(a.events, c.events, strict=True):
        assert x["value"] == y["value"]
        np.testing.assert_array_equal(x["filters"], y["filters"])


def test_one_watchers_stop_detaches_it_and_the_others_run_goes_on(make_pool, tmp_path):
    pool = make_pool()
    calls = tmp_path / "calls"
    a, b = (_submit(pool, calls, o, n=30, pause=0.1) for o in ("a", "b"))
    _wait(lambda: len(pool.poll(a).events) >= 3)
    assert pool.send(a, {"cmd": "stop"}, "a")
    stopped = pool.get(a)
    assert stopped.state == "stopped" and stopped.result is None
    assert 3 <= len(stopped.events) < 30, "it keeps the steps it had"
    assert pool.get(b).state == "running"
    (other,) = _done(pool, b)
    assert other.state == "done" and other.result["status"] == "done"
    assert len(other.result["values"]) == 30
    assert len(pool.get(a).events) == len(stopped.events), "a detached job no longer grows"
    assert not pool.send(a, {"cmd": "resume"}, "a")
    assert targets.calls(calls) == 1


def test_the_only_watchers_stop_ends_the_run_and_its_partial_result_is_not_reused(
    make_pool, tmp_path
):
    pool = make_pool()
    calls = tmp_path / "calls"
    a = _submit(pool, calls, "a", n=200, pause=0.05)
    _wait(lambda: len(pool.poll(a).events) >= 2)
    pool.send(a, {"cmd": "stop"}, "a")
    (view,) = _done(pool, a)
    assert view.state == "done" and view.result["status"] == "stopped"  # as unshared
    again = _submit(pool, calls, "b", n=200, pause=0.05)
    assert pool.get(again).state in ("queued", "running"), "a stopped run is not reused"
    _wait(lambda: pool.poll(again).events)
    assert targets.calls(calls) == 2
    pool.cancel(again, "b")


def test_the_work_ends_only_when_nobody_watches(make_pool, tmp_path):
    pool = make_pool()
    calls = tmp_path / "calls"
    a, b = (_submit(pool, calls, o, n=400, pause=0.05) for o in ("a", "b"))
    _wait(lambda: pool.poll(a).state == "running" and pool.get(a).events)
    pool.cancel(a, "a")
    assert pool.get(a).state == "stopped"
    assert pool.stats()["running"] == 1, "b still watches: the work goes on"
    pool.cancel(b, "b")
    assert pool.get(b).state == "stopped"
    assert pool.stats()["running"] == 0
    assert pool.stats()["shared"]["live"] == 0


def test_an_unwatched_job_loses_its_lease_alone(make_pool, tmp_path):
    pool = make_pool(lease_seconds=1.0)
    calls = tmp_path / "calls"
    a, b = (_submit(pool, calls, o, n=100, pause=0.05) for o in ("a", "b"))
    # Only b's page polls: a's lease ends and a detaches; b's run goes on to its end.
    (view,) = _done(pool, b)
    assert view.state == "done" and len(view.result["values"]) == 100
    assert pool.get(a).state == "stopped" and pool.get(a).result is None


def _paused_at(pool, job):
    """Wait until the shared worker says it is paused; the number of events then."""
    _wait(lambda: any(e.get("kind") == "paused" for e in pool.poll(job).events[-1:]))
    return pool.get(job).n_events


def test_pause_holds_the_worker_only_when_every_watcher_pauses(make_pool, tmp_path):
    pool = make_pool()
    calls = tmp_path / "calls"
    a, b = (_submit(pool, calls, o, n=400, pause=0.02) for o in ("a", "b"))
    _wait(lambda: len(pool.poll(a).events) >= 2)
    pool.send(a, {"cmd": "pause"}, "a")
    seen = pool.get(b).n_events
    _wait(lambda: pool.poll(b).n_events >= seen + 5)  # b plays: the worker trains on
    assert pool.get(a).state == "running"
    pool.send(b, {"cmd": "pause"}, "b")
    held = _paused_at(pool, a)
    time.sleep(0.5)
    assert pool.poll(a).n_events == held, "both paused: the worker waits"
    # A step of one paused watcher: one more step for all of them, then paused again.
    pool.send(a, {"cmd": "step"}, "a")
    _wait(lambda: pool.poll(a).n_events >= held + 2)  # the step and "paused"
    steps = [e for e in pool.get(a).events if e.get("kind") == "step"]
    time.sleep(0.3)
    assert [e for e in pool.poll(a).events if e.get("kind") == "step"] == steps
    pool.send(a, {"cmd": "resume"}, "a")
    _wait(lambda: pool.poll(b).n_events >= held + 6)  # one watcher plays: it goes on
    pool.cancel(a, "a")
    held = _paused_at(pool, b)  # a gone, b still paused: the worker pauses again
    time.sleep(0.3)
    assert pool.poll(b).n_events == held
    pool.send(b, {"cmd": "resume"}, "b")
    (view,) = _done(pool, b)
    assert view.result["status"] == "done" and len(view.result["values"]) == 400
    assert targets.calls(calls) == 1


def test_a_job_submitted_paused_waits_for_its_watchers(make_pool, tmp_path):
    pool = make_pool()
    calls = tmp_path / "calls"
    a = _submit(pool, calls, "a", n=3, paused=True)
    _paused_at(pool, a)
    b = _submit(pool, calls, "b", n=3, paused=True)
    assert pool.get(b).state == "running"
    pool.send(a, {"cmd": "resume"}, "a")  # one plays: the worker goes on
    _done(pool, a, b)
    assert targets.calls(calls) == 1


def test_watchers_count_against_their_owners_cap(make_pool, tmp_path):
    pool = make_pool(max_active_per_owner=2, max_active_per_address=0)
    calls = tmp_path / "calls"
    first = [_submit(pool, calls, "a", n=300, pause=0.05, seed=s) for s in (1, 2)]
    with pytest.raises(QuotaExceeded):
        _submit(pool, calls, "a", n=300, pause=0.05, seed=3)
    # Another browser watching the same work has a cap of its own.
    watcher = _submit(pool, calls, "b", n=300, pause=0.05, seed=1)
    owners = pool.stats()["owners"]
    assert (owners["a"]["running"], owners["b"]["running"]) == (2, 1)
    for job, owner in [*((j, "a") for j in first), (watcher, "b")]:
        pool.cancel(job, owner)


def test_the_finished_result_cache_is_bounded(make_pool, tmp_path):
    pool = make_pool(shared_results=2)
    calls = tmp_path / "calls"
    for seed in range(4):
        _done(pool, _submit(pool, calls, f"s{seed}", n=2, seed=seed))
    stats = pool.stats()["shared"]
    assert stats["cached"] == 2 and stats["computed"] == 4
    _done(pool, _submit(pool, calls, "again3", n=2, seed=3))  # the newest: reused
    assert targets.calls(calls) == 4
    _done(pool, _submit(pool, calls, "again0", n=2, seed=0))  # forgotten: computed again
    assert targets.calls(calls) == 5


def test_result_cache_bounds_count_and_bytes_least_recently_used_first():
    def record(name, nbytes):
        r = JobRecord(id=name, name=name, group=None, owner=None, payload=b"", store=EventStore())
        r.nbytes = nbytes
        return r

    cache = ResultCache(max_count=3, max_bytes=100)
    for name in "abc":
        cache.put(name, record(name, 30))
    assert cache.get("a") is not None  # a is now the most recently used
    cache.put("d", record("d", 30))  # over the count: b goes
    assert cache.get("b") is None and len(cache) == 3 and cache.nbytes == 90
    cache.put("e", record("e", 60))  # over the bytes: c, then a (used before d) go
    assert [k for k in "acde" if cache.get(k) is not None] == ["d", "e"]
    assert cache.nbytes == 90 <= cache.max_bytes
    cache.put("f", record("f", 101))  # larger than the whole budget: not kept
    assert cache.get("f") is None and cache.nbytes <= 100


def test_work_key_is_canonical():
    config = {"gamma": 1.0, "layers": "5x5x4", "seed": 0}
    same = dict(reversed(list(config.items())))
    assert work_key(targets.stepper, {"config": config}, "d") == work_key(
        targets.stepper, {"config": same}, "d"
    )
    assert work_key(targets.stepper, {"config": config}, "d") != work_key(
        targets.stepper, {"config": {**config, "seed": 1}}, "d"
    )
    assert work_key(targets.stepper, {"x": np.zeros(3)}, "") != work_key(
        targets.stepper, {"x": np.zeros(3, dtype=np.float32)}, ""
    )


def test_sharing_can_be_turned_off(make_pool, tmp_path):
    pool = make_pool(share_jobs=False)
    calls = tmp_path / "calls"
    _done(pool, *(_submit(pool, calls, o, n=3) for o in ("a", "b")))
    assert targets.calls(calls) == 2
    assert pool.stats()["shared"]["computed"] == 0


def test_a_shared_classroom_run_equals_an_unshared_one(make_pool):
    """The Classroom preset's K-CSVM, watched by two students, against the same job run on
    its own: the same accuracy, predictions and filters."""
    from csvm.runs.config import parse
    from csvm.runs.presets import load_presets
    from csvm.runs.targets import run_model

    config, problems = parse(load_presets()[0]["config"], source="the first preset")
    assert not problems
    kwargs = {"config": config.to_dict(), "model": "csvm", "paused": False}
    pool = make_pool()
    shared = [pool.submit(run_model, kwargs, owner=o, share="split") for o in ("a", "b")]
    alone = pool.submit(run_model, kwargs, owner="c")
    a, b, c = _done(pool, *shared, alone)
    assert pool.stats()["shared"]["computed"] == 1
    assert a.result is b.result, "one result, read by both"
    for key in ("test_accuracy", "train_accuracy", "n_misclassified"):
        assert a.result[key] == c.result[key]
    np.testing.assert_array_equal(a.result["test_predictions"], c.result["test_predictions"])
    np.testing.assert_array_equal(a.result["filters"], c.result["filters"])


def test_one_browsers_own_tabs_each_compute_so_a_stop_keeps_its_result(make_pool, tmp_path):
    pool = make_pool()
    calls = tmp_path / "calls"
    a, b = (_submit(pool, calls, "same-browser", n=300, pause=0.02) for _ in range(2))
    _wait(lambda: len(pool.poll(a).events) >= 2 and pool.poll(b).events)
    assert targets.calls(calls) == 2
    pool.send(a, {"cmd": "stop"}, "same-browser")
    (view,) = _done(pool, a)
    assert view.result["status"] == "stopped", "the best state, not a detached watcher's"
    assert pool.get(b).state == "running"
    pool.cancel(b, "same-browser")
