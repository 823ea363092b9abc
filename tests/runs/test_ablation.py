"""Fixed-filter ablations: rescaled norms are exact, the learned row reproduces the run."""

import pickle

import numpy as np
import pytest

from csvm.analysis.ablation import (
    ABLATION_EXPLANATION,
    delta_filters,
    gaussian_filters,
    rescale_to_norm,
)
from csvm.analysis.stats import format_signed
from csvm.model.conv import correlate
from csvm.runs.ablation import run_ablation
from csvm.runs.config import RunConfig
from csvm.runs.targets import load_data
from tests._typed import assert_typed

CONFIG = RunConfig(n_train=200, n_iter=4, seed=3, n_filters=1).to_dict()


@pytest.fixture(scope="module")
def run():
    """A short default K-CSVM run: its config, fitted estimator and first filters."""
    data = load_data(CONFIG)
    clf = RunConfig(**CONFIG).build_estimator(data.image_shape)
    first = []
    clf.fit(data.X_train, data.y_train, callback=lambda e: first.append(e["filters"]))
    return clf, data, first[0]


def _events():
    events = []
    return events, events.append


def test_rescaled_filters_have_the_learned_norm_exactly(run):
    clf, data, start = run
    learned = clf.filters_[0]
    events, emit = _events()
    out = run_ablation(emit, CONFIG, learned.tolist(), start.tolist())
    rows = {r["name"]: r for r in out["rows"]}
    learned_norm = np.linalg.norm(learned)
    assert np.isclose(out["learned_norm"], learned_norm, rtol=1e-12)
    for name in ("start", "delta", "gaussian"):
        assert np.isclose(np.linalg.norm(rows[name]["filters"]), learned_norm, rtol=1e-12)
        assert np.isclose(rows[name]["norm"], learned_norm, rtol=1e-12)
    start_norm = np.linalg.norm(start)
    assert not np.isclose(start_norm, learned_norm, rtol=1e-3)  # the run did move the filter
    assert np.isclose(
        np.linalg.norm(rows["learned_at_start_norm"]["filters"]), start_norm, rtol=1e-12
    )
    # Rescaling keeps each filter's shape (direction).
    f = rows["learned_at_start_norm"]["filters"].ravel()
    assert np.isclose(f @ learned.ravel(), np.linalg.norm(f) * learned_norm, rtol=1e-12)
    s = rows["start"]["filters"].ravel()
    assert np.isclose(s @ start.ravel(), np.linalg.norm(s) * start_norm, rtol=1e-12)


def test_learned_row_reproduces_the_run_and_others_are_compared_to_it(run):
    clf, data, start = run
    events, emit = _events()
    out = run_ablation(emit, CONFIG, clf.filters_[0], None)
    rows = out["rows"]
    assert [r["name"] for r in rows] == [
        "learned",
        "start",
        "delta",
        "gaussian",
        "learned_at_start_norm",
    ]
    assert rows[0]["test_accuracy"] == clf.score(data.X_test, data.y_test)
    assert rows[0]["mcnemar"] is None
    for row in rows[1:]:
        m = row["mcnemar"]
        diff = row["n_correct"] - rows[0]["n_correct"]
        assert m["diff_images"] == diff == m["b"] - m["c"]
        assert 0 < m["p_value"] <= 1
        # One sign convention with the headline: the learned filter minus this one.
        gain = 100 * (rows[0]["n_correct"] - row["n_correct"]) / len(data.y_test)
        signed = format_signed(gain)  # a true minus: "−0.50"
        assert row["verdict"].startswith(f"learned filter vs {row['label']}: {signed} points")
        lo, hi = row["interval"]
        assert lo <= row["test_accuracy"] <= hi
    # start_filters=None draws the run's own first filters again from the seed.
    assert np.array_equal(rows[1]["filters"], rescale_to_norm(start, out["learned_norm"]))
    assert events[0]["kind"] == "start"
    assert [e["step"] for e in events[1:]] == [r["name"] for r in rows]
    for event in events:
        assert_typed(event)
    assert out["explanation"] == ABLATION_EXPLANATION
    pickle.dumps(out)  # it travels back from a worker process


