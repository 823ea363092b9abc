"""Multiple kernel learning over a fixed filter bank (Varma & Babu's GMKL).

Each filter ``k`` of a fixed bank (csvm.model.filter_bank) turns an image into a map of the
same size (zero-padded correlation, csvm.model.conv.correlate); its base kernel ``K_k`` is the
chosen kernel on those maps.  The SVM uses ``K = sum_k d_k K_k`` with ``d >= 0``, and the
weights minimise the outer objective at the SVM optimum

    T(d) = sum(alpha) - 1/2 a^T K(d) a + sigma * sum(d),      a_i = alpha_i y_i,

whose gradient (Danskin, as in Chapelle et al.: alpha* held fixed) is

    dT/dd_k = sigma - 1/2 a^T K_k a.

T is minimised by projected gradient with the Armijo rule (csvm.model.line_search, the
constants of KernelCSVM's line search); every trial is one SVM solve with LIBSVM
(``SVC(kernel="precomputed")``, erratum 4 of MATH.md).  The l1 penalty drives the weights
of unhelpful filters to exactly 0 (the projection clips them there).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.svm import SVC
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from csvm.model._sklearn import Interval, RegistryOptions, StrOptions, fit_context
from csvm.model.conv import correlate
from csvm.model.filter_bank import resolve_bank
from csvm.model.kernels import KERNELS, kernel_matrix
from csvm.model.line_search import projected_armijo
from csvm.model.multiclass import COMMON_CONSTRAINTS, binary_tasks, ovo_decision
from csvm.model.prediction import labels_from_decision
from csvm.model.validation import check_images, check_two_classes
from csvm.parallel import run_tasks

__all__ = ["FilterBankMKL", "MKLSolution", "filter_maps", "mkl_solve"]

_CHUNK = 2048  # test rows per kernel block at prediction


def filter_maps(
    X4: np.ndarray, filters: Sequence[np.ndarray], dtype: Any = np.float32
) -> np.ndarray:
    """Every image under every filter, same size as the image (zero padding), flattened.

    Parameters
    ----------
    X4 : array (n, C, H, W)
    filters : sequence of 2-D arrays (p_k, q_k), any sizes
        Each is applied to every channel separately (a filter of the bank is grey).
    dtype : numpy dtype, default=float32

    Returns
    -------
    maps : array (n, n_filters, C*H*W)
        ``maps[i, k]`` is image i correlated with filter k, cropped to the image's size
        (the window centred on each pixel; an even side puts the extra row below/right).
    """
    n, c, h, w = X4.shape
    flat = X4.reshape(n * c, 1, h, w).astype(dtype, copy=False)
    out = np.empty((n, len(filters), c * h * w), dtype=dtype)
    for k, f in enumerate(filters):
        p, q = f.shape
        padded = np.pad(flat, ((0, 0), (0, 0), ((p - 1) // 2, p // 2), ((q - 1) // 2, q // 2)))
        maps = correlate(padded, np.asarray(f, dtype=dtype)[None, None])
        out[:, k] = maps.reshape(n, c * h * w)
    return out


@dataclass
class MKLSolution:
    """The SVM solved at one weight vector ``d``, with T(d) and its gradient."""

    weights: np.ndarray
    support: np.ndarray
    dual_coef: np.ndarray  # a_i = alpha_i y_i of the support vectors
    intercept: float
    objective: float
    gradient: np.ndarray
    svm_iterations: int


def mkl_solve(
    kernels: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    *,
    C: float = 1.0,
    sigma: float = 1.0,
    svm_tol: float = 1e-3,
) -> MKLSolution:
    """Solve the SVM with ``K = sum_k d_k K_k``; return T(d) and dT/dd.

    Parameters
    ----------
    kernels : array (M, n, n)
        The base kernels on the training rows (float32 or float64).
    y : array (n,) of +-1
    weights : array (M,) >= 0
    C, sigma, svm_tol : float
        SVM bound, l1 weight, LIBSVM's tolerance.

    Returns
    -------
    MKLSolution
        ``objective = sum|a| - 1/2 a^T K a + sigma sum d``,
        ``gradient[k] = sigma - 1/2 a^T K_k a``.
    """
    d = np.asarray(weights, dtype=np.float64)
    active = np.flatnonzero(d)
    # Only the kernels in use are summed: the l1 penalty keeps most weights at 0.
    K = np.tensordot(d[active], kernels[active], axes=1).astype(np.float64, copy=False)
    svc = SVC(kernel="precomputed", C=C, tol=svm_tol, cache_size=200).fit(K, y)
    support = svc.support_
    a = svc.dual_coef_[0].astype(np.float64)
    K_sv = kernels[:, support][:, :, support].astype(np.float64, copy=False)
    quad = np.einsum("i,kij,j->k", a, K_sv, a)  # a^T K_k a for every base kernel
    objective = float(np.abs(a).sum() - 0.5 * d @ quad + sigma * d.sum())
    return MKLSolution(
        weights=d.copy(),
        support=support,
        dual_coef=a,
        intercept=float(svc.intercept_[0]),
        objective=objective,
        gradient=sigma - 0.5 * quad,
        svm_iterations=int(svc.n_iter_[0]),
    )


@dataclass
class _BinaryMKL:
    """One binary sub-problem's learned weights and SVM, enough to predict."""

    weights: np.ndarray  # (M,)
    support: np.ndarray  # rows of the sub-problem
    dual_coef: np.ndarray
    intercept: float
    Z_sv: np.ndarray = field(repr=False)  # (s, n_active, D) maps of the support vectors
    history: list[dict[str, Any]] = field(default_factory=list)

    def decision_function(
        self, Z: dict[int, np.ndarray], params: list[dict[str, Any]], n: int
    ) -> np.ndarray:
        """Decisions of ``n`` images from their maps ``Z[k]`` (n, D) under active filters.

        Parameters
        ----------
        Z : dict of int to ndarray of shape (n, D)
            Each filter's maps of the images, flattened.
        params : list of dict
            Each filter's base-kernel parameters.
        n : int
            How many images.

        Returns
        -------
        ndarray of shape (n,)
        """
        active = np.flatnonzero(self.weights)
        out = np.full(n, self.intercept)
        for start in range(0, n, _CHUNK):
            rows = slice(start, start + _CHUNK)
            for j, k in enumerate(active):
                # float64: predictions must not depend on how the rows are batched.
                K = _base_kernel(Z[k][rows].astype(np.float64), self.Z_sv[:, j], params[k])
                out[rows] += self.weights[k] * (K @ self.dual_coef)
        return out


