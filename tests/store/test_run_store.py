"""The run store on a real SQLite file and a real PostgreSQL server: whole runs back,
checkpoints, interrupted runs, two servers on one store, the class board, bounds."""

from __future__ import annotations

import time

import numpy as np
import pytest

from csvm.runs.config import RunConfig
from csvm.store import StoreError, StoreLimits, owner_hash

CONFIG = RunConfig().replace(eta=0.5, n_iter=7, seed=3)


def results(accuracy=0.9, n_test=200, steps=3, filters=None, seed=0):
    """A Train run's results as the job targets return them (arrays included)."""
    rng = np.random.default_rng(seed)
    history = [{"step": k, "objective": 1.0 / k, "filter_norm": 0.5} for k in range(1, steps + 1)]
    return {
        "csvm": {
            "test_accuracy": accuracy,
            "n_test": n_test,
            "test_predictions": rng.choice([-1, 1], n_test).astype(np.int8),
            "history": history,
            "filters": rng.normal(size=(2, 5, 5)) if filters is None else filters,
            "start_filters": np.zeros((2, 5, 5)),
            "status": "done",
        },
        "svm": {"test_accuracy": 0.8, "n_test": n_test, "status": "done"},
        "cnn": None,
    }


def test_a_saved_run_comes_back_whole(stores):
    store = stores()
    res = results()
    store.save("run-1", CONFIG, res, owner="cookie-token", name="Ada's run", class_code="7b")
    run = store.get("run-1")
    assert run.config == CONFIG and run.config_problems == []
    assert run.status == "done" and run.step == 3 and run.finished is not None
    assert run.name == "Ada's run" and run.class_code == "7b" and not run.hidden
    assert run.history == res["csvm"]["history"]
    assert run.filters.dtype == np.float32 and run.filters.shape == (2, 5, 5)
    np.testing.assert_array_equal(run.filters, res["csvm"]["filters"].astype(np.float32))
    assert run.results["svm"] == res["svm"] and run.results["cnn"] is None
    assert run.results["csvm"]["test_predictions"] == res["csvm"]["test_predictions"].tolist()
    assert "history" not in run.results["csvm"] and "filters" not in run.results["csvm"]
    assert run.owned_by("cookie-token") and not run.owned_by("another") and not run.owned_by(None)
    assert run.created <= run.updated and run.nbytes > 0
    assert store.get("no-such-run") is None


def test_the_owner_is_kept_as_a_hash_never_the_cookie(stores):
    store = stores()
    store.checkpoint("r", CONFIG, step=1, owner="secret-cookie-value")
    store.save("s", CONFIG, results(), owner="secret-cookie-value")
    cells = store._do("dump", lambda tx: tx.all("SELECT * FROM csvm_runs"))
    text = repr(cells)
    assert "secret-cookie-value" not in text
    assert owner_hash("secret-cookie-value") in text
    assert [r.id for r in store.list_runs(owner="secret-cookie-value")] == ["s", "r"]
    assert store.list_runs(owner="someone-else") == []


def test_checkpoints_then_a_save_and_a_late_checkpoint_changes_nothing(stores):
    store = stores()
    history = []
    for k in range(1, 4):
        history.append({"step": k, "objective": 1.0 / k})
        assert store.checkpoint("r", CONFIG, step=k, history=history, filters=np.full((2, 5, 5), k))
    run = store.get("r")
    assert run.status == "running" and run.step == 3 and len(run.history) == 3
    assert run.filters[0, 0, 0] == 3 and run.finished is None
    store.save("r", CONFIG, results(steps=5), status="stopped")
    assert not store.checkpoint("r", CONFIG, step=9, history=history * 3)
    run = store.get("r")
    assert run.status == "stopped" and run.step == 5 and len(run.history) == 5


