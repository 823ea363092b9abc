"""csvm.model.warm_solver against LIBSVM (scikit-learn's SVC), from scratch and warm.

As in test_smo.py, both solvers are handed the same kernel matrix with values that float32
holds exactly (LIBSVM caches kernel values in single precision), and LIBSVM runs at a tight
tolerance; the warm solver goes to the exact optimum (``exact=True``).  They then solve
the same problem and agree to 1e-6 relative on alpha, b and the dual objective.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.svm import SVC

from csvm import KernelCSVM
from csvm.model import kernel_columns, kernel_state, warm_solver
from csvm.model.kernel_columns import KernelColumns
from csvm.model.kernel_state import outer_objective, solve_state, state_gradient
from csvm.model.kernels import kernel_matrix
from csvm.model.smo import kernel_matrix as raw_kernel
from csvm.model.solve_settings import SolveSettings
from csvm.model.warm_solver import solve_dual, start_alpha
from tests._fd import central_difference, rel_error
from tests.model._svm_problems import KERNELS, RULES, close, dual

LIBSVM_TOL = 1e-8
HARD_C = 1e8  # no alpha gets near it on these problems: a hard margin
STARTS = ["cold", "cold-sampled", "ones", "random", "near"]


def _problem(kernel: str, seed: int, hard: bool, n=(30, 61)):
    """Random 2-D points labelled by the kernel's rule: noisy when soft, with a gap around
    the boundary when hard (separable).  Returns the float32-exact symmetric kernel."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(int(rng.integers(*n)), 2))
    score = RULES[kernel](X)
    if hard:
        X, score = X[np.abs(score) > 0.3], score[np.abs(score) > 0.3]
    else:
        score = score + 0.4 * rng.normal(size=len(X))
    y = np.where(score > 0, 1.0, -1.0)
    params = {"gamma": 1.0, "degree": 3, "coef0": 0.0, **KERNELS[kernel]}
    K = raw_kernel(X, X, kernel, **params)
    return _float32_exact(K), y


def _float32_exact(K: np.ndarray) -> np.ndarray:
    return ((K + K.T) / 2).astype(np.float32).astype(np.float64)


def _libsvm(K, y, C):
    svc = SVC(kernel="precomputed", C=C, tol=LIBSVM_TOL, shrinking=False).fit(K, y)
    alpha = np.zeros(len(y))
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    return alpha, float(svc.intercept_[0])


def _start(name: str, K, y, C, seed: int):
    rng = np.random.default_rng(seed + 100)
    if name.startswith("cold"):
        return None
    if name == "ones":
        return np.ones(len(y))
    if name == "random":
        return rng.random(len(y)) * min(C, 1.0)
    # "near": the optimum of a nearby kernel, as the K-CSVM's next solve sees it.
    alpha, _ = _libsvm(_float32_exact(K * (1 + 0.05 * rng.random(K.shape))), y, C)
    return alpha


def _assert_agrees(sol, K, y, C) -> None:
    alpha, b = _libsvm(K, y, C)
    assert sol.converged and not sol.hit_max_iter
    close(sol.alpha, alpha, 1e-6)
    close(sol.b, b, 1e-6)
    w = dual(alpha, y, K)
    assert abs(sol.objective - w) <= 1e-6 * abs(w)
    assert abs(sol.objective - dual(sol.alpha, y, K)) <= 1e-9 * abs(w)
    assert np.all(sol.alpha >= 0) and np.all(sol.alpha <= C)
    assert abs(sol.alpha @ y) <= 1e-9 * max(1.0, sol.alpha.sum())


