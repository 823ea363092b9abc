"""FilterBankMKL: the outer gradient, the one-filter case, sparsity, multi-class, and
scikit-learn's estimator checks."""

import numpy as np
import pytest
from scipy.ndimage import correlate as nd_correlate
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import check_param_validation, parametrize_with_checks

from csvm import FilterBankMKL
from csvm.analysis.lab_filters import classic_filter
from csvm.model.filter_bank import BANK_FILTERS, DEFAULT_BANK, bank_filter, resolve_bank
from csvm.model.kernels import kernel_matrix
from csvm.model.line_search import projected_armijo
from csvm.model.mkl import filter_maps, mkl_solve
from tests._synthetic import square_blobs

pytestmark = pytest.mark.filterwarnings("ignore::csvm.ImageShapeWarning")


def _random_kernels(n=40, M=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1, -1)
    kernels = np.stack(
        [kernel_matrix(X[:, : k + 2], kernel="rbf", gamma=0.3 * (k + 1)) for k in range(M)]
    )
    return kernels, y


# -- the filter bank ------------------------------------------------------------------
def test_bank_filters_have_unit_l1_norm_and_odd_sides():
    for name in BANK_FILTERS:
        f = bank_filter(name)
        assert np.isclose(np.abs(f).sum(), 1.0)
        assert f.shape[0] % 2 == 1 and f.shape[1] % 2 == 1


@pytest.mark.parametrize("name", ["identity", "box", "sobel_x", "sobel_y", "laplacian"])
def test_bank_matches_the_filter_lab_at_size_3(name):
    np.testing.assert_allclose(bank_filter(name), classic_filter(name, 3))


def test_gabor_orientation_and_zero_mean():
    vertical = np.zeros((9, 9))
    vertical[:, 4] = 1.0
    for name in ("gabor_0", "gabor_45", "gabor_90", "gabor_135"):
        assert abs(bank_filter(name).sum()) < 1e-12  # flat patches give no response
    response = {
        name: abs(float((bank_filter(name) * vertical[1:8, 1:8]).sum()))
        for name in ("gabor_0", "gabor_90")
    }
    assert response["gabor_0"] > 5 * response["gabor_90"]


def test_resolve_bank_mixes_names_and_arrays_and_rejects_bad_items():
    names, filters = resolve_bank(["box", np.ones((2, 4))])
    assert names == ["box", "custom_1"] and filters[1].shape == (2, 4)
    assert resolve_bank(None)[0] == list(DEFAULT_BANK)
    with pytest.raises(ValueError, match="Unknown bank filter"):
        resolve_bank(["nope"])
    with pytest.raises(ValueError, match="finite 2-D array"):
        resolve_bank([np.ones(3)])
    with pytest.raises(ValueError, match="empty"):
        resolve_bank([])


def test_filter_maps_are_zero_padded_same_size_correlations():
    rng = np.random.default_rng(1)
    X = rng.random((4, 1, 9, 11))
    filters = [bank_filter("sobel_x"), bank_filter("gaussian_2"), rng.random((3, 5))]
    maps = filter_maps(X, filters, dtype=np.float64)
    assert maps.shape == (4, 3, 99)
    for k, f in enumerate(filters):
        want = np.stack([nd_correlate(x[0], f, mode="constant") for x in X])
        np.testing.assert_allclose(maps[:, k].reshape(4, 9, 11), want, atol=1e-12)


# -- the outer objective and its gradient ----------------------------------------------
@pytest.mark.parametrize("d", [[0.3, 0.5, 0.2], [1.0, 0.0, 2.0]])
def test_weight_gradient_matches_finite_differences(d):
    kernels, y = _random_kernels()
    d = np.array(d)
    opts = {"C": 1.0, "sigma": 0.7, "svm_tol": 1e-12}
    sol = mkl_solve(kernels, y, d, **opts)
    h = 1e-5
    for k in range(len(d)):
        e = np.zeros_like(d)
        e[k] = h
        up = mkl_solve(kernels, y, d + e, **opts).objective
        down = mkl_solve(kernels, y, d - e, **opts).objective if d[k] >= h else None
        fd = (up - down) / (2 * h) if down is not None else (up - sol.objective) / h
        assert fd == pytest.approx(sol.gradient[k], rel=1e-3, abs=1e-5)


def test_objective_is_the_svm_dual_plus_the_penalty():
    kernels, y = _random_kernels()
    d = np.array([0.2, 0.3, 0.5])
    sol = mkl_solve(kernels, y, d, C=2.0, sigma=0.5, svm_tol=1e-10)
    K = np.tensordot(d, kernels, axes=1)
    a = np.zeros(len(y))
    a[sol.support] = sol.dual_coef
    dual = np.abs(a).sum() - 0.5 * a @ K @ a
    assert sol.objective == pytest.approx(dual + 0.5 * d.sum(), rel=1e-10)
    assert np.all(np.abs(a) <= 2.0 + 1e-9) and abs(a.sum()) < 1e-8