def test_the_board_lists_runs_newest_first_with_what_it_shows(stores):
    store = stores()
    store.save("a", CONFIG, results(0.75, 100), name="first", class_code="7b", owner="o1")
    store.checkpoint("b", CONFIG.replace(class_a="1", class_b="7"), step=2, class_code="8c")
    multi = CONFIG.replace(classes="0,1,2")
    store.save("c", multi, results(0.9, 300), name="third", class_code="7b", status="diverged")
    board = store.list_runs("7b")
    assert [r.id for r in board] == ["c", "a"]
    first = board[1]
    shown = (first.name, first.model, first.dataset, first.pair)
    assert shown == ("first", "kcsvm", "mnist-5k", "3 vs 5")
    assert first.accuracy == 0.75 and first.interval[0] < 0.75 < first.interval[1]
    assert first.thumbnail.shape == (2, 5, 5) and first.thumbnail.dtype == np.float32
    assert first.query == "eta=0.5&n_iter=7&seed=3" and first.owner == owner_hash("o1")
    assert board[0].pair == "0,1,2" and board[0].status == "diverged"
    running = store.list_runs("8c")[0]
    assert running.status == "running" and running.accuracy is None and running.interval is None
    assert [r.id for r in store.list_runs()] == ["c", "b", "a"]
    assert [r.id for r in store.list_runs(statuses=["running"])] == ["b"]
    assert [r.id for r in store.list_runs(limit=1)] == ["c"]


def test_hiding_and_clearing_a_board_keep_the_runs_openable(stores):
    store = stores()
    for run_id in ("a", "b", "c"):
        store.save(run_id, CONFIG, results(), class_code="7b")
    store.save("other", CONFIG, results(), class_code="8c")
    assert store.hide("b") and not store.hide("missing")
    assert [r.id for r in store.list_runs("7b")] == ["c", "a"]
    assert [r.id for r in store.list_runs("7b", include_hidden=True)] == ["c", "b", "a"]
    assert store.clear_class("7b") == 2
    assert store.list_runs("7b") == [] and [r.id for r in store.list_runs("8c")] == ["other"]
    assert store.get("a").hidden and store.get("a").status == "done"
    assert store.hide("a", hidden=False) and [r.id for r in store.list_runs("7b")] == ["a"]


def test_class_settings_round_trip(stores):
    store = stores()
    assert store.class_settings("7b") == {}
    store.set_class_settings("7b", {"lesson": "shapes", "pace": 1.5, "pages": ["train"]})
    store.set_class_settings("7b", {"lesson": "digits"})
    assert store.class_settings("7b") == {"lesson": "digits"}
    with pytest.raises(StoreError, match="at most 65,536"):
        store.set_class_settings("7b", {"x": "y" * 70000})


def test_the_count_bound_forgets_the_oldest_abandoned_runs_first(stores):
    store = stores(limits=StoreLimits(max_runs=3, keep_seconds=3600))
    store.checkpoint("live", CONFIG, step=1)  # the oldest, but running: never forgotten
    assert store.save("r1", CONFIG, results()) == []
    assert store.save("r2", CONFIG, results()) == []
    assert store.hide("r2")  # hidden: abandoned, though newer than r1
    assert store.save("r3", CONFIG, results()) == ["r2"]
    assert store.save("r4", CONFIG, results()) == ["r1"]  # none abandoned: the oldest
    assert {r.id for r in store.list_runs(include_hidden=True)} == {"live", "r3", "r4"}
    assert store.usage()[0] == 3


def test_runs_unopened_for_keep_seconds_count_as_abandoned(stores):
    store = stores(limits=StoreLimits(max_runs=2, keep_seconds=0.3))
    store.save("old", CONFIG, results())
    store.save("opened", CONFIG, results())
    time.sleep(0.35)
    store.touch("old")  # opened again: no longer abandoned, while "opened" now is
    assert store.save("new", CONFIG, results()) == ["opened"]


def test_the_byte_bound_keeps_the_store_small(stores):
    one = stores(limits=StoreLimits(max_bytes=10**9))
    one.save("rx", CONFIG, results(filters=np.zeros((8, 5, 5))))  # ids of one length
    size = one.usage()[1]
    assert one.delete("rx") and not one.delete("rx")
    store = stores(limits=StoreLimits(max_bytes=int(2.5 * size)))
    eight = np.zeros((8, 5, 5))
    forgotten = [store.save(f"r{k}", CONFIG, results(filters=eight)) for k in range(4)]
    assert forgotten == [[], [], ["r0"], ["r1"]]
    assert store.usage() == (2, 2 * size)
    with pytest.raises(StoreError, match="more than the whole store may hold"):
        store.save("huge", CONFIG, results(filters=np.zeros((200, 5, 5))))
    assert store.get("huge") is None