@pytest.mark.parametrize("start", STARTS)
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("hard", [False, True], ids=["C", "hard"])
@pytest.mark.parametrize("kernel", list(KERNELS))
def test_agrees_with_libsvm_from_scratch_and_warm(kernel, hard, seed, start, monkeypatch):
    K, y = _problem(kernel, seed, hard)
    C = HARD_C if hard else float(10 ** np.random.default_rng(seed).uniform(-1, 2))
    if start == "cold-sampled":  # a cold start on "many" points: LIBSVM on a sample, then rounds
        monkeypatch.setattr(warm_solver, "_COLD_WORKING_SET", 12)
    sol = solve_dual(K, y, C, alpha0=_start(start, K, y, C, seed), tol=1e-8, exact=True)
    _assert_agrees(sol, K, y, C)
    if start == "cold-sampled":
        assert sol.rounds >= 2 and sol.libsvm_calls >= 1


@pytest.mark.parametrize("kernel", list(KERNELS))
def test_a_warm_start_at_the_optimum_takes_no_iterations(kernel):
    K, y = _problem(kernel, 5, hard=False)
    exact = solve_dual(K, y, 3.0, tol=1e-8, exact=True)
    again = solve_dual(K, y, 3.0, alpha0=exact.alpha, tol=1e-8, exact=True)
    assert (again.iterations, again.rounds) == (0, 0)
    np.testing.assert_array_equal(again.alpha, exact.alpha)
    # LIBSVM's optimum (to its tolerance): at most a linear system or two.
    libsvm_alpha, _ = _libsvm(K, y, 3.0)
    near = solve_dual(K, y, 3.0, alpha0=libsvm_alpha, tol=1e-8, exact=True)
    assert near.iterations <= 2 and near.libsvm_calls == 0
    # At LIBSVM's default tolerance its own answer needs nothing more.
    assert solve_dual(K, y, 3.0, alpha0=libsvm_alpha, tol=1e-3).iterations == 0


def test_a_moving_kernel_is_solved_in_a_few_systems_per_step():
    """The K-CSVM's case: maps that drift a little each step, each solve warm from the last;
    every step agrees with LIBSVM from scratch and takes a few linear systems where LIBSVM
    takes hundreds of pair updates."""
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(160, 12)).astype(np.float32)
    y = np.where(Z[:, 0] + 0.3 * Z[:, 1] ** 2 + 0.3 * rng.normal(size=160) > 0.2, 1.0, -1.0)
    drift = 0.02 * rng.normal(size=Z.shape).astype(np.float32)
    kernel = functools.partial(kernel_matrix, kernel="poly", degree=2, gamma=0.5, coef0=1.0)
    alpha, systems = None, []
    for step in range(6):
        cols = KernelColumns(Z=Z + step * drift, kernel=kernel)
        sol = solve_dual(cols, y, 10.0, alpha0=alpha, tol=1e-8, exact=True)
        if alpha is not None:
            systems.append(sol.iterations)
            assert sol.libsvm_calls == 0
            assert cols.n_formed < len(y)  # never the whole kernel
        # LIBSVM on the kernel the solver saw (its kept columns, the rest formed now).
        K = cols.block(np.arange(len(y)), np.arange(len(y)))
        _assert_agrees(sol, K, y, 10.0)
        alpha = sol.alpha
    assert max(systems) <= 20


@pytest.mark.parametrize("hard", [False, True], ids=["C", "hard"])
@pytest.mark.parametrize("dim", [1, 2])
def test_singular_kernels_agree_too(dim, hard):
    """A linear kernel of rank 1 or 2 on 40 points: the Newton systems are singular (least
    squares, or a direction of zero curvature) and the optimum may hold many free alphas."""
    rng = np.random.default_rng(dim)
    X = rng.normal(size=(40, dim))
    score = X[:, 0] + (0.5 * X[:, 1] if dim > 1 else 0)
    if hard:
        keep = np.abs(score) > 0.3
        X, score = X[keep], score[keep]
    y = np.where(score + (0 if hard else 0.5 * rng.normal(size=len(X))) > 0, 1.0, -1.0)
    K = _float32_exact(X @ X.T)
    C = HARD_C if hard else 2.0
    for start in (None, np.ones(len(y)), rng.random(len(y))):
        sol = solve_dual(K, y, C, alpha0=start, tol=1e-8, exact=True)
        alpha, b = _libsvm(K, y, C)
        w = dual(alpha, y, K)
        # Many alphas may be optimal: the objective and the decision values agree.
        assert sol.converged
        assert abs(sol.objective - w) <= 1e-6 * abs(w)
        f_ours = K @ (sol.alpha * y) + sol.b
        f_libsvm = K @ (alpha * y) + b
        close(f_ours, f_libsvm, 1e-6)


