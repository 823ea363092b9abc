"""Behaviour of KernelCSVM and LinearCSVM: objectives, seeds, multi-class, divergence."""

import numpy as np
import pytest
from sklearn.svm import SVC

from csvm import DivergenceError, KernelCSVM, LinearCSVM
from csvm.model.conv import correlate
from csvm.model.linear import lambda_to_C, lcsvm_objective
from tests._synthetic import square_blobs as blobs
from tests._synthetic import without_timings as _strip


# --- K-CSVM ------------------------------------------------------------------------------
def test_kcsvm_objective_falls_with_small_eta():
    X, y = blobs()
    clf = KernelCSVM(
        image_shape=(10, 10),
        filter_shape=(3, 3),
        step="constant",
        eta=0.01,
        n_iter=8,
        regulariser="dfo2",
        lam=0.1,
        svm_tol=1e-8,
        random_state=0,
    ).fit(X, y)
    T = np.array([e["objective"] for e in clf.history_])
    assert len(T) == 8
    assert np.all(np.diff(T) <= 1e-6 * np.abs(T[:-1])), T
    assert T[-1] < T[0]


def test_kcsvm_history_terms_add_up():
    X, y = blobs()
    clf = KernelCSVM(image_shape=(10, 10), filter_shape=(3, 3), n_iter=3, random_state=0)
    clf.fit(X, y)
    for e in clf.history_:
        assert e["objective"] == pytest.approx(e["sum_alpha"] - e["margin_term"] + e["regulariser"])
        assert {"iteration", "step", "objective", "filter_norm", "n_support", "seconds"} <= set(e)


def test_kcsvm_with_zero_eta_equals_plain_svc_on_first_filter_maps():
    X, y = blobs()
    clf = KernelCSVM(
        image_shape=(10, 10),
        filter_shape=(3, 3),
        eta=0.0,
        n_iter=4,
        C=1.0,
        degree=3,
        gamma=0.5,
        coef0=1.0,
        svm_tol=1e-9,
        random_state=1,
    ).fit(X, y)
    f0 = clf.filters_[0]  # unchanged by eta = 0
    Z = correlate(X[:, None].astype(np.float32), f0[:, None].astype(np.float32))
    Z = Z.reshape(len(X), -1)
    svc = SVC(kernel="poly", degree=3, gamma=0.5, coef0=1.0, C=1.0, tol=1e-9).fit(Z, y)
    np.testing.assert_allclose(
        clf.decision_function(X), svc.decision_function(Z), rtol=1e-4, atol=1e-4
    )
    assert np.abs(np.sum(f0)) == pytest.approx(1.0)  # the first filter has unit L1 norm


