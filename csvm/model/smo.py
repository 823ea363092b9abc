"""Sequential Minimal Optimisation (Platt 1998), one pair of alphas at a time.

The solver is LIBSVM's (Fan, Chen and Lin 2005): the dual

    max_alpha  W(alpha) = sum_i alpha_i - 1/2 sum_ij alpha_i alpha_j y_i y_j K_ij
    subject to 0 <= alpha_i <= C,  sum_i alpha_i y_i = 0

is solved by updating two alphas per step.  The pair is chosen by second-order working-set
selection: ``i`` is the most violating index of the "up" set, ``j`` the index of the "low"
set whose update would raise W the most.  The solver stops when the KKT violation gap
``max_up(-y G) - min_low(-y G)`` falls below ``tol``, where ``G`` is the gradient of
``-W``.  The intercept is LIBSVM's: the mean over free support vectors (``0 < alpha < C``),
else the middle of the feasible interval.

Every step is a few vectorised O(n) operations on a precomputed kernel matrix, so the
estimator is meant for small problems (a few thousand points at most), where watching the
solver is the point.  ``C=None`` is the hard margin (no upper bound on alpha); on data that
the kernel cannot separate the alphas then grow without bound and the solver stops at
``max_iter`` with a warning.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from csvm.exceptions import SVMIterationWarning
from csvm.model._sklearn import Interval, StrOptions
from csvm.model.validation import Whole, as_rows

__all__ = [
    "SMO",
    "SMOStep",
    "kernel_matrix",
]

#: LIBSVM's substitute for a non-positive curvature ``K_ii + K_jj - 2 K_ij``.
TAU = 1e-12
KERNELS = ("linear", "poly", "rbf", "precomputed")


def kernel_matrix(
    A: np.ndarray, B: np.ndarray, kernel: str, gamma: float, degree: int, coef0: float
) -> np.ndarray:
    """The kernel between the rows of ``A`` and of ``B`` (scikit-learn's definitions).

    linear: ``a . b``; poly: ``(gamma a . b + coef0) ** degree``;
    rbf: ``exp(-gamma ||a - b||^2)``; precomputed: ``A`` is already the kernel.
    """
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
    if kernel == "precomputed":
        return A
    # scikit-learn's own kernels, the SVM this solver is compared with.  It zeroes the
    # distance of a point to itself only when told the two sets are one (B None), so equal
    # copies (the training points, permuted) are told so: the diagonal never hangs on
    # whether the caller passed one array twice or two copies.
    same = B is A or (A.shape == B.shape and np.array_equal(A, B))
    return pairwise_kernels(
        A,
        None if same else B,
        metric=kernel,
        filter_params=True,
        gamma=gamma,
        degree=degree,
        coef0=coef0,
    )


@dataclass(frozen=True)
class SMOStep:
    """The state after one SMO update (or the start, where ``i = j = -1``).

    Attributes
    ----------
    step : int
        How many pairs have been updated (0 for the start).
    i, j : int
        The two training indices whose alphas this step changed.
    alpha : ndarray of shape (n_samples,)
        A copy of every alpha after the step.
    b : float
        The intercept for these alphas (LIBSVM's rule).
    dual_objective : float
        ``W(alpha)``, which SMO raises at every step.
    kkt_gap : float
        ``max_up(-y G) - min_low(-y G)`` after the step; SMO stops below ``tol``.
    """

    step: int
    i: int
    j: int
    alpha: np.ndarray
    b: float
    dual_objective: float
    kkt_gap: float


class _Solver:
    """The SMO state for one problem: alphas, the gradient ``G = Q alpha - 1``."""

    def __init__(self, K: np.ndarray, y: np.ndarray, C: float):
        self.K, self.y, self.C = K, y, C
        self.diag = np.diag(K).copy()
        self.alpha = np.zeros(len(y))
        self.G = -np.ones(len(y))

    def _sets(self) -> tuple[np.ndarray, np.ndarray]:
        pos, a = self.y > 0, self.alpha
        below_c, above_0 = a < self.C, a > 0
        up = (pos & below_c) | (~pos & above_0)
        low = (pos & above_0) | (~pos & below_c)
        return up, low

    def select(self) -> tuple[int, int, float]:
        """The working pair and the KKT gap; ``i = -1`` when no pair can improve W."""
        up, low = self._sets()
        if not up.any() or not low.any():
            return -1, -1, 0.0
        score = -self.y * self.G
        s_up = np.where(up, score, -np.inf)
        i = len(score) - 1 - int(np.argmax(s_up[::-1]))  # LIBSVM keeps the last maximum
        gmax = s_up[i]
        gap = float(gmax - np.min(score[low]))
        grad_diff = gmax - score
        cand = low & (grad_diff > 0)
        if not cand.any():
            return -1, -1, gap
        curv = self.diag[i] + self.diag - 2.0 * self.K[i]
        curv = np.where(curv > 0, curv, TAU)
        gain = np.where(cand, -(grad_diff * grad_diff) / curv, np.inf)
        j = len(gain) - 1 - int(np.argmin(gain[::-1]))
        return i, j, gap

    def update(self, i: int, j: int) -> None:
        """LIBSVM's analytic two-variable step, clipped to the box."""
        a, y, K, C = self.alpha, self.y, self.K, self.C
        old_i, old_j = float(a[i]), float(a[j])
        curv = self.diag[i] + self.diag[j] - 2.0 * K[i, j]
        curv = curv if curv > 0 else TAU
        if y[i] != y[j]:
            delta = (-self.G[i] - self.G[j]) / curv
            diff = old_i - old_j
            ai, aj = old_i + delta, old_j + delta
            if diff > 0 and aj < 0:
                ai, aj = diff, 0.0
            elif diff <= 0 and ai < 0:
                ai, aj = 0.0, -diff
            if diff > 0 and ai > C:
                ai, aj = C, C - diff
            elif diff <= 0 and aj > C:
                ai, aj = C + diff, C
        else:
            delta = (self.G[i] - self.G[j]) / curv
            total = old_i + old_j
            ai, aj = old_i - delta, old_j + delta
            if total > C and ai > C:
                ai, aj = C, total - C
            elif total <= C and aj < 0:
                ai, aj = total, 0.0
            if total > C and aj > C:
                ai, aj = total - C, C
            elif total <= C and ai < 0:
                ai, aj = 0.0, total
        a[i], a[j] = ai, aj
        self.G += y * (K[i] * (y[i] * (ai - old_i)) + K[j] * (y[j] * (aj - old_j)))

    def intercept(self) -> float:
        """``b = -rho`` as LIBSVM computes it from the gradient."""
        y, a, yG = self.y, self.alpha, self.y * self.G
        at_c, at_0 = a >= self.C, a <= 0
        free = ~at_c & ~at_0
        if free.any():
            return -float(np.mean(yG[free]))
        pos = y > 0
        upper = (at_c & ~pos) | (at_0 & pos)  # bounds on rho from above
        lower = (at_c & pos) | (at_0 & ~pos)
        ub = float(np.min(yG[upper])) if upper.any() else math.inf
        lb = float(np.max(yG[lower])) if lower.any() else -math.inf
        return -(ub + lb) / 2.0

    def dual_objective(self) -> float:
        """``W(alpha) = sum(alpha) - 1/2 alpha' Q alpha``, using ``Q alpha = G + 1``."""
        return float(0.5 * np.sum(self.alpha) - 0.5 * self.alpha @ self.G)


class SMO(ClassifierMixin, BaseEstimator):
    """A two-class kernel SVM trained by SMO, with every step open to inspection.

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf", "precomputed"}, default="rbf"
        The kernel (scikit-learn's definitions, see :func:`kernel_matrix`).  With
        "precomputed", ``fit`` takes the (n, n) kernel matrix and ``decision_function``
        the (m, n) kernel between new points and the training points, as ``SVC``.
    C : float or None, default=1.0
        Upper bound on every alpha; ``None`` is the hard margin (no bound).
    gamma : float, default=1.0
        Kernel scale of "poly" and "rbf".
    degree : int, default=3
        Degree of "poly".
    coef0 : float, default=0.0
        Constant term of "poly".
    tol : float, default=1e-3
        Stop when the KKT violation gap is below this (LIBSVM's ``eps``).
    max_iter : int, default=100_000
        At most this many pair updates; reaching it warns (``SVMIterationWarning``).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the positive class (+1), as in ``SVC``.
    alpha_ : ndarray of shape (n_samples,)
        One dual variable per training point.
    intercept_ : float
        The bias ``b`` of ``f(x) = sum_i alpha_i y_i K(x_i, x) + b``.
    support_ : ndarray of int
        Indices of the support vectors (``alpha > 0``).
    support_vectors_ : ndarray of shape (n_SV, n_features)
        The support vectors.
    dual_coef_ : ndarray of shape (1, n_SV)
        ``alpha_i y_i`` of the support vectors (as ``SVC.dual_coef_``).
    dual_objective_ : float
        ``W(alpha)`` at the solution.
    kkt_gap_ : float
        The KKT violation gap at the solution.
    n_iter_ : int
        Number of pair updates.
    converged_ : bool
        Whether the gap fell below ``tol`` within ``max_iter`` updates.

    Examples
    --------
    >>> import numpy as np
    >>> from csvm.model.smo import SMO
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [2.0, 0.0], [2.0, 1.0]])
    >>> y = np.array([-1, -1, 1, 1])
    >>> clf = SMO(kernel="linear", C=None).fit(X, y)
    >>> clf.predict([[0.2, 0.5], [1.8, 0.5]])
    array([-1,  1])
    >>> abs(float(clf.decision_function([[1.0, 0.3]])[0])) < 1e-9  # on the boundary
    True
    >>> clf.margin_width_  # the gap between the classes
    2.0
    >>> steps = list(SMO(kernel="linear", C=None).iter_steps(X, y))
    >>> steps[-1].kkt_gap < 1e-3
    True
    """

    _parameter_constraints: dict = {
        "kernel": [StrOptions(set(KERNELS))],
        "C": [None, Interval(Real, 0, None, closed="neither")],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "degree": [Whole(1, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Whole(1, None, closed="left")],
    }

    def __init__(
        self,
        *,
        kernel: str = "rbf",
        C: float | None = 1.0,
        gamma: float = 1.0,
        degree: int = 3,
        coef0: float = 0.0,
        tol: float = 1e-3,
        max_iter: int = 100_000,
    ):
        self.kernel = kernel
        self.C = C
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.tol = tol
        self.max_iter = max_iter

    # -- fitting ---------------------------------------------------------------------------
    def _kernel(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        return kernel_matrix(
            A, B, self.kernel, float(self.gamma), int(self.degree), float(self.coef0)
        )

    def _start(self, X, y) -> tuple[np.ndarray, np.ndarray, _Solver, np.ndarray]:
        """Validate, map the labels to +-1 and build the solver.

        The solver sees the points in LIBSVM's order and sign convention (scikit-learn's
        LIBSVM groups the points by class, ``classes_[0]`` first, and solves with that
        class as +1), so that it takes LIBSVM's path pair for pair: the first steps break
        ties between equal gradients by position.  ``perm`` maps solver positions back.
        """
        # scikit-learn's checks and messages ("The 'C' parameter of SMO must be ...").
        self._validate_params()
        X, y = validate_data(self, as_rows(X), y, dtype=np.float64)
        if self.kernel == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(f"a precomputed kernel must be square, got {X.shape}")
        check_classification_targets(y)
        classes = np.unique(y)
        if len(classes) != 2:
            # The first sentence is scikit-learn's, which its estimator checks look for.
            raise ValueError(
                "Only binary classification is supported. "
                f"SMO is a two-class classifier; y has {len(classes)} classes "
                f"({', '.join(map(str, classes[:5]))}{', ...' if len(classes) > 5 else ''}): "
                "give labels of two classes (for more, wrap it in sklearn's OneVsOneClassifier)"
            )
        self.classes_ = classes
        y_pm = np.where(y == self.classes_[1], 1.0, -1.0)
        perm = np.concatenate([np.flatnonzero(y_pm < 0), np.flatnonzero(y_pm > 0)])
        if self.kernel == "precomputed":
            K = X[np.ix_(perm, perm)]
        else:
            K = self._kernel(X[perm], X[perm])
        C = math.inf if self.C is None else float(self.C)
        return X, y_pm, _Solver(K, -y_pm[perm], C), perm

    @staticmethod
    def _alpha(solver: _Solver, perm: np.ndarray) -> np.ndarray:
        alpha = np.empty_like(solver.alpha)
        alpha[perm] = solver.alpha
        return alpha

    def _record(self, solver, perm, step: int, i: int, j: int, gap: float) -> SMOStep:
        """The state in the caller's order and sign (``b`` flips with the labels)."""
        pair = (int(perm[i]), int(perm[j])) if i >= 0 else (-1, -1)
        alpha = self._alpha(solver, perm)
        return SMOStep(step, *pair, alpha, -solver.intercept(), solver.dual_objective(), gap)

    def _finish(self, X, y_pm, solver: _Solver, perm, n_iter: int, gap: float) -> None:
        self.alpha_ = self._alpha(solver, perm)
        self.intercept_ = -solver.intercept()
        self.support_ = np.flatnonzero(self.alpha_ > 0)
        self.support_vectors_ = X[self.support_]
        self.dual_coef_ = (self.alpha_ * y_pm)[self.support_][None, :]
        self.dual_objective_ = solver.dual_objective()
        self.kkt_gap_ = gap
        self.n_iter_ = n_iter
        self.converged_ = gap < self.tol
        if not self.converged_ and n_iter >= self.max_iter:
            hint = " (hard margin: are the classes separable?)" if self.C is None else ""
            warnings.warn(
                f"SMO stopped after max_iter={self.max_iter} updates with KKT gap "
                f"{gap:.3g} > tol={self.tol:g}{hint}",
                SVMIterationWarning,
                stacklevel=3,
            )

    def _run(self, X, y, record: bool, include_start: bool = False) -> Iterator[SMOStep]:
        X, y_pm, solver, perm = self._start(X, y)
        i, j, gap = solver.select()
        if include_start:
            yield self._record(solver, perm, 0, -1, -1, gap)
        n_iter = 0
        while i >= 0 and gap >= self.tol and n_iter < self.max_iter:
            solver.update(i, j)
            n_iter += 1
            pair = (i, j)
            i, j, gap = solver.select()
            if record:
                yield self._record(solver, perm, n_iter, *pair, gap)
        self._finish(X, y_pm, solver, perm, n_iter, gap)

    def fit(self, X, y) -> SMO:
        """Solve the dual on ``(X, y)``; any two labels (mapped to -1, +1 as ``SVC`` does).

        Parameters
        ----------
        X : array-like of shape (n, n_features), or images (flattened)
            The training points; with ``kernel="precomputed"`` the (n, n) kernel matrix.
        y : array-like of shape (n,)
            Two labels.

        Returns
        -------
        self : SMO
        """
        for _ in self._run(X, y, record=False):
            pass
        return self

    def iter_steps(self, X, y, include_start: bool = False) -> Iterator[SMOStep]:
        """Fit, yielding an :class:`SMOStep` after every pair update.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or images (flattened)
        y : array-like of shape (n_samples,)
            Two labels.
        include_start : bool, default=False
            Yield the starting state (all alphas 0, ``i = j = -1``) first.

        Yields
        ------
        SMOStep
            The pair, a copy of alpha, b, W(alpha) and the KKT gap after each update.
            Once the generator is exhausted the estimator is fitted.
        """
        yield from self._run(X, y, record=True, include_start=include_start)

    # -- prediction ------------------------------------------------------------------------
    def decision_function(self, X) -> np.ndarray:
        """``f(x) = sum_i alpha_i y_i K(x_i, x) + b``; positive means ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n, n_features), or images (flattened)
            As ``fit`` took them.

        Returns
        -------
        ndarray of shape (n,)
        """
        check_is_fitted(self, "alpha_")
        X = validate_data(self, as_rows(X), dtype=np.float64, reset=False)
        if len(self.support_) == 0:
            return np.full(len(X), self.intercept_)
        if self.kernel == "precomputed":
            return X[:, self.support_] @ self.dual_coef_[0] + self.intercept_
        return self._kernel(X, self.support_vectors_) @ self.dual_coef_[0] + self.intercept_

    def predict(self, X) -> np.ndarray:
        """The label of each row of ``X``.

        Parameters
        ----------
        X : array-like of shape (n, n_features), or images (flattened)
            As ``fit`` took them.

        Returns
        -------
        ndarray of shape (n,)
            The predicted class of each image (one of ``classes_``).
        """
        check_is_fitted(self, "alpha_")  # before classes_: NotFittedError, not AttributeError
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Two classes only: scikit-learn's checks then train it on two-class data.
        tags.classifier_tags.multi_class = False
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    @property
    def coef_(self) -> np.ndarray:
        """``w = sum_i alpha_i y_i x_i`` (linear kernel only)."""
        check_is_fitted(self, "alpha_")
        if self.kernel != "linear":
            raise AttributeError("coef_ exists only for kernel='linear'")
        return self.dual_coef_ @ self.support_vectors_

    @property
    def margin_width_(self) -> float:
        """``2 / ||w||``, the width of the margin (linear kernel only)."""
        norm = float(np.linalg.norm(self.coef_))
        return math.inf if norm == 0 else 2.0 / norm
