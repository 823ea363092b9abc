"""A run: its job target's typed events, pause/step/stop control, rows, headline, export."""

import html
import io
import json
import queue
import zipfile

import numpy as np
import pytest

from csvm.analysis.lab import load_filters
from csvm.runs.config import RunConfig, parse
from csvm.runs.persistence import BundleError, export_run, load_config
from csvm.runs.summary import comparisons, headline
from csvm.runs.targets import (
    RunControl,
    confused_pairs,
    n_classes,
    pinned_indices,
    progress,
    result_rows,
    run_model,
    step_events,
    steps_total,
    sub_problem_progress,
)

SMALL = RunConfig(n_train=120, n_iter=3, cnn_epochs=1, cnn_hidden=8)


class FakeEmit:
    """A worker's emit: records events, and hands out commands queued by the test."""

    def __init__(self, commands=()):
        self.events = []
        self.commands = queue.SimpleQueue()
        for c in commands:
            self.commands.put(c)
        self.waits = 0

    def __call__(self, event):
        self.events.append(event)

    def receive(self, timeout):
        if timeout is None:
            self.waits += 1
            if self.commands.empty():  # a real worker would block; the test ends the run
                return {"cmd": "stop"}
        try:
            return self.commands.get_nowait()
        except queue.Empty:
            return None


def test_pinned_indices_three_per_class():
    y = np.array([1, -1, -1, 1, 1, -1, -1, 1, 1])
    assert list(y[pinned_indices(y)]) == [-1, -1, -1, 1, 1, 1]


def test_csvm_job_emits_typed_events_and_a_result():
    emit = FakeEmit()
    result = run_model(emit, SMALL.to_dict(), "csvm")
    kinds = [e["kind"] for e in emit.events]
    assert kinds[0] == "start" and kinds.count("iteration") == 3
    steps = step_events(emit.events)
    assert steps[-1]["pinned_maps"].shape[0] == 6
    assert result["status"] == "done" and 0.5 < result["test_accuracy"] <= 1
    assert result["test_predictions"].shape == (result["n_test"],)
    assert result["start_filters"].shape == result["filters"].shape


def test_a_layered_run_sends_every_layer_and_the_maps_through_them():
    emit = FakeEmit()
    config = SMALL.replace(layers="5x5x2-abs-avg2,3x3x3-abs-avg2")
    result = run_model(emit, config.to_dict(), "csvm")
    last = step_events(emit.events)[-1]
    assert [f.shape for f in last["layer_filters"]] == [(2, 1, 5, 5), (3, 2, 3, 3)]
    # The first pinned image of each class, after layer 1 (12x12) and layer 2 (5x5).
    assert [m.shape for m in last["layer_maps"]] == [(2, 2, 12, 12), (2, 3, 5, 5)]
    assert [f.shape for f in result["layer_filters"]] == [(2, 1, 5, 5), (3, 2, 3, 3)]
    assert result["status"] == "done" and 0.5 < result["test_accuracy"] <= 1
    from csvm.figures.layers import layer_filters_figure, layer_maps_figure

    title = layer_filters_figure(result["layer_filters"][1], 2).layout.title.text
    # Plotly shows character references as their characters (csvm.figures.text.plain).
    assert html.unescape(title).startswith("Layer 2: 3 filters, each over layer 1's 2 maps")
    figure = layer_maps_figure(np.zeros((1, 28, 28)), [m[0] for m in last["layer_maps"]], "3")
    assert [a.text for a in figure.layout.annotations][1:] == [
        "after layer 1 (2 maps)",
        "after layer 2 (3 maps)",
    ]


def test_pause_then_step_runs_exactly_one_more_step_then_waits():
    # Paused from the start; one "step" command: exactly one iteration, then it waits
    # (here the fake ends the wait with "stop"), and the stopped run is still evaluated.
    emit = FakeEmit([{"cmd": "step"}])
    result = run_model(emit, SMALL.replace(n_iter=5).to_dict(), "csvm", paused=True)
    assert len(step_events(emit.events)) == 2  # the first step, then the one allowed
    assert result["status"] == "stopped" and result["test_accuracy"] > 0.5
    assert any(e["kind"] == "paused" for e in emit.events)


