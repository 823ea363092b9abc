"""The filter lab: an SVM on a filter held fixed, the gradient there, and slices of T(f).

A K-CSVM alternates two things: solve the SVM for the current filter, then move the filter
against ``dT/df``.  This module separates them so that a person can choose the filter by
hand and see what the SVM makes of it:

* :func:`classic_filter` / :func:`starting_filters` (from :mod:`csvm.analysis.lab_filters`):
  identity, box blur, Gaussian, Sobel, Laplacian and random filters of odd size 3 to 9,
  and :func:`load_filters` for filters uploaded as .npy, JSON or a run export;
* :func:`solve_fixed_filter`: the SVM (same kernel, degree, gamma, coef0, C) on the feature
  maps of one fixed filter, with train/test accuracy, the support vectors, the outer
  objective ``T(f) = sum(alpha) - 1/2 a^T K a + r(f)`` and its terms, and the gradient;
* :func:`filter_gradient`: ``dT/df`` at a filter (Danskin: the optimal alpha held fixed);
* :func:`landscape_1d` / :func:`landscape_2d`: T along a line or over a plane through the
  filter, every point an SVM solved afresh.

Everything reuses :mod:`csvm.model.kernelised` (its ``_solve`` and ``_gradient``), so a filter
here gives exactly the numbers a ``KernelCSVM`` started at that filter with ``eta=0``
would give.

T is convex in alpha for a fixed filter (the SVM dual), but **T is not convex in the
filter f in general**: the kernel depends on f through products of feature maps, so a
slice of T through f can bend both ways, and a gradient step finds a local minimum only.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.svm import SVC
from sklearn.utils.validation import check_array

from csvm.analysis.lab_filters import FILTER_NAMES, classic_filter, load_filters, starting_filters
from csvm.model.conv import _as_filters, as_images, correlate, map_shape
from csvm.model.kernelised import HARD_MARGIN_C, KernelCSVM, _gradient, _KernelState, _solve
from csvm.model.kernels import _apply
from csvm.model.regularisers import check_regulariser, regulariser_value

__all__ = [
    "FILTER_NAMES",
    "LabResult",
    "Landscape1D",
    "Landscape2D",
    "classic_filter",
    "filter_gradient",
    "lab_job",
    "landscape_1d",
    "landscape_2d",
    "landscape_directions",
    "load_filters",
    "nonconvex_points",
    "solve_fixed_filter",
    "solve_raw_pixels",
    "starting_filters",
]


#: Called with (points done, points in all, T at the point just solved) after each solve of
#: a landscape, so a page can draw the slice while it fills in.
Progress = Callable[[int, int, float], Any]


# -- the SVM at a fixed filter ------------------------------------------------------------
@dataclass(frozen=True)
class _Problem:
    """A binary training set and SVM settings, checked once and shared by every solve."""

    X4: np.ndarray  # (n, C, H, W) float32 as KernelCSVM.fit holds it, or float64
    y: np.ndarray  # +-1, +1 for classes[1]
    classes: np.ndarray
    params: dict[str, Any]  # kernel, degree, gamma, coef0
    C: float
    regulariser: str
    lam: float
    svm_tol: float
    K_buffer: np.ndarray = field(repr=False)  # reused by every solve (n x n float64)

    def solve(self, filters: np.ndarray) -> tuple[_KernelState, dict[str, float]]:
        return _solve(
            self.X4,
            self.y,
            filters,
            params=self.params,
            C=self.C,
            regulariser=self.regulariser,
            lam=self.lam,
            svm_tol=self.svm_tol,
            K_buffer=self.K_buffer,
        )

    def filters(self, filters: Any) -> np.ndarray:
        """Filters as (k, C, p, q) float64, checked against the images."""
        f = np.asarray(filters, dtype=np.float64)
        f4 = _as_filters(f, self.X4.shape[1])
        map_shape(self.X4.shape[-2:], f4.shape[-2:])
        if not np.all(np.isfinite(f4)):
            raise ValueError("The filter holds NaN or infinite weights: give finite numbers.")
        return np.array(f4)  # a fresh array: the caller may edit theirs afterwards


def _images(X: Any, name: str) -> np.ndarray:
    """Images as contiguous (n, C, H, W): float64 stays float64, anything else float32.

    ``KernelCSVM`` computes in float32 (twice the BLAS speed), so float32 images give its
    numbers bit for bit; float64 images give the exact values a finite-difference check
    needs.
    """
    X = check_array(X, allow_nd=True, dtype=[np.float32, np.float64], input_name=name)
    if X.ndim not in (3, 4):
        raise ValueError(
            f"{name} must hold images, shape (n, H, W) or (n, C, H, W); got shape {X.shape}."
        )
    return np.ascontiguousarray(as_images(X))


def _problem(
    X: Any,
    y: Any,
    *,
    kernel: str,
    degree: float,
    gamma: float,
    coef0: float,
    C: float | None,
    regulariser: str,
    lam: float,
    svm_tol: float,
) -> _Problem:
    # The estimator's own checks give the same messages as a training run would.
    est = KernelCSVM(
        kernel=kernel,
        degree=degree,
        gamma=gamma,
        coef0=coef0,
        C=C,
        regulariser=regulariser,
        lam=lam,
        svm_tol=svm_tol,
    )
    est._check_params()
    X4 = _images(X, "X_train")
    y = np.asarray(y).ravel()
    if len(y) != len(X4):
        raise ValueError(f"y_train has {len(y)} labels for {len(X4)} images: give one per image.")
    classes = np.unique(y)
    if len(classes) != 2:
        raise ValueError(
            f"The filter lab solves one binary problem, but y_train holds {len(classes)} "
            f"class(es) ({', '.join(map(str, classes[:5]))}): pick two classes."
        )
    return _Problem(
        X4=X4,
        y=np.where(y == classes[1], 1, -1),
        classes=classes,
        params={
            "kernel": est.kernel,
            "degree": degree,
            "gamma": float(gamma),
            "coef0": float(coef0),
        },
        C=HARD_MARGIN_C if C is None else float(C),
        regulariser=check_regulariser(regulariser),
        lam=float(lam),
        svm_tol=float(svm_tol),
        K_buffer=np.empty((len(X4), len(X4))),
    )


@dataclass(frozen=True)
class LabResult:
    """The SVM solved at one fixed filter, and what it says about that filter.

    Attributes
    ----------
    filters : float64 array (k, C, p, q)
        The filter(s) the SVM was solved at.
    classes : array (2,)
        The labels: a positive decision value means ``classes[1]``.
    train_accuracy, test_accuracy : float
        Fractions in [0, 1]; ``test_accuracy`` is None without a test set.
    n_support : int
    support : int array
        Indices of the support vectors in the training set.
    objective : float
        ``T(f) = sum_alpha - margin_term + regulariser``.
    sum_alpha, margin_term, regulariser : float
        ``sum(alpha)``, ``1/2 a^T K a`` and ``r(f)``.
    gradient : float64 array like ``filters``
        ``dT/df`` at the filter (see :func:`filter_gradient`).
    image_shape : tuple (C, H, W)
        The shape of one training image; new images must have it.
    seconds : dict
        Wall-clock seconds of "kernel" (maps and kernel matrix), "svm" (LIBSVM),
        "gradient" and "total".
    """

    filters: np.ndarray
    classes: np.ndarray
    train_accuracy: float
    test_accuracy: float | None
    n_support: int
    support: np.ndarray
    objective: float
    sum_alpha: float
    margin_term: float
    regulariser: float
    gradient: np.ndarray
    image_shape: tuple[int, int, int]
    seconds: dict[str, float]
    _state: _KernelState = field(repr=False)

    @property
    def terms(self) -> dict[str, float]:
        """The three terms of T: ``sum_alpha``, ``margin_term``, ``regulariser``."""
        return {
            "sum_alpha": self.sum_alpha,
            "margin_term": self.margin_term,
            "regulariser": self.regulariser,
        }

    def _as_input(self, X: Any) -> np.ndarray:
        X = np.asarray(X)
        if X.ndim == 2:  # one (H, W) image
            X = X[None]
        X4 = _images(X, "X")
        expected = tuple(self.image_shape)
        if X4.shape[1:] != expected:
            raise ValueError(
                f"X holds images of shape {X4.shape[1:]}, but this SVM was solved on images "
                f"of shape {expected}: give images of that shape."
            )
        return X4

    def decision_function(self, X: Any) -> np.ndarray:
        """Signed SVM outputs of images ``(n, H, W)``, ``(n, C, H, W)`` or one ``(H, W)``.

        Positive means ``classes[1]``.  Computed in float64 exactly as
        ``KernelCSVM.decision_function`` does.
        """
        return self._state.decision_function(self._as_input(X))

    def predict(self, X: Any) -> np.ndarray:
        """Class labels (from ``classes``) of the images in X."""
        return self.classes[(self.decision_function(X) > 0).astype(int)]

    def feature_maps(self, X: Any) -> np.ndarray:
        """The maps ``(n, k, H', W')`` the SVM sees for images X (float32)."""
        return correlate(self._as_input(X), self.filters.astype(np.float32))


def _accuracy(state: _KernelState, X: Any, y: Any, classes: np.ndarray) -> float:
    X4 = _images(X, "X_test")
    y = np.asarray(y).ravel()
    if len(y) != len(X4):
        raise ValueError(f"y_test has {len(y)} labels for {len(X4)} images: give one per image.")
    predicted = classes[(state.decision_function(X4) > 0).astype(int)]
    return float(np.mean(predicted == y))


def _result(problem: _Problem, filters: np.ndarray, X_test: Any, y_test: Any) -> LabResult:
    start = time.perf_counter()
    state, timings = problem.solve(filters)
    t_grad = time.perf_counter()
    grad = _gradient(problem.X4, state, problem.params, problem.regulariser, problem.lam)
    timings = {**timings, "gradient": time.perf_counter() - t_grad}
    test_accuracy = None
    if X_test is not None:
        if y_test is None:
            raise ValueError("X_test was given without y_test: give both or neither.")
        test_accuracy = _accuracy(state, X_test, y_test, problem.classes)
    timings["total"] = time.perf_counter() - start
    return LabResult(
        filters=state.filters,
        classes=problem.classes,
        train_accuracy=state.train_accuracy,
        test_accuracy=test_accuracy,
        n_support=int(len(state.support)),
        support=state.support,
        objective=float(state.objective),
        sum_alpha=state.terms["sum_alpha"],
        margin_term=state.terms["margin_term"],
        regulariser=state.terms["regulariser"],
        gradient=grad,
        image_shape=tuple(int(v) for v in problem.X4.shape[1:]),
        seconds=timings,
        _state=state,
    )


def solve_fixed_filter(
    X_train: Any,
    y_train: Any,
    filters: Any,
    *,
    kernel: str = "poly",
    degree: float = 2,
    gamma: float = 1.0,
    coef0: float = 1.0,
    C: float | None = None,
    regulariser: str = "dfo1",
    lam: float = 0.01,
    svm_tol: float = 1e-3,
    X_test: Any = None,
    y_test: Any = None,
) -> LabResult:
    """Solve the SVM on the feature maps of a filter held fixed.

    This is one K-CSVM iteration without the filter step: the numbers equal those of
    ``KernelCSVM(eta=0, n_iter=1)`` started at ``filters``.  The outer objective T is
    convex in alpha (this solve finds its optimum) but not convex in the filter in
    general, so a good filter found by hand or by gradient steps is a local answer.

    Parameters
    ----------
    X_train : array (n, H, W) or (n, C, H, W)
        Training images, ideally in [0, 1].  float32 (what the datasets give) reproduces
        ``KernelCSVM`` bit for bit; float64 computes the kernel in float64 (slower, exact
        enough for finite differences).
    y_train : array (n,)
        Two classes; the second in sorted order is the positive one (+1).
    filters : array (p, q), (k, p, q) or (k, C, p, q)
        The filter(s) to hold fixed.
    kernel, degree, gamma, coef0, C, regulariser, lam, svm_tol
        As for :class:`~csvm.KernelCSVM` (C None: no upper bound on alpha).
    X_test, y_test : optional
        A test set for ``test_accuracy``.

    Returns
    -------
    LabResult

    Raises
    ------
    ValueError
        For settings a ``KernelCSVM`` would refuse, images that are not images, labels
        that are not two classes, or a filter that does not fit the images.
    """
    problem = _problem(
        X_train,
        y_train,
        kernel=kernel,
        degree=degree,
        gamma=gamma,
        coef0=coef0,
        C=C,
        regulariser=regulariser,
        lam=lam,
        svm_tol=svm_tol,
    )
    return _result(problem, problem.filters(filters), X_test, y_test)


def solve_raw_pixels(
    X_train: Any,
    y_train: Any,
    *,
    kernel: str = "poly",
    degree: float = 2,
    gamma: float = 1.0,
    coef0: float = 1.0,
    C: float | None = None,
    svm_tol: float = 1e-3,
    X_test: Any = None,
    y_test: Any = None,
) -> LabResult:
    """The plain SVM on raw pixels, as a :class:`LabResult` comparable with a filter's.

    Raw pixels are the feature maps of the 1x1 filter ``[[1]]``, so this solves exactly
    the SVM of ``make_plain_svm`` (same kernel, degree, gamma, coef0, C) and reports its
    dual objective ``sum_alpha - margin_term`` on the same scale as T(f), with no
    regulariser (there is no filter to penalise).  ``gradient`` is that of the 1x1
    filter and means little.
    """
    X4 = _images(X_train, "X_train")
    return solve_fixed_filter(
        X4,
        y_train,
        np.ones((1, X4.shape[1], 1, 1)),
        kernel=kernel,
        degree=degree,
        gamma=gamma,
        coef0=coef0,
        C=C,
        regulariser="none",
        lam=0.0,
        svm_tol=svm_tol,
        X_test=X_test,
        y_test=y_test,
    )


def filter_gradient(
    X_train: Any,
    y_train: Any,
    filters: Any,
    *,
    kernel: str = "poly",
    degree: float = 2,
    gamma: float = 1.0,
    coef0: float = 1.0,
    C: float | None = None,
    regulariser: str = "dfo1",
    lam: float = 0.01,
    svm_tol: float = 1e-3,
) -> np.ndarray:
    """``dT/df`` at a filter: where the K-CSVM's next step would push it (against it).

    The SVM is solved at ``filters`` and, by Danskin's theorem, its optimal alpha is held
    fixed while differentiating: ``dT/df = dr/df - 1/2 sum_ij a_i a_j dK_ij/df``.  T is
    not convex in f in general, so the gradient points downhill locally only.  It equals
    central differences of T with the SVM re-solved at every probe (tests/test_lab.py).

    Parameters
    ----------
    As for :func:`solve_fixed_filter`.

    Returns
    -------
    gradient : float64 array of the shape of ``filters``
    """
    result = solve_fixed_filter(
        X_train,
        y_train,
        filters,
        kernel=kernel,
        degree=degree,
        gamma=gamma,
        coef0=coef0,
        C=C,
        regulariser=regulariser,
        lam=lam,
        svm_tol=svm_tol,
    )
    return result.gradient.reshape(np.shape(filters))


# -- landscapes ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Landscape1D:
    """T along the line ``f + t d``: one SVM solve per ``t``.

    Attributes
    ----------
    ts : float array (m,)
    objectives, train_accuracy : float arrays (m,)
    n_support : int array (m,)
    seconds : float
        Wall-clock time of all the solves.
    """

    ts: np.ndarray
    objectives: np.ndarray
    train_accuracy: np.ndarray
    n_support: np.ndarray
    seconds: float


@dataclass(frozen=True)
class Landscape2D:
    """T over the plane ``f + s d1 + t d2``: ``objectives[j, i]`` is at ``(s[i], t[j])``.

    Rows follow ``t`` (the second direction) so that ``objectives`` is the ``z`` of a
    contour plot with ``x = s`` and ``y = t``.
    """

    s: np.ndarray
    t: np.ndarray
    objectives: np.ndarray
    train_accuracy: np.ndarray
    n_support: np.ndarray
    seconds: float


def landscape_directions(
    gradient: Any, step: float, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """The two directions of the lab's landscape plots, in units of one gradient step.

    Parameters
    ----------
    gradient : array
        ``dT/df`` at the filter.
    step : float
        The step size eta (> 0).
    seed : int
        Seed of the second direction.

    Returns
    -------
    d1 : array like ``gradient``
        ``-step * gradient``: the move one gradient step makes, so on a slice ``t = 1`` is
        the filter after one step and ``t = -1`` one step uphill.
    d2 : array like ``gradient``
        A seeded Gaussian direction with its component along ``d1`` removed
        (Gram-Schmidt), scaled to the length of ``d1``: the same step length sideways.

    Raises
    ------
    ValueError
        If ``step`` is not positive or the gradient is zero (a stationary filter has no
        downhill direction to follow).
    """
    g = np.asarray(gradient, dtype=np.float64)
    if not (np.isfinite(step) and step > 0):
        raise ValueError(f"The step size must be a number > 0, got {step!r}.")
    d1 = -float(step) * g
    norm = float(np.linalg.norm(d1))
    if not np.isfinite(norm) or norm == 0.0:
        raise ValueError(
            "The gradient at this filter is zero (or not finite), so there is no downhill "
            "direction to slice along: change the filter a little and try again."
        )
    r = np.random.default_rng(seed).standard_normal(g.shape)
    r -= (r.ravel() @ d1.ravel()) / norm**2 * d1
    return d1, r * (norm / np.linalg.norm(r))


def _check_direction(direction: Any, f4: np.ndarray, name: str) -> np.ndarray:
    d = np.asarray(direction, dtype=np.float64)
    if d.size != f4.size or not np.all(np.isfinite(d)):
        raise ValueError(
            f"{name} must be finite and have one weight per filter weight ({f4.size}), "
            f"got shape {d.shape}."
        )
    return d.reshape(f4.shape)


def _ts(ts: Any, default: int) -> np.ndarray:
    t = np.linspace(-2.0, 2.0, default) if ts is None else np.asarray(ts, dtype=np.float64)
    if t.ndim != 1 or len(t) < 1 or not np.all(np.isfinite(t)):
        raise ValueError(f"The slice positions must be a 1-D list of finite numbers, got {ts!r}.")
    return t


#: Largest training set for which landscapes use :class:`_Plane` (its blocks take about
#: ``4 * 6 * n^2`` bytes: 150 MB at 2,500 images); larger ones correlate at every point.
_PLANE_MAX = 2500


class _Plane:
    """Training kernels on the plane ``f + c_1 d_1 (+ c_2 d_2)`` without correlating again.

    Correlation is linear in the filter, so the maps at a point are ``Z_0 + sum c_k Z_k``
    and their Gram matrix is a quadratic form in ``c`` with (m+1)(m+2)/2 fixed n x n
    blocks.  Each point then costs a few n x n additions instead of a correlation and an
    ``n x n x D`` product: on the classroom split a point takes about a third of the time,
    LIBSVM most of the rest.  The products are float32 like :func:`kernel_matrix`'s, so a
    point agrees with a direct solve to about 1e-6 relative (tests/test_lab.py).
    """

    def __init__(self, X4: np.ndarray, f4: np.ndarray, directions: Sequence[np.ndarray]):
        self.dtype = np.float64 if X4.dtype == np.float64 else np.float32
        n = len(X4)
        Z = [
            correlate(X4, g.astype(X4.dtype)).reshape(n, -1).astype(self.dtype, copy=False)
            for g in (f4, *directions)
        ]
        self.blocks: dict[tuple[int, int], np.ndarray] = {}
        for i in range(len(Z)):
            for j in range(i, len(Z)):
                block = Z[i] @ Z[j].T
                self.blocks[i, j] = block if i == j else block + block.T
        self.gram = np.empty((n, n), dtype=self.dtype)

    def kernel(self, coeffs: Sequence[float], params: dict[str, Any], out: np.ndarray):
        """The training kernel at ``f + sum c_k d_k``, written into ``out`` (float64)."""
        c = (1.0, *coeffs)
        G = self.gram
        np.copyto(G, self.blocks[0, 0])
        for (i, j), block in self.blocks.items():
            weight = c[i] * c[j]
            if (i, j) != (0, 0) and weight:
                G += self.dtype(weight) * block
        sq = np.diagonal(G).copy() if params["kernel"] == "rbf" else None
        out[...] = _apply(G, params["kernel"], params["degree"], params["gamma"],
                          params["coef0"], sq, sq)  # fmt: skip
        return out


def _svm_at_kernel(problem: _Problem, K: np.ndarray, f: np.ndarray) -> tuple[float, float, int]:
    """T, train accuracy and support-vector count of the SVM on a given training kernel.

    The same LIBSVM call and the same T as ``csvm.model.kernelised._solve`` (which builds its
    kernel itself); only the kernel comes from :class:`_Plane`.
    """
    svc = SVC(kernel="precomputed", C=problem.C, tol=problem.svm_tol, cache_size=200)
    svc.fit(K, problem.y)
    support, a = svc.support_, svc.dual_coef_[0].astype(np.float64)
    sum_alpha = float(np.abs(a).sum())
    margin = 0.5 * float(a @ K[np.ix_(support, support)] @ a)
    reg = regulariser_value(problem.regulariser, f, problem.lam)
    decision = K[:, support] @ a + svc.intercept_[0]
    accuracy = float(np.mean(np.where(decision > 0, 1, -1) == problem.y))
    return sum_alpha - margin + reg, accuracy, len(support)


def _sweep(
    problem: _Problem,
    f4: np.ndarray,
    directions: Sequence[np.ndarray],
    coords: Sequence[tuple[float, ...]],
    progress: Progress | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Solve the SVM at ``f4 + sum c_k d_k`` for every ``c`` in ``coords``.

    Returns objective, train accuracy and n_support per point.  The filter itself (all
    ``c`` zero) is always solved directly, so its T equals :func:`solve_fixed_filter`'s.
    """
    plane = _Plane(problem.X4, f4, directions) if len(problem.X4) <= _PLANE_MAX else None
    out = np.empty((3, len(coords)))
    for i, c in enumerate(coords):
        f = f4 + sum(ck * d for ck, d in zip(c, directions, strict=True))
        if plane is None or not any(c):
            state, _ = problem.solve(f)
            out[:, i] = state.objective, state.train_accuracy, len(state.support)
        else:
            K = plane.kernel(c, problem.params, problem.K_buffer)
            out[:, i] = _svm_at_kernel(problem, K, f)
        if progress is not None:
            progress(i + 1, len(coords), float(out[0, i]))
    return out[0], out[1], out[2].astype(int)