def _base_kernel(Z1: np.ndarray, Z2: np.ndarray | None, params: dict[str, Any]) -> np.ndarray:
    kw = {key: params[key] for key in ("kernel", "degree", "gamma", "coef0")}
    Z2 = None if Z2 is None else np.asarray(Z2, dtype=Z1.dtype)
    return kernel_matrix(Z1, Z2, **kw) / params["scale"]


def _fit_task(estimator: FilterBankMKL, Z: np.ndarray, y: np.ndarray, k: int) -> _BinaryMKL:
    """One sub-problem (module level, so that a Dask cluster can run it)."""
    return estimator._fit_binary(Z, y, k)


class FilterBankMKL(ClassifierMixin, BaseEstimator):
    """SVM on a learned non-negative mix of fixed-filter kernels (GMKL, Varma & Babu).

    Base kernel k is ``kernel`` on the images correlated with bank filter k (maps the size
    of the image, zero padding); the SVM uses ``K = sum_k d_k K_k``.  The weights ``d >= 0``
    minimise ``T(d) = sum(alpha) - 1/2 a^T K(d) a + sigma sum(d)`` at the SVM optimum, by
    projected gradient with the Armijo rule, one SVM solve per trial step, starting from
    ``d_k = 1 / n_filters``.  The l1 weight ``sigma`` sets the sparsity: larger sigma,
    fewer filters in use (``dT/dd_k = sigma - 1/2 a^T K_k a``, so filter k stays in use
    only while its kernel's share of the margin term exceeds sigma).

    Parameters
    ----------
    bank : list of str or 2-D arrays, or None, default=None
        The fixed filters: names of ``csvm.model.filter_bank.BANK_FILTERS`` and/or arrays
        of any size.  None is the 12-filter default bank (identity, three Gaussian blurs,
        box, Sobel x/y, Laplacian, Gabor at 0/45/90/135 degrees).
    image_shape : tuple (H, W) or (C, H, W), or None, default=None
        Shape of one image; None reads it from X (a flat X with a perfect-square number of
        features is a square image, any other one row of pixels, with a warning).
    kernel : {"rbf", "poly", "linear"}, default="rbf"
    gamma : "scale" or float > 0, default="scale"
        RBF ``exp(-gamma ||z - z'||^2)``, polynomial ``(gamma z.z' + coef0)^degree``.
        "scale" takes ``1 / (D var(Z_k))`` per filter on the training maps (scikit-learn
        SVC's rule), so the base kernels are on comparable scales.
    degree : int in [1, 20], default=2
    coef0 : float, default=1.0
    C : float > 0, default=1.0
        Upper bound on alpha.
    sigma : float >= 0, default=1.0
        The l1 weight on d.  Its scale is that of ``sum(alpha)``, which grows with the
        number of samples and with C.
    n_iter : int >= 0, default=20
        Most projected gradient steps per binary problem (0: the SVM at the start weights).
    tol : float >= 0, default=1e-4
        Stop when T decreases by less than ``tol`` times its size.
    multi_class : {"ovo", "ovr"}, default="ovo"
        One weight vector per pair of classes (votes) or per class against the rest.
    svm_tol : float > 0, default=1e-3
        LIBSVM's tolerance.
    n_jobs : int or None, default=None
        Sub-problems trained in parallel threads (csvm.parallel.run_tasks).

    Attributes
    ----------
    classes_ : array (n_classes,)
    weights_ : array (n_filters,) for two classes, else (n_classifiers, n_filters)
        The learned d, >= 0, one per bank filter (per binary problem).
    filter_names_ : list of str
    filters_ : list of 2-D arrays
    pairs_ : list of (negative, positive) class per binary problem ("rest" in ovr)
    n_iter_ : array (n_classifiers,)
        Steps taken per binary problem.
    history_ : list of dict
        One record per step: classifier, iteration, objective, weights, step, n_support,
        n_active, svm_iterations, seconds.
    estimators_ : list of the binary models
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from csvm import FilterBankMKL
    >>> X, y = load_digits(n_class=2, return_X_y=True)
    >>> clf = FilterBankMKL(image_shape=(8, 8), n_iter=5).fit(X / 16, y)
    >>> clf.weights_.shape
    (12,)
    >>> bool((clf.weights_ >= 0).all())
    True
    """

    _parameter_constraints: dict = {
        "bank": [None, list, tuple],
        "image_shape": COMMON_CONSTRAINTS["image_shape"],
        "kernel": [RegistryOptions(KERNELS.keys)],
        "gamma": [StrOptions({"scale"}), Interval(Real, 0, None, closed="neither")],
        "degree": [Interval(Integral, 1, 20, closed="both")],
        "coef0": [Interval(Real, -1e6, 1e6, closed="both")],
        "C": [Interval(Real, 0, None, closed="neither")],
        "sigma": [Interval(Real, 0, None, closed="left")],
        "n_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "multi_class": [StrOptions({"ovo", "ovr"})],
        "svm_tol": [Interval(Real, 0, None, closed="neither")],
        "n_jobs": [None, Integral],
    }

    def __init__(
        self,
        *,
        bank: Sequence[Any] | None = None,
        image_shape: tuple[int, ...] | None = None,
        kernel: str = "rbf",
        gamma: str | float = "scale",
        degree: int = 2,
        coef0: float = 1.0,
        C: float = 1.0,
        sigma: float = 1.0,
        n_iter: int = 20,
        tol: float = 1e-4,
        multi_class: str = "ovo",
        svm_tol: float = 1e-3,
        n_jobs: int | None = None,
    ):
        self.bank = bank
        self.image_shape = image_shape
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.sigma = sigma
        self.n_iter = n_iter
        self.tol = tol
        self.multi_class = multi_class
        self.svm_tol = svm_tol
        self.n_jobs = n_jobs

    # -- fitting --------------------------------------------------------------------------
    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any) -> FilterBankMKL:
        """Learn the kernel weights and the SVM of every binary problem.

        Parameters
        ----------
        X : array (n, H*W), (n, H, W) or (n, C, H, W)
        y : array (n,), two or more classes

        Returns
        -------
        self
        """
        if y is None:
            raise ValueError("FilterBankMKL requires y to be passed, but the target y is None.")
        X4 = check_images(self, X, reset=True)
        y = column_or_1d(y, warn=True)
        if len(y) != len(X4):
            raise ValueError(f"y has {len(y)} labels for {len(X4)} images: give one per image.")
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        check_two_classes(self.classes_)
        self.filter_names_, self.filters_ = resolve_bank(self.bank)
        Z = filter_maps(X4, self.filters_)
        self._kernel_params = self._per_filter_params(Z)
        tasks = binary_tasks(y, self.classes_, self.multi_class)
        args = [(self, Z[t["index"]], t["y"], k) for k, t in enumerate(tasks)]
        self.estimators_ = run_tasks(_fit_task, args, self.n_jobs)
        self.pairs_ = [tuple(t["pair"]) for t in tasks]
        weights = np.stack([m.weights for m in self.estimators_])
        self.weights_ = weights[0] if len(tasks) == 1 else weights
        self.n_iter_ = np.array([m.history[-1]["iteration"] for m in self.estimators_])
        self.history_ = [event for m in self.estimators_ for event in m.history]
        return self

    def _per_filter_params(self, Z: np.ndarray) -> list[dict[str, Any]]:
        """Kernel parameters per filter: gamma ("scale" per filter) and the mean diagonal
        of the kernel, by which it is divided so that every base kernel has mean
        self-similarity 1 (RBF already has), and one sigma fits them all."""
        params = []
        for k in range(Z.shape[1]):
            Zk = Z[:, k].astype(np.float64)
            gamma = self.gamma
            if gamma == "scale":
                var = float(Zk.var()) * Zk.shape[1]
                gamma = 1.0 / var if var > 0 else 1.0  # constant maps: SVC's fallback
            p = {"kernel": self.kernel, "degree": self.degree, "gamma": float(gamma)}
            p["coef0"] = float(self.coef0)
            if self.kernel == "rbf":
                scale = 1.0
            else:
                sq = np.einsum("ij,ij->i", Zk, Zk)
                diag = sq if self.kernel == "linear" else (gamma * sq + self.coef0) ** self.degree
                scale = float(np.mean(diag))
            p["scale"] = scale if np.isfinite(scale) and scale > 0 else 1.0
            params.append(p)
        return params

    def _fit_binary(self, Z: np.ndarray, y: np.ndarray, classifier: int) -> _BinaryMKL:
        n, M = Z.shape[:2]
        kernels = np.empty((M, n, n), dtype=np.float32)  # float32 halves the memory
        for k in range(M):
            kernels[k] = _base_kernel(Z[:, k], None, self._kernel_params[k])
        opts = {"C": float(self.C), "sigma": float(self.sigma), "svm_tol": float(self.svm_tol)}
        start = time.perf_counter()

        def evaluate(d: np.ndarray) -> tuple[float, MKLSolution]:
            solution = mkl_solve(kernels, y, d, **opts)
            return solution.objective, solution

        sol = mkl_solve(kernels, y, np.full(M, 1.0 / M), **opts)
        history = [self._event(classifier, 0, sol, 0.0, start)]
        last_step = np.inf
        for it in range(1, int(self.n_iter) + 1):
            g = sol.gradient
            # Twice the last accepted step (as KernelCSVM's line search), but never a
            # first trial that moves d by more than its own norm.
            reach = (np.linalg.norm(sol.weights) or 1.0) / max(np.linalg.norm(g), 1e-300)
            d, new, step = projected_armijo(
                sol.weights, sol.objective, g, evaluate, min(2 * last_step, reach)
            )
            if d is None:  # a stationary point, or no sufficient decrease
                break
            drop = sol.objective - new.objective
            sol, last_step = new, step
            history.append(self._event(classifier, it, sol, step, start))
            if drop <= self.tol * max(1.0, abs(sol.objective)):
                break
        active = np.flatnonzero(sol.weights)
        return _BinaryMKL(
            weights=sol.weights,
            support=sol.support,
            dual_coef=sol.dual_coef,
            intercept=sol.intercept,
            Z_sv=np.ascontiguousarray(Z[sol.support][:, active]),
            history=history,
        )

    @staticmethod
    def _event(classifier: int, it: int, sol: MKLSolution, step: float, start: float) -> dict:
        return {
            "classifier": classifier,
            "iteration": it,
            "objective": sol.objective,
            "weights": sol.weights.tolist(),
            "step": float(step),
            "n_support": int(len(sol.support)),
            "n_active": int(np.count_nonzero(sol.weights)),
            "svm_iterations": sol.svm_iterations,
            "seconds": time.perf_counter() - start,
        }

    # -- prediction -----------------------------------------------------------------------
    def decision_function(self, X: Any) -> np.ndarray:
        """Signed distance for two classes, shape (n,) (positive: ``classes_[1]``); else
        (n, n_classes): one-vs-one votes plus confidence, or one-vs-rest scores.

        Parameters
        ----------
        X : array-like of shape (n, H*W), (n, H, W) or (n, C, H, W)
            As ``fit`` took them.

        Returns
        -------
        ndarray of shape (n,) or (n, n_classes)
            As described above.
        """
        check_is_fitted(self, "estimators_")
        X4 = check_images(self, X, reset=False)
        used = sorted({int(k) for m in self.estimators_ for k in np.flatnonzero(m.weights)})
        maps = filter_maps(X4, [self.filters_[k] for k in used])
        Z = {k: maps[:, j] for j, k in enumerate(used)}
        decisions = np.column_stack(
            [m.decision_function(Z, self._kernel_params, len(X4)) for m in self.estimators_]
        )
        if len(self.classes_) == 2:
            return decisions[:, 0]
        if self.multi_class == "ovo":
            return ovo_decision(decisions, len(self.classes_))
        return decisions

    def predict(self, X: Any) -> np.ndarray:
        """Class labels of the images in X.

        Parameters
        ----------
        X : array-like of shape (n, H*W), (n, H, W) or (n, C, H, W)
            As ``fit`` took them.

        Returns
        -------
        ndarray of shape (n,)
            The predicted class of each image (one of ``classes_``).
        """
        decision = self.decision_function(X)  # first: it checks that the model is fitted
        return labels_from_decision(self.classes_, decision)