def test_control_without_receive_never_pauses():
    events = []
    control = RunControl(events.append, paused=True)
    assert control.after_step() and not control.paused


def test_control_resume_and_stop():
    emit = FakeEmit([{"cmd": "pause"}, {"cmd": "resume"}])
    control = RunControl(emit)
    assert control.after_step() and not control.paused
    emit.commands.put({"cmd": "stop"})
    assert control.after_step() is False


def test_lcsvm_job_gives_two_half_steps_per_iteration():
    emit = FakeEmit()
    run_model(emit, SMALL.replace(model="lcsvm", n_iter=2).to_dict(), "csvm")
    steps = step_events(emit.events)
    assert [e["step"] for e in steps] == ["svm", "filter", "svm", "filter"]
    assert progress(SMALL.replace(model="lcsvm", n_iter=2), steps, running=False)[0] == 1.0


def test_rows_headline_and_significance_for_a_whole_run():
    outcomes = {}
    for model in ("csvm", "svm", "cnn"):
        emit = FakeEmit()
        result = run_model(emit, SMALL.to_dict(), model)
        outcomes[model] = {"state": "done", "result": result, "events": emit.events}
    rows = result_rows(SMALL, outcomes)
    assert [r["model"] for r in rows] == ["K-CSVM", "plain SVM", "small CNN"]
    assert all("–" in r["95 % interval"] and r["test accuracy"] for r in rows)
    # "97.46–99.61 %" with a no-break space: a projected table wrapped the "%" alone.
    assert all(r["95 % interval"].endswith("\u00a0%") for r in rows)
    steps = step_events(outcomes["csvm"]["events"])
    line = headline(SMALL, outcomes, steps, finished=True)
    assert line.startswith("## K-CSVM: ") and "plain SVM" in line and "3 steps" in line
    from csvm.data import load_pair

    y_test = load_pair("mnist-5k", "3", "5", n_train=120, random_state=0).y_test
    lines = comparisons(SMALL, outcomes, y_test)
    assert len(lines) == 3 and all("p " in s and "significant" in s for s in lines)


@pytest.mark.parametrize(("seconds", "says"), [(0.02, "10 steps, under 0.1 s"), (0.3, "0.3 s")])
def test_the_headline_never_says_a_fit_took_no_time(seconds, says):
    """The fast digits preset fits in 0.02 s: "10 steps, 0.0 s" read as nothing at all."""
    result = {"test_accuracy": 0.925, "seconds": seconds, "status": "done", "n_test": 200}
    line = headline(SMALL, {"csvm": {"state": "done", "events": [], "result": result}},
                    [{}] * 10, finished=True)  # fmt: skip
    assert line.endswith(says) and "0.0 s" not in line


def test_a_forgotten_or_unfinished_model_gets_dashes_not_none():
    rows = result_rows(SMALL, {"csvm": None, "svm": {"state": "stopped", "events": []}})
    assert rows[0]["status"] == "no longer on the server"
    assert rows[1]["95 % interval"] == "–" and rows[1]["test accuracy"] is None


def test_time_frozen_for_a_fair_share_is_not_counted_as_training():
    result = {"n_test": 100, "test_accuracy": 0.9, "train_accuracy": 1.0, "seconds": 12.5}
    outcome = {"state": "done", "result": result, "events": [], "suspended_seconds": 10.0}
    (row,) = result_rows(SMALL, {"svm": outcome})
    assert row["seconds"] == 2.5 and "fair share" in row["status"]
    (plain,) = result_rows(SMALL, {"svm": outcome | {"suspended_seconds": 0.0}})
    assert plain["seconds"] == 12.5 and plain["status"] == "done"


