"""Projected gradient steps with the Armijo rule, shared by the models that use them.

``KernelCSVM._armijo`` (csvm.model.kernelised) backtracks on the filter objective T(f); GMKL
(Varma & Babu) does the same on the kernel weights T(d) with the projection onto
``d >= 0``.  This is that rule as a public function with the same constants (KernelCSVM
imports them from here, so the two cannot drift apart); ``KernelCSVM._armijo`` could call it
with ``project=None``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["ARMIJO_C", "MAX_BACKTRACKS", "nonnegative", "projected_armijo"]

#: Sufficient-decrease constant and backtracking bound (KernelCSVM's too).
ARMIJO_C: float = 1e-4
MAX_BACKTRACKS: int = 20


def nonnegative(x: np.ndarray) -> np.ndarray:
    """The projection onto the orthant ``x >= 0``."""
    return np.maximum(x, 0.0)


def projected_armijo(
    x: np.ndarray,
    value: float,
    grad: np.ndarray,
    evaluate: Callable[[np.ndarray], tuple[float, Any]],
    step: float,
    *,
    project: Callable[[np.ndarray], np.ndarray] | None = nonnegative,
    c: float = ARMIJO_C,
    max_backtracks: int = MAX_BACKTRACKS,
) -> tuple[np.ndarray | None, Any, float]:
    """One projected gradient step ``x+ = P(x - t grad)`` with Armijo backtracking.

    Trial steps ``t = step, step/2, ...`` until the sufficient decrease of Bertsekas's
    projected Armijo rule holds: ``f(x+) <= f(x) + c grad.(x+ - x)`` (for ``project=None``
    this is the usual ``f(x) - c t |grad|^2``).

    Parameters
    ----------
    x : array
        The current point (feasible).
    value : float
        ``f(x)``.
    grad : array like ``x``
        The gradient of ``f`` at ``x``.
    evaluate : callable
        ``evaluate(x) -> (f(x), payload)``; each call is one SVM solve for the callers
        here, so the payload (the solved SVM) is handed back with the accepted point.
    step : float
        The first trial step.
    project : callable or None, default=nonnegative
        The projection onto the feasible set; None for unconstrained steps.
    c : float, default=ARMIJO_C
    max_backtracks : int, default=MAX_BACKTRACKS

    Returns
    -------
    x_new, payload, t : the accepted point, its payload and step, or ``(None, None, step)``
        when no trial decreased ``f`` enough or the projected step does not move ``x``
        (a stationary point of the constrained problem).
    """
    trial = float(step)
    for _ in range(int(max_backtracks)):
        x_new = x - trial * grad
        if project is not None:
            x_new = project(x_new)
        move = x_new - x
        if not np.any(move):
            return None, None, step
        if np.all(np.isfinite(x_new)):
            new_value, payload = evaluate(x_new)
            if new_value <= value + c * float(np.sum(grad * move)):
                return x_new, payload, trial
        trial /= 2.0
    return None, None, step
