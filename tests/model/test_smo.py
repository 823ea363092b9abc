"""csvm.model.smo.SMO against LIBSVM (scikit-learn's SVC), its KKT conditions, its steps.

LIBSVM caches the kernel matrix in single precision (``typedef float Qfloat`` in
``svm.cpp``), so on a raw kernel its alphas carry errors of about 1e-6 relative (up to 1e-5
measured).  The 1e-6 comparisons therefore hand both solvers the same kernel matrix with
values that float32 holds exactly: then both solve the same problem, and they agree to
about 1e-7.  A separate test checks the raw kernels at 1e-4.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from csvm.exceptions import SVMIterationWarning
from csvm.model.smo import SMO, kernel_matrix
from tests.model._svm_problems import KERNELS, RULES, close, dual

TOL = 1e-8
HARD_C = 1e8  # LIBSVM's stand-in for "no bound": no alpha gets near it on these problems


def _problem(kernel: str, seed: int, hard: bool) -> tuple[np.ndarray, np.ndarray]:
    """20-50 random 2-D points labelled by the kernel's rule; noisy when soft, and with a
    gap around the rule's boundary when hard (so the classes are separable)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(int(rng.integers(20, 51)), 2))
    score = RULES[kernel](X)
    if hard:
        X, score = X[np.abs(score) > 0.3], score[np.abs(score) > 0.3]
    else:
        score = score + 0.4 * rng.normal(size=len(X))
    return X, np.where(score > 0, 1, -1)


def _float32_exact(K: np.ndarray) -> np.ndarray:
    return K.astype(np.float32).astype(np.float64)


def _libsvm_alpha(svc: SVC, n: int) -> np.ndarray:
    alpha = np.zeros(n)
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    return alpha


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("hard", [False, True], ids=["C", "hard"])
@pytest.mark.parametrize("kernel", list(KERNELS))
def test_agrees_with_libsvm(kernel, hard, seed):
    X, y = _problem(kernel, seed, hard)
    K = _float32_exact(
        kernel_matrix(X, X, kernel, **{"gamma": 1.0, "degree": 3, "coef0": 0.0, **KERNELS[kernel]})
    )
    C = None if hard else float(10 ** np.random.default_rng(seed).uniform(-1, 2))
    ours = SMO(kernel="precomputed", C=C, tol=TOL).fit(K, y)
    svc = SVC(kernel="precomputed", C=HARD_C if hard else C, tol=TOL, shrinking=False)
    svc.fit(K, y)
    alpha = _libsvm_alpha(svc, len(y))
    if hard:
        assert alpha.max() < HARD_C / 100
    assert ours.converged_
    close(ours.alpha_, alpha, 1e-6)
    close(ours.intercept_, svc.intercept_[0], 1e-6)
    w = dual(alpha, y, K)
    assert abs(ours.dual_objective_ - w) <= 1e-6 * abs(w)
    np.testing.assert_array_equal(ours.support_, np.sort(svc.support_))


@pytest.mark.parametrize("kernel", list(KERNELS))
def test_raw_kernels_match_precomputed_and_libsvm(kernel):
    """The kernel path is the precomputed path; LIBSVM's float32 cache costs ~1e-5."""
    X, y = _problem(kernel, 7, hard=False)
    K = kernel_matrix(X, X, kernel, **{"gamma": 1.0, "degree": 3, "coef0": 0.0, **KERNELS[kernel]})
    ours = SMO(kernel=kernel, C=3.0, tol=TOL, **KERNELS[kernel]).fit(X, y)
    pre = SMO(kernel="precomputed", C=3.0, tol=TOL).fit(K, y)
    np.testing.assert_array_equal(ours.alpha_, pre.alpha_)
    np.testing.assert_allclose(ours.decision_function(X), pre.decision_function(K))
    svc = SVC(kernel=kernel, C=3.0, tol=TOL, **KERNELS[kernel]).fit(X, y)
    close(ours.alpha_, _libsvm_alpha(svc, len(y)), 1e-4)
    np.testing.assert_allclose(ours.decision_function(X), svc.decision_function(X), atol=1e-4)