def test_a_crashed_csvm_is_named_in_the_headline_at_once():
    crash = {
        "state": "error",
        "result": None,
        "events": [],
        "error_type": "WorkerCrashed",
        "error": "the worker process exited unexpectedly (exit code -9: killed by SIGKILL)",
    }
    line = headline(SMALL, {"csvm": crash, "cnn": {"state": "running"}}, [{}] * 4, False)
    assert line.startswith("## K-CSVM failed at step 4:") and "SIGKILL" in line
    hostile = crash | {"error_type": "ValueError", "error": "[x](http://e) *b* <i>"}
    assert not set("[]*<>") & set(headline(SMALL, {"csvm": hostile}, [], False))


def test_a_stop_is_said_at_once_and_its_result_when_it_comes():
    running = {"state": "running", "result": None, "events": []}
    line = headline(SMALL, {"csvm": running}, [{}] * 4, False, stopping=True)
    assert line == f"## K-CSVM: stopping at step 4 of {SMALL.n_iter}…"
    assert "stopping" not in headline(SMALL, {"csvm": running}, [{}] * 4, False)


def test_divergence_headline_names_the_step_and_a_safer_eta():
    # The thesis's constant-step recipe (the default's relative steps never blow up).
    config = SMALL.replace(
        eta=1000.0,
        n_iter=5,
        step="constant",
        kernel="poly",
        gamma=1.0,
        regulariser="dfo1",
        lam=0.01,
        n_filters=1,
    )
    emit = FakeEmit()
    result = run_model(emit, config.to_dict(), "csvm")
    outcomes = {"csvm": {"state": "done", "result": result, "events": emit.events}}
    line = headline(config, outcomes, step_events(emit.events), finished=True)
    assert result["status"] == "diverged"
    assert "diverged at step" in line and "try η = " in line


def test_export_bundle_round_trips_without_pickle(tmp_path):
    emit = FakeEmit()
    result = run_model(emit, SMALL.to_dict(), "csvm")
    blob = export_run(SMALL, {"csvm": result, "svm": None}, {"comparisons": ["x"]})
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        names = set(zf.namelist())
        results = json.loads(zf.read("results.json"))
        history = zf.read("history.csv").decode()
    assert {"config.json", "results.json", "history.csv", "filters.npy", "reproduce.py"} <= names
    assert results["csvm"]["status"] == "done" and results["svm"] is None
    assert history.splitlines()[0].startswith("kind,model,") and len(history.splitlines()) == 4
    np.testing.assert_array_equal(
        load_filters(blob).reshape(result["filters"].shape), result["filters"]
    )
    assert load_config(blob) == (SMALL, [])


def test_a_bundle_without_settings_is_refused():
    with pytest.raises(BundleError):
        load_config(b"not a bundle")
    with pytest.raises(BundleError, match="mapping"):
        load_config(json.dumps([1, 2]).encode())
    assert load_config(json.dumps({"eta": 0.3}).encode())[0].eta == 0.3
    assert parse({"eta": 0.3})[0].eta == 0.3


# -- multi-class ---------------------------------------------------------------------------
MULTI = SMALL.replace(classes="7,0,3", n_train=150, n_filters=1)


@pytest.mark.parametrize(
    "scheme,pairs",
    [
        ("ovo", [["7", "0"], ["7", "3"], ["0", "3"]]),
        ("ovr", [["rest", "7"], ["rest", "0"], ["rest", "3"]]),
    ],
)
def test_multiclass_csvm_job_reports_every_sub_problem(scheme, pairs):
    config = MULTI.replace(multi_class=scheme)
    emit = FakeEmit()
    result = run_model(emit, config.to_dict(), "csvm")
    steps = step_events(emit.events, every_sub_problem=True)
    assert sorted({e["classifier"] for e in steps}) == [0, 1, 2]
    assert all(e["filters"].shape == (1, 1, 5, 5) for e in steps)
    assert result["pairs"] == pairs and result["sub_steps"] == [3, 3, 3]
    assert result["filters"].shape == (3, 1, 5, 5)
    m = np.array(result["confusion"])
    assert m.shape == (3, 3) and m.sum() == result["n_test"] == 300
    assert np.isclose(np.trace(m) / m.sum(), result["test_accuracy"])
    assert np.allclose(result["per_class_accuracy"], np.diag(m) / m.sum(axis=1))
    assert result["class_names"] == ["7", "0", "3"]
    rows = sub_problem_progress(config, emit.events)
    assert [r["steps"] for r in rows] == [3, 3, 3] and rows[2]["filters"] is not None
    assert progress(config, emit.events, running=False)[0] == 1.0


