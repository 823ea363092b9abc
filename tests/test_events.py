"""Typed events: every event has a ``kind`` and exactly the keys of its TypedDict."""

import numpy as np
import pytest

from csvm import DivergenceError, KernelCSVM, LinearCSVM, SmallCNN
from csvm.events import (
    DivergenceEvent,
    ResultEvent,
    StartEvent,
)
from csvm.model.kernelised import outer_objective
from csvm.model.solve_settings import SolveSettings
from tests._typed import assert_typed


def _blobs(n=40, classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 8, 8)) * 0.5
    y = np.arange(n) % classes
    for c in range(classes):
        X[y == c, 1 + 2 * c : 3 + 2 * c, 1:4] += 0.5
    return X, y


def test_start_and_result_types_have_the_agreed_fields():
    assert StartEvent.__required_keys__ == {"kind", "model", "n_train"}
    assert ResultEvent.__required_keys__ == {
        "kind",
        "model",
        "seconds",
        "train_accuracy",
        "test_accuracy",
    }
    assert {"filter_norm_before", "filter_norm_after"} == DivergenceEvent.__optional_keys__


def test_kcsvm_events_carry_gradient_support_and_alpha():
    X, y = _blobs()
    seen = []
    params = {"kernel": "poly", "degree": 2, "gamma": 1.0, "coef0": 1.0, "C": 1.0}
    clf = KernelCSVM(
        image_shape=(8, 8),
        filter_shape=(3, 3),
        n_iter=3,
        eta=0.01,
        regulariser="dfo2",
        lam=0.1,
        svm_tol=1e-10,
        random_state=0,
        **params,
    ).fit(X, y, callback=seen.append)
    assert [e["kind"] for e in clf.history_] == ["iteration"] * 3
    for event in seen + clf.history_:
        assert_typed(event)
    assert not {"filters", "gradient", "support", "alpha"} & set(clf.history_[0])
    ypm = np.where(y == 1, 1, -1)
    for event in seen[:-1]:
        # dT/df at this iteration's filters, recomputed from scratch.
        settings = SolveSettings.from_keywords(**params, regulariser="dfo2", lam=0.1, svm_tol=1e-10)
        _, grad = outer_objective(X[:, None], ypm, event["filters"], settings)
        assert event["gradient"].shape == event["filters"].shape
        np.testing.assert_allclose(event["gradient"], grad, rtol=1e-4, atol=1e-8)
    assert seen[-1]["gradient"] is None  # the last iteration takes no step
    last = clf.estimators_[0]
    np.testing.assert_array_equal(seen[-1]["support"], last.support)
    np.testing.assert_allclose(seen[-1]["alpha"], np.abs(last.dual_coef))
    assert seen[-1]["support"].dtype.kind == "i" and len(seen[-1]["alpha"]) == len(last.support)
    assert np.all(seen[-1]["alpha"] <= 1.0 + 1e-9)  # C = 1 bounds alpha


def test_kcsvm_support_indices_are_within_each_sub_problem():
    X, y = _blobs(n=45, classes=3)
    seen = []
    KernelCSVM(image_shape=(8, 8), filter_shape=(3, 3), n_iter=2, C=1.0, random_state=0).fit(
        X, y, callback=seen.append
    )
    assert {e["classifier"] for e in seen} == {0, 1, 2}
    for event in seen:
        assert event["support"].max() < 30  # each one-vs-one pair has 30 training rows


def test_lcsvm_half_step_events():
    X, y = _blobs()
    seen = []
    clf = LinearCSVM(image_shape=(8, 8), filter_shape=(3, 3), n_iter=2, random_state=0)
    clf.fit(X, y, callback=seen.append)
    assert [(e["kind"], e["step"]) for e in clf.history_] == [
        ("half_step", "svm"),
        ("half_step", "filter"),
    ] * 2
    for event in seen + clf.history_:
        assert_typed(event)
    assert all(e["filters"].shape == (1, 1, 3, 3) for e in seen)


def test_cnn_epoch_and_batch_events():
    X, y = _blobs(n=32)
    seen = []
    cnn = SmallCNN(
        image_shape=(8, 8), hidden=4, epochs=2, batch_size=8, events_every=2, random_state=0
    ).fit(X, y, callback=seen.append)
    assert [e["kind"] for e in cnn.history_] == ["epoch", "epoch"]
    assert {e["kind"] for e in seen} == {"epoch", "batch"}
    for event in seen + cnn.history_:
        assert_typed(event)


def test_kcsvm_divergence_event_comes_before_the_error():
    X, y = _blobs()
    seen = []
    clf = KernelCSVM(
        image_shape=(8, 8), filter_shape=(3, 3), step="constant", eta=1e3, n_iter=10, random_state=0
    )
    with pytest.raises(DivergenceError) as info:
        clf.fit(X, y, callback=seen.append)
    event = seen[-1]
    assert event["kind"] == "divergence" and clf.history_[-1] == event
    assert_typed(event)
    assert event["cause"] == info.value.cause and event["message"] == str(info.value)
    assert event["suggested_eta"] == pytest.approx(info.value.suggested_eta)
    assert event["model"] == "kcsvm" and event["classifier"] == 0
    assert event["iteration"] == seen[-2]["iteration"]
    if event["cause"] == "norm-explosion":
        assert event["filter_norm_before"] == pytest.approx(seen[-2]["filter_norm"])
        assert event["filter_norm_after"] > 10 * max(event["filter_norm_before"], 1.0)


def test_cnn_divergence_event():
    X, y = _blobs()
    seen = []
    cnn = SmallCNN(image_shape=(8, 8), hidden=0, epochs=20, lr=10.0, random_state=0)
    with pytest.raises(DivergenceError):
        cnn.fit(X * 1e3, y, callback=seen.append)
    assert seen[-1]["kind"] == "divergence" and cnn.history_[-1] == seen[-1]
    assert_typed(seen[-1])
    assert seen[-1]["model"] == "cnn" and seen[-1]["suggested_eta"] == pytest.approx(1.0)
