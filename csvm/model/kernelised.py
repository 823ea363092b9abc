"""K-CSVM: a kernel SVM on learned convolutional feature maps (thesis Algorithm 5, GMKL).

Each iteration solves the SVM dual on the kernel of the current feature maps (erratum 4:
the kernelised dual): with LIBSVM from scratch on the whole kernel
(``SVC(kernel="precomputed")``), or, on more than 1,024 images (``solver="auto"``), warm
from the previous iteration's alphas with only the kernel columns it touches
(:mod:`csvm.model.warm_solver`); it records the outer objective

    T(f) = sum(alpha) - 1/2 a^T K a + r(f)

and moves the filter against ``dT/df = dr/df - 1/2 sum_ij a_i a_j dK_ij/df`` (Danskin: the
optimal alpha is held fixed while differentiating), by one of the step rules of ``step``.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from functools import partial
from numbers import Real
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from csvm.events import Recorder
from csvm.exceptions import DivergenceError, SVMIterationWarning
from csvm.model._sklearn import Interval, RegistryOptions, StrOptions
from csvm.model.init_filters import FILTER_INITS, first_filters
from csvm.model.kernel_state import (  # noqa: F401 (HARD_MARGIN_C, outer_objective: re-exported)
    HARD_MARGIN_C,
    SOLVERS,
    KernelState,
    ProblemSolves,
    outer_objective,
)
from csvm.model.kernels import KERNELS, KernelOverflowError, KernelSpec
from csvm.model.layers import Network, parse_layers
from csvm.model.line_search import armijo_backtrack, safe_constant_eta, suggested_eta
from csvm.model.multiclass import COMMON_CONSTRAINTS, BaseCSVM
from csvm.model.regularisers import REGULARISERS, check_regulariser
from csvm.model.solve_settings import SolveSettings
from csvm.model.validation import Whole, check_init_filters

__all__ = ["KernelCSVM", "outer_objective"]

#: Consecutive rises of T under a constant step that count as divergence.
_RISING_PATIENCE = 4


class KernelCSVM(BaseCSVM):
    """Kernelised convolutional SVM (K-CSVM, thesis Algorithm 5).

    The defaults are the thesis's but ``C=1.0`` and ``step="relative"``: its hard margin
    and constant step diverge on data that are not separable and at large N.  Its table
    4.1 run is ``KernelCSVM(image_shape=(28, 28), C=None, step="constant")``.

    Parameters
    ----------
    image_shape : tuple of int or None, default=None
        (H, W) or (C, H, W) of one image.  None reads it from X: 3-D/4-D input gives it;
        a flat X is a square image when its feature count is a perfect square (else one
        row of pixels, with a warning).
    filter_shape : tuple of int or None, default=None
        (p, q) of each filter; None is 5x5 (half the side of images under 9 pixels).
    n_filters : int, default=1
        Filters, 1 to 256; their maps are concatenated (thesis eq. 4.12).
    kernel : {"poly", "rbf", "linear"}, default="poly"
        ``(gamma z.z' + coef0)^degree``, ``exp(-gamma ||z - z'||^2)`` or ``z.z'``.
    degree : int, default=2
        Degree of "poly", 1 to 20.
    gamma : float, default=1.0
        Scale of "poly" and "rbf", in (0, 1e6].
    coef0 : float, default=1.0
        Constant term of "poly", in [-1e6, 1e6].
    C : float or None, default=1.0
        Upper bound on alpha, in (0, 1e30]; None: no bound (the thesis's hard margin).
    C_last_only : bool, default=False
        Apply ``C`` only on the last iteration (the thesis's CIFAR-10 schedule).
    regulariser : {"none", "l1", "l2", "l1sq", "l2sq", "dfo1", "dfo2"}, default="dfo1"
        Penalty on the filter (:mod:`csvm.model.regularisers`).
    lam : float, default=0.01
        Regularisation strength, in [0, 1e6].
    eta : float, default=0.1
        Step size, in [0, 1e6] (0 keeps the first filter): the multiplier of dT/df for
        "constant", the fraction of the filter's norm for "relative", the first trial
        step for "armijo".
    n_iter : int, default=25
        SVM solves (the filter moves between them), 1 to 100,000.
    step : {"constant", "relative", "armijo"}, default="relative"
        "constant" is the thesis's ``f -= eta * dT/df``, whose size grows with N (an eta
        for 1,900 MNIST images diverges at 11,552); "relative" moves the filter by
        ``eta`` of its norm and halves eta when T rises, so one eta suits any N, C and
        kernel scale (docs/step_size.md); "armijo" backtracks until T falls enough (as
        Varma & Babu's GMKL).  In a stack, "relative" moves each layer by ``eta`` of its
        own norm, and a layer with block normalisation (``-bn<b>``) keeps each filter's
        mean (:meth:`~csvm.model.layers.Network.relative_move`).
    momentum : float, default=0.0
        Heavy-ball momentum for "constant" and "relative", in [0, 1).
    nesterov : bool, default=False
        Nesterov's form of the momentum.
    tol : float, default=0.0
        Stop when T changes by less than ``tol`` relative to its size (0: never).
    multi_class : {"ovo", "ovr"}, default="ovo"
        One filter set per pair of classes (the thesis's) or per class against the rest.
    n_jobs : int or None, default=None
        Sub-problems trained at once (threads); None is one.
    svm_tol : float, default=1e-3
        The SVM solve's stopping tolerance on the KKT gap (LIBSVM's ``tol``), in (0, 1e3].
    svm_max_iter : int, default=1_000_000
        Bound on the solver's iterations per solve, so a hard-margin solve on data the
        kernel cannot separate ends; hitting it warns (:class:`~csvm.SVMIterationWarning`).
    solver : {"auto", "warm", "libsvm"}, default="auto"
        How each iteration's SVM is solved.  "libsvm": LIBSVM from scratch on the whole
        ``n x n`` kernel.  "warm": from the previous iteration's alphas (every Armijo
        trial from the accepted step's) to the exact optimum, forming only the kernel
        columns it needs (:mod:`csvm.model.warm_solver`); its first solve, and one where
        ``C_last_only`` changes C, start cold (LIBSVM's own on up to 2,048 images).
        "auto": "warm" on more than 1,024 images (a sub-problem's), where it is faster
        (table 4.1: 3-4x one SVC fit, instead of 9-17x), else "libsvm", whose runs it
        then repeats to the bit.
        docs/benchmarks.md ("Warm-started solves") compares the two.
    random_state : int, RandomState instance or None, default=None
        Seeds the random first filters.
    init_filters : array-like or None, default=None
        First filters for every sub-problem, (p, q), (n_filters, p, q) or
        (n_filters, C, p, q), instead of the random start.
    layers : str or None, default=None
        A stack of layers with pooling (:mod:`csvm.model.layers`), e.g.
        ``"5x5x2-abs-avg2,3x3x4-relu-avg2"``; it replaces ``filter_shape`` and
        ``n_filters``.  None (or one plain layer) is the thesis's one-layer model.
    filter_init : str, default="uniform"
        The first filters of layer 1 (:mod:`csvm.model.init_filters`): "uniform" (local
        averages, the thesis's), "zero-mean", "gabor", "gaussian", "hog" or "hog-colour".

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    filters_ : ndarray of shape (n_classifiers, n_filters, p, q)
        The learned filters per sub-problem (a C axis before p in colour; layer 1's).
    layer_filters_, layers_ : list, tuple
        Every layer's filters per sub-problem; the parsed stack (empty for one layer).
    filter_shape_ : tuple of int
        (p, q) used.
    pairs_ : list of tuple
        (negative, positive) class of each sub-problem ("rest" in one-vs-rest).
    support_, dual_coef_, n_support_ : ndarray, or a list per sub-problem
        The support vectors' rows in the training set, their ``alpha_i y_i``, and count.
    intercept_ : float or ndarray of shape (n_classifiers,)
        The bias b of each sub-problem.
    estimators_ : list
        The fitted binary model of each sub-problem.
    history_ : list of dict
        One event per iteration and sub-problem (:mod:`csvm.events`).
    n_features_in_ : int
        Features (pixels) of X seen in ``fit``.
    stopped_ : bool
        Whether a callback stopped training early.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from csvm import KernelCSVM
    >>> X, y = load_digits(n_class=2, return_X_y=True)
    >>> X = X / 16  # pixels in [0, 1]
    >>> clf = KernelCSVM(image_shape=(8, 8), filter_shape=(3, 3), n_iter=5, random_state=0)
    >>> clf.fit(X[:100], y[:100]).filters_.shape  # one sub-problem, one 3x3 filter
    (1, 1, 3, 3)
    >>> clf.score(X[100:], y[100:]) > 0.9
    True
    """

    _model_name = "kcsvm"
    _event_kind = "iteration"
    _resolved_for_workers = ("_network", "_n_first", "layers_")

    _parameter_constraints: dict = {
        **COMMON_CONSTRAINTS,
        "kernel": [RegistryOptions(KERNELS.keys)],
        "degree": [Whole(1, 20, closed="both")],
        "gamma": [Interval(Real, 0, 1e6, closed="right")],
        "coef0": [Interval(Real, -1e6, 1e6, closed="both")],
        "C": [None, Interval(Real, 0, 1e30, closed="right")],
        "C_last_only": ["boolean"],
        "regulariser": [RegistryOptions(REGULARISERS.keys)],
        "lam": [Interval(Real, 0, 1e6, closed="both")],
        "eta": [Interval(Real, 0, 1e6, closed="both")],
        "step": [StrOptions({"constant", "relative", "armijo"})],
        "momentum": [Interval(Real, 0, 1, closed="left")],
        "nesterov": ["boolean"],
        "tol": [Interval(Real, 0, 1e6, closed="both")],
        "svm_tol": [Interval(Real, 0, 1e3, closed="right")],
        "svm_max_iter": [Whole(1, None, closed="left")],
        "solver": [StrOptions({"auto", *SOLVERS})],
        "layers": [None, str],
        "filter_init": [StrOptions(set(FILTER_INITS))],
    }

    def __init__(
        self,
        *,
        image_shape: tuple[int, ...] | None = None,
        filter_shape: tuple[int, int] | None = None,
        n_filters: int = 1,
        kernel: str = "poly",
        degree: int = 2,
        gamma: float = 1.0,
        coef0: float = 1.0,
        C: float | None = 1.0,
        C_last_only: bool = False,
        regulariser: str = "dfo1",
        lam: float = 0.01,
        eta: float = 0.1,
        n_iter: int = 25,
        step: str = "relative",
        momentum: float = 0.0,
        nesterov: bool = False,
        tol: float = 0.0,
        multi_class: str = "ovo",
        n_jobs: int | None = None,
        svm_tol: float = 1e-3,
        svm_max_iter: int = 10**6,
        solver: str = "auto",
        random_state: int | np.random.RandomState | None = None,
        init_filters: Any = None,
        layers: str | None = None,
        filter_init: str = "uniform",
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
        self.svm_max_iter = svm_max_iter
        self.solver = solver
        self.random_state = random_state
        self.init_filters = init_filters
        self.layers = layers
        self.filter_init = filter_init

    def _check_dependent_params(self) -> None:
        # eta = 0 freezes the first filter (an SVM on a random filter, a useful baseline),
        # but a line search needs a first trial step.
        if self.step == "armijo" and self.eta <= 0:
            raise ValueError(
                f"eta must be greater than 0 with step='armijo' (its first trial step), "
                f"got {self.eta!r}."
            )

    @property
    def network_(self) -> Network | None:
        """The stack of layers the filters belong to (None: one layer of plain
        correlations), for :func:`csvm.model.kernel_state.solve_on_filters`."""
        return self._network

    def _resolve_filters(self, image_shape: tuple[int, ...]) -> None:
        """Read ``layers``: a stack builds the :class:`~csvm.model.layers.Network`; one plain
        layer (or None) is the thesis's model with that filter shape and count."""
        specs = parse_layers(self.layers)
        self.layers_ = () if len(specs) == 1 and specs[0].is_plain else specs
        self._network = None
        self._n_first = int(self.n_filters)
        if not specs:
            super()._resolve_filters(image_shape)
            return
        first = specs[0]
        self._n_first = first.n_filters
        self._start_filters = None
        if self.init_filters is not None:
            self._start_filters = check_init_filters(
                self.init_filters, first.n_filters, image_shape[0], first.filter_shape
            )
        self.filter_shape_ = first.filter_shape
        # Network checks that every layer's filter and window fit the maps it receives.
        network = Network(specs, image_shape)
        self._network = network if self.layers_ else None

    def _first_filters(self, rng: np.random.Generator, n_channels: int) -> np.ndarray:
        if self._start_filters is not None:
            return self._start_filters.copy()
        shape = (self._n_first, n_channels, *self.filter_shape_)
        return first_filters(self.filter_init, rng, shape)

    def _start_theta(self, rng: np.random.Generator, n_channels: int) -> np.ndarray:
        """The first filters (every layer's, flat, with a stack of layers)."""
        if self._network is None:
            filters = self._first_filters(rng, n_channels)
        else:
            first = self._start_filters
            if first is None and self.filter_init != "uniform":
                first = self._first_filters(rng, n_channels)
            filters = self._network.initial(rng, first)
        if self.step == "relative" and not np.any(filters):
            raise ValueError(
                "step='relative' moves the filter by a fraction of its own norm, so the first "
                "filter must not be all zeros: give non-zero init_filters."
            )
        return filters

    def _set_sub_problem_attributes(self, tasks: list[dict[str, Any]]) -> None:
        super()._set_sub_problem_attributes(tasks)
        self.layer_filters_ = [m.layer_filters for m in self.estimators_]

    def feature_maps(self, X: Any) -> np.ndarray:
        """Feature maps as images: (n, k, H', W') for two classes, else
        (n, n_classifiers, k, H', W'); with ``layers``, the last layer's pooled maps."""
        check_is_fitted(self, "estimators_")
        if not getattr(self, "layers_", ()):
            return super().feature_maps(X)
        X4 = self._images(X, reset=False)
        maps = np.stack([m.features(X4) for m in self.estimators_], axis=1)
        return np.ascontiguousarray(maps[:, 0] if len(self.estimators_) == 1 else maps)

    def _C_at(self, iteration: int) -> float:
        if self.C is None:
            return HARD_MARGIN_C
        if self.C_last_only and iteration < self.n_iter - 1:
            return HARD_MARGIN_C
        return float(self.C)

    def _solve_settings(self) -> SolveSettings:
        """The eight solve keywords (kernel, degree, gamma, coef0, C, regulariser, lam,
        svm_tol) as one checked value."""
        return SolveSettings(
            KernelSpec(self.kernel, self.degree, float(self.gamma), float(self.coef0)),
            self.C,
            check_regulariser(self.regulariser),
            float(self.lam),
            float(self.svm_tol),
        )

    def _solves(
        self, X4: np.ndarray, y: np.ndarray, recorder: Recorder
    ) -> tuple[Callable[..., tuple[KernelState, dict[str, float]]], ProblemSolves]:
        """``(solve, solves)``: ``solve(f, iteration, start_from=None)`` is the state at
        filters ``f`` with that iteration's C, and its timings (the first solve that stops
        at its bound warns); ``solves`` the problem's :class:`ProblemSolves`."""
        solves = ProblemSolves(
            X4, y, self._solve_settings(), self.solver, self.svm_max_iter, self._network
        )
        warned = []  # one warning per sub-problem, at its first solve that hits the bound

        def solve(f, iteration, start_from=None):
            C = self._C_at(iteration)
            state, timings = solves(f, C, start_from)
            if (state.svm_hit_max_iter or state.svm_at_hard_cap) and not warned:
                warned.append(iteration)
                self._warn_unsolved(recorder, iteration, C, state.svm_hit_max_iter)
            return state, timings

        return solve, solves

    def _fit_binary(
        self, X4: np.ndarray, y: np.ndarray, rng: np.random.Generator, recorder: Recorder
    ) -> KernelState:
        filters = self._start_theta(rng, X4.shape[1])
        start = time.perf_counter()
        solve, solves = self._solves(X4, y, recorder)
        state, timings = solve(filters, 0)
        best = state
        eta = float(self.eta)
        track = {"velocity": np.zeros_like(filters), "rises": 0}
        converged = False
        for it in range(int(self.n_iter)):
            norm = float(np.linalg.norm(state.theta))
            if not np.isfinite(state.objective):
                raise self._diverged(
                    best, "non-finite", "the objective became non-finite", recorder, it, None, norm
                )
            if state.objective <= best.objective:
                best = state
            last = it == self.n_iter - 1 or converged
            t_grad = time.perf_counter()
            grad = None if last else solves.gradient(state)
            timings["gradient"] = time.perf_counter() - t_grad if grad is not None else 0.0
            if grad is not None and not np.all(np.isfinite(grad)):
                raise self._diverged(
                    best, "non-finite", "the filter gradient became non-finite", recorder, it
                )
            if it == 0:  # what a suggestion after a divergence is based on
                self._safe_eta = safe_constant_eta(norm, grad)
            timings["seconds"] = time.perf_counter() - start
            if not self._record(recorder, state, grad, it, eta, timings):
                break  # the callback stopped training
            if last:
                return self._last_C(state, it, eta, solve, recorder, start) if converged else state
            try:
                if self.step == "armijo":
                    trial = partial(solve, iteration=it + 1, start_from=state)
                    new, timings, eta = armijo_backtrack(state, grad, eta, trial)
                else:
                    new, timings, eta = self._fixed_step(
                        state, grad, eta, track, it, solve, best, recorder
                    )
            except KernelOverflowError:  # the first solve worked: the filter grew too far
                raise self._diverged(
                    best, "non-finite", "the kernel overflowed as the filter grew", recorder, it
                ) from None
            if new is None:  # no decrease found, or a zero gradient: a stationary point
                return self._last_C(state, it, eta, solve, recorder, start)
            # Converged: record the new state on the next pass, then stop.
            converged = bool(self.tol) and abs(new.objective - state.objective) <= (
                self.tol * max(1.0, abs(state.objective))
            )
            state = new
        return state

    def _last_C(self, state, iteration, eta, solve, recorder, start):
        """The model when the steps stopped before ``n_iter`` (a stationary point, or the
        tolerance met) at the state recorded as ``iteration``: with ``C_last_only`` its
        filters' SVM is solved once more with ``C``, as the last iteration would have
        been, and recorded as the next iteration.  (Exact solves meet a stationary point,
        where Armijo finds no decrease, sooner than LIBSVM's, whose tolerance lets T
        jitter: the thesis's CIFAR-10 run stops at 22 of 25 iterations.)"""
        if not self.C_last_only or self.C is None or iteration >= self.n_iter - 1:
            return state
        final, timings = solve(state.theta, self.n_iter - 1, state)
        timings = {**timings, "gradient": 0.0, "seconds": time.perf_counter() - start}
        self._record(recorder, final, None, iteration + 1, eta, timings)
        return final

    @staticmethod
    def _record(recorder, state, grad, iteration, eta, timings) -> bool:
        """The iteration's event (csvm.events.IterationEvent); True when training goes on."""
        timings = dict(timings)
        seconds = timings.pop("seconds")
        arrays = {
            "gradient": grad,
            "support": np.array(state.support, copy=True),
            "alpha": np.abs(state.dual_coef),
        }
        if state.network is not None:  # the figures show every layer; "gradient" is layer 1's
            arrays["layer_filters"] = [f.copy() for f in state.layer_filters]
            if grad is not None:
                arrays["layer_gradients"] = state.network.unpack(grad)
                arrays["gradient"] = arrays["layer_gradients"][0]
        return recorder.record(
            state.filters,
            arrays,
            iteration=iteration,
            step="iteration",
            objective=state.objective,
            **state.terms,
            filter_norm=float(np.linalg.norm(state.theta)),
            n_support=int(len(state.support)),
            train_accuracy=state.train_accuracy,
            svm_iterations=state.svm_iterations,
            svm_hit_max_iter=state.svm_hit_max_iter,
            svm_at_hard_cap=state.svm_at_hard_cap,
            eta=eta,
            seconds=seconds,
            timings=timings,
        )

    def _fixed_step(self, state, grad, eta, track, iteration, solve, best, recorder):
        """One "constant" or "relative" step from ``state`` (with momentum when asked):
        the new state, its timings and the step size for the next step.

        "constant" moves by ``eta * dT/df`` (the thesis's raw step) and counts rises of T
        towards a DivergenceError.  "relative" moves by ``eta * ||f|| / ||g|| * g``, a
        fraction ``eta`` of the filter's own norm whatever the size of T (which grows with
        N, C and the kernel's scale), and halves eta whenever T rises ("bold driver");
        docs/step_size.md derives it.
        """
        norm = float(np.linalg.norm(state.theta))
        step = -eta * grad
        if self.step == "relative":
            g_norm = float(np.linalg.norm(grad))
            if g_norm == 0.0:
                return None, None, eta
            network = state.network
            step = -eta * norm / g_norm * grad
            if network is not None:
                step = network.relative_move(state.theta, grad, eta)
        velocity = self.momentum * track["velocity"] + step
        track["velocity"] = velocity
        if not self.momentum:
            move = step
        else:
            move = self.momentum * velocity + step if self.nesterov else velocity
        new_filters = state.theta + move
        self._check_growth(best, state.theta, new_filters, recorder, iteration)
        new, timings = solve(new_filters, iteration + 1, state)
        rose = new.objective > state.objective
        if self.step == "relative":
            return new, timings, eta / 2 if rose else eta
        track["rises"] = track["rises"] + 1 if rose else 0
        if track["rises"] >= _RISING_PATIENCE:
            raise self._diverged(
                best,
                "objective-rising",
                f"the objective rose {track['rises']} iterations in a row with eta={eta:g}",
                recorder,
                iteration,
                norm,
                float(np.linalg.norm(new.theta)),
            )
        return new, timings, eta

    def _check_growth(self, best, old, new, recorder, iteration) -> None:
        old_norm, new_norm = float(np.linalg.norm(old)), float(np.linalg.norm(new))
        if not np.all(np.isfinite(new)):
            raise self._diverged(
                best, "non-finite", "the filter became non-finite", recorder, iteration, old_norm
            )
        # Tenfold growth counts from the unit norm at least: the first filter is small
        # (unit L1 norm) and the thesis's own runs grow it a few times over in one step.
        if new_norm > 10 * max(old_norm, 1.0):
            raise self._diverged(
                best,
                "norm-explosion",
                f"the filter norm grew from {old_norm:.3g} to {new_norm:.3g} in one step",
                recorder,
                iteration,
                old_norm,
                new_norm,
            )

    def _warn_unsolved(self, recorder: Recorder, iteration: int, C: float, bound: bool) -> None:
        """Say that a solve stopped at ``svm_max_iter`` (``bound``) or that a hard-margin
        solve put an alpha at the cap, and the likely causes."""
        pair = " v ".join(str(c) for c in recorder.base.get("pair", ()))
        if C >= HARD_MARGIN_C:
            cause = (
                "with C=None (hard margin) the data may not be separable in this kernel, or "
                "the inputs are unscaled (pixels should be in [0, 1]); set a finite C or "
                "scale X"
            )
        else:
            cause = (
                f"with C={C:g} the inputs may be unscaled (pixels should be in [0, 1]) or the "
                "kernel badly conditioned; scale X, lower C or gamma, or raise svm_max_iter"
            )
        if bound:
            what = f"stopped at its iteration bound (svm_max_iter={self.svm_max_iter})"
            flag = "svm_hit_max_iter"
        else:
            what, flag = (
                f"put an alpha at the hard-margin cap C={HARD_MARGIN_C:g}",
                "svm_at_hard_cap",
            )
        warnings.warn(
            f"KernelCSVM: the SVM solve {what} at iteration {iteration} of sub-problem "
            f"{recorder.base.get('classifier', 0)} ({pair}): {cause}. Its solution is "
            f"approximate; the events of that iteration say {flag}=True.",
            SVMIterationWarning,
            stacklevel=2,
        )

    def _diverged(
        self,
        best: KernelState,
        cause: str,
        what: str,
        recorder: Recorder,
        iteration: int,
        norm_before: float | None = None,
        norm_after: float | None = None,
    ) -> DivergenceError:
        """The DivergenceError to raise, carrying the best state; its event is emitted."""
        eta = float(self.eta)
        suggested = suggested_eta(eta, self.step, getattr(self, "_safe_eta", None))
        advice = f"Try a smaller step such as eta={suggested:g}, a larger lam, or step='armijo'."
        if any(e.get("svm_hit_max_iter") or e.get("svm_at_hard_cap") for e in recorder.history):
            # Non-separable or unscaled data: the alphas, and with them T's gradient, grow
            # towards C; no step size helps there.
            advice = (
                "The SVM solves had stopped at their iteration bound (svm_max_iter) or at "
                "the hard-margin cap: with "
                "C=None (hard margin) the data may not be separable in this kernel, or the "
                "inputs are unscaled (pixels should be in [0, 1]); set a finite C or scale X."
            )
        error = DivergenceError(
            f"Training diverged: {what} (step size eta={eta:g}). The best filter so far "
            f"was kept. {advice}",
            cause=cause,
            suggested_eta=suggested,
        )
        error.model = best
        recorder.diverged(iteration, error, norm_before, norm_after)
        return error
