"""L-CSVM: a linear SVM on a learned convolutional feature map (thesis Algorithm 4).

The objective, with the hinge loss the thesis misprints in eq. 3.2 (erratum 1), is

    E(w, f, b) = lam_w/2 ||w||^2 + lam_f/2 ||f||^2 + 1/N sum_i max(0, 1 - y_i (w^T X_i f + b))

It is bilinear in (w, f), so each half of an iteration is a convex linear SVM:

* "svm" step: f fixed, features ``z_i = X_i f``, solve for (w, b);
* "filter" step: w fixed, features ``X_i^T w`` (the correlation of image i with w), solve
  for (f, b).

In the usual form ``1/2 ||v||^2 + C sum hinge`` the same minimiser has ``C = 1/(lam N)``.
E is recorded after each half-step; with exact solvers it cannot rise.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

import numpy as np
from sklearn.svm import SVC, LinearSVC

from csvm.events import Recorder
from csvm.exceptions import DivergenceError, SVMIterationWarning
from csvm.model._sklearn import Interval, StrOptions
from csvm.model.conv import correlate, correlate_transpose, map_shape
from csvm.model.multiclass import COMMON_CONSTRAINTS, BaseCSVM
from csvm.model.validation import Whole

__all__ = ["LinearCSVM", "lcsvm_objective", "lambda_to_C"]

#: Above this many samples "auto" uses LIBLINEAR (fast, its intercept slightly penalised)
#: instead of LIBSVM (exact, quadratic in N).
_AUTO_LIBSVM_MAX = 6000


def lambda_to_C(lam: float, n_samples: int) -> float:
    """The solver's C that gives the minimiser of ``lam/2 ||v||^2 + 1/N sum hinge``."""
    return 1.0 / (lam * n_samples)


def lcsvm_objective(
    X4: np.ndarray,
    y: np.ndarray,
    filters: np.ndarray,
    w: np.ndarray,
    b: float,
    lam_w: float,
    lam_f: float,
) -> dict[str, float]:
    """The corrected eq. 3.2 and its three terms for filters (k, C, p, q) and weights w."""
    Z = correlate(X4, np.asarray(filters, dtype=np.float64)).reshape(len(X4), -1)
    margins = y * (Z @ w + b)
    data = float(np.mean(np.maximum(0.0, 1.0 - margins)))
    w_term = 0.5 * lam_w * float(w @ w)
    f_term = 0.5 * lam_f * float(np.sum(np.square(filters)))
    return {
        "objective": data + w_term + f_term,
        "data_term": data,
        "w_term": w_term,
        "f_term": f_term,
    }


@dataclass
class _LinearState:
    filters: np.ndarray  # (k, C, p, q) float64
    w: np.ndarray
    intercept: float
    support: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    dual_coef: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def decision_function(self, X4: np.ndarray) -> np.ndarray:
        Z = correlate(X4, self.filters.astype(np.float32)).reshape(len(X4), -1)
        return Z @ self.w + self.intercept


def _linear_svm(
    F: np.ndarray,
    y: np.ndarray,
    C: float,
    solver: str,
    tol: float,
    seed: int,
    max_iter: int = -1,
) -> tuple[np.ndarray, float, np.ndarray, np.ndarray, bool]:
    """Solve the hinge-loss SVM on features F: weights, bias, support, a = alpha*y, and
    whether LIBSVM stopped at ``max_iter`` (LIBLINEAR keeps its own bound of 20,000)."""
    if solver == "libsvm":
        svc = SVC(kernel="linear", C=C, tol=tol, max_iter=max_iter).fit(F, y)
        return (
            svc.coef_[0].astype(np.float64),
            float(svc.intercept_[0]),
            svc.support_,
            svc.dual_coef_[0].astype(np.float64),
            bool(max_iter > 0 and int(svc.n_iter_[0]) >= max_iter),
        )
    # A large intercept_scaling makes LIBLINEAR's penalty on the bias negligible.
    svc = LinearSVC(
        C=C,
        loss="hinge",
        dual=True,
        tol=tol,
        intercept_scaling=10.0,
        max_iter=20000,
        random_state=seed,
    ).fit(F, y)
    w, b = svc.coef_[0].astype(np.float64), float(svc.intercept_[0])
    support = np.flatnonzero(y * (F @ w + b) <= 1.0 + 1e-9)
    return w, b, support, np.zeros(len(support)), False