def test_fixed_filters_do_what_they_say():
    X = np.random.default_rng(0).random((3, 1, 9, 9))
    delta = delta_filters((2, 1, 5, 5))
    assert np.array_equal(correlate(X, delta)[:, 0], X[:, 0, 2:-2, 2:-2])
    g = gaussian_filters((1, 1, 5, 5))
    assert np.isclose(g.sum(), 1.0) and np.array_equal(g[0, 0], g[0, 0].T)
    assert g[0, 0, 2, 2] == g.max() and np.allclose(g[0, 0], g[0, 0, ::-1, ::-1])


def test_bad_filters_are_refused_with_a_reason(run):
    clf, _, _ = run
    _, emit = _events()
    with pytest.raises(ValueError, match="configuration describes"):
        run_ablation(emit, CONFIG, np.ones((2, 5, 5)), None)
    with pytest.raises(ValueError, match="must have shape"):
        run_ablation(emit, CONFIG, np.ones((1, 2, 5, 5)), None)
    with pytest.raises(ValueError, match="all zero"):
        run_ablation(emit, CONFIG, np.zeros((1, 5, 5)), None)
    with pytest.raises(ValueError, match="after a K-CSVM"):
        run_ablation(emit, {**CONFIG, "model": "lcsvm"}, clf.filters_[0], None)


def test_runs_as_a_job_in_the_worker_pool(run):
    import time

    from csvm.jobs import JobPool

    clf, data, _ = run
    pool = JobPool(max_workers=1, lease_seconds=120, preload=())
    try:
        job = pool.submit(
            run_ablation,
            {"config": CONFIG, "learned_filters": clf.filters_[0].tolist(), "start_filters": None},
        )
        deadline = time.time() + 120
        while (view := pool.poll(job)).state not in ("done", "error") and time.time() < deadline:
            time.sleep(0.1)
    finally:
        pool.shutdown()
    assert view.state == "done", view.error
    assert view.result["rows"][0]["test_accuracy"] == clf.score(data.X_test, data.y_test)
    assert [e["kind"] for e in view.events] == ["start"] + ["ablation"] * 5


def test_a_stack_is_ablated_layer_by_layer_and_its_learned_row_reproduces_the_run():
    from csvm.runs.summary import ablation_verdict
    from csvm.runs.targets import run_model

    config = RunConfig(
        n_train=100, n_iter=4, seed=2, layers="5x5x2-abs-avg2,3x3x2-abs-avg2"
    ).to_dict()
    events, emit = _events()
    result = run_model(emit, {**config, "baselines": ()}, "csvm")
    out = run_ablation(
        emit,
        config,
        result["filters"],
        None,
        learned_layers=result["layer_filters"],
        start_layers=result["start_layer_filters"],
    )
    rows = {r["name"]: r for r in out["rows"]}
    assert list(rows) == ["learned", "start", "delta", "gaussian", "learned_at_start_norm"]
    assert rows["learned"]["test_accuracy"] == pytest.approx(result["test_accuracy"])
    assert rows["start"]["norm"] == pytest.approx(out["learned_norm"], rel=1e-12)
    assert rows["learned_at_start_norm"]["norm"] == pytest.approx(out["start_norm"], rel=1e-12)
    assert all(rows[n]["mcnemar"] is not None for n in ("start", "delta", "gaussian"))
    assert ablation_verdict(out).startswith("Learned filter")
    with pytest.raises(ValueError, match="expected"):
        run_ablation(
            emit,
            config,
            result["filters"],
            None,
            learned_layers=result["layer_filters"][:1],
            start_layers=result["start_layer_filters"],
        )


def test_the_verdict_writes_a_lead_with_a_true_minus():
    from csvm.runs.summary import ablation_verdict

    def row(name, label, accuracy, p=None):
        return {
            "name": name,
            "label": label,
            "test_accuracy": accuracy,
            "mcnemar": None if p is None else {"p_value": p},
        }

    result = {
        "rows": [
            row("learned", "learned filter", 0.98),
            row("start", "random start, at the learned norm", 0.985, 1.0),
            row("gaussian", "Gaussian, at the learned norm", 0.97, 0.5),
        ]
    }
    verdict = ablation_verdict(result)
    assert "(random start) 98.50 %: −0.50 points" in verdict and "-0.50" not in verdict
    assert verdict.endswith("no significant difference: a fixed filter does as well")