@pytest.mark.parametrize("C", [1e-6, 1e-2, 1e10])
def test_tiny_and_huge_C(C):
    K, y = _problem("rbf", 11, hard=C > 1)
    for start in (None, np.ones(len(y)), np.full(len(y), C)):
        sol = solve_dual(K, y, C, alpha0=start, tol=1e-8, exact=True)
        _assert_agrees(sol, K, y, C)
    if C == 1e-6:  # no free alpha: b is the middle of its interval, as LIBSVM's
        assert not np.any((sol.alpha > 0) & (sol.alpha < C))


def test_one_class_is_refused_by_name():
    K = np.eye(4)
    with pytest.raises(ValueError, match="needs both classes, but every label is \\+1"):
        solve_dual(K, np.ones(4), 1.0)
    with pytest.raises(ValueError, match="every label is -1"):
        solve_dual(K, -np.ones(4), 1.0, alpha0=np.ones(4))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"C": 0.0}, "C must be a finite number above 0"),
        ({"C": np.inf}, "C must be a finite number above 0"),
        ({"tol": 0.0}, "tol must be greater than 0"),
        ({"y": np.array([0, 1, 1, 0])}, "labels -1 and \\+1"),
        ({"y": np.array([1, -1, 1])}, "4 points but y has 3"),
        ({"alpha0": np.ones(3)}, "alpha0 has shape"),
    ],
)
def test_bad_arguments_are_named(kwargs, match):
    args = {"K": np.eye(4), "y": np.array([1.0, -1.0, 1.0, -1.0]), "C": 1.0, **kwargs}
    with pytest.raises(ValueError, match=match):
        solve_dual(args.pop("K"), args.pop("y"), args.pop("C"), **args)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(st.floats(-5, 5), st.just(float("nan")), st.just(2.2250738585e-313)),
        min_size=2,
        max_size=20,
    ),
    st.floats(0.01, 10.0),
    st.integers(0, 2**16),
)
def test_a_start_is_clipped_to_the_box_and_balanced(values, C, seed):
    y = np.where(np.random.default_rng(seed).random(len(values)) < 0.5, -1.0, 1.0)
    y[:2] = [-1.0, 1.0]
    alpha = start_alpha(values, y, C)
    assert np.all(alpha >= 0) and np.all(alpha <= C)
    assert abs(alpha @ y) <= 1e-12 * max(1.0, alpha.sum())
    # A feasible start is left as it is.
    np.testing.assert_array_equal(start_alpha(alpha, y, C), alpha)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_newton_off_and_the_iteration_bound():
    K, y = _problem("poly", 2, hard=False)
    sol = solve_dual(K, y, 5.0, alpha0=np.ones(len(y)), tol=1e-8, newton=False)
    assert sol.libsvm_calls >= 1
    _assert_agrees(solve_dual(K, y, 5.0, alpha0=sol.alpha, tol=1e-8, exact=True), K, y, 5.0)
    bounded = solve_dual(K, y, 5.0, tol=1e-8, max_iter=3)
    assert bounded.hit_max_iter and not bounded.converged


def test_unbounded_hard_margin_falls_back_to_libsvm():
    """Overlapping classes with a huge C: the alphas run to the cap, as in LIBSVM."""
    X = np.array([[0.0], [1.0], [0.5], [0.6]])
    y = np.array([-1.0, -1.0, 1.0, 1.0])
    K = _float32_exact(X @ X.T + 1.0)
    sol = solve_dual(K, y, 1e6, alpha0=np.ones(4), tol=1e-3, max_iter=10**5)
    alpha, _ = _libsvm(K, y, 1e6)
    assert sol.alpha.max() == pytest.approx(alpha.max(), rel=1e-3)


