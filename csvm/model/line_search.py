"""Projected gradient steps with the Armijo rule, shared by the models that use them.

:func:`armijo_backtrack` (KernelCSVM's ``step="armijo"``) backtracks on the filter
objective T(f); GMKL (Varma & Babu) does the same on the kernel weights T(d) with the
projection onto ``d >= 0`` (:func:`projected_armijo`), with the same constants.  The step
sizes KernelCSVM suggests after a divergence are here too (:func:`suggested_eta`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "ARMIJO_C",
    "MAX_BACKTRACKS",
    "armijo_backtrack",
    "nonnegative",
    "projected_armijo",
    "safe_constant_eta",
    "suggested_eta",
]

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


def armijo_backtrack(
    state: Any, grad: np.ndarray, eta: float, solve: Callable[[np.ndarray], tuple[Any, dict]]
) -> tuple[Any, dict[str, float] | None, float]:
    """KernelCSVM's Armijo step on the filters: backtrack from twice the last accepted step
    until T decreases sufficiently (``T(f - t g) <= T(f) - ARMIJO_C t |g|^2``).

    Parameters
    ----------
    state : KernelState
        The accepted state (its ``theta`` and ``objective``).
    grad : ndarray like ``state.theta``
        dT/d(theta) there.
    eta : float
        The last accepted step.
    solve : callable
        ``solve(theta) -> (state, timings)``: one SVM solve per trial, whose "kernel" and
        "svm" seconds are summed over the trials.

    Returns
    -------
    new, timings, step : the accepted state, the trials' timings and its step, or
        ``(None, None, eta)`` when no trial decreased T enough.
    """
    g2 = float(np.sum(grad * grad))
    # Start from twice the last accepted step, but never move the filter by more than
    # its own norm at once: the gradient can be huge where the kernel is steep.
    trial = min(2.0 * eta, np.linalg.norm(state.theta) / max(np.sqrt(g2), 1e-300))
    spent = {"kernel": 0.0, "svm": 0.0}
    for _ in range(MAX_BACKTRACKS):
        new_filters = state.theta - trial * grad
        if np.all(np.isfinite(new_filters)):
            new, timings = solve(new_filters)
            spent = {key: spent[key] + timings[key] for key in spent}
            if new.objective <= state.objective - ARMIJO_C * trial * g2:
                return new, spent, trial
        trial /= 2.0
    return None, None, eta


def safe_constant_eta(norm: float, grad: np.ndarray | None) -> float | None:
    """The constant step that moves the first filter by a tenth of its norm (None without
    a gradient)."""
    g_norm = 0.0 if grad is None else float(np.linalg.norm(grad))
    return 0.1 * norm / g_norm if g_norm > 0 else None


def suggested_eta(eta: float, step: str, safe: float | None) -> float:
    """The step size to suggest after a divergence at ``eta``: a tenth of it, or, for
    constant steps, the smaller 1-2-5 value at or below ``safe`` (the step that moves the
    first filter by a tenth of its norm) when that is smaller still; a tenth alone left
    the "too-large step" preset diverging again at 100 and 10.

    Examples
    --------
    >>> suggested_eta(1000.0, "constant", 0.37)
    0.2
    >>> suggested_eta(1000.0, "relative", 0.37)
    100.0
    """
    tenth = eta / 10
    if step != "constant" or not safe or not np.isfinite(safe) or safe >= tenth:
        return tenth
    decade = 10.0 ** np.floor(np.log10(safe))
    mantissa = max(m for m in (1, 2, 5) if m * decade <= safe * (1 + 1e-9))
    return float(f"{mantissa * decade:.3g}")