def test_projected_armijo_keeps_the_orthant_and_decreases():
    def f(x):
        return float(np.sum((x - np.array([1.0, -2.0])) ** 2)), None

    x = np.array([0.5, 0.5])
    value, _ = f(x)
    grad = 2 * (x - np.array([1.0, -2.0]))
    x_new, _, step = projected_armijo(x, value, grad, f, 10.0)
    assert np.all(x_new >= 0) and f(x_new)[0] < value and step < 10.0
    # At the constrained minimiser the projected step does not move: stationary.
    x_star = np.array([1.0, 0.0])
    g_star = 2 * (x_star - np.array([1.0, -2.0]))
    assert projected_armijo(x_star, f(x_star)[0], g_star, f, 1.0)[0] is None


# -- the estimator --------------------------------------------------------------------
def _plain_kernel(X, clf, k=0):
    maps = filter_maps(X.reshape(len(X), 1, *X.shape[1:]), [clf.filters_[k]])[:, 0]
    return kernel_matrix(
        maps.astype(np.float64), kernel="rbf", gamma=clf._kernel_params[k]["gamma"]
    )


def test_one_filter_bank_is_the_plain_svm_with_that_filter():
    X, y = square_blobs(25, seed=3)
    clf = FilterBankMKL(bank=["gaussian_1"], C=1.0, sigma=2.0, svm_tol=1e-8).fit(X, y)
    (d,) = clf.weights_
    assert d > 0
    # SVM(d K, C) is SVM(K, d C): same decision function.
    svc = SVC(kernel="precomputed", C=clf.C * d, tol=1e-8).fit(_plain_kernel(X, clf), y)
    np.testing.assert_allclose(
        clf.decision_function(X), svc.decision_function(_plain_kernel(X, clf)), atol=2e-4
    )
    np.testing.assert_array_equal(clf.predict(X), svc.predict(_plain_kernel(X, clf)))


def test_one_filter_bank_at_its_stationary_sigma_keeps_weight_one():
    X, y = square_blobs(25, seed=4)
    probe = FilterBankMKL(bank=["identity"], n_iter=0).fit(X, y)
    K = _plain_kernel(X, probe)
    svc = SVC(kernel="precomputed", C=1.0, tol=1e-10).fit(K, np.where(y == 1, 1, -1))
    a = svc.dual_coef_[0]
    sigma = 0.5 * a @ K[np.ix_(svc.support_, svc.support_)] @ a  # dT/dd = 0 at d = 1
    clf = FilterBankMKL(bank=["identity"], sigma=sigma, svm_tol=1e-10).fit(X, y)
    assert clf.weights_[0] == pytest.approx(1.0, rel=1e-3)
    np.testing.assert_allclose(clf.decision_function(X), svc.decision_function(K), atol=1e-3)


def test_weights_are_nonnegative_sparse_and_the_objective_falls():
    X, y = square_blobs(30, seed=5)
    small = FilterBankMKL(sigma=0.5).fit(X, y)
    large = FilterBankMKL(sigma=5.0).fit(X, y)
    for clf in (small, large):
        assert clf.weights_.shape == (len(DEFAULT_BANK),)
        assert np.all(clf.weights_ >= 0)
        objectives = [e["objective"] for e in clf.history_]
        assert np.all(np.diff(objectives) <= 1e-9)
    assert np.count_nonzero(large.weights_) <= np.count_nonzero(small.weights_)
    assert np.count_nonzero(large.weights_) < len(DEFAULT_BANK) / 2
    assert large.score(X, y) >= 0.9


@pytest.mark.parametrize("multi_class", ["ovo", "ovr"])
def test_multi_class(multi_class):
    X, y = square_blobs(20, classes=("a", "b", "c"), seed=6, shuffle=True)
    clf = FilterBankMKL(bank=["identity", "box", "sobel_x"], multi_class=multi_class).fit(X, y)
    assert clf.weights_.shape == (3, 3)
    assert clf.decision_function(X).shape == (60, 3)
    assert clf.score(X, y) >= 0.9
    assert set(clf.predict(X)) <= {"a", "b", "c"}


def test_poly_and_linear_kernels_train():
    X, y = square_blobs(20, seed=7)
    for kernel in ("poly", "linear"):
        clf = FilterBankMKL(kernel=kernel, bank=["identity", "laplacian"]).fit(X, y)
        assert clf.score(X, y) >= 0.9


@parametrize_with_checks([FilterBankMKL()])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_every_parameter_is_validated_with_sklearn_messages():
    check_param_validation("FilterBankMKL", FilterBankMKL())