@pytest.mark.parametrize("kernel, params", [("poly", {"degree": 2}), ("rbf", {"gamma": 0.05})])
def test_float32_columns_match_float64_and_are_symmetric(kernel, params):
    """The columns come from one float32 BLAS product of the maps; against the float64
    kernel they are off by float32 rounding only, and where they cross they are one
    symmetric matrix."""
    rng = np.random.default_rng(0)
    Z = rng.random((300, 64)).astype(np.float32)
    f = functools.partial(kernel_matrix, kernel=kernel, coef0=1.0, **params)
    cols = KernelColumns(Z=Z, kernel=f)
    first, second = rng.choice(300, 40, replace=False), rng.choice(300, 50, replace=False)
    cols.rows(first)
    W = np.union1d(first, second)
    block = cols.block(W, W)
    np.testing.assert_array_equal(block, block.T)
    exact = f(Z.astype(np.float64), Z[W].astype(np.float64))
    got = cols.rows(W).T
    np.testing.assert_allclose(got, exact, rtol=2e-6)
    assert cols.n_formed == len(W) and cols.seconds > 0


# -- the K-CSVM on the warm solver ----------------------------------------------------------
def _toy_images(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 1, 8, 8))
    y = np.where(np.arange(n) % 2 == 0, 1, -1)
    X[y > 0, :, 2:5, 2:5] += 0.5  # a blob that a filter can find, but noisy
    return X, y


GRADIENT_CASES = [
    ("poly", {"degree": 2, "gamma": 1.0, "coef0": 1.0}),
    ("poly", {"degree": 3, "gamma": 0.5, "coef0": 0.3}),
    ("rbf", {"gamma": 0.2}),
]


@pytest.mark.parametrize("kernel,params", GRADIENT_CASES)
@pytest.mark.parametrize("regulariser", ["dfo1", "l2sq"])
def test_gradient_at_warm_solves_matches_finite_differences(kernel, params, regulariser):
    """dT/df at a state the warm solver found, and T at every probe solved warm from that
    state's alphas (as the K-CSVM's next step and Armijo's trials are)."""
    X, y = _toy_images()
    f = np.random.default_rng(4).random((1, 1, 3, 3))
    f *= (0.45 if kernel == "rbf" else 1.5) / np.abs(f).sum()
    kernel_params = {"kernel": kernel, "degree": 2, "gamma": 1.0, "coef0": 1.0, **params}
    args = (kernel_params, 1.0, regulariser, 0.3, 1e-12)
    base, _ = solve_state(X, y, f, *args, solver="warm", exact=True)
    analytic = state_gradient(X, base, kernel_params, regulariser, 0.3)

    def T(g):
        return solve_state(X, y, g, *args, solver="warm", alpha0=base.alpha())[0].objective

    numeric = central_difference(T, f, 1e-6)
    assert rel_error(analytic, numeric) < 1e-4
    # The public function with the warm solver: the same value and gradient.
    settings = SolveSettings.from_keywords(
        kernel=kernel, **params, C=1.0, regulariser=regulariser, lam=0.3, svm_tol=1e-12
    )
    value, grad = outer_objective(X, y, f, settings, solver="warm")
    assert value == pytest.approx(base.objective, rel=1e-9)
    np.testing.assert_allclose(grad, analytic, rtol=1e-7, atol=1e-12)


def _digits():
    from sklearn.datasets import load_digits

    X, y = load_digits(n_class=2, return_X_y=True)
    return X[:120] / 16, y[:120]