def landscape_1d(
    X_train: Any,
    y_train: Any,
    filters: Any,
    direction: Any,
    ts: Any = None,
    *,
    progress: Progress | None = None,
    kernel: str = "poly",
    degree: float = 2,
    gamma: float = 1.0,
    coef0: float = 1.0,
    C: float | None = None,
    regulariser: str = "dfo1",
    lam: float = 0.01,
    svm_tol: float = 1e-3,
) -> Landscape1D:
    """T along the line ``f + t d``, the SVM re-solved at every point.

    With ``d`` from :func:`landscape_directions` the unit of ``t`` is one gradient step:
    ``t = 0`` is the filter itself (its value equals :func:`solve_fixed_filter`'s T),
    ``t = 1`` where "take one gradient step" lands.  T is not convex in f in general, so
    the slice may bend downwards (see :func:`nonconvex_points`); a convex-looking slice
    does not make T convex.

    Parameters
    ----------
    X_train, y_train, filters
        As for :func:`solve_fixed_filter`.
    direction : array with one weight per filter weight
    ts : 1-D array, default ``linspace(-2, 2, 21)``
    progress : callable (done, total, objective), optional
        Called after each solve (the page forwards it from a worker process).
    kernel, degree, gamma, coef0, C, regulariser, lam, svm_tol
        As for :func:`solve_fixed_filter`.

    Returns
    -------
    Landscape1D
    """
    problem = _problem(
        X_train,
        y_train,
        kernel=kernel,
        degree=degree,
        gamma=gamma,
        coef0=coef0,
        C=C,
        regulariser=regulariser,
        lam=lam,
        svm_tol=svm_tol,
    )
    f4 = problem.filters(filters)
    d = _check_direction(direction, f4, "direction")
    t = _ts(ts, 21)
    start = time.perf_counter()
    values = _sweep(problem, f4, [d], [(ti,) for ti in t], progress)
    return Landscape1D(t, *values, seconds=time.perf_counter() - start)


