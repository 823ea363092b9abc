"""One SVM solve of the K-CSVM at given filters, its outer objective T and T's gradient.

The estimator (:mod:`csvm.model.kernelised`) steps between such solves; the Filter lab
(:mod:`csvm.analysis.lab`) and virtual support vectors (:mod:`csvm.model.virtual`) use them
alone.  The filters are either one layer's ``(k, C, p, q)`` (the thesis's model) or, with
a :class:`~csvm.model.layers.Network`, the flat vector of a stack's filters.

    T(f) = sum(alpha) - 1/2 a^T K a + r(f)
    dT/df = dr/df - 1/2 sum_ij a_i a_j dK_ij/df       (Danskin: alpha held at its optimum)

A solve is LIBSVM's on the whole ``n x n`` kernel (``solver="libsvm"``), or the warm solver
of :mod:`csvm.model.warm_solver` (``solver="warm"``): it starts from the previous solve's
alphas and forms only the kernel columns it touches (the support vectors and the points
that violate the KKT conditions), by one float32 BLAS product per batch from the maps.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np
from sklearn.svm import SVC

from csvm.model.conv import correlate
from csvm.model.kernel_columns import KernelColumns, blas_threads, one_blas_thread
from csvm.model.kernels import KernelSpec, kernel_gradient, kernel_map_gradient, kernel_matrix
from csvm.model.layers import Network, parse_layers
from csvm.model.regularisers import regulariser_gradient, regulariser_value
from csvm.model.solve_settings import HARD_MARGIN_C, SolveSettings
from csvm.model.warm_solver import solve_dual

__all__ = [
    "HARD_MARGIN_C",
    "SOLVERS",
    "WARM_FROM",
    "ProblemSolves",
    "features",
    "KernelState",
    "outer_objective",
    "regulariser_of",
    "resolve_solver",
    "solve_on_filters",
    "solve_state",
    "state_gradient",
]

#: The dual solvers: LIBSVM from scratch on the whole kernel, or warm from the last alphas.
SOLVERS = ("warm", "libsvm")
#: solver="auto" solves warm above this many images (a sub-problem's); below, LIBSVM on the
#: whole kernel is as fast (measured on MNIST 3 v 5, poly-2 and RBF: docs/benchmarks.md).
WARM_FROM = 1024


def resolve_solver(solver: str, n_images: int) -> str:
    """The dual solver ``solver`` names for a problem of ``n_images``: "auto" is "warm"
    above :data:`WARM_FROM` images and "libsvm" otherwise; any other name is itself."""
    if solver == "auto":
        return "warm" if n_images > WARM_FROM else "libsvm"
    return solver


@dataclass
class KernelState:
    """One solved SVM at one set of filters: everything needed to predict and to step."""

    theta: np.ndarray  # the filters (k, C, p, q) float64, or a network's flat vector
    support: np.ndarray
    dual_coef: np.ndarray  # a_i = alpha_i y_i of the support vectors
    intercept: float
    Z_sv: np.ndarray  # (s, k, H', W') float32 feature maps of the support vectors
    K_sv: np.ndarray = field(repr=False)  # kernel among the support vectors
    objective: float
    terms: dict[str, float]
    train_accuracy: float
    kernel_params: KernelSpec = field(repr=False, default_factory=KernelSpec)
    svm_iterations: int = 0  # the solver's iterations for this solve (warm: see warm_solver)
    svm_hit_max_iter: bool = False  # it stopped at its bound, not at its tolerance
    # A hard-margin solve with an alpha at HARD_MARGIN_C: no separating solution exists
    # (scikit-learn 1.9's LIBSVM gets there in ~100 iterations; older ones ran to the bound).
    svm_at_hard_cap: bool = False
    network: Network | None = None  # None: one layer of plain correlations
    n_train: int = 0  # training points (the length of alpha)
    C: float = 0.0  # the bound on alpha this solve had

    def alpha(self) -> np.ndarray:
        """Every training point's alpha (0 off the support): a warm start's ``alpha0``."""
        alpha = np.zeros(self.n_train)
        alpha[self.support] = np.abs(self.dual_coef)
        return alpha

    @property
    def filters(self) -> np.ndarray:
        """The first layer's filters ``(k, C, p, q)`` (all of them without a network)."""
        return self.theta if self.network is None else self.network.unpack(self.theta)[0]

    @property
    def layer_filters(self) -> list[np.ndarray]:
        """Every layer's filters, first layer first."""
        return [self.theta] if self.network is None else self.network.unpack(self.theta)

    def features(self, X4: np.ndarray) -> np.ndarray:
        """The maps the SVM sees, in float64: predictions must not depend on how the rows
        are batched."""
        return features(X4, self.theta.astype(np.float64), self.network)

    def decision_function(self, X4: np.ndarray) -> np.ndarray:
        n = len(X4)
        out = np.empty(n)
        # Chunks keep the (chunk x n_sv) test kernel small for large test sets.
        for start in range(0, n, 2048):
            Z = self.features(X4[start : start + 2048])
            K = kernel_matrix(
                Z.reshape(len(Z), -1),
                self.Z_sv.reshape(len(self.Z_sv), -1).astype(np.float64),
                **self.kernel_params,
            )
            out[start : start + 2048] = K @ self.dual_coef + self.intercept
        return out