def test_multiclass_baselines_use_the_same_split():
    svm = run_model(FakeEmit(), MULTI.to_dict(), "svm")
    cnn = run_model(FakeEmit(), MULTI.to_dict(), "cnn")
    for result in (svm, cnn):
        assert np.array(result["confusion"]).shape == (3, 3)
        assert result["n_test"] == 300 and len(result["per_class_accuracy"]) == 3
    assert set(np.unique(cnn["test_predictions"])) <= {0, 1, 2}


def test_stopped_multiclass_run_keeps_what_it_learned():
    # Paused from the start, one step allowed, then the fake stops it: the first
    # sub-problem has 2 steps, the later ones stop after their first (a random filter).
    emit = FakeEmit([{"cmd": "step"}])
    result = run_model(emit, MULTI.replace(n_iter=5).to_dict(), "csvm", paused=True)
    assert result["status"] == "stopped" and result["sub_steps"] == [2, 1, 1]
    assert np.array(result["confusion"]).sum() == 300 and result["test_accuracy"] > 0.4


def test_confused_pairs_name_the_filters_that_separate_them():
    m = [[10, 1, 5], [0, 12, 0], [2, 3, 9]]
    ovo = confused_pairs(m, "ovo")
    assert [c["classes"] for c in ovo] == [(0, 2), (1, 2), (0, 1)]
    assert [c["count"] for c in ovo] == [7, 3, 1] and ovo[0]["i_as_j"] == 5
    assert [c["classifiers"] for c in ovo] == [[1], [2], [0]]  # combinations order
    assert confused_pairs(m, "ovr")[0]["classifiers"] == [0, 2]
    assert confused_pairs(np.eye(3, dtype=int) * 5, "ovo") == []  # nothing confused


def test_multiclass_headline_counts_every_sub_problem():
    config = MULTI.replace(classes="all")
    assert n_classes(config) == 10 and steps_total(config) == 45 * 3
    line = headline(
        config, {"csvm": {"state": "running"}}, [{}] * 7, False, total=steps_total(config)
    )
    assert line.endswith("step 7 of 135")


def test_multiclass_estimate_sums_its_sub_problems():
    from csvm.runs.cost import estimate_breakdown, estimate_multiclass_seconds

    config = SMALL.replace(baselines=()).to_dict()
    ovo = estimate_multiclass_seconds(config, [100, 200, 300], (1, 28, 28), 600)
    parts = [estimate_breakdown(config, n, (1, 28, 28), 600)["csvm"] for n in (300, 400, 500)]
    assert np.isclose(ovo, sum(parts))
    ovr = estimate_multiclass_seconds(config, [100, 200, 300], (1, 28, 28), 600, "ovr")
    assert np.isclose(ovr, 3 * estimate_breakdown(config, 600, (1, 28, 28), 600)["csvm"])


def test_the_headline_names_a_stronger_other_baseline_and_only_then():
    """With HOG + SVM 5 points ahead of the K-CSVM the headline named only the plain SVM
    and the CNN, which read as a win."""

    def done(accuracy):
        result = {"test_accuracy": accuracy, "seconds": 1.0, "status": "done", "n_test": 200}
        return {"state": "done", "events": [], "result": result}

    outcomes = {"csvm": done(0.93), "svm": done(0.92), "hog": done(0.9829), "mkl": done(0.95)}
    line = headline(SMALL, outcomes, [{}] * 2, finished=True)
    assert "plain SVM 92.00 %" in line and "HOG" in line and "98.29 %" in line
    assert "95.00 %" not in line  # the best other one only
    behind = {**outcomes, "hog": done(0.90), "mkl": done(0.91)}
    line = headline(SMALL, behind, [{}] * 2, finished=True)
    assert "HOG" not in line and "91.00 %" not in line  # none beats the CSVM: as before
