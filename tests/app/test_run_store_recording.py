"""The app's recording thread, one round at a time, against a real SQLite store and a pool
stand-in: checkpoints while a run trains (at most one per CHECKPOINT_SECONDS), the whole
run once its jobs have ended, nothing while the server's pool shuts down."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import pytest

import explorer.run_store as rs
from explorer.state import Run
from tests._stored_runs import SMALL, trained


@dataclass
class View:
    state: str
    events: list[dict[str, Any]] = field(default_factory=list)
    result: Any = None


class Pool:
    def __init__(self) -> None:
        self.views: dict[str, View] = {}
        self.closed = False

    def get(self, job: str) -> View | None:
        return self.views.get(job)


@pytest.fixture
def store(tmp_path, monkeypatch):
    before = os.environ.get("CSVM_RUN_STORE")
    os.environ["CSVM_RUN_STORE"] = f"sqlite:///{tmp_path}/runs.sqlite"
    pool = Pool()
    monkeypatch.setattr(rs, "get_pool", lambda: pool)
    with rs._ROUND:  # the server's own recording thread stays out of these rounds
        monkeypatch.setattr(rs, "_BACKGROUND", False)
    try:
        yield rs.reopen_store(), pool
    finally:
        os.environ["CSVM_RUN_STORE"] = before or ""
        if before is None:
            os.environ.pop("CSVM_RUN_STORE")
        rs.reopen_store()


def _run(pool: Pool, state: str, steps: int, results=None) -> Run:
    _, all_steps, _ = trained()
    events = [{"kind": "start", "model": "csvm"}, *all_steps[:steps]]
    pool.views = {
        "j1": View(state, events, (results or {}).get("csvm")),
        "j2": View("done" if results else "running", [], (results or {}).get("svm")),
    }
    return Run(id="run1", config=SMALL, jobs={"csvm": "j1", "svm": "j2"}, owner="me")


def test_a_training_run_is_checkpointed_then_saved_whole(store):
    store, pool = store
    rs.track(_run(pool, "running", 1), name="Ada", class_code="maths-7b")
    rs.record_once(now=100.0)
    first = store.get("run1")
    assert (first.status, first.step, first.name, first.class_code) == (
        "running",
        1,
        "Ada",
        "maths-7b",
    )
    assert first.owned_by("me") and first.filters.shape == (2, 5, 5)
    _run(pool, "running", 2)
    rs.record_once(now=100.0 + rs.CHECKPOINT_SECONDS / 2)  # too soon: not written
    assert store.get("run1").step == 1
    rs.record_once(now=100.0 + rs.CHECKPOINT_SECONDS)
    assert store.get("run1").step == 2
    results, _, test_set = trained()
    _run(pool, "done", 2, results)
    rs.record_once(now=200.0)
    saved = store.get("run1")
    assert saved.status == "done" and saved.step == 2
    assert saved.results["csvm"]["test_accuracy"] == results["csvm"]["test_accuracy"]
    assert saved.results["test_set"] == test_set  # the images it was scored on
    assert set(saved.history[0]) <= set(rs.HISTORY_COLUMNS)  # step fields, no arrays
    assert "run1" not in rs._RECORDING  # ended: no longer recorded


def test_a_diverged_run_is_stored_at_the_step_its_headline_names(store):
    """A fit that diverges at its first step has one step event and a history of two
    rows (the step, then the divergence): the board says step 1, as the Train page."""
    from explorer.class_board_view import status_text

    store, pool = store
    results, all_steps, _ = trained()
    csvm = {
        **results["csvm"],
        "status": "diverged",
        "diverged": {"cause": "norm", "suggested_eta": 0.002},
        "history": [{"iteration": 0, "objective": 0.25}, {"iteration": 0}],
    }
    events = [
        {"kind": "start", "model": "csvm"},
        all_steps[0],
        {"kind": "divergence", "iteration": 0},
    ]
    pool.views = {"j1": View("done", events, csvm), "j2": View("done", [], results["svm"])}
    rs.track(Run(id="run1", config=SMALL, jobs={"csvm": "j1", "svm": "j2"}, owner="me"))
    rs.record_once(now=100.0)
    saved = store.get("run1")
    assert (saved.status, saved.step, len(saved.history)) == ("diverged", 1, 2)
    (summary,) = store.list_runs()
    assert status_text(summary) == "diverged at step 1"


def test_nothing_is_written_while_the_pool_shuts_down(store):
    store, pool = store
    rs.track(_run(pool, "running", 1))
    rs.record_once(now=100.0)
    pool.closed = True
    for view in pool.views.values():
        view.state = "stopped"  # what a shutdown does to running jobs
    rs.record_once(now=200.0)
    assert store.get("run1").status == "running"  # for the next server to mark interrupted


@pytest.mark.parametrize(
    "view, status",
    [
        (None, "stopped"),
        (View("stopped"), "stopped"),
        (View("error"), "error"),
        (View("done", result={"status": "done"}), "done"),
        (View("done", result={"status": "stopped"}), "stopped"),
        (View("done", result={"status": "done", "diverged": {"cause": "norm"}}), "diverged"),
    ],
)
def test_how_a_run_ended(view, status):
    assert rs.status_of({"csvm": view}) == status
