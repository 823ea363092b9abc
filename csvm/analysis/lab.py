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

Everything reuses :mod:`csvm.model.kernel_state` (its ``solve_state`` and
``state_gradient``, as ``KernelCSVM`` does), so a filter here gives exactly the numbers a
``KernelCSVM`` started at that filter with ``eta=0`` would give.

T is convex in alpha for a fixed filter (the SVM dual), but **T is not convex in the
filter f in general**: the kernel depends on f through products of feature maps, so a
slice of T through f can bend both ways, and a gradient step finds a local minimum only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.utils.validation import check_array

from csvm.analysis.lab_filters import FILTER_NAMES, classic_filter, load_filters, starting_filters
from csvm.model.conv import as_filters, as_images, correlate, map_shape
from csvm.model.kernel_state import KernelState, solve_state, state_gradient
from csvm.model.kernelised import KernelCSVM
from csvm.model.kernels import KernelSpec
from csvm.model.regularisers import check_regulariser
from csvm.model.solve_settings import SolveSettings

__all__ = [
    "FILTER_NAMES",
    "BinaryProblem",
    "LabResult",
    "binary_problem",
    "classic_filter",
    "filter_gradient",
    "lab_images",
    "load_filters",
    "solve_fixed_filter",
    "solve_raw_pixels",
    "starting_filters",
    "step_scale",
]


#: Called with (points done, points in all, T at the point just solved) after each solve of
#: a landscape, so a page can draw the slice while it fills in.
Progress = Callable[[int, int, float], Any]


# -- the SVM at a fixed filter ------------------------------------------------------------
@dataclass(frozen=True)
class BinaryProblem:
    """A binary training set and the SVM settings, checked once and shared by every solve
    of a lab computation (a result, a landscape, a stack).

    Attributes
    ----------
    X4 : array (n, C, H, W)
        float32 as ``KernelCSVM.fit`` holds it, or float64.
    y : array (n,) of +-1
        +1 for ``classes[1]``.
    classes : array (2,)
    settings : SolveSettings
        Checked as a ``KernelCSVM`` checks them, names canonical.
    K_buffer : float64 array (n, n)
        Reused by every solve.
    """

    X4: np.ndarray
    y: np.ndarray
    classes: np.ndarray
    settings: SolveSettings
    K_buffer: np.ndarray = field(repr=False)

    def solve(self, filters: np.ndarray, network=None) -> tuple[KernelState, dict[str, float]]:
        """The SVM at ``filters`` (a stack's flat filters with its ``network``)."""
        s = self.settings
        return solve_state(
            self.X4,
            self.y,
            filters,
            params=s.kernel,
            C=s.solver_C,
            regulariser=s.regulariser,
            lam=s.lam,
            svm_tol=s.svm_tol,
            K_buffer=self.K_buffer,
            network=network,
        )

    def gradient(self, state: KernelState) -> np.ndarray:
        """``dT/df`` at a solved state (every layer's filters, flat, for a stack)."""
        s = self.settings
        return state_gradient(self.X4, state, s.kernel, s.regulariser, s.lam)

    def filters(self, filters: Any) -> np.ndarray:
        """Filters as (k, C, p, q) float64, checked against the images."""
        f = np.asarray(filters, dtype=np.float64)
        f4 = as_filters(f, self.X4.shape[1])
        map_shape(self.X4.shape[-2:], f4.shape[-2:])
        if not np.all(np.isfinite(f4)):
            raise ValueError("The filter holds NaN or infinite weights: give finite numbers.")
        return np.array(f4)  # a fresh array: the caller may edit theirs afterwards


def lab_images(X: Any, name: str) -> np.ndarray:
    """Images as contiguous (n, C, H, W): float64 stays float64, anything else float32.

    ``KernelCSVM`` computes in float32 (twice the BLAS speed), so float32 images give its
    numbers bit for bit; float64 images give the exact values a finite-difference check
    needs.

    Parameters
    ----------
    X : array (n, H, W) or (n, C, H, W)
    name : str
        The argument's name, for messages ("X_train").

    Returns
    -------
    float32 or float64 array (n, C, H, W)
    """
    X = check_array(X, allow_nd=True, dtype=[np.float32, np.float64], input_name=name)
    if X.ndim not in (3, 4):
        raise ValueError(
            f"{name} must hold images, shape (n, H, W) or (n, C, H, W); got shape {X.shape}."
        )
    return np.ascontiguousarray(as_images(X))


