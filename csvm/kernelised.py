"""K-CSVM: a kernel SVM on learned convolutional feature maps (thesis Algorithm 5, GMKL).

Each iteration builds the kernel of the current feature maps, solves the SVM dual with
LIBSVM (``SVC(kernel="precomputed")``; erratum 4), records the outer objective

    T(f) = sum(alpha) - 1/2 a^T K a + r(f)

and moves the filter against ``dT/df = dr/df - 1/2 sum_ij a_i a_j dK_ij/df`` (Danskin: the
optimal alpha is held fixed while differentiating).  Step rules: a constant eta (with
heavy-ball or Nesterov momentum), or Armijo backtracking on T, as Varma & Babu's GMKL does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

import numpy as np
from sklearn.svm import SVC

from csvm.conv import correlate
from csvm.events import Recorder
from csvm.exceptions import DivergenceError
from csvm.kernels import check_kernel, kernel_gradient, kernel_matrix
from csvm.multiclass import BaseCSVM
from csvm.regularisers import check_regulariser, regulariser_gradient, regulariser_value

__all__ = ["KernelCSVM", "outer_objective"]

#: The C that stands for "no upper bound on alpha" (erratum 5): LIBSVM needs a number.
HARD_MARGIN_C = 1e10
#: Sufficient-decrease constant of the Armijo rule.
_ARMIJO_C = 1e-4
_MAX_BACKTRACKS = 20
#: Consecutive rises of T under a constant step that count as divergence.
_RISING_PATIENCE = 4


@dataclass
class _KernelState:
    """One solved SVM at one filter: everything needed to predict and to step."""

    filters: np.ndarray  # (k, C, p, q) float64
    support: np.ndarray
    dual_coef: np.ndarray  # a_i = alpha_i y_i of the support vectors
    intercept: float
    Z_sv: np.ndarray  # (s, k, H', W') float32 feature maps of the support vectors
    K_sv: np.ndarray = field(repr=False)  # kernel among the support vectors
    objective: float
    terms: dict[str, float]
    train_accuracy: float
    kernel_params: dict[str, Any] = field(repr=False, default_factory=dict)

    def decision_function(self, X4: np.ndarray) -> np.ndarray:
        n = len(X4)
        out = np.empty(n)
        # Chunks keep the (chunk x n_sv) test kernel small for large test sets.
        for start in range(0, n, 2048):
            # float64 here: predictions must not depend on how the rows are batched.
            Z = correlate(X4[start : start + 2048], self.filters.astype(np.float64))
            K = kernel_matrix(
                Z.reshape(len(Z), -1),
                self.Z_sv.reshape(len(self.Z_sv), -1).astype(np.float64),
                **self.kernel_params,
            )
            out[start : start + 2048] = K @ self.dual_coef + self.intercept
        return out


def outer_objective(
    X4: np.ndarray,
    y: np.ndarray,
    filters: np.ndarray,
    *,
    kernel: str = "poly",
    degree: float = 2,
    gamma: float = 1.0,
    coef0: float = 1.0,
    C: float | None = None,
    regulariser: str = "dfo1",
    lam: float = 0.01,
    svm_tol: float = 1e-3,
) -> tuple[float, np.ndarray]:
    """T(f) at the SVM optimum and its gradient, for one binary problem.

    Parameters
    ----------
    X4 : array (n, C, H, W)
    y : array (n,) of +-1
    filters : array (k, C, p, q)

    Returns
    -------
    objective : float
    gradient : array like ``filters``
    """
    params = {"kernel": kernel, "degree": degree, "gamma": gamma, "coef0": coef0}
    state, _ = _solve(
        X4,
        y,
        np.asarray(filters, dtype=np.float64),
        params,
        HARD_MARGIN_C if C is None else C,
        regulariser,
        lam,
        svm_tol,
    )
    grad = _gradient(X4, state, params, regulariser, lam)
    return state.objective, grad


def _solve(X4, y, filters, params, C, regulariser, lam, svm_tol, K_buffer=None):
    """Kernel + SVM at ``filters``: the solved state and the timings.

    ``K_buffer`` (n x n float64) is overwritten with the training kernel; the state keeps
    only the support vectors' block, so line-search trials never hold two n x n kernels.
    """
    t0 = time.perf_counter()
    Z = correlate(X4, filters.astype(X4.dtype))
    K = kernel_matrix(Z.reshape(len(Z), -1), out=K_buffer, **params)
    t1 = time.perf_counter()
    svc = SVC(kernel="precomputed", C=C, tol=svm_tol, cache_size=200)
    svc.fit(K, y)
    t2 = time.perf_counter()
    support = svc.support_
    a = svc.dual_coef_[0].astype(np.float64)
    K_ss = K[np.ix_(support, support)]
    sum_alpha = float(np.abs(a).sum())
    margin = 0.5 * float(a @ K_ss @ a)
    reg = regulariser_value(regulariser, filters, lam)
    decision = K[:, support] @ a + svc.intercept_[0]
    state = _KernelState(
        filters=filters,
        support=support,
        dual_coef=a,
        intercept=float(svc.intercept_[0]),
        Z_sv=Z[support],
        K_sv=K_ss,
        objective=sum_alpha - margin + reg,
        terms={"sum_alpha": sum_alpha, "margin_term": margin, "regulariser": reg},
        train_accuracy=float(np.mean(np.where(decision > 0, 1, -1) == y)),
        kernel_params=dict(params),
    )
    return state, {"kernel": t1 - t0, "svm": t2 - t1}


def _gradient(X4, state, params, regulariser, lam):
    quad = kernel_gradient(
        X4[state.support],
        state.Z_sv,
        state.dual_coef,
        state.filters.shape[-2:],
        K_sv=state.K_sv,
        **params,
    )
    return regulariser_gradient(regulariser, state.filters, lam) - 0.5 * quad


class KernelCSVM(BaseCSVM):
    """Kernelised convolutional SVM (K-CSVM, thesis Algorithm 5).

    Parameters
    ----------
    image_shape : tuple (H, W) or (C, H, W), or None
        Shape of one image; None infers it from 3-D/4-D input (2-D input is then one
        row of pixels).
    filter_shape : tuple (p, q)
        Size of each learned filter.
    n_filters : int
        Number of filters; their maps are concatenated (thesis eq. 4.12).
    kernel : {"poly", "rbf", "linear"}
    degree, gamma, coef0 : float
        Polynomial ``(gamma z.z' + coef0)^degree``; RBF ``exp(-gamma ||z - z'||^2)``.
    C : float or None
        Upper bound on alpha; None means no bound (hard margin in practice).
    C_last_only : bool
        Train without a bound and apply ``C`` only on the last iteration (the thesis's
        CIFAR-10 schedule).
    regulariser : {"none", "l1", "l2", "l1sq", "l2sq", "dfo1", "dfo2"}
    lam : float
        Regularisation strength (>= 0).
    eta : float
        Step size (>= 0; 0 keeps the first filter); the first trial step (> 0) for
        ``step="armijo"``.
    n_iter : int
        Number of SVM solves (the filter moves between consecutive solves).
    step : {"constant", "armijo"}
        Constant step, or backtracking until T decreases sufficiently.
    momentum : float in [0, 1)
        Heavy-ball momentum for constant steps.
    nesterov : bool
        Use Nesterov's accelerated form of the momentum.
    tol : float
        Stop early when T changes by less than ``tol`` relative to its size.
    multi_class : {"ovo", "ovr"}
        One filter set per pair of classes (the thesis) or per class against the rest.
    n_jobs : int or None
        Sub-problems trained in parallel (threads).
    svm_tol : float
        LIBSVM's stopping tolerance.
    random_state : int, RandomState or None
        Seeds the random first filters.

    Attributes
    ----------
    classes_, filters_ (n_classifiers, n_filters, p, q), history_, estimators_,
    support_, dual_coef_, n_support_, intercept_, pairs_ (see BaseCSVM), n_features_in_,
    stopped_.
    """

    _model_name = "kcsvm"

    def __init__(
        self,
        image_shape: tuple[int, ...] | None = (28, 28),
        filter_shape: tuple[int, int] = (5, 5),
        n_filters: int = 1,
        kernel: str = "poly",
        degree: float = 2,
        gamma: float = 1.0,
        coef0: float = 1.0,
        C: float | None = None,
        C_last_only: bool = False,
        regulariser: str = "dfo1",
        lam: float = 0.01,
        eta: float = 0.1,
        n_iter: int = 25,
        step: str = "constant",
        momentum: float = 0.0,
        nesterov: bool = False,
        tol: float = 0.0,
        multi_class: str = "ovo",
        n_jobs: int | None = None,
        svm_tol: float = 1e-3,
        random_state: int | np.random.RandomState | None = None,
    ):
        self.image_shape = image_shape
        self.filter_shape = filter_shape
        self.n_filters = n_filters
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.C = C
        self.C_last_only = C_last_only
        self.regulariser = regulariser
        self.lam = lam
        self.eta = eta
        self.n_iter = n_iter
        self.step = step
        self.momentum = momentum
        self.nesterov = nesterov
        self.tol = tol
        self.multi_class = multi_class
        self.n_jobs = n_jobs
        self.svm_tol = svm_tol
        self.random_state = random_state

    def _check_params(self) -> None:
        check_kernel(self.kernel)
        check_regulariser(self.regulariser)
        self._check_positive("lam", self.lam, allow_zero=True)
        # eta = 0 freezes the first filter (an SVM on a random filter, a useful baseline).
        self._check_positive("eta", self.eta, allow_zero=self.step == "constant")
        self._check_positive("gamma", self.gamma, allow_zero=False)
        self._check_positive("svm_tol", self.svm_tol, allow_zero=False)
        self._check_positive("tol", self.tol, allow_zero=True)
        if self.kernel == "poly" and not (isinstance(self.degree, Real) and self.degree >= 1):
            raise ValueError(f"degree must be at least 1, got {self.degree!r}.")
        if not isinstance(self.coef0, Real) or not np.isfinite(self.coef0):
            raise ValueError(f"coef0 must be a finite number, got {self.coef0!r}.")
        if self.C is not None:
            self._check_positive("C", self.C, allow_zero=False)
        if self.step not in ("constant", "armijo"):
            raise ValueError(f"step must be 'constant' or 'armijo', got {self.step!r}.")
        if not (isinstance(self.momentum, Real) and 0 <= self.momentum < 1):
            raise ValueError(f"momentum must be in [0, 1), got {self.momentum!r}.")

    def _C_at(self, iteration: int) -> float:
        if self.C is None:
            return HARD_MARGIN_C
        if self.C_last_only and iteration < self.n_iter - 1:
            return HARD_MARGIN_C
        return float(self.C)

    def _fit_binary(
        self, X4: np.ndarray, y: np.ndarray, rng: np.random.Generator, recorder: Recorder
    ) -> _KernelState:
        params = {
            "kernel": self.kernel,
            "degree": self.degree,
            "gamma": float(self.gamma),
            "coef0": float(self.coef0),
        }
        regulariser, lam = check_regulariser(self.regulariser), float(self.lam)
        k, c = int(self.n_filters), X4.shape[1]
        # Uniform random weights rescaled to unit L1 norm: each map starts as a local
        # weighted average of the image, the scale at which the thesis's eta = 0.1 works.
        filters = rng.random((k, c, *self.filter_shape))
        filters /= np.abs(filters).sum()
        start = time.perf_counter()

        K_buffer = np.empty((len(X4), len(X4)))  # reused by every solve of this problem

        def solve(f, iteration):
            return _solve(
                X4, y, f, params, self._C_at(iteration), regulariser, lam, self.svm_tol, K_buffer
            )

        state, timings = solve(filters, 0)
        best = state
        eta = float(self.eta)
        velocity = np.zeros_like(filters)
        rises = 0
        converged = False
        for it in range(int(self.n_iter)):
            if not np.isfinite(state.objective):
                raise self._diverged(best, "non-finite", "the objective became non-finite")
            if state.objective <= best.objective:
                best = state
            last = it == self.n_iter - 1 or converged
            t_grad = time.perf_counter()
            grad = None if last else _gradient(X4, state, params, regulariser, lam)
            timings["gradient"] = time.perf_counter() - t_grad if grad is not None else 0.0
            if grad is not None and not np.all(np.isfinite(grad)):
                raise self._diverged(best, "non-finite", "the filter gradient became non-finite")
            go_on = recorder.record(
                state.filters,
                iteration=it,
                step="iteration",
                objective=state.objective,
                **state.terms,
                filter_norm=float(np.linalg.norm(state.filters)),
                n_support=int(len(state.support)),
                train_accuracy=state.train_accuracy,
                eta=eta,
                seconds=time.perf_counter() - start,
                timings=dict(timings),
            )
            if last or not go_on:
                break
            if self.step == "armijo":
                new, timings, eta = self._armijo(state, grad, eta, it + 1, solve)
                if new is None:  # no decrease found: the filter is at a stationary point
                    break
            else:
                if self.momentum:
                    velocity = self.momentum * velocity - eta * grad
                    move = self.momentum * velocity - eta * grad if self.nesterov else velocity
                else:
                    move = -eta * grad
                new_filters = state.filters + move
                self._check_growth(best, state.filters, new_filters)
                new, timings = solve(new_filters, it + 1)
                rises = rises + 1 if new.objective > state.objective else 0
                if rises >= _RISING_PATIENCE:
                    raise self._diverged(
                        best,
                        "objective-rising",
                        f"the objective rose {rises} iterations in a row with eta={eta:g}",
                    )
            # Converged: record the new state on the next pass, then stop.
            converged = bool(self.tol) and abs(new.objective - state.objective) <= (
                self.tol * max(1.0, abs(state.objective))
            )
            state = new
        return state

    def _armijo(self, state, grad, eta, iteration, solve):
        """Backtrack from twice the last accepted step until T decreases sufficiently.

        Every trial costs an SVM solve; their times are added to the iteration's timings.
        """
        g2 = float(np.sum(grad * grad))
        # Start from twice the last accepted step, but never move the filter by more than
        # its own norm at once: the gradient can be huge where the kernel is steep.
        trial = min(2.0 * eta, np.linalg.norm(state.filters) / max(np.sqrt(g2), 1e-300))
        spent = {"kernel": 0.0, "svm": 0.0}
        for _ in range(_MAX_BACKTRACKS):
            new_filters = state.filters - trial * grad
            if np.all(np.isfinite(new_filters)):
                new, timings = solve(new_filters, iteration)
                spent = {key: spent[key] + timings[key] for key in spent}
                if new.objective <= state.objective - _ARMIJO_C * trial * g2:
                    return new, spent, trial
            trial /= 2.0
        return None, None, eta

    def _check_growth(self, best, old, new) -> None:
        if not np.all(np.isfinite(new)):
            raise self._diverged(best, "non-finite", "the filter became non-finite")
        old_norm, new_norm = np.linalg.norm(old), np.linalg.norm(new)
        # Tenfold growth counts from the unit norm at least: the first filter is small
        # (unit L1 norm) and the thesis's own runs grow it a few times over in one step.
        if new_norm > 10 * max(old_norm, 1.0):
            raise self._diverged(
                best,
                "norm-explosion",
                f"the filter norm grew from {old_norm:.3g} to {new_norm:.3g} in one step",
            )

    def _diverged(self, best: _KernelState, cause: str, what: str) -> DivergenceError:
        eta = float(self.eta)
        error = DivergenceError(
            f"Training diverged: {what} (step size eta={eta:g}). The best filter so far "
            f"was kept. Try a smaller step such as eta={eta / 10:g}, a larger lam, or "
            "step='armijo'.",
            cause=cause,
            suggested_eta=eta / 10,
        )
        error.model = best
        return error