def _fit_both(X, y, monkeypatch, float64: bool, **params):
    """The same K-CSVM fitted with each solver; in float64 when asked (the estimator's
    maps, and with them its kernel products, are float32 otherwise)."""
    if float64:
        import csvm.model.multiclass as multiclass
        from csvm.model.validation import check_images

        monkeypatch.setattr(
            multiclass, "check_images", functools.partial(check_images, dtype=np.float64)
        )
    common = dict(
        image_shape=(8, 8), filter_shape=(3, 3), n_iter=6, random_state=0, svm_tol=1e-10,
        **params,
    )  # fmt: skip
    wholes = []
    whole = KernelColumns.whole
    monkeypatch.setattr(KernelColumns, "whole", lambda self: wholes.append(1) or whole(self))
    warm = KernelCSVM(solver="warm", **common).fit(X, y)
    assert len(wholes) == 1  # the n x n kernel of the first solve only (LIBSVM's own)
    libsvm = KernelCSVM(solver="libsvm", **common).fit(X, y)
    T_warm = np.array([e["objective"] for e in warm.history_])
    T_libsvm = np.array([e["objective"] for e in libsvm.history_])
    assert len(T_warm) == len(T_libsvm) == 6
    # After the first solve every one started from the last alphas and took a few systems.
    assert max(e["svm_iterations"] for e in warm.history_[1:]) < 60
    return warm, libsvm, T_warm, T_libsvm


@pytest.mark.parametrize(
    "step, eta, C",
    [("constant", 0.05, None), ("relative", 0.1, 1.0), ("armijo", 1.0, 1.0)],
)
def test_warm_and_libsvm_fits_follow_one_objective_curve(step, eta, C, monkeypatch):
    """On float64 maps both solvers see one kernel: the curves agree to 1e-6 (LIBSVM at a
    tight tolerance: at its default one its alphas are off by up to 1e-3 of their size,
    and on 120 images the curve by 1e-4; the first solve is LIBSVM's own in both)."""
    X, y = _digits()
    warm, libsvm, T_warm, T_libsvm = _fit_both(
        X, y, monkeypatch, float64=True, step=step, eta=eta, C=C
    )
    assert T_warm[0] == pytest.approx(T_libsvm[0], rel=1e-12)
    np.testing.assert_allclose(T_warm, T_libsvm, rtol=1e-6)
    np.testing.assert_allclose(warm.filters_, libsvm.filters_, rtol=1e-5, atol=1e-9)
    np.testing.assert_array_equal(warm.predict(X), libsvm.predict(X))


def test_on_float32_maps_the_curves_agree_to_the_kernels_rounding(monkeypatch):
    """The estimator's maps are float32, and so are its kernel products: the warm solver's
    columns (general products) and LIBSVM's whole kernel (numpy's symmetric product for
    these 120 images) round differently, by ~3e-7 of a value, and T, a small difference
    of large sums, follows by a few 1e-6.  LIBSVM's own curve moves as much with the
    kernel's rounding (its number of BLAS threads, say)."""
    X, y = _digits()
    warm, libsvm, T_warm, T_libsvm = _fit_both(
        X, y, monkeypatch, float64=False, step="constant", eta=0.05, C=None
    )
    assert T_warm[0] == pytest.approx(T_libsvm[0], rel=1e-12)  # LIBSVM's own first solve
    np.testing.assert_allclose(T_warm, T_libsvm, rtol=2e-5)
    np.testing.assert_array_equal(warm.predict(X), libsvm.predict(X))


@pytest.mark.parametrize("n_filters", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 255, 256, 700])
def test_one_channel_maps_equal_correlate_bit_for_bit(n, dtype, n_filters):
    """The solves' own correlation (blocks of images laid out pixel-major) gives
    csvm.model.conv.correlate's maps to the last bit: LIBSVM's first solve then sees the
    kernel it saw before the warm solver."""
    from csvm.model.conv import correlate
    from csvm.model.kernel_state import _correlate_taps, features

    rng = np.random.default_rng(n)
    X = rng.random((n, 1, 20, 17)).astype(dtype)
    f = rng.normal(size=(n_filters, 1, 5, 4))
    expected = correlate(X, f.astype(dtype))
    np.testing.assert_array_equal(_correlate_taps(X, f.astype(dtype)), expected)
    for workers in (1, 2, 3):  # threads sharing the blocks
        np.testing.assert_array_equal(features(X, f.astype(dtype), None, workers), expected)


