"""A warm-startable solver of the SVM dual, for solves that follow one another closely.

The K-CSVM (thesis Algorithm 5) solves the dual

    min_alpha  f(alpha) = 1/2 alpha' Q alpha - sum(alpha),   Q_ij = y_i y_j K_ij
    subject to 0 <= alpha_i <= C,  sum_i y_i alpha_i = 0

once per filter step, and the filter moves little from one step to the next: the support
vectors stay nearly the same set and their alphas change by a few per cent (after a common
rescaling, as the kernel's scale follows the filter's norm).  LIBSVM cannot start from an
earlier alpha, and SMO, which moves two alphas at a time, still needs 1,000-3,500 pair
updates from the previous optimum on the thesis's table 4.1 kernels (a third to a half of
a cold start); at ~0.1 ms per vectorised update in Python that is slower than LIBSVM from
scratch.  This module solves it in three parts instead:

* **Columns on demand** (:class:`~csvm.model.kernel_columns.KernelColumns`): only the
  columns ``K[:, j]`` of the points that enter the working set are formed, from the
  feature maps by one BLAS product per batch (``csvm.model.kernels.kernel_matrix``:
  float32 products), and kept.  A solve near the previous one touches the support vectors
  and a few violators, a few hundred columns, never the ``n x n`` kernel.
* **Shrinking (decomposition)**: the problem is solved on a working set ``W`` (the current
  support vectors and the points that violate the KKT conditions most), every alpha
  outside ``W`` at 0; the gradient over all points then says whether a point outside
  ``W`` violates the conditions, and the worst join ``W`` until none does (LIBSVM's
  stopping rule, ``max_up(-y g) - min_low(-y g) < tol``).
* **Newton steps on faces** of the working set: with the free alphas ``F`` and those at 0
  and at ``C`` fixed, the problem on ``F`` is one linear system (an LU factor of the
  bordered KKT matrix; least squares when it is singular).  Block principal pivoting
  (:func:`_pivoting`) moves every alpha that breaks a condition between ``F`` and the
  bounds at once, so a warm start settles in one to three systems; should it not settle,
  the primal active-set method (:func:`_newton`, Nocedal & Wright 16.5: ratio tests,
  one alpha per system, the objective falling at every step) and then LIBSVM on the
  working set take over.  Each face's solution is exact to rounding, so a warm solve can
  go on to the exact optimum (``exact=True``) for the cost of a few more systems.

A cold start (no earlier alpha) is LIBSVM's: on every point when there are at most
:data:`COLD_WHOLE` (its answer is then returned as it is, unless ``exact``), else on a
balanced sample, which the rounds above complete.

Everything is checked against LIBSVM in ``tests/model/test_warm_solver.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg
from sklearn.svm import SVC

from csvm.model.kernel_columns import KernelColumns, one_blas_thread

__all__ = [
    "COLD_WHOLE",
    "DualSolution",
    "solve_dual",
    "start_alpha",
]

#: A face's linear system whose reciprocal condition number is below this is treated as
#: singular and solved by least squares.
_RCOND = 1e-13
#: Points whose kernel a cold start forms at once and hands to LIBSVM: all of them up to
#: this many (32 MiB of float64), else a balanced sample of this size.
COLD_WHOLE = 2048
_COLD_WORKING_SET = COLD_WHOLE
#: The most violators one round adds to the working set (and at least this fraction of it).
_ADD_MIN, _ADD_FRACTION = 64, 0.5
#: A free alpha within this fraction of C from C (of the largest free alpha from 0) after
#: a Newton step is put on that bound.
_SNAP = 1e-12
#: ``exact`` solves stop at a KKT gap below this fraction of the scores' scale.
_EXACT = 1e-9
#: A start's alphas below this fraction of the largest of their class are 0, and so are a
#: class's alphas that sum to less than ``_NEGLIGIBLE_SUM``: the factor that balances the
#: classes then never makes a subnormal alpha, whose rounding would move a feasible start
#: again (hypothesis found 2e-313).
_NEGLIGIBLE, _NEGLIGIBLE_SUM = 1e-30, 1e-250


@dataclass
class DualSolution:
    """The solved dual: what :func:`solve_dual` returns.

    Attributes
    ----------
    alpha : ndarray (n,)
        The dual variables, in ``[0, C]`` with ``sum(y * alpha) = 0``.
    b : float
        The intercept of ``f(x) = sum_i alpha_i y_i K(x_i, x) + b`` (``SVC.intercept_``).
    objective : float
        ``W(alpha) = sum(alpha) - 1/2 alpha' Q alpha``, the dual objective (maximised).
    gap : float
        LIBSVM's KKT violation ``max_up(-y g) - min_low(-y g)`` at ``alpha``.
    converged : bool
        Whether ``gap < tol``.
    iterations : int
        Linear systems solved, plus LIBSVM's iterations where it solved a working set;
        0 when the start already met the tolerance.
    rounds : int
        Working sets solved (each followed by a check over every point).
    libsvm_calls : int
        Working sets LIBSVM solved (cold starts and safeguards).
    hit_max_iter : bool
        Whether it stopped at ``max_iter`` instead of at ``tol``.
    """

    alpha: np.ndarray
    b: float
    objective: float
    gap: float
    converged: bool
    iterations: int = 0
    rounds: int = 0
    libsvm_calls: int = 0
    hit_max_iter: bool = False
    #: The support vectors' kernel columns ``K[:, support]`` (n, s), for the caller.
    support_columns: np.ndarray | None = field(default=None, repr=False)
    #: LIBSVM's order of the support vectors when its whole solve is the answer.
    order: np.ndarray | None = field(default=None, repr=False)

    @property
    def support(self) -> np.ndarray:
        """Indices with ``alpha > 0`` (ascending; LIBSVM's order, by class, when the
        answer is LIBSVM's own cold solve on every point)."""
        return np.flatnonzero(self.alpha > 0) if self.order is None else self.order


# -- the start --------------------------------------------------------------------------------
def start_alpha(alpha0: Any, y: np.ndarray, C: float) -> np.ndarray:
    """A feasible start from any ``alpha0``: clipped to ``[0, C]``, then the heavier class's
    alphas scaled down so that ``sum(y * alpha) = 0`` (which keeps them in the box).
    Alphas 30 orders of magnitude below their class's largest count as 0; a feasible
    start is returned as it is.

    Examples
    --------
    >>> y = np.array([1.0, 1.0, -1.0])
    >>> start_alpha([0.5, 0.7, 3.0], y, C=2.0)
    array([0.5, 0.7, 1.2])
    """
    alpha = np.clip(np.nan_to_num(np.asarray(alpha0, dtype=np.float64), nan=0.0), 0.0, C)
    if alpha.shape != y.shape:
        raise ValueError(f"alpha0 has shape {alpha.shape}, expected {y.shape}")
    for cls in (y > 0, y < 0):  # negligible alphas are 0 (see _NEGLIGIBLE)
        part = alpha[cls]
        if part.sum() < _NEGLIGIBLE_SUM:
            part[:] = 0.0
        else:
            part[part < _NEGLIGIBLE * part.max()] = 0.0
        alpha[cls] = part
    pos, neg = float(alpha[y > 0].sum()), float(alpha[y < 0].sum())
    if abs(pos - neg) <= 1e-13 * max(pos, neg):
        return alpha  # balanced to rounding: an alpha at C stays exactly at C
    if pos > neg:
        alpha[y > 0] *= neg / pos
    else:
        alpha[y < 0] *= pos / neg
    return alpha


def _rescale(alpha: np.ndarray, Qa_dot: float, C: float) -> float:
    """The factor s maximising W(s alpha) = s sum(alpha) - s^2/2 alpha'Q alpha, kept in
    the box (the constraints are homogeneous, so s alpha stays feasible)."""
    total = float(alpha.sum())
    if total <= 0 or Qa_dot <= 0 or not math.isfinite(Qa_dot):
        return 1.0
    s = total / Qa_dot
    top = float(alpha.max())
    return min(s, C / top) if top > 0 else s


# -- KKT ----------------------------------------------------------------------------------
def _violations(alpha: np.ndarray, y: np.ndarray, g: np.ndarray, C: float):
    """LIBSVM's view of the KKT conditions: the score ``-y g``, the up and low sets, and
    ``(m, M)`` with ``gap = m - M``."""
    score = -y * g
    pos = y > 0
    below_c, above_0 = alpha < C, alpha > 0
    up = (pos & below_c) | (~pos & above_0)
    low = (pos & above_0) | (~pos & below_c)
    m = float(np.max(score[up])) if up.any() else -math.inf
    M = float(np.min(score[low])) if low.any() else math.inf
    return score, up, low, m, M


def _intercept(alpha: np.ndarray, y: np.ndarray, g: np.ndarray, C: float) -> float:
    """LIBSVM's intercept: the mean of ``-y g`` over the free alphas, else the middle of
    the feasible interval."""
    score = -y * g
    free = (alpha > 0) & (alpha < C)
    if free.any():
        return float(np.mean(score[free]))
    _, _, _, m, M = _violations(alpha, y, g, C)
    if math.isinf(m):
        return M if math.isfinite(M) else 0.0
    if math.isinf(M):
        return m
    return (m + M) / 2.0


def _worst(score, up, low, m: float, M: float, tol: float, limit: int, candidates) -> np.ndarray:
    """Up to ``limit`` of the ``candidates`` that form a pair violating the conditions by
    ``tol`` or more (an up index scoring ``tol`` above ``M``, a low index ``tol`` below
    ``m``), worst first: the index behind the gap ``m - M`` always comes first."""
    viol = np.maximum(np.where(up, score - M, -np.inf), np.where(low, m - score, -np.inf))
    viol = np.where(candidates, viol, -np.inf)
    idx = np.flatnonzero(viol >= tol)
    if len(idx) > limit:
        idx = idx[np.argpartition(-viol[idx], limit - 1)[:limit]]
    return idx[np.argsort(-viol[idx], kind="stable")]


# -- the Newton method on a working set ---------------------------------------------------
def _face_solution(Q: np.ndarray, y: np.ndarray, r: np.ndarray, c: float):
    """Solve ``Q a + y b = r, y'a = c`` (the stationarity of one face).

    One LU factor of the bordered (KKT) matrix, its border scaled to ``Q``'s diagonal, and
    one step of iterative refinement.  Returns ``(a, b, None)``, or, when the matrix is
    singular, the least-squares answer if the system is consistent, else
    ``(None, None, d)`` with a direction ``d`` (``Q d = 0``, ``y'd = 0``) along which the
    objective falls linearly.
    """
    n = len(y)
    s = max(float(np.mean(np.abs(np.diag(Q)))), 1e-300)
    M = np.empty((n + 1, n + 1))
    M[:n, :n] = Q
    M[:n, n] = M[n, :n] = s * y
    M[n, n] = 0.0
    rhs = np.append(r, c * s)
    lu, piv, info = scipy.linalg.lapack.dgetrf(M)
    if info == 0:
        anorm = float(np.abs(M).sum(axis=0).max())
        rcond, _ = scipy.linalg.lapack.dgecon(lu, anorm, norm="1")
        if rcond > _RCOND:
            x, _ = scipy.linalg.lapack.dgetrs(lu, piv, rhs)
            fix, _ = scipy.linalg.lapack.dgetrs(lu, piv, rhs - M @ x)
            x += fix
            return x[:n], float(x[n] * s), None
    # Singular: least squares on the whole KKT matrix.
    x, *_ = scipy.linalg.lstsq(M, rhs, cond=1e-12, check_finite=False)
    resid = rhs - M @ x
    if np.linalg.norm(resid) <= 1e-9 * max(np.linalg.norm(rhs), 1.0):
        return x[:n], float(x[n] * s), None
    # The residual lies in the null space of M (M is symmetric): a direction of zero
    # curvature, and the objective's slope along it is -|resid|^2.
    return None, None, resid[:n]


def _pivoting(
    Q: np.ndarray, y: np.ndarray, C: float, alpha: np.ndarray, tol: float, max_steps: int
) -> tuple[np.ndarray, int, bool]:
    """Block principal pivoting (Judice & Pires; Portugal, Judice & Vicente 1994) on a
    small dense problem, from the partition of ``alpha`` into free alphas, alphas at 0 and
    alphas at C.

    Each step solves the face of the current partition (one linear system), then moves
    *every* index that breaks a condition at once: a free alpha below 0 or above C to that
    bound, a bound alpha whose multiplier has the wrong sign (it would move into the box)
    to the free set.  When that stops reducing the number of broken conditions for three
    steps, one index moves per step (the one of largest index, Murty's rule, which ends on
    positive definite problems).  A warm start needs a few steps however many alphas
    change; the primal active-set method moves one alpha per linear system.

    Returns the alphas, the linear systems solved and whether the conditions hold to
    ``tol`` (False: singular, no free alpha, or no settling within ``max_steps``).
    """
    n = len(y)
    free = (alpha > 0) & (alpha < C)
    upper = alpha >= C
    best, stalled, steps = n + 1, 0, 0
    while steps < max_steps:
        F = np.flatnonzero(free)
        if len(F) == 0:
            return alpha, steps, False
        U = np.flatnonzero(upper)
        r = np.ones(len(F))
        c = 0.0
        if len(U):
            r -= Q[np.ix_(F, U)] @ np.full(len(U), C)
            c = -float(y[U].sum()) * C
        target, b, direction = _face_solution(Q[np.ix_(F, F)], y[F], r, c)
        steps += 1
        if direction is not None:
            return alpha, steps, False
        x = np.zeros(n)
        x[U] = C
        x[F] = target
        # Multipliers of the bounds: mu_i = g_i + y_i b is >= 0 at 0 and <= 0 at C.
        mu = Q @ x - 1.0 + y * b
        scale = float(target.max(initial=0.0))
        below = F[target < -_SNAP * max(scale, 1e-300)]
        above = F[target > C * (1 + _SNAP)]
        lower = ~free & ~upper
        enter_0 = np.flatnonzero(lower & (mu < -tol / 2))
        enter_c = np.flatnonzero(upper & (mu > tol / 2))
        broken = len(below) + len(above) + len(enter_0) + len(enter_c)
        if broken == 0:
            x[F] = np.clip(target, 0.0, C)
            return x, steps, True
        if broken < best:
            best, stalled = broken, 0
        else:
            stalled += 1
        if stalled >= 3:  # Murty's rule: only the largest broken index moves
            last = max(np.concatenate([below, above, enter_0, enter_c]))
            below, above = below[below == last], above[above == last]
            enter_0, enter_c = enter_0[enter_0 == last], enter_c[enter_c == last]
        free[below] = free[above] = False
        upper[above] = True
        free[enter_0] = free[enter_c] = True
        upper[enter_c] = False
    return alpha, steps, False


def _newton(
    Q: np.ndarray, y: np.ndarray, C: float, alpha: np.ndarray, tol: float, max_steps: int
) -> tuple[np.ndarray, int, bool]:
    """Primal active-set method on a small dense problem, warm from a feasible ``alpha``.

    Returns the alphas, the linear systems solved and whether the gap fell below ``tol``
    (False: it did not settle within ``max_steps``, or the problem is unbounded; the
    caller hands it to LIBSVM).
    """
    alpha = alpha.copy()
    free = (alpha > 0) & (alpha < C)
    steps = 0
    while steps < max_steps:
        F = np.flatnonzero(free)
        if len(F) == 0:
            # No free alpha: free the pair that violates the conditions most (LIBSVM's
            # first-order pair).
            g = Q @ alpha - 1.0
            score, up, low, m, M = _violations(alpha, y, g, C)
            if m - M < tol:
                return alpha, steps, True
            free[np.flatnonzero(up)[np.argmax(score[up])]] = True
            free[np.flatnonzero(low)[np.argmin(score[low])]] = True
            continue
        U = np.flatnonzero(alpha >= C)
        r = np.ones(len(F))
        c = 0.0
        if len(U):
            r -= Q[np.ix_(F, U)] @ alpha[U]
            c = -float(y[U] @ alpha[U])
        target, _, direction = _face_solution(Q[np.ix_(F, F)], y[F], r, c)
        steps += 1
        if direction is None:
            move, t = target - alpha[F], 1.0
        else:
            move, t = direction, math.inf
        # Ratio test: the longest step (up to t) that keeps every free alpha in [0, C].
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios = np.minimum(
                np.where(move < 0, alpha[F] / -move, math.inf),
                np.where(move > 0, (C - alpha[F]) / move, math.inf),
            )
        k = int(np.argmin(ratios))
        blocked = ratios[k] < t
        if blocked:
            t = float(ratios[k])
        if not math.isfinite(t):
            return alpha, steps, False  # unbounded: no C and the classes overlap
        alpha[F] += t * move
        if blocked:
            alpha[F[k]] = 0.0 if move[k] < 0 else C
            free[F[k]] = False
            continue
        # Alphas that the system put on a bound up to rounding are on it.
        at_c = F[alpha[F] >= C * (1 - _SNAP)]
        at_0 = F[alpha[F] <= _SNAP * float(alpha[F].max())]
        alpha[at_c], alpha[at_0] = C, 0.0
        free[at_c] = free[at_0] = False
        g = Q @ alpha - 1.0
        score, up, low, m, M = _violations(alpha, y, g, C)
        if m - M < tol:
            return alpha, steps, True
        limit = max(_ADD_MIN, int(_ADD_FRACTION * len(F)))
        new = _worst(score, up, low, m, M, tol, limit, ~free)
        if len(new) == 0:
            return alpha, steps, False  # the violation is among the free alphas: rounding
        free[new] = True
    return alpha, steps, False


def _libsvm(K: np.ndarray, y: np.ndarray, C: float, tol: float, max_iter: int):
    """LIBSVM on a precomputed working-set kernel: the alphas, its iterations and its
    intercept and support (in its order: by class)."""
    bound = max_iter if 0 < max_iter < 2**31 - 1 else -1  # LIBSVM counts in a C int
    svc = SVC(kernel="precomputed", C=C, tol=tol, cache_size=200, max_iter=bound)
    svc.fit(K, y)
    alpha = np.zeros(len(y))
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    return alpha, int(svc.n_iter_[0]), (float(svc.intercept_[0]), svc.support_)


# -- the solver ---------------------------------------------------------------------------
def _balanced_sample(y: np.ndarray, size: int) -> np.ndarray:
    """``size`` indices, as many of each class as there are up to half (seeded: the same
    problem gets the same sample)."""
    rng = np.random.default_rng(0)
    pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    take_p = min(len(pos), max(size // 2, size - len(neg)))
    take_n = min(len(neg), size - take_p)
    return np.sort(np.concatenate([rng.choice(pos, take_p, False), rng.choice(neg, take_n, False)]))


def _checked(K: Any, y: Any, C: float, tol: float) -> tuple[KernelColumns, np.ndarray, float]:
    """The kernel's columns, the labels as floats and C, checked (ValueError)."""
    cols = K if isinstance(K, KernelColumns) else KernelColumns(K)
    y = np.asarray(y, dtype=np.float64).ravel()
    if cols.n != len(y):
        raise ValueError(f"the kernel has {cols.n} points but y has {len(y)} labels")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("y must hold the labels -1 and +1 only")
    if not (y > 0).any() or not (y < 0).any():
        only = "+1" if (y > 0).any() else "-1"
        raise ValueError(
            f"solve_dual needs both classes, but every label is {only}: an SVM cannot "
            "separate one class from nothing"
        )
    C = float(C)
    if not (C > 0 and math.isfinite(C)):
        raise ValueError(f"C must be a finite number above 0 (1e10 for a hard margin), got {C!r}")
    if not tol > 0:
        raise ValueError(f"tol must be greater than 0, got {tol!r}")
    return cols, y, C


def _cold_start(cols: KernelColumns, y: np.ndarray, C: float, tol: float, max_iter: int):
    """LIBSVM from alpha = 0: on every point when there are few (its answer is then
    LIBSVM's own: ``whole``), else on a balanced sample, which the solver's rounds
    complete.  Returns the alphas, LIBSVM's iterations, ``whole`` and its
    ``(intercept, support)``."""
    n = len(y)
    if n <= _COLD_WORKING_SET:
        W, KW, whole = np.arange(n), cols.whole(), True
    else:
        W = _balanced_sample(y, _COLD_WORKING_SET)
        KW = cols.square(W)  # whole columns only for the support vectors, later
        whole = False
    sub, its, libsvm = _libsvm(KW, y[W], C, tol, max_iter)
    alpha = np.zeros(n)
    alpha[W] = sub
    return alpha, its, whole, libsvm


def solve_dual(
    K: np.ndarray | KernelColumns,
    y: Any,
    C: float,
    *,
    alpha0: Any = None,
    tol: float = 1e-3,
    exact: bool = False,
    max_iter: int = 10**6,
    rescale: bool = True,
    newton: bool = True,
) -> DualSolution:
    """Solve the SVM dual, from ``alpha0`` when given.

    Parameters
    ----------
    K : ndarray (n, n) or KernelColumns
        The kernel matrix, or its columns on demand.
    y : array-like (n,)
        Labels -1 and +1, both present.
    C : float
        Upper bound on every alpha, finite (a huge C such as 1e10 is a hard margin).
    alpha0 : array-like (n,), optional
        A start (e.g. the previous solve's alphas); it is made feasible by
        :func:`start_alpha`.  None (or all zeros) is a cold start.
    tol : float, default=1e-3
        Stop when LIBSVM's KKT gap ``max_up(-y g) - min_low(-y g)`` is below ``tol``
        (``SVC``'s ``tol``).  A cold start on at most 2,048 points is LIBSVM's own solve
        at this tolerance, returned as it is (unless ``exact``).
    exact : bool, default=False
        Go on to the exact optimum (a gap below 1e-9 of the scores' scale, to rounding),
        so that the answer does not depend on the start: two solves of one problem from
        different starts then agree to rounding, where two stopped at ``tol`` differ by
        up to what ``tol`` allows (about 1e-3 of the alphas).
    max_iter : int, default=1,000,000
        Bound on the iterations (linear systems plus LIBSVM's iterations).
    rescale : bool, default=True
        Scale a warm start by the factor that maximises the dual along it first (the
        kernel's scale moves with the filter's norm, and the alphas with it).
    newton : bool, default=True
        Solve working sets by Newton steps on their faces (False: LIBSVM alone).

    The solve's own algebra runs on one BLAS thread (:func:`one_blas_thread`); the
    kernel's products on the threads a :class:`KernelColumns` was given.

    Returns
    -------
    DualSolution

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [1.0, 2.0], [2.0, 0.0], [3.0, 1.0]])
    >>> y = np.array([-1, -1, 1, 1])
    >>> sol = solve_dual(X @ X.T, y, C=1e10, tol=1e-9)  # cold: LIBSVM
    >>> np.round(sol.alpha, 6), round(sol.b, 6)
    (array([0.375, 0.25 , 0.625, 0.   ]), -1.0)
    >>> solve_dual(X @ X.T, y, C=1e10, alpha0=sol.alpha, tol=1e-9).iterations  # at the optimum
    0
    >>> warm = solve_dual(X @ X.T, y, C=1e10, alpha0=[1, 1, 1, 1], tol=1e-9)
    >>> np.round(warm.alpha, 6), warm.iterations  # three linear systems
    (array([0.375, 0.25 , 0.625, 0.   ]), 3)
    """
    with one_blas_thread():
        return _solve_dual(K, y, C, alpha0, tol, exact, max_iter, rescale, newton)


def _solve_dual(K, y, C, alpha0, tol, exact, max_iter, rescale, newton) -> DualSolution:
    cols, y, C = _checked(K, y, C, tol)
    n = len(y)
    alpha = np.zeros(n) if alpha0 is None else start_alpha(alpha0, y, C)
    cold = not alpha.any()
    iterations = rounds = libsvm_calls = 0

    def gradient(alpha):
        """``g = Q alpha - 1`` over every point, and the support set."""
        S = np.flatnonzero(alpha > 0)
        if len(S) == 0:
            return -np.ones(n), S
        return y * cols.times(S, alpha[S] * y[S]) - 1.0, S

    whole, libsvm_b, libsvm_support = False, 0.0, None
    if cold:
        alpha, its, whole, (libsvm_b, libsvm_support) = _cold_start(cols, y, C, tol, max_iter)
        iterations += its
        rounds += 1
        libsvm_calls += 1
    elif rescale:
        S = np.flatnonzero(alpha > 0)
        a = alpha[S] * y[S]
        alpha *= _rescale(alpha, float(a @ cols.block(S, S) @ a), C)

    g, S = gradient(alpha)
    score, up, low, m, M = _violations(alpha, y, g, C)
    target = tol
    if exact:
        target = min(tol, _EXACT * max(1.0, float(np.max(np.abs(score[S]), initial=1.0))))
    elif whole:
        target = math.inf  # LIBSVM's answer on every point stands
    while m - M >= target and iterations < max_iter:
        # The working set: the support vectors and the worst violators outside them.
        limit = max(_ADD_MIN, int(_ADD_FRACTION * len(S)))
        new = _worst(score, up, low, m, M, target, limit, alpha == 0)
        W = np.union1d(S, new)
        KW = cols.block(W, W)
        done = False
        if newton:
            QW = (y[W, None] * KW) * y[None, W]
            sub, steps, done = _pivoting(QW, y[W], C, alpha[W], target, 50 + len(W))
            iterations += steps
            if not done:  # the primal active-set method: slower, but it descends
                sub, steps, done = _newton(QW, y[W], C, alpha[W], target, 50 + 2 * len(W))
                iterations += steps
        if not done:
            sub, its, _ = _libsvm(KW, y[W], C, target, max(1, max_iter - iterations))
            iterations += its
            libsvm_calls += 1
        rounds += 1
        previous = m - M
        alpha = np.zeros(n)
        alpha[W] = sub
        g, S = gradient(alpha)
        score, up, low, m, M = _violations(alpha, y, g, C)
        if len(new) == 0 and m - M >= previous:
            break  # nothing left to add and no progress: rounding
    converged = m - M < tol or (whole and iterations < max_iter)
    # LIBSVM's answer on every point stands as it is, intercept included.
    whole = whole and rounds == 1
    # The support vectors' columns (in LIBSVM's order when its answer stands).
    KS = cols.rows(libsvm_support if whole else S).T
    return DualSolution(
        alpha=alpha,
        b=libsvm_b if whole else _intercept(alpha, y, g, C),
        order=libsvm_support if whole else None,
        objective=float(alpha.sum() - 0.5 * alpha @ (g + 1.0)),
        gap=float(m - M),
        converged=bool(converged),
        iterations=iterations,
        rounds=rounds,
        libsvm_calls=libsvm_calls,
        hit_max_iter=bool(iterations >= max_iter and not converged),
        support_columns=KS,
    )