def test_a_dead_servers_run_is_found_interrupted_at_its_step(stores):
    dead = stores(server_id="dead-server")
    history = [{"step": k, "objective": 1.0 / k} for k in range(1, 5)]
    dead.checkpoint("r", CONFIG, step=4, history=history, filters=np.ones((2, 5, 5)), owner="o")
    dead.close()
    restarted = stores()
    assert restarted.recover(stale_after=60) == []  # its heartbeat is a moment old
    time.sleep(0.05)
    assert restarted.recover(stale_after=0.01) == ["r"]
    run = restarted.get("r")
    assert run.interrupted and run.step == 4 and run.history == history
    np.testing.assert_array_equal(run.filters, np.ones((2, 5, 5), np.float32))
    assert run.owned_by("o") and run.finished is not None
    assert restarted.recover(stale_after=0.01) == []


def test_two_servers_see_each_others_runs_and_spare_each_others_live_ones(stores):
    a, b = stores(server_id="server-a"), stores(server_id="server-b")
    a.save("from-a", CONFIG, results(), class_code="7b")
    b.checkpoint("training-on-b", CONFIG, step=2, class_code="7b")
    a.checkpoint("training-on-a", CONFIG, step=1, class_code="7b")
    assert {r.id for r in b.list_runs("7b")} == {"from-a", "training-on-b", "training-on-a"}
    assert b.get("from-a").results["csvm"]["test_accuracy"] == 0.9
    assert a.recover(stale_after=60) == [] and b.recover(stale_after=60) == []
    assert a.get("training-on-b").status == "running"
    # A peer that wrongly took b for dead: b's next checkpoint puts its run back.
    time.sleep(0.05)
    assert a.recover(stale_after=0.01) == ["training-on-b"]
    assert b.get("training-on-b").interrupted
    assert b.checkpoint("training-on-b", CONFIG, step=3)
    assert a.get("training-on-b").status == "running" and a.get("training-on-b").step == 3


def test_a_restart_with_the_same_server_id_marks_its_leftovers_at_once(stores):
    before = stores(server_id="classroom-1")
    before.checkpoint("r", CONFIG, step=2)
    before.close()
    after = stores(server_id="classroom-1")
    after.checkpoint("new", CONFIG, step=1)
    assert after.recover(stale_after=3600) == ["r"]
    assert after.get("new").status == "running"


def test_a_heartbeat_keeps_a_quiet_server_alive(stores):
    a, b = stores(server_id="server-a"), stores(server_id="server-b")
    a.checkpoint("r", CONFIG, step=1)
    time.sleep(0.3)
    a.heartbeat()  # within 5 s of the checkpoint's beat: skipped
    assert b.recover(stale_after=0.2) == ["r"]
    b.save("r2", CONFIG, results())
    a.checkpoint("r3", CONFIG, step=1)
    time.sleep(0.3)
    a.heartbeat(force=True)
    assert b.recover(stale_after=0.2) == []


def test_a_setting_the_code_no_longer_knows_is_reported_not_fatal(stores):
    store = stores()
    store.save("r", CONFIG, results())
    store._do("edit", lambda tx: tx.run("UPDATE csvm_runs SET config = 'eta=0.25&bogus=1'"))
    run = store.get("r")
    assert run.config.eta == 0.25 and len(run.config_problems) == 1
    assert "bogus" in run.config_problems[0]


def test_bad_input_is_refused_with_what_to_do(stores):
    store = stores()
    with pytest.raises(StoreError, match="Class code 'year 7' is not allowed"):
        store.save("r", CONFIG, results(), class_code="year 7")
    with pytest.raises(StoreError, match="status is one of done, stopped"):
        store.save("r", CONFIG, results(), status="finished")
    with pytest.raises(StoreError, match="must be a csvm.RunConfig, not dict"):
        store.save("r", {"eta": 0.1}, results())
    with pytest.raises(StoreError, match="Run id"):
        store.checkpoint("no spaces please", CONFIG, step=1)
    with pytest.raises(StoreError, match="history must be a sequence of dicts"):
        store.checkpoint("r", CONFIG, step=1, history=[1, 2])
    with pytest.raises(StoreError, match="filters must be one numeric array"):
        store.checkpoint("r", CONFIG, step=1, filters=[np.ones((2, 2)), np.ones(3)])
    assert store.usage() == (0, 0)
    store.save("r", CONFIG, results(), name="line\nbreak" + "x" * 300)
    assert store.get("r").name.startswith("line break") and len(store.get("r").name) == 200
