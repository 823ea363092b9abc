"""The filter lab for a stack of layers: the SVM on a learned stack held fixed, and where
dT/df points for every layer's filters (issue 19, item 4).

It reuses the lab's checks (:func:`csvm.analysis.lab.binary_problem`) and the K-CSVM's own solve
and gradient, so the numbers equal those of a layered ``KernelCSVM`` at those filters with
``eta=0``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from csvm.analysis.lab import binary_problem, lab_images
from csvm.model.layers import Network, parse_layers
from csvm.model.solve_settings import SolveSettings

__all__ = ["StackResult", "solve_fixed_stack"]


@dataclass(frozen=True)
class StackResult:
    """One SVM solve on a stack's maps, and the gradient of T for every layer."""

    objective: float
    terms: dict[str, float]
    train_accuracy: float
    test_accuracy: float | None
    n_support: int
    layer_filters: list[np.ndarray]
    layer_gradients: list[np.ndarray]

    def gradient_norms(self) -> list[float]:
        """||dT/df_l|| per layer, and what a relative step moves: each layer alike."""
        return [float(np.linalg.norm(g)) for g in self.layer_gradients]


def solve_fixed_stack(
    X_train: Any,
    y_train: Any,
    layer_filters: list[Any],
    layers: str,
    *,
    kernel: str = "rbf",
    degree: float = 2,
    gamma: float = 0.05,
    coef0: float = 1.0,
    C: float | None = None,
    regulariser: str = "dfo2",
    lam: float = 0.1,
    svm_tol: float = 1e-3,
    X_test: Any = None,
    y_test: Any = None,
) -> StackResult:
    """Solve the SVM on the maps of a stack of layers held fixed, and dT/df per layer.

    Parameters
    ----------
    X_train, y_train : as for :func:`csvm.analysis.lab.solve_fixed_filter`
    layer_filters : list of arrays (k_l, C_l, p_l, q_l)
        Every layer's filters (``KernelCSVM.layer_filters_[0]`` of a run).
    layers : str
        The stack (:mod:`csvm.model.layers`), e.g. ``"5x5x8-abs-max2,3x3x8-abs-max2"``.
    kernel, degree, gamma, coef0, C, regulariser, lam, svm_tol, X_test, y_test
        As for :func:`csvm.analysis.lab.solve_fixed_filter`.

    Raises
    ------
    ValueError
        When the filters do not have the shapes the stack gives these images.
    """
    settings = SolveSettings.from_keywords(
        kernel=kernel, degree=degree, gamma=gamma, coef0=coef0,
        C=C, regulariser=regulariser, lam=lam, svm_tol=svm_tol,
    )  # fmt: skip
    problem = binary_problem(X_train, y_train, settings)
    network = Network(parse_layers(layers), problem.X4.shape[1:])
    filters = [np.asarray(f, dtype=np.float64) for f in layer_filters]
    expected = [tuple(s) for s in network.filter_shapes]
    if [f.shape for f in filters] != expected:
        raise ValueError(
            f"The filters have shapes {[f.shape for f in filters]}, but the layers {layers!r} "
            f"on these images need {expected}."
        )
    theta = network.pack(filters)
    state, _ = problem.solve(theta, network)
    grad = problem.gradient(state)
    test = None
    if X_test is not None and y_test is not None:
        y = np.where(np.asarray(y_test).ravel() == problem.classes[1], 1, -1)
        decision = state.decision_function(lab_images(X_test, "X_test"))
        test = float(np.mean(np.where(decision > 0, 1, -1) == y))
    return StackResult(
        objective=state.objective,
        terms=dict(state.terms),
        train_accuracy=state.train_accuracy,
        test_accuracy=test,
        n_support=int(len(state.support)),
        layer_filters=filters,
        layer_gradients=network.unpack(grad),
    )