@pytest.mark.filterwarnings("ignore::csvm.exceptions.SVMIterationWarning")  # the flat kernel
@pytest.mark.parametrize("solver", ["warm", "libsvm"])
@pytest.mark.parametrize("stop", ["tol", "stationary"])
def test_c_last_only_applies_however_early_the_steps_stop(solver, stop):
    """With C_last_only the model is solved with C even when the filter stops early: the
    tolerance met, or Armijo finding no decrease (which exact solves meet sooner)."""
    X, y = _digits()
    params = dict(
        image_shape=(8, 8), filter_shape=(3, 3), n_iter=40, random_state=0, C=1e-3,
        C_last_only=True, solver=solver,
    )  # fmt: skip
    if stop == "tol":
        params.update(tol=0.5)
    else:  # a zero gradient (no regulariser, a constant kernel): stationary at once
        params.update(step="armijo", kernel="poly", degree=1, gamma=1e-12, regulariser="none")
    clf = KernelCSVM(**params).fit(X, y)
    last = clf.history_[-1]
    assert last["iteration"] < 39
    assert last["iteration"] == len(clf.history_) - 1
    assert np.all(np.abs(clf.dual_coef_) <= 1e-3 + 1e-12)
    assert last["objective"] == pytest.approx(clf.estimators_[0].objective)


def test_auto_solves_warm_above_1024_images_only(monkeypatch):
    """Below, LIBSVM on the whole kernel is as fast, and a run is the one it was before the
    warm solver to the bit (the Classroom presets train on 50 to 600 images)."""
    X, y = _digits()
    assert KernelCSVM().solver == "auto"
    params = dict(image_shape=(8, 8), filter_shape=(3, 3), n_iter=4, random_state=0)
    auto = KernelCSVM(**params).fit(X, y)
    libsvm = KernelCSVM(solver="libsvm", **params).fit(X, y)
    assert [e["objective"] for e in auto.history_] == [e["objective"] for e in libsvm.history_]
    monkeypatch.setattr(kernel_state, "WARM_FROM", len(X) - 1)
    warm = KernelCSVM(**params).fit(X, y)
    assert warm.history_[1]["svm_iterations"] < 60  # warm: a few linear systems


def test_the_solves_own_algebra_runs_on_one_blas_thread(monkeypatch):
    """Small products on two spin-waiting OpenBLAS threads were 5-10x slower under load:
    the solve runs them on one, and the kernel's products on the threads it was given."""
    seen = []
    kernel = functools.partial(kernel_matrix, kernel="poly", degree=2)

    def counting(A, B):
        seen.append(kernel_columns.blas_threads())
        return kernel(A, B)

    Z = np.random.default_rng(0).random((300, 20)).astype(np.float32)
    y = np.where(Z[:, 0] > 0.5, 1.0, -1.0)
    before = kernel_columns.blas_threads()
    cols = KernelColumns(Z=Z, kernel=counting, threads=before)
    sol = solve_dual(cols, y, 1.0, alpha0=np.full(300, 0.01), tol=1e-6)

    def inside(*args):
        seen.append(("pivot", kernel_columns.blas_threads()))
        return pivoting(*args)

    pivoting = warm_solver._pivoting
    monkeypatch.setattr(warm_solver, "_pivoting", inside)
    jitter = 1 + 0.3 * np.random.default_rng(1).random(300)  # not a rescaling: systems to solve
    assert solve_dual(cols, y, 1.0, alpha0=sol.alpha * jitter, tol=1e-9, exact=True).iterations
    assert set(t for t in seen if not isinstance(t, tuple)) == {before}
    assert {t for t in seen if isinstance(t, tuple)} == {("pivot", 1)}
    assert kernel_columns.blas_threads() == before


