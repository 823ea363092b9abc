"""Slices of the outer objective T(f) through a filter: along a line or over a plane,
every point an SVM solved afresh (the Filter lab's landscapes).

T is convex in alpha for a fixed filter (the SVM dual), but **T is not convex in the
filter f in general**: the kernel depends on f through products of feature maps, so a
slice of T through f can bend both ways, and a gradient step finds a local minimum only.
:func:`nonconvex_points` marks where a sampled slice bends the wrong way.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.svm import SVC

from csvm.analysis.lab import BinaryProblem, Progress, binary_problem
from csvm.model.conv import correlate
from csvm.model.kernels import KernelSpec, from_dots
from csvm.model.regularisers import regulariser_value
from csvm.model.solve_settings import SolveSettings

__all__ = [
    "Landscape1D",
    "Landscape2D",
    "landscape_1d",
    "landscape_2d",
    "landscape_directions",
    "nonconvex_points",
]


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

    def kernel(self, coeffs: Sequence[float], spec: KernelSpec, out: np.ndarray):
        """The training kernel at ``f + sum c_k d_k``, written into ``out`` (float64)."""
        c = (1.0, *coeffs)
        G = self.gram
        np.copyto(G, self.blocks[0, 0])
        for (i, j), block in self.blocks.items():
            weight = c[i] * c[j]
            if (i, j) != (0, 0) and weight:
                G += self.dtype(weight) * block
        sq = np.diagonal(G).copy() if spec.entry.needs_norms else None
        rows, cols = (None, None) if sq is None else (sq[:, None], sq[None, :])
        out[...] = from_dots(G, spec, rows, cols)
        return out


def _svm_at_kernel(
    problem: BinaryProblem, K: np.ndarray, f: np.ndarray
) -> tuple[float, float, int]:
    """T, train accuracy and support-vector count of the SVM on a given training kernel.

    The same LIBSVM call and the same T as ``csvm.model.kernel_state.solve_state`` (which builds its
    kernel itself); only the kernel comes from :class:`_Plane`.
    """
    settings = problem.settings
    svc = SVC(kernel="precomputed", C=settings.solver_C, tol=settings.svm_tol, cache_size=200)
    svc.fit(K, problem.y)
    support, a = svc.support_, svc.dual_coef_[0].astype(np.float64)
    sum_alpha = float(np.abs(a).sum())
    margin = 0.5 * float(a @ K[np.ix_(support, support)] @ a)
    reg = regulariser_value(settings.regulariser, f, settings.lam)
    decision = K[:, support] @ a + svc.intercept_[0]
    accuracy = float(np.mean(np.where(decision > 0, 1, -1) == problem.y))
    return sum_alpha - margin + reg, accuracy, len(support)


def _sweep(
    problem: BinaryProblem,
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
            K = plane.kernel(c, problem.settings.kernel, problem.K_buffer)
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
    settings = SolveSettings.from_keywords(
        kernel=kernel, degree=degree, gamma=gamma, coef0=coef0,
        C=C, regulariser=regulariser, lam=lam, svm_tol=svm_tol,
    )  # fmt: skip
    problem = binary_problem(X_train, y_train, settings)
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
    settings = SolveSettings.from_keywords(
        kernel=kernel, degree=degree, gamma=gamma, coef0=coef0,
        C=C, regulariser=regulariser, lam=lam, svm_tol=svm_tol,
    )  # fmt: skip
    problem = binary_problem(X_train, y_train, settings)
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