def landscape_2d(
    X_train: Any,
    y_train: Any,
    filters: Any,
    d1: Any,
    d2: Any,
    grid: Any = None,
    *,
    progress: Progress | None = None,
    kernel: str = "poly",
    degree: float = 2,
    gamma: float = 1.0,
    coef0: float = 1.0,
    C: float | None = None,
    regulariser: str = "dfo1",
    lam: float = 0.01,
    svm_tol: float = 1e-3,
) -> Landscape2D:
    """T over the plane ``f + s d1 + t d2``, one SVM solve per grid point.

    Parameters
    ----------
    X_train, y_train, filters
        As for :func:`solve_fixed_filter`.
    d1, d2 : arrays with one weight per filter weight
        Usually :func:`landscape_directions`: the gradient step and a direction
        orthogonal to it of the same length.
    grid : 1-D array, or a pair (s, t) of 1-D arrays, default ``linspace(-2, 2, 15)``
        Positions along ``d1`` and ``d2``.
    progress : callable (done, total, objective), optional
        Called after each of the ``len(s) * len(t)`` solves, in row-major order over
        ``(t, s)``.
    kernel, degree, gamma, coef0, C, regulariser, lam, svm_tol
        As for :func:`solve_fixed_filter`.

    Returns
    -------
    Landscape2D
        T is not convex in f in general: the contours need not be nested convex curves.
    """
    problem = _problem(
        X_train,
        y_train,
        kernel=kernel,
        degree=degree,
        gamma=gamma,
        coef0=coef0,
        C=C,
        regulariser=regulariser,
        lam=lam,
        svm_tol=svm_tol,
    )
    f4 = problem.filters(filters)
    a = _check_direction(d1, f4, "d1")
    b = _check_direction(d2, f4, "d2")
    if isinstance(grid, tuple) and len(grid) == 2:
        s, t = _ts(grid[0], 15), _ts(grid[1], 15)
    else:
        s = t = _ts(grid, 15)
    start = time.perf_counter()
    # Row-major over (t, s), the layout of the returned arrays.
    coords = [(si, tj) for tj in t for si in s]
    obj, acc, nsv = _sweep(problem, f4, [a, b], coords, progress)
    shape = (len(t), len(s))
    return Landscape2D(
        s,
        t,
        obj.reshape(shape),
        acc.reshape(shape),
        nsv.reshape(shape),
        seconds=time.perf_counter() - start,
    )