def test_batches_of_columns_on_their_own_threads_the_whole_kernel_on_the_callers():
    """A warm solve's column batches run on one BLAS thread; LIBSVM's whole kernel on the
    caller's threads, so a cold start sees the kernel solver="libsvm" forms."""
    seen = []
    kernel = functools.partial(kernel_matrix, kernel="poly", degree=2)

    def counting(A, B):
        seen.append(("whole" if B is None else "batch", kernel_columns.blas_threads()))
        return kernel(A, B)

    Z = np.random.default_rng(0).random((300, 20)).astype(np.float32)
    y = np.where(Z[:, 0] > 0.5, 1.0, -1.0)
    callers = kernel_columns.blas_threads()
    cols = KernelColumns(Z=Z, kernel=counting, threads=callers, batch_threads=1)
    sol = solve_dual(cols, y, 1.0, tol=1e-6)  # cold: LIBSVM on the whole kernel
    jitter = 1 + 0.3 * np.random.default_rng(1).random(300)
    fresh = KernelColumns(Z=Z, kernel=counting, threads=callers, batch_threads=1)
    solve_dual(fresh, y, 1.0, alpha0=sol.alpha * jitter, tol=1e-9, exact=True)
    assert ("whole", callers) in seen
    assert {t for kind, t in seen if kind == "batch"} == {1}


def test_solver_is_validated_by_name():
    X, y = _digits()
    with pytest.raises(ValueError, match="'solver' parameter of KernelCSVM must be"):
        KernelCSVM(image_shape=(8, 8), solver="smo").fit(X, y)


def _classroom_presets() -> list[str]:
    """The presets whose K-CSVM trains on at most WARM_FROM images (the Classroom's)."""
    from csvm.runs.config import parse
    from csvm.runs.presets import load_presets

    names = []
    for preset in load_presets():
        config, _ = parse(preset["config"], source=preset["name"])
        if config.model == "kcsvm" and config.n_train and config.n_train <= 1024:
            names.append(preset["name"])
    return names


@pytest.mark.filterwarnings("ignore::csvm.exceptions.SVMIterationWarning")
@pytest.mark.parametrize("name", _classroom_presets())
def test_the_classroom_presets_learn_what_they_learned_before_to_the_step(name):
    """solver="auto" keeps LIBSVM on at most 1,024 images: every Classroom preset's run
    (what the page replays) is the LIBSVM path's, event for event and bit for bit."""
    from csvm.exceptions import DivergenceError
    from csvm.runs.config import parse
    from csvm.runs.presets import load_presets
    from csvm.runs.targets import load_data

    preset = next(p for p in load_presets() if p["name"] == name)
    config, problems = parse(preset["config"], source=name)
    assert not problems
    data = load_data(config)
    runs = []
    for solver in ("auto", "libsvm"):
        clf = config.build_estimator(data.image_shape)
        assert clf.solver == "auto"
        clf.set_params(solver=solver)
        seen = []
        try:
            clf.fit(data.X_train, data.y_train, callback=seen.append)
        except DivergenceError:  # the "too-large step" preset: it diverges both ways
            pass
        runs.append(seen)
    auto, libsvm = runs
    assert len(auto) == len(libsvm) > 1
    for a, b in zip(auto, libsvm, strict=True):
        assert a.keys() == b.keys()
        for key in a:
            if key in ("seconds", "timings"):
                continue  # time
            if isinstance(a[key], list):  # each layer's filters or gradient
                assert len(a[key]) == len(b[key]), key
                for x, z in zip(a[key], b[key], strict=True):
                    np.testing.assert_array_equal(x, z, err_msg=key)
            elif isinstance(a[key], np.ndarray):  # filters, gradient, alphas, support
                np.testing.assert_array_equal(a[key], b[key], err_msg=key)
            else:
                assert a[key] == b[key], key
    assert {"objective", "filters", "alpha", "eta"} <= auto[0].keys()