@pytest.mark.parametrize("model", ["kcsvm", "lcsvm"])
def test_same_seed_same_run_and_parallel_equals_serial(model):
    X, y = blobs(n_per_class=15, classes=(0, 1, 2))

    def make(**kw):
        if model == "kcsvm":
            return KernelCSVM(
                image_shape=(10, 10), filter_shape=(3, 3), n_iter=3, random_state=7, **kw
            )
        return LinearCSVM(image_shape=(10, 10), filter_shape=(3, 3), n_iter=2, random_state=7, **kw)

    a, b, c = make().fit(X, y), make().fit(X, y), make(n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(a.filters_, b.filters_)
    np.testing.assert_array_equal(a.filters_, c.filters_)
    assert _strip(a.history_) == _strip(b.history_) == _strip(c.history_)
    d = make().set_params(random_state=8).fit(X, y)
    assert not np.array_equal(a.filters_, d.filters_)


@pytest.mark.parametrize("strategy,n_clf", [("ovo", 3), ("ovr", 3)])
def test_three_classes(strategy, n_clf):
    X, y = blobs(n_per_class=20, classes=(3, 5, 8))
    clf = KernelCSVM(
        image_shape=(10, 10),
        filter_shape=(3, 3),
        n_iter=3,
        C=10.0,
        multi_class=strategy,
        random_state=0,
    ).fit(X, y)
    assert clf.filters_.shape == (n_clf, 1, 3, 3)
    pred = clf.predict(X)
    assert set(pred) == {3, 5, 8}
    assert clf.score(X, y) > 0.9
    assert clf.decision_function(X).shape == (60, 3)
    assert clf.feature_maps(X).shape == (60, n_clf, 1, 8, 8)
    assert clf.transform(X).shape == (60, n_clf * 64)


def test_several_filters_and_channels():
    X, y = blobs()
    X3 = np.stack([X, X[:, ::-1], X.T.transpose(2, 0, 1)], axis=1)  # (n, 3, 10, 10)
    clf = KernelCSVM(
        image_shape=(3, 10, 10),
        filter_shape=(3, 3),
        n_filters=2,
        n_iter=3,
        eta=0.01,
        random_state=0,
    ).fit(X3, y)
    assert clf.filters_.shape == (1, 2, 3, 3, 3)
    assert clf.feature_maps(X3).shape == (60, 2, 8, 8)
    assert clf.transform(X3).shape == (60, 2 * 64)
    assert clf.score(X3, y) > 0.9


def test_huge_eta_raises_divergence_and_keeps_best_state():
    X, y = blobs()
    clf = KernelCSVM(
        image_shape=(10, 10),
        filter_shape=(3, 3),
        C=None,
        step="constant",
        eta=1e3,
        n_iter=10,
        random_state=0,
    )
    with pytest.raises(DivergenceError, match="Try a smaller step such as eta=") as info:
        clf.fit(X, y)
    assert 0 < info.value.suggested_eta <= 100.0
    assert info.value.cause in {"norm-explosion", "non-finite", "objective-rising"}
    assert clf.predict(X).shape == (60,)
    assert clf.score(X, y) > 0.5
    assert len(clf.history_) >= 1
    # The suggestion works the first time: a refit at it does not diverge.
    clf.set_params(eta=info.value.suggested_eta).fit(X, y)
    assert len(clf.history_) == 10


def test_armijo_never_raises_objective():
    X, y = blobs(seed=3)
    clf = KernelCSVM(
        image_shape=(10, 10),
        filter_shape=(3, 3),
        eta=10.0,
        step="armijo",
        kernel="rbf",
        gamma=0.05,
        regulariser="l2sq",
        lam=0.1,
        n_iter=6,
        random_state=0,
    ).fit(X, y)
    T = np.array([e["objective"] for e in clf.history_])
    assert np.all(np.diff(T) <= 0), T


def test_momentum_variants_run_and_differ():
    X, y = blobs()
    runs = [
        KernelCSVM(
            image_shape=(10, 10),
            filter_shape=(3, 3),
            step="constant",
            eta=0.01,
            n_iter=4,
            momentum=m,
            nesterov=nag,
            random_state=0,
        )
        .fit(X, y)
        .filters_
        for m, nag in [(0.0, False), (0.9, False), (0.9, True)]
    ]
    assert not np.allclose(runs[0], runs[1])
    assert not np.allclose(runs[1], runs[2])


def test_callback_false_stops_cleanly_and_receives_filters():
    X, y = blobs()
    seen = []

    def callback(event):
        seen.append(event)
        return False

    clf = KernelCSVM(image_shape=(10, 10), filter_shape=(3, 3), n_iter=10, random_state=0)
    clf.fit(X, y, callback=callback)
    assert len(seen) == 1 and len(clf.history_) == 1 and clf.stopped_
    assert seen[0]["filters"].shape == (1, 1, 3, 3)
    assert "filters" not in clf.history_[0]
    assert clf.predict(X).shape == (60,)


def test_c_last_only_and_tolerance_stop():
    X, y = blobs()
    clf = KernelCSVM(
        image_shape=(10, 10),
        filter_shape=(3, 3),
        n_iter=5,
        C=1e-3,
        C_last_only=True,
        random_state=0,
    ).fit(X, y)
    assert clf.history_[-1]["iteration"] == 4
    # With C tiny on the last solve only, every alpha is at the bound there.
    assert np.all(np.abs(clf.dual_coef_) <= 1e-3 + 1e-12)
    early = KernelCSVM(
        image_shape=(10, 10), filter_shape=(3, 3), n_iter=50, tol=0.5, random_state=0
    ).fit(X, y)
    assert len(early.history_) < 50


@pytest.mark.parametrize(
    "params,match",
    [
        ({"lam": -1.0}, "'lam' parameter of KernelCSVM must be a float in the range \\[0.0, "),
        ({"eta": -0.1}, "'eta' parameter"),
        ({"eta": 0.0, "step": "armijo"}, "eta must be greater than 0 with step='armijo'"),
        ({"degree": 0}, "'degree' parameter of KernelCSVM must be an int in the range \\[1, 20\\]"),
        ({"degree": 2.5}, "'degree' parameter"),
        ({"kernel": "sigmoid"}, "'kernel' parameter of KernelCSVM must be a str among"),
        ({"regulariser": "l3"}, "'regulariser' parameter"),
        ({"filter_shape": (12, 12)}, "larger than the image"),
        ({"image_shape": (28, 28)}, "needs 784"),
    ],
)
def test_kcsvm_validation_messages(params, match):
    X, y = blobs()
    kw = {"image_shape": (10, 10), "filter_shape": (3, 3), "n_iter": 2, **params}
    with pytest.raises(ValueError, match=match):
        KernelCSVM(**kw).fit(X.reshape(len(X), -1), y)


def test_one_class_and_nan_are_refused():
    X, y = blobs()
    clf = KernelCSVM(image_shape=(10, 10), filter_shape=(3, 3), n_iter=2)
    with pytest.raises(ValueError, match="one class"):
        clf.fit(X, np.zeros(len(X)))
    X[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clf.fit(X, y)


# --- L-CSVM ------------------------------------------------------------------------------
def test_lcsvm_objective_never_rises_across_half_steps():
    X, y = blobs(seed=5)
    clf = LinearCSVM(
        image_shape=(10, 10),
        filter_shape=(3, 3),
        lam_w=0.05,
        lam_f=0.05,
        n_iter=5,
        solver="libsvm",
        svm_tol=1e-8,
        random_state=0,
    ).fit(X, y)
    E = np.array([e["objective"] for e in clf.history_])
    assert [e["step"] for e in clf.history_[:2]] == ["svm", "filter"]
    assert len(E) == 10
    # Exact half-step solves cannot raise E; allow the solver tolerance (1e-5 relative).
    assert np.all(np.diff(E) <= 1e-5 * E[:-1]), E
    assert not any(e["rose"] for e in clf.history_)
    assert clf.score(X, y) > 0.9


def test_lcsvm_recorded_objective_matches_its_definition():
    X, y = blobs()
    clf = LinearCSVM(image_shape=(10, 10), filter_shape=(3, 3), n_iter=2, random_state=0)
    clf.fit(X, y)
    model = clf.estimators_[0]
    ypm = np.where(y == clf.classes_[1], 1, -1)
    terms = lcsvm_objective(X[:, None], ypm, model.filters, model.w, model.intercept, 0.1, 0.1)
    assert terms["objective"] == pytest.approx(clf.history_[-1]["objective"], rel=1e-5)
    assert terms["objective"] == pytest.approx(
        terms["data_term"] + terms["w_term"] + terms["f_term"]
    )


def test_lambda_to_C_mapping_minimises_the_lambda_objective():
    """SVC with C = 1/(lam N) minimises lam/2 |w|^2 + mean hinge better than other C."""
    rng = np.random.default_rng(0)
    F = rng.standard_normal((80, 6))
    y = np.where(F[:, 0] + 0.5 * rng.standard_normal(80) > 0, 1, -1)
    lam = 0.05

    def energy(C):
        svc = SVC(kernel="linear", C=C, tol=1e-10).fit(F, y)
        w, b = svc.coef_[0], svc.intercept_[0]
        return lam / 2 * w @ w + np.mean(np.maximum(0, 1 - y * (F @ w + b)))

    C = lambda_to_C(lam, len(F))
    assert energy(C) < min(energy(C * 1.5), energy(C / 1.5))


def test_lcsvm_three_classes_and_liblinear():
    X, y = blobs(n_per_class=20, classes=(1, 2, 3))
    for solver in ("libsvm", "liblinear"):
        clf = LinearCSVM(
            image_shape=(10, 10),
            filter_shape=(3, 3),
            n_iter=3,
            solver=solver,
            lam_w=0.01,
            lam_f=0.01,
            random_state=0,
        ).fit(X, y)
        assert clf.filters_.shape == (3, 1, 3, 3)
        assert set(clf.predict(X)) == {1, 2, 3}


@pytest.mark.parametrize(
    "params,match",
    [
        ({"lam_w": -1}, "'lam_w' parameter of LinearCSVM must be a float in the range \\(0.0, "),
        ({"lam_f": 0}, "'lam_f' parameter"),
        ({"solver": "sgd"}, "'solver' parameter of LinearCSVM must be a str among"),
    ],
)
def test_lcsvm_validation(params, match):
    X, y = blobs()
    with pytest.raises(ValueError, match=match):
        LinearCSVM(image_shape=(10, 10), filter_shape=(3, 3), **params).fit(X, y)