points = st.lists(
    st.tuples(st.floats(-3, 3), st.floats(-3, 3)), min_size=4, max_size=30, unique=True
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(points, st.integers(0, 2**16), st.sampled_from(list(KERNELS)), st.floats(0.1, 100.0))
def test_free_support_vectors_lie_on_the_margins(pts, seed, kernel, C):
    """KKT: f = ±1 at free SVs (0 < alpha < C), y f <= 1 at alpha = C, y f >= 1 at 0."""
    X = np.array(pts)
    y = np.where(np.random.default_rng(seed).random(len(X)) < 0.5, -1, 1)
    y[:2] = [-1, 1]
    clf = SMO(kernel=kernel, C=C, tol=1e-9, max_iter=200_000, **KERNELS[kernel])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    if not clf.converged_:
        return  # a degenerate draw (duplicate-like points): nothing to check
    yf = y * clf.decision_function(X)
    free = (clf.alpha_ > 0) & (clf.alpha_ < C)
    slack = 1e-6 * max(1.0, float(np.max(np.abs(yf))))
    assert np.all(np.abs(yf[free] - 1) <= slack)
    assert np.all(yf[clf.alpha_ >= C] <= 1 + slack)
    assert np.all(yf[clf.alpha_ == 0] >= 1 - slack)


def test_iter_steps_one_pair_at_a_time():
    X, y = _problem("rbf", 3, hard=False)
    clf = SMO(kernel="rbf", gamma=0.5, C=2.0)
    steps = list(clf.iter_steps(X, y, include_start=True))
    start, pairs = steps[0], steps[1:]
    assert (start.i, start.j, start.step) == (-1, -1, 0)
    assert not start.alpha.any()
    assert len(pairs) == clf.n_iter_ > 0
    previous = start
    for record in pairs:
        changed = np.flatnonzero(record.alpha != previous.alpha)
        assert set(changed) <= {record.i, record.j} and record.i != record.j
        assert record.dual_objective >= previous.dual_objective - 1e-12
        assert np.all(record.alpha >= 0) and np.all(record.alpha <= 2.0)
        assert abs(record.alpha @ np.where(y > 0, 1.0, -1.0)) < 1e-9
        previous = record
    assert pairs[-1].kkt_gap < clf.tol <= pairs[-2].kkt_gap
    np.testing.assert_array_equal(pairs[-1].alpha, clf.alpha_)
    assert pairs[-1].b == clf.intercept_
    assert pairs[-1].dual_objective == clf.dual_objective_
    fitted = SMO(kernel="rbf", gamma=0.5, C=2.0).fit(X, y)
    np.testing.assert_array_equal(fitted.alpha_, clf.alpha_)


def test_any_two_labels_and_sklearn_api():
    X, y = _problem("linear", 4, hard=True)
    words = np.where(y > 0, "yes", "no")
    clf = SMO(kernel="linear", C=None).fit(X, words)
    assert list(clf.classes_) == ["no", "yes"]
    assert clf.score(X, words) == 1.0
    assert set(clf.predict(X)) <= {"no", "yes"}
    twin = clone(clf).set_params(C=10.0)
    assert twin.get_params()["C"] == 10.0 and not hasattr(twin, "alpha_")
    w = clf.coef_[0]
    assert clf.margin_width_ == pytest.approx(2 / np.linalg.norm(w))
    margin = np.min(np.abs(clf.decision_function(X)))
    assert margin == pytest.approx(1.0, abs=1e-3)  # hard margin: closest points at f = ±1


def test_hard_margin_on_overlapping_classes_warns():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, 0.0], [0.6, 0.0]])
    y = np.array([-1, -1, 1, 1])  # +1 points between the -1 points: not separable
    with pytest.warns(SVMIterationWarning, match="separable"):
        clf = SMO(kernel="linear", C=None, max_iter=500).fit(X, y)
    assert not clf.converged_ and clf.n_iter_ == 500
    assert math.isfinite(clf.dual_objective_)


def test_rejects_bad_input():
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match="two-class"):
        SMO().fit(X, [0, 1, 2])
    with pytest.raises(ValueError, match="'C' parameter of SMO must be"):
        SMO(C=0.0).fit(X, [0, 1, 1])


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(points, st.integers(0, 2**16), st.sampled_from(list(KERNELS)))
def test_drawn_margins_are_the_levels_f_minus_one_and_plus_one(pts, seed, kernel):
    """The figure's dashed lines are the contours f = -1 and f = +1 of this model's f,
    its solid line f = 0, and the ringed points are exactly the support vectors."""
    from csvm.figures.playground import decision_figure

    X = np.array(pts)
    y = np.where(np.random.default_rng(seed).random(len(X)) < 0.5, -1, 1)
    y[:2] = [-1, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = SMO(kernel=kernel, C=1.0, **KERNELS[kernel]).fit(X, y)
    axis = np.linspace(-3, 3, 21)
    gx, gy = np.meshgrid(axis, axis)
    F = clf.decision_function(np.column_stack([gx.ravel(), gy.ravel()])).reshape(gx.shape)
    yf = y * clf.decision_function(X)
    fig = decision_figure(X, y, axis, F, clf.alpha_, yf, 1.0)
    lines = {t.name: t for t in fig.data if t.type == "contour"}
    margins, boundary = lines["margins f = ±1"], lines["boundary f = 0"]
    levels = np.arange(margins.contours.start, margins.contours.end + 1e-9, margins.contours.size)
    assert levels.tolist() == [-1.0, 1.0]
    assert boundary.contours.start == boundary.contours.end == 0
    for trace in (margins, boundary):
        np.testing.assert_array_equal(trace.z, F)
        np.testing.assert_array_equal(trace.x, axis)
        np.testing.assert_array_equal(trace.y, axis)
    # F[r, c] is f at (axis[c], axis[r]): check one off-diagonal cell directly
    r, c = 3, 17
    assert F[r, c] == pytest.approx(clf.decision_function([[axis[c], axis[r]]])[0])
    rings = next((t for t in fig.data if str(t.name).startswith("support vectors")), None)
    if len(clf.support_):
        np.testing.assert_array_equal(rings.x, X[clf.support_, 0])
    else:
        assert rings is None


@pytest.mark.parametrize("kernel", list(KERNELS))
def test_takes_libsvms_path_pair_for_pair(kernel):
    """Same order and sign convention as scikit-learn's LIBSVM: the same number of pairs
    to the same tolerance (on a kernel float32 holds exactly, as LIBSVM's cache does)."""
    for seed in range(4):
        X, y = _problem(kernel, 100 + seed, hard=False)
        K = _float32_exact(
            kernel_matrix(
                X, X, kernel, **{"gamma": 1.0, "degree": 3, "coef0": 0.0, **KERNELS[kernel]}
            )
        )
        ours = SMO(kernel="precomputed", C=1.0, tol=1e-3).fit(K, y)
        svc = SVC(kernel="precomputed", C=1.0, tol=1e-3, shrinking=False).fit(K, y)
        assert ours.n_iter_ == svc.n_iter_[0]