def features(
    X4: np.ndarray, theta: np.ndarray, network: Network | None, workers: int = 1
) -> np.ndarray:
    """The feature maps of X4 at ``theta`` (in X4's precision, float32 at least); the maps
    of one channel and a few filters on up to ``workers`` threads."""
    if network is None:
        if X4.ndim == 4 and X4.shape[1] == 1 and theta.ndim == 4 and theta.shape[1] == 1:
            if theta.shape[0] <= _TAP_MAX_FILTERS:
                return _correlate_taps(X4, theta, workers)
        return correlate(X4, theta)
    return network.forward(X4, theta)


#: At most this many one-channel filters go through :func:`_correlate_taps`: fewer than
#: :func:`csvm.model.conv.correlate` needs before it forms its maps by one GEMM.
_TAP_MAX_FILTERS = 3
#: Images per block of :func:`_correlate_taps`: a block's images and maps stay in the cache
#: while its p*q taps are added to them.
_TAP_BLOCK = 256
#: At most this many threads share :func:`_correlate_taps`'s blocks.
_MAX_TAP_WORKERS = 4


def _correlate_taps(X4: np.ndarray, filters: np.ndarray, workers: int = 1) -> np.ndarray:
    """:func:`csvm.model.conv.correlate` of one-channel images with a few filters, equal to
    it bit for bit (the same float32 products added in the same order), in less time.

    ``correlate`` passes over all images once per tap, each pass a strided walk of
    rows 24 pixels long; here a block of images is laid out pixel-major (the images side
    by side in the innermost axis) and its maps built there, so every operation runs
    along contiguous rows as long as the block and stays in the cache: 12 ms instead of
    29 ms at the thesis's 1,895 MNIST images (one core, 256 images a block; 128 took
    18 ms, 512 14 ms).  numpy lets go of the GIL in these loops, so ``workers`` threads
    share the blocks (7.8 ms on two cores).
    """
    n, _, H, W = X4.shape
    k, _, p, q = filters.shape
    h2, w2 = H - p + 1, W - q + 1
    dtype = np.result_type(X4.dtype, filters.dtype, np.float32)
    taps = filters[:, 0].astype(dtype)
    out = np.empty((n, k, h2, w2), dtype=dtype)

    def blocks(first: int, step: int) -> None:
        block = min(_TAP_BLOCK, n)
        images = np.empty((H, W, block), dtype=dtype)
        maps = np.empty((h2, w2, block), dtype=dtype)
        product = np.empty((h2, w2, block), dtype=dtype)
        for start in range(first * block, n, step * block):
            chunk = X4[start : start + block, 0]
            m = len(chunk)
            x, z, t = images[:, :, :m], maps[:, :, :m], product[:, :, :m]
            x[...] = chunk.transpose(1, 2, 0)
            for f in range(k):
                np.multiply(x[:h2, :w2], taps[f, 0, 0], out=z)
                for a in range(p):
                    for b in range(q):
                        if a or b:
                            np.multiply(x[a : a + h2, b : b + w2], taps[f, a, b], out=t)
                            z += t
                out[start : start + m, f] = z.transpose(2, 0, 1)

    workers = max(1, min(int(workers), -(-n // _TAP_BLOCK), _MAX_TAP_WORKERS))
    if workers == 1:
        blocks(0, 1)
    else:
        with ThreadPoolExecutor(workers) as pool:
            for done in [pool.submit(blocks, i, workers) for i in range(workers)]:
                done.result()
    return out


def regulariser_of(name: str, theta: np.ndarray, lam: float, network: Network | None) -> float:
    """``r(theta)``: over all filters together for one layer (eq. 4.12), per layer for a stack."""
    if network is None:
        return regulariser_value(name, theta, lam)
    return network.regulariser(name, theta, lam)


def outer_objective(
    X4: np.ndarray,
    y: np.ndarray,
    filters: np.ndarray,
    settings: SolveSettings | None = None,
    *,
    layers: str | None = None,
    solver: str = "libsvm",
) -> tuple[float, np.ndarray]:
    """T(f) at the SVM optimum and its gradient, for one binary problem.

    Parameters
    ----------
    X4 : array (n, C, H, W)
    y : array (n,) of +-1
    filters : array (k, C, p, q), or the flat vector of every layer's filters when
        ``layers`` describes a stack (:mod:`csvm.model.layers`).
    settings : SolveSettings, optional
        The kernel, C, regulariser, lam and svm_tol; None: ``SolveSettings()`` (the
        thesis's poly-2, hard margin, DFO1 with lam 0.01).
    layers : str or None
        A stack of layers (e.g. ``"3x3x2-abs-avg2,3x3x2"``); None is one plain layer.
    solver : {"libsvm", "warm"}, default="libsvm"
        LIBSVM's solve, or the warm solver's exact one (:mod:`csvm.model.warm_solver`).

    Returns
    -------
    objective : float
    gradient : array like ``filters``

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((20, 1, 6, 6)); y = np.where(np.arange(20) < 10, 1, -1)
    >>> X[y > 0, :, :3] += 0.5
    >>> settings = SolveSettings.from_keywords(kernel="rbf", gamma=0.1, C=1.0)
    >>> T, grad = outer_objective(X, y, np.ones((1, 1, 3, 3)) / 9, settings)
    >>> grad.shape
    (1, 1, 3, 3)
    """
    s = SolveSettings() if settings is None else settings
    network = Network(parse_layers(layers), X4.shape[1:]) if layers else None
    state, _ = solve_state(
        X4,
        y,
        np.asarray(filters, dtype=np.float64),
        s.kernel,
        s.solver_C,
        s.regulariser,
        s.lam,
        s.svm_tol,
        network=network,
        solver=solver,
        exact=solver == "warm",
    )
    return state.objective, state_gradient(X4, state, s.kernel, s.regulariser, s.lam)


def solve_on_filters(
    X4: np.ndarray,
    y: np.ndarray,
    theta: np.ndarray,
    kernel_params: KernelSpec | Mapping,
    C: float | None = None,
    network: Network | None = None,
    svm_tol: float = 1e-3,
):
    """One SVM solve on the maps of fixed filters, with no step on them: what a fixed
    filter (a random start, a blur, a delta) does in the place of a learned one.

    Parameters
    ----------
    X4 : ndarray (n, C, H, W)
        Training images.
    y : ndarray of ±1
    theta : ndarray
        The filters ``(k, C, p, q)``, or a stack's packed vector (``network.pack``).
    kernel_params : KernelSpec or mapping
        The kernel on the maps (a mapping with ``kernel``, ``degree``, ``gamma``,
        ``coef0`` is read as one).
    C : float or None, default None
        None: hard margin (:data:`HARD_MARGIN_C`).
    network : Network, optional
        The stack of layers ``theta`` belongs to (a fitted K-CSVM's ``network_``).
    svm_tol : float, default 1e-3

    Returns
    -------
    state
        With ``decision_function(X4)``, ``support``, ``dual_coef``, ``filters`` and
        ``objective`` (T at ``theta`` without a regulariser).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((20, 1, 8, 8)); y = np.where(np.arange(20) < 10, 1, -1)
    >>> X[y > 0, :, :4] += 1.0  # the top half brighter in one class
    >>> params = KernelSpec("rbf", gamma=0.1)
    >>> state = solve_on_filters(X, y, np.ones((1, 1, 3, 3)) / 9, params)
    >>> state.decision_function(X).shape
    (20,)
    """
    C = HARD_MARGIN_C if C is None else float(C)
    state, _ = solve_state(X4, y, theta, kernel_params, C, "none", 0.0, svm_tol, network=network)
    return state


def solve_state(
    X4,
    y,
    theta,
    params,
    C,
    regulariser,
    lam,
    svm_tol,
    K_buffer=None,
    max_iter=-1,
    network=None,
    *,
    solver="libsvm",
    alpha0=None,
    exact=None,
):
    """Kernel + SVM at ``theta``: the solved state and the timings.

    ``params`` is a :class:`~csvm.model.kernels.KernelSpec` (a mapping with its four keys
    is read as one); the state keeps it as ``kernel_params``.

    ``K_buffer`` (n x n float64) is overwritten with the training kernel; the state keeps
    only the support vectors' block, so line-search trials never hold two n x n kernels.
    ``max_iter`` bounds LIBSVM's iterations (-1: no bound); whether the solve stopped
    there is read from ``n_iter_``, not from scikit-learn's ConvergenceWarning, because
    catching warnings swaps process-wide filters and the sub-problems run in threads.
    ``solver="warm"`` solves with :func:`csvm.model.warm_solver.solve_dual` from
    ``alpha0`` and forms only the kernel columns it needs (``K_buffer`` is unused).  A
    warm solve goes to the exact optimum (``exact``, by default whenever ``alpha0`` is
    given), so its answer does not depend on where it started; a cold one (no
    ``alpha0``) on at most 2,048 points is LIBSVM's own, on the same kernel as
    ``solver="libsvm"``, unless ``exact``.
    """
    params = KernelSpec.of(params)
    if solver == "warm":
        exact = alpha0 is not None if exact is None else bool(exact)
        return _solve_warm(
            X4, y, theta, params, C, regulariser, lam, svm_tol, max_iter, network, alpha0,
            exact,
        )  # fmt: skip
    if solver != "libsvm":
        raise ValueError(f"solver must be one of {', '.join(SOLVERS)}, got {solver!r}")
    t0 = time.perf_counter()
    Z = features(X4, theta.astype(X4.dtype), network)
    K = kernel_matrix(Z.reshape(len(Z), -1), out=K_buffer, **params)
    t1 = time.perf_counter()
    svc = SVC(kernel="precomputed", C=C, tol=svm_tol, cache_size=200, max_iter=max_iter)
    svc.fit(K, y)
    iterations = int(svc.n_iter_[0])
    t2 = time.perf_counter()
    support = svc.support_
    a = svc.dual_coef_[0].astype(np.float64)
    K_ss = K[np.ix_(support, support)]
    decision = K[:, support] @ a + svc.intercept_[0]
    state = _state(
        X4, y, theta, params, C, regulariser, lam, network, Z, support, a,
        float(svc.intercept_[0]), K_ss, decision, iterations,
        bool(max_iter > 0 and iterations >= max_iter),
    )  # fmt: skip
    return state, {"kernel": t1 - t0, "svm": t2 - t1}


def _solve_warm(
    X4, y, theta, params, C, regulariser, lam, svm_tol, max_iter, network, alpha0, exact
):
    """:func:`solve_state` by the warm solver: the kernel columns it needs, from the maps."""
    t0 = time.perf_counter()
    threads = blas_threads()
    Z = features(X4, theta.astype(X4.dtype), network, workers=threads)
    Zf = Z.reshape(len(Z), -1)
    t1 = time.perf_counter()

    def kernel(A, B):  # one BLAS product (float32 for float32 maps)
        return kernel_matrix(A, B, **params)

    # LIBSVM's whole kernel (a cold start) on the threads in effect, as solver="libsvm"
    # forms it; batches of columns on one (two threads spin-wait on a shared machine).
    columns = KernelColumns(Z=Zf, kernel=kernel, threads=threads, batch_threads=1)
    bound = max_iter if max_iter > 0 else 2**62
    y_pm = np.where(np.asarray(y) > 0, 1.0, -1.0)
    solution = solve_dual(columns, y_pm, C, alpha0=alpha0, tol=svm_tol, exact=exact, max_iter=bound)
    t2 = time.perf_counter()
    support = solution.support
    a = solution.alpha[support] * y_pm[support]
    K = columns.whole_matrix
    if solution.rounds == 1 and solution.libsvm_calls == 1 and K is not None:
        # LIBSVM's own solve on the whole kernel (a cold start): the state is read from
        # that kernel as solver="libsvm" reads it, to the last bit.
        K_ss = K[np.ix_(support, support)]
        decision = K[:, support] @ a + solution.b
    else:
        K_ss = columns.block(support, support)
        decision = solution.support_columns @ a + solution.b
    state = _state(
        X4, y, theta, params, C, regulariser, lam, network, Z, support, a, solution.b,
        K_ss, decision, solution.iterations, solution.hit_max_iter,
    )  # fmt: skip
    kernel_seconds = (t1 - t0) + columns.seconds
    return state, {"kernel": kernel_seconds, "svm": (t2 - t0) - kernel_seconds}


def _state(
    X4, y, theta, params, C, regulariser, lam, network, Z, support, a, b, K_ss, decision,
    iterations, hit_max_iter,
):  # fmt: skip
    """The :class:`KernelState` of one solve (either solver)."""
    sum_alpha = float(np.abs(a).sum())
    margin = 0.5 * float(a @ K_ss @ a)
    reg = regulariser_of(regulariser, theta, lam, network)
    return KernelState(
        theta=theta,
        support=support,
        dual_coef=a,
        intercept=float(b),
        Z_sv=Z[support],
        K_sv=K_ss,
        objective=sum_alpha - margin + reg,
        terms={"sum_alpha": sum_alpha, "margin_term": margin, "regulariser": reg},
        train_accuracy=float(np.mean(np.where(decision > 0, 1, -1) == y)),
        kernel_params=params,
        svm_iterations=int(iterations),
        svm_hit_max_iter=bool(hit_max_iter),
        svm_at_hard_cap=bool(C >= HARD_MARGIN_C and np.abs(a).max(initial=0.0) >= 0.5 * C),
        network=network,
        n_train=len(y),
        C=float(C),
    )


def state_gradient(X4, state, params, regulariser, lam):
    """dT/d(theta) at a solved state: the regulariser's gradient minus half the quadratic
    term's, carried from the maps back to the filters of every layer."""
    network = state.network
    if network is None:
        quad = kernel_gradient(
            X4[state.support],
            state.Z_sv,
            state.dual_coef,
            state.theta.shape[-2:],
            K_sv=state.K_sv,
            **params,
        )
        return regulariser_gradient(regulariser, state.theta, lam) - 0.5 * quad
    dZ = kernel_map_gradient(state.Z_sv, state.dual_coef, K_sv=state.K_sv, **params)
    quad = network.backward(X4[state.support], state.theta, dZ)
    return network.regulariser_gradient(regulariser, state.theta, lam) - 0.5 * quad


class ProblemSolves:
    """The SVM solves of one binary problem along a fit, and T's gradient at each.

    Parameters
    ----------
    X4 : ndarray (n, C, H, W)
        The problem's images.
    y : ndarray (n,) of +-1
    settings : SolveSettings
        The kernel, regulariser, lam and svm_tol (C is given per solve: ``C_last_only``
        changes it along a fit).
    solver : {"auto", "warm", "libsvm"}, default="auto"
        "auto" is "warm" on more than :data:`WARM_FROM` images, else "libsvm".
    max_iter : int, default=-1
        Bound on one solve's iterations (-1: none).
    network : Network, optional
        The stack of layers the filters belong to.

    Attributes
    ----------
    solver : str
        "warm" or "libsvm", as resolved.
    """

    def __init__(
        self,
        X4: np.ndarray,
        y: np.ndarray,
        settings: SolveSettings,
        solver: str = "auto",
        max_iter: int = -1,
        network: Network | None = None,
    ):
        solver = resolve_solver(solver, len(X4))
        self.X4, self.y, self.settings, self.solver = X4, y, settings, solver
        self.max_iter, self.network = max_iter, network
        # LIBSVM's n x n kernel, reused by every solve of this problem (the warm solver
        # forms only the columns it needs).
        self._K_buffer = np.empty((len(X4), len(X4))) if solver == "libsvm" else None

    def __call__(
        self, theta: np.ndarray, C: float, start_from: KernelState | None = None
    ) -> tuple[KernelState, dict[str, float]]:
        """The state at filters ``theta`` with bound ``C``, and its timings.

        The warm solver starts from ``start_from``'s alphas (an accepted state: Armijo's
        trials all start from the same one) unless C changed since (``C_last_only``): a
        first solve, and one with a new C, are cold, LIBSVM's own on up to 2,048 images,
        so the thesis's curve follows LIBSVM's from its first, largest step."""
        s = self.settings
        warm = self.solver == "warm" and start_from is not None and start_from.C == C
        return solve_state(
            self.X4, self.y, theta, s.kernel, C, s.regulariser, s.lam, s.svm_tol,
            self._K_buffer, self.max_iter, self.network, solver=self.solver,
            alpha0=start_from.alpha() if warm else None,
        )  # fmt: skip

    def gradient(self, state: KernelState) -> np.ndarray:
        """dT/d(theta) at a solved state (:func:`state_gradient`); after a warm solve on
        one BLAS thread (its small products; :func:`csvm.model.warm_solver.one_blas_thread`)."""
        s = self.settings
        with one_blas_thread() if self.solver == "warm" else nullcontext():
            return state_gradient(self.X4, state, s.kernel, s.regulariser, s.lam)
