"""Filters learned on a subsample, SVMs solved on every image (csvm.model.refit)."""

import numpy as np
import pytest

from csvm.model.kernels import kernel_matrix
from csvm.model.prediction import decisions
from csvm.model.refit import refit_all
from csvm.model.virtual import SHIFTS_4, refit_virtual
from tests._synthetic import small_kcsvm as _kcsvm
from tests._synthetic import square_blobs


@pytest.mark.parametrize("layers", [None, "3x3x2-abs-max2"])
def test_refit_on_the_training_set_itself_keeps_the_fitted_model(layers):
    X, y = square_blobs(n_per_class=20, classes=(0, 1, 2), dtype=np.float32, shuffle=True)
    clf = _kcsvm(layers=layers).fit(X, y)
    before = clf.decision_function(X)
    refit_all(clf, X, y)
    np.testing.assert_allclose(clf.decision_function(X), before, rtol=1e-6, atol=1e-6)


def test_refit_on_more_images_indexes_them_and_rebuilds_each_decision():
    X, y = square_blobs(n_per_class=30, classes=(0, 1, 2), dtype=np.float32, shuffle=True)
    clf = _kcsvm().fit(X[::3], y[::3])
    filters = [f.copy() for f in clf.filters_]
    refit_all(clf, X, y)
    got = decisions(clf.estimators_, clf._images(X, reset=False))
    maps = clf.feature_maps(X).reshape(len(X), len(clf.pairs_), -1).astype(np.float64)
    for k, (neg, pos) in enumerate(clf.pairs_):
        np.testing.assert_array_equal(clf.filters_[k], filters[k])  # the filters stay
        rows = clf.support_[k]
        assert rows.max() < len(y) and set(y[rows].tolist()) <= {neg, pos}
        # Classifier k's decision from support_, dual_coef_ and intercept_ alone.
        K = kernel_matrix(maps[:, k], maps[rows, k], kernel="rbf", gamma=0.1)
        np.testing.assert_allclose(got[:, k], K @ clf.dual_coef_[k] + clf.intercept_[k], atol=1e-6)
        mine = np.isin(y, (neg, pos))
        assert np.mean((got[mine, k] > 0) == (y[mine] == pos)) > 0.9
    assert clf.score(X, y) > 0.9


def test_virtual_support_vectors_can_follow_a_refit():
    X, y = square_blobs(n_per_class=20, dtype=np.float32, shuffle=True)
    clf = refit_all(_kcsvm().fit(X[::2], y[::2]), X, y)
    refit_virtual(clf, X, SHIFTS_4)
    assert clf.support_.max() < len(y) and clf.score(X, y) > 0.9


def test_refit_refuses_other_classes_a_mismatch_and_other_estimators():
    X, y = square_blobs(n_per_class=10, dtype=np.float32)
    clf = _kcsvm().fit(X, y)
    with pytest.raises(ValueError, match="missing \\[1\\]"):
        refit_all(clf, X[y == 0], y[y == 0])
    with pytest.raises(ValueError, match="unknown \\[7\\]"):
        refit_all(clf, X, np.where(y == 1, 7, y))
    with pytest.raises(ValueError, match="labels"):
        refit_all(clf, X, y[:-1])
    with pytest.raises(TypeError, match="KernelCSVM"):
        refit_all(object(), X, y)


def test_a_large_refit_solved_warm_agrees_with_libsvm(monkeypatch):
    # Above WARM_FROM images "auto" solves from zero by the warm solver, forming only the
    # kernel columns it visits; it must find LIBSVM's solution on the whole kernel.
    from csvm.model import kernel_state

    warm_solves = []
    solve_warm = kernel_state._solve_warm
    monkeypatch.setattr(
        kernel_state, "_solve_warm", lambda *a: warm_solves.append(len(a[0])) or solve_warm(*a)
    )
    X, y = square_blobs(
        n_per_class=(kernel_state.WARM_FROM + 200) // 2, dtype=np.float32, shuffle=True
    )
    fitted = {}
    for solver in ("auto", "libsvm"):
        clf = _kcsvm(solver=solver, C=1.0).fit(X[::8], y[::8])
        fitted[solver] = refit_all(clf, X, y)
    assert warm_solves == [len(y)]  # the refit's solve, not the small fit's nor LIBSVM's
    warm, libsvm = fitted["auto"].estimators_[0], fitted["libsvm"].estimators_[0]
    np.testing.assert_allclose(warm.objective, libsvm.objective, rtol=1e-5)
    np.testing.assert_allclose(
        fitted["auto"].decision_function(X), fitted["libsvm"].decision_function(X), atol=2e-3
    )