def nonconvex_points(ts: Any, values: Any, rtol: float = 1e-6) -> np.ndarray:
    """Where a sampled slice bends downwards: evidence that T is not convex along it.

    A function is convex on a line exactly when its slopes never decrease.  Between
    neighbouring samples the slope is a divided difference; this returns the indices
    ``i`` (interior samples) where the slope after ``ts[i]`` is smaller than the slope
    before it by more than ``rtol`` times the range of the values (round-off and the
    SVM's own tolerance stay below that).  An empty result means the samples are
    consistent with convexity along this line, which does not make T convex in f.

    Parameters
    ----------
    ts : 1-D array, strictly increasing
    values : 1-D array, T at ``ts``
    rtol : float

    Returns
    -------
    int array of indices into ``ts``
    """
    t = np.asarray(ts, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    if t.ndim != 1 or t.shape != v.shape or np.any(np.diff(t) <= 0):
        raise ValueError("ts must be strictly increasing and values must match it in length.")
    if len(t) < 3:
        return np.array([], dtype=int)
    slopes = np.diff(v) / np.diff(t)
    scale = max(float(np.ptp(v)), 1e-300)
    drops = slopes[:-1] - slopes[1:]  # positive where the slope decreases
    return np.flatnonzero(drops > rtol * scale / max(float(np.min(np.diff(t))), 1e-300)) + 1


# -- the explorer's worker jobs -----------------------------------------------------------
#: Settings a lab computation takes, by name (those of :func:`solve_fixed_filter`).
SETTING_NAMES = ("kernel", "degree", "gamma", "coef0", "C", "regulariser", "lam")


def lab_job(
    emit: Callable[[dict[str, Any]], Any],
    *,
    task: str,
    data: dict[str, Any],
    filters: Any,
    settings: dict[str, Any],
    d1: Any = None,
    d2: Any = None,
    grid: Any = None,
) -> LabResult | Landscape1D | Landscape2D:
    """One lab computation in a worker process: the explorer's job-pool target.

    The worker loads the pair itself (the same :func:`csvm.data.load_pair` call the
    page makes, so the images agree), which keeps the job's message small whatever the
    dataset.

    Parameters
    ----------
    emit : callable
        Receives ``{"kind": "landscape", "done", "total", "objective"}`` after every
        point of a landscape.
    task : {"solve", "landscape_1d", "landscape_2d"}
    data : dict
        ``dataset``, ``class_a``, ``class_b``, ``protocol``, ``n_train``, ``seed``.
    filters : array
    settings : dict
        Keywords of :func:`solve_fixed_filter` (see ``SETTING_NAMES``).
    d1, d2, grid
        Directions and positions of the landscapes (``grid`` is ``ts`` for 1-D).

    Returns
    -------
    LabResult (with the test split's accuracy), Landscape1D or Landscape2D
    """
    from csvm.data import load_pair

    n_train = data.get("n_train")
    pair = load_pair(
        data["dataset"],
        data["class_a"],
        data["class_b"],
        protocol=data.get("protocol"),
        n_train=None if n_train is None else int(n_train),
        random_state=int(data.get("seed", 0)),
    )
    kwargs = {k: settings[k] for k in SETTING_NAMES if k in settings}

    def progress(done: int, total: int, objective: float) -> None:
        emit({"kind": "landscape", "done": done, "total": total, "objective": objective})

    X, y = pair.X_train, pair.y_train
    if task == "solve":
        return solve_fixed_filter(X, y, filters, X_test=pair.X_test, y_test=pair.y_test, **kwargs)
    if task == "landscape_1d":
        return landscape_1d(X, y, filters, d1, grid, progress=progress, **kwargs)
    if task == "landscape_2d":
        return landscape_2d(X, y, filters, d1, d2, grid, progress=progress, **kwargs)
    raise ValueError(
        f"Unknown lab task {task!r}: expected 'solve', 'landscape_1d' or 'landscape_2d'."
    )