class LinearCSVM(BaseCSVM):
    """Linear convolutional SVM (L-CSVM, thesis Algorithm 4).

    Every parameter is keyword-only and checked by ``fit`` against
    ``_parameter_constraints``.  The defaults are the thesis's (section 3: 5x5 filter,
    lam_w = lam_f = 0.1) except the image shape, which is read from X; the thesis's MNIST
    runs pass ``image_shape=(28, 28)``.

    Parameters
    ----------
    image_shape : tuple of int or None, default=None
        Shape of one image, (H, W) or (C, H, W).  None reads it from X: 3-D/4-D input
        gives it, and a flat X of ``n_features`` is read as a square image when
        ``n_features`` is a perfect square (else as one row of pixels, with a warning).
    filter_shape : tuple of int or None, default=None
        (p, q) of each filter.  None is the thesis's 5x5 (half the image side on images
        under 9 pixels a side).
    n_filters : int, default=1
        Filters whose maps are concatenated into one feature vector, 1 to 256.
    lam_w : float, default=0.1
        Regularisation of the SVM weights, in (0, 1e6].
    lam_f : float, default=0.1
        Regularisation of the filter, in (0, 1e6].
    n_iter : int, default=10
        Alternations, 1 to 100,000; each records two points, after the "svm" and the
        "filter" half-step.
    solver : {"auto", "libsvm", "liblinear"}, default="auto"
        LIBSVM solves each half-step exactly; LIBLINEAR scales to large N.  "auto" picks
        LIBSVM up to 6,000 samples per sub-problem.
    svm_tol : float, default=1e-4
        Solver tolerance, in (0, 1e3].
    svm_max_iter : int, default=1_000_000
        Bound on LIBSVM's iterations per half-step solve (LIBLINEAR keeps its own bound
        of 20,000), so a nearly hard-margin or unscaled solve ends; hitting it gives an
        :class:`~csvm.SVMIterationWarning` and ``svm_hit_max_iter=True`` in the event.
    multi_class : {"ovo", "ovr"}, default="ovo"
        One filter per pair of classes (the thesis's) or per class against the rest.
    n_jobs : int or None, default=None
        Sub-problems trained in parallel (threads); None is one.
    random_state : int, RandomState instance or None, default=None
        Seeds the random first filters.
    init_filters : array-like or None, default=None
        The first filters, (p, q), (n_filters, p, q) or (n_filters, C, p, q), used by
        every sub-problem instead of the random start (unit L1 norm, drawn with
        ``random_state``).  They must fit ``n_filters``, ``filter_shape`` (None takes
        their shape) and the images' channels.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    filters_ : ndarray of shape (n_classifiers, n_filters, p, q)
        The learned filters, one row per sub-problem ((n_classifiers, n_filters, C, p, q)
        in colour).
    filter_shape_ : tuple of int
        (p, q) used (``filter_shape`` resolved for the images).
    coef_ : ndarray of shape (n_features_maps,) or (n_classifiers, n_features_maps)
        w, the SVM weights on the flattened feature maps (one row per sub-problem).
    intercept_ : float or ndarray of shape (n_classifiers,)
        The bias b of each sub-problem's SVM.
    support_ : ndarray of int, or list of them
        Row indices of the support vectors in the training set (more than two classes:
        one array per sub-problem).
    pairs_ : list of tuple
        (negative, positive) class of each sub-problem; "rest" in one-vs-rest.
    estimators_ : list
        The fitted binary model of each sub-problem.
    history_ : list of dict
        Two events per alternation ("svm" and "filter" half-steps: ``objective``,
        ``filter_norm``, ``n_support``, ``seconds``, ...), every sub-problem's.
    n_features_in_ : int
        Number of features (pixels) of X seen in ``fit``.
    stopped_ : bool
        Whether a callback stopped training early.

    See Also
    --------
    csvm.KernelCSVM : the kernelised convolutional SVM (thesis Algorithm 5).

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from csvm import LinearCSVM
    >>> X, y = load_digits(n_class=2, return_X_y=True)
    >>> X = X / 16  # pixels in [0, 1]
    >>> clf = LinearCSVM(image_shape=(8, 8), filter_shape=(3, 3), n_iter=3, random_state=0)
    >>> clf.fit(X[:100], y[:100]).coef_.shape  # w on the 6x6 feature map
    (36,)
    >>> len(clf.history_)  # an "svm" and a "filter" half-step per alternation
    6
    >>> clf.score(X[100:], y[100:]) > 0.9
    True
    """

    _model_name = "lcsvm"
    _event_kind = "half_step"

    _parameter_constraints: dict = {
        **COMMON_CONSTRAINTS,
        "lam_w": [Interval(Real, 0, 1e6, closed="right")],
        "lam_f": [Interval(Real, 0, 1e6, closed="right")],
        "solver": [StrOptions({"auto", "libsvm", "liblinear"})],
        "svm_tol": [Interval(Real, 0, 1e3, closed="right")],
        "svm_max_iter": [Whole(1, None, closed="left")],
    }

    def __init__(
        self,
        *,
        image_shape: tuple[int, ...] | None = None,
        filter_shape: tuple[int, int] | None = None,
        n_filters: int = 1,
        lam_w: float = 0.1,
        lam_f: float = 0.1,
        n_iter: int = 10,
        solver: str = "auto",
        svm_tol: float = 1e-4,
        svm_max_iter: int = 10**6,
        multi_class: str = "ovo",
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = None,
        init_filters: Any = None,
    ):
        self.image_shape = image_shape
        self.filter_shape = filter_shape
        self.n_filters = n_filters
        self.lam_w = lam_w
        self.lam_f = lam_f
        self.n_iter = n_iter
        self.solver = solver
        self.svm_tol = svm_tol
        self.svm_max_iter = svm_max_iter
        self.multi_class = multi_class
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.init_filters = init_filters

    def _fit_binary(
        self, X4: np.ndarray, y: np.ndarray, rng: np.random.Generator, recorder: Recorder
    ) -> _LinearState:
        n = len(X4)
        solver = self.solver
        if solver == "auto":
            solver = "libsvm" if n <= _AUTO_LIBSVM_MAX else "liblinear"
        seed = int(rng.integers(np.iinfo(np.int32).max))
        k, c = int(self.n_filters), X4.shape[1]
        filters = self._first_filters(rng, c)
        lam_w, lam_f = float(self.lam_w), float(self.lam_f)
        Z_shape = map_shape(X4.shape[-2:], self.filter_shape_)
        start = time.perf_counter()
        state = None
        best: _LinearState | None = None
        best_objective = np.inf
        previous = np.inf
        options = (self.svm_tol, seed, int(self.svm_max_iter))
        warned = False
        for it in range(int(self.n_iter)):
            for half in ("svm", "filter"):
                t0 = time.perf_counter()
                if half == "svm":
                    Z = correlate(X4, filters.astype(np.float32)).reshape(n, -1)
                    w, b, support, a, hit = _linear_svm(
                        Z.astype(np.float64), y, lambda_to_C(lam_w, n), solver, *options
                    )
                else:
                    maps = np.broadcast_to(w.reshape(1, k, *Z_shape), (n, k, *Z_shape))
                    F = correlate_transpose(X4, maps, self.filter_shape_).reshape(n, -1)
                    f_flat, b, support, a, hit = _linear_svm(
                        F.astype(np.float64), y, lambda_to_C(lam_f, n), solver, *options
                    )
                    filters = f_flat.reshape(k, c, *self.filter_shape_)
                if hit and not warned:
                    warned = self._warn_max_iter(recorder, it, half)
                state = _LinearState(
                    filters=filters.copy(), w=w.copy(), intercept=b, support=support, dual_coef=a
                )
                terms = lcsvm_objective(X4, y, filters, w, b, lam_w, lam_f)
                if not (np.isfinite(terms["objective"]) and np.all(np.isfinite(filters))):
                    error = DivergenceError(
                        f"Training diverged: the objective became non-finite in the {half} "
                        "step. The best state so far was kept. Try larger lam_w and lam_f.",
                        cause="non-finite",
                    )
                    error.model = best if best is not None else state
                    recorder.diverged(it, error, filter_norm_after=np.linalg.norm(filters))
                    raise error
                if terms["objective"] <= best_objective:
                    best, best_objective = state, terms["objective"]
                train_acc = float(np.mean(np.sign(state.decision_function(X4)) == y))
                go_on = recorder.record(
                    filters,
                    iteration=it,
                    step=half,
                    **terms,
                    rose=bool(terms["objective"] > previous * (1 + 1e-6) + 1e-12),
                    filter_norm=float(np.linalg.norm(filters)),
                    n_support=int(len(support)),
                    train_accuracy=train_acc,
                    svm_hit_max_iter=hit,
                    seconds=time.perf_counter() - start,
                    timings={"svm": time.perf_counter() - t0},
                )
                previous = terms["objective"]
                if not go_on:
                    return state
        return state

    def _warn_max_iter(self, recorder: Recorder, iteration: int, half: str) -> bool:
        """Say that a solve stopped at ``svm_max_iter``, and the likely causes."""
        pair = " v ".join(str(c) for c in recorder.base.get("pair", ()))
        warnings.warn(
            f"LinearCSVM: the SVM solve of the {half} step stopped at its iteration bound "
            f"(svm_max_iter={self.svm_max_iter}) at iteration {iteration} of sub-problem "
            f"{recorder.base.get('classifier', 0)} ({pair}): the inputs may be unscaled "
            "(pixels should be in [0, 1]) or lam_w, lam_f so small that the solve is "
            "nearly hard-margin; scale X, raise lam_w and lam_f, or raise svm_max_iter.",
            SVMIterationWarning,
            stacklevel=2,
        )
        return True
