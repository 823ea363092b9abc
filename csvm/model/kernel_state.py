"""One SVM solve of the K-CSVM at given filters, its outer objective T and T's gradient.

The estimator (:mod:`csvm.model.kernelised`) steps between such solves; the Filter lab
(:mod:`csvm.analysis.lab`) and virtual support vectors (:mod:`csvm.model.virtual`) use them
alone.  The filters are either one layer's ``(k, C, p, q)`` (the thesis's model) or, with
a :class:`~csvm.model.layers.Network`, the flat vector of a stack's filters.

    T(f) = sum(alpha) - 1/2 a^T K a + r(f)
    dT/df = dr/df - 1/2 sum_ij a_i a_j dK_ij/df       (Danskin: alpha held at its optimum)
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from sklearn.svm import SVC

from csvm.model.conv import correlate
from csvm.model.kernels import KernelSpec, kernel_gradient, kernel_map_gradient, kernel_matrix
from csvm.model.layers import Network, parse_layers
from csvm.model.regularisers import regulariser_gradient, regulariser_value

__all__ = [
    "HARD_MARGIN_C",
    "features",
    "KernelState",
    "outer_objective",
    "regulariser_of",
    "solve_on_filters",
    "solve_state",
    "state_gradient",
]

#: The C that stands for "no upper bound on alpha" (erratum 5): LIBSVM needs a number.
HARD_MARGIN_C = 1e10


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
    svm_iterations: int = 0  # LIBSVM's iterations for this solve
    svm_hit_max_iter: bool = False  # it stopped at its bound, not at its tolerance
    # A hard-margin solve with an alpha at HARD_MARGIN_C: no separating solution exists
    # (scikit-learn 1.9's LIBSVM gets there in ~100 iterations; older ones ran to the bound).
    svm_at_hard_cap: bool = False
    network: Network | None = None  # None: one layer of plain correlations

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


def features(X4: np.ndarray, theta: np.ndarray, network: Network | None) -> np.ndarray:
    """The feature maps of X4 at ``theta`` (in X4's precision, float32 at least)."""
    if network is None:
        return correlate(X4, theta)
    return network.forward(X4, theta)


def regulariser_of(name: str, theta: np.ndarray, lam: float, network: Network | None) -> float:
    """``r(theta)``: over all filters together for one layer (eq. 4.12), per layer for a stack."""
    if network is None:
        return regulariser_value(name, theta, lam)
    return network.regulariser(name, theta, lam)


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
    layers: str | None = None,
) -> tuple[float, np.ndarray]:
    """T(f) at the SVM optimum and its gradient, for one binary problem.

    Parameters
    ----------
    X4 : array (n, C, H, W)
    y : array (n,) of +-1
    filters : array (k, C, p, q), or the flat vector of every layer's filters when
        ``layers`` describes a stack (:mod:`csvm.model.layers`).
    layers : str or None
        A stack of layers (e.g. ``"3x3x2-abs-avg2,3x3x2"``); None is one plain layer.

    Returns
    -------
    objective : float
    gradient : array like ``filters``
    """
    params = KernelSpec(kernel, degree, gamma, coef0)
    network = Network(parse_layers(layers), X4.shape[1:]) if layers else None
    state, _ = solve_state(
        X4,
        y,
        np.asarray(filters, dtype=np.float64),
        params,
        HARD_MARGIN_C if C is None else C,
        regulariser,
        lam,
        svm_tol,
        network=network,
    )
    return state.objective, state_gradient(X4, state, params, regulariser, lam)


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
    X4, y, theta, params, C, regulariser, lam, svm_tol, K_buffer=None, max_iter=-1, network=None
):
    """Kernel + SVM at ``theta``: the solved state and the timings.

    ``params`` is a :class:`~csvm.model.kernels.KernelSpec` (a mapping with its four keys
    is read as one); the state keeps it as ``kernel_params``.

    ``K_buffer`` (n x n float64) is overwritten with the training kernel; the state keeps
    only the support vectors' block, so line-search trials never hold two n x n kernels.
    ``max_iter`` bounds LIBSVM's iterations (-1: no bound); whether the solve stopped
    there is read from ``n_iter_``, not from scikit-learn's ConvergenceWarning, because
    catching warnings swaps process-wide filters and the sub-problems run in threads.
    """
    t0 = time.perf_counter()
    Z = features(X4, theta.astype(X4.dtype), network)
    params = KernelSpec.of(params)
    K = kernel_matrix(Z.reshape(len(Z), -1), out=K_buffer, **params)
    t1 = time.perf_counter()
    svc = SVC(kernel="precomputed", C=C, tol=svm_tol, cache_size=200, max_iter=max_iter)
    svc.fit(K, y)
    iterations = int(svc.n_iter_[0])
    t2 = time.perf_counter()
    support = svc.support_
    a = svc.dual_coef_[0].astype(np.float64)
    K_ss = K[np.ix_(support, support)]
    sum_alpha = float(np.abs(a).sum())
    margin = 0.5 * float(a @ K_ss @ a)
    reg = regulariser_of(regulariser, theta, lam, network)
    decision = K[:, support] @ a + svc.intercept_[0]
    state = KernelState(
        theta=theta,
        support=support,
        dual_coef=a,
        intercept=float(svc.intercept_[0]),
        Z_sv=Z[support],
        K_sv=K_ss,
        objective=sum_alpha - margin + reg,
        terms={"sum_alpha": sum_alpha, "margin_term": margin, "regulariser": reg},
        train_accuracy=float(np.mean(np.where(decision > 0, 1, -1) == y)),
        kernel_params=params,
        svm_iterations=iterations,
        svm_hit_max_iter=bool(max_iter > 0 and iterations >= max_iter),
        svm_at_hard_cap=bool(C >= HARD_MARGIN_C and np.abs(a).max(initial=0.0) >= 0.5 * C),
        network=network,
    )
    return state, {"kernel": t1 - t0, "svm": t2 - t1}


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