def binary_problem(X: Any, y: Any, settings: SolveSettings) -> BinaryProblem:
    """The checked training set and settings of a lab computation.

    Parameters
    ----------
    X, y : images and their labels (two classes)
    settings : SolveSettings

    Returns
    -------
    BinaryProblem

    Raises
    ------
    ValueError
        With a ``KernelCSVM``'s own message for a bad setting, or for images that are not
        images or labels that are not two classes.
    """
    # The estimator's own checks give the same messages as a training run would.
    est = KernelCSVM(**settings.keywords())
    est._check_params()
    X4 = lab_images(X, "X_train")
    y = np.asarray(y).ravel()
    if len(y) != len(X4):
        raise ValueError(f"y_train has {len(y)} labels for {len(X4)} images: give one per image.")
    classes = np.unique(y)
    if len(classes) != 2:
        raise ValueError(
            f"The filter lab solves one binary problem, but y_train holds {len(classes)} "
            f"class{'' if len(classes) == 1 else 'es'} ({', '.join(map(str, classes[:5]))}): "
            "pick two classes."
        )
    k = settings.kernel
    return BinaryProblem(
        X4=X4,
        y=np.where(y == classes[1], 1, -1),
        classes=classes,
        settings=SolveSettings(
            KernelSpec(est.kernel, k.degree, float(k.gamma), float(k.coef0)),
            C=None if settings.C is None else float(settings.C),
            regulariser=check_regulariser(settings.regulariser),
            lam=float(settings.lam),
            svm_tol=float(settings.svm_tol),
        ),
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
    _state: KernelState = field(repr=False)

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
        X4 = lab_images(X, "X")
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


def _accuracy(state: KernelState, X: Any, y: Any, classes: np.ndarray) -> float:
    X4 = lab_images(X, "X_test")
    y = np.asarray(y).ravel()
    if len(y) != len(X4):
        raise ValueError(f"y_test has {len(y)} labels for {len(X4)} images: give one per image.")
    predicted = classes[(state.decision_function(X4) > 0).astype(int)]
    return float(np.mean(predicted == y))


def _result(problem: BinaryProblem, filters: np.ndarray, X_test: Any, y_test: Any) -> LabResult:
    start = time.perf_counter()
    state, timings = problem.solve(filters)
    t_grad = time.perf_counter()
    grad = problem.gradient(state)
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
    settings = SolveSettings.from_keywords(
        kernel=kernel, degree=degree, gamma=gamma, coef0=coef0,
        C=C, regulariser=regulariser, lam=lam, svm_tol=svm_tol,
    )  # fmt: skip
    problem = binary_problem(X_train, y_train, settings)
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
    X4 = lab_images(X_train, "X_train")
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


# -- the explorer's worker jobs -----------------------------------------------------------
#: Settings a lab computation takes, by name (those of :func:`solve_fixed_filter`).
SETTING_NAMES = ("kernel", "degree", "gamma", "coef0", "C", "regulariser", "lam")


def step_scale(filters: Any, gradient: Any, eta: float, rule: str = "relative") -> float:
    """The multiplier ``s`` of the lab's one gradient step ``f - s * dT/df``.

    The Train page's step rules, so that a step in the lab is the step a K-CSVM takes:
    "constant" is the thesis's raw ``s = eta`` (its size grows with the number of images:
    at the classroom's η = 0.1 it moved the filter 40-500 times its own norm and the
    re-solved SVM fell to chance); "relative" (and "armijo", whose backtracking needs
    several solves) moves the filter by the fraction ``eta`` of its own norm,
    ``s = eta * ||f|| / ||g||``, whatever the scale of T.

    Examples
    --------
    >>> f, g = np.ones((3, 3)), np.full((3, 3), 100.0)
    >>> round(step_scale(f, g, 0.1), 12)  # moves f by a tenth of its norm
    0.001
    >>> step_scale(f, g, 0.1, "constant")
    0.1
    """
    if rule == "constant":
        return float(eta)
    if rule not in ("relative", "armijo"):
        raise ValueError(f"rule={rule!r}: use 'constant', 'relative' or 'armijo'")
    g_norm = float(np.linalg.norm(gradient))
    return 0.0 if g_norm == 0.0 else float(eta) * float(np.linalg.norm(filters)) / g_norm
