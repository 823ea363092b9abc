"""Finite differences for the gradient checks (every analytic gradient is checked against
these: DEVELOPERS.md, "Standards")."""

import numpy as np


def central_difference(fun, x, h=1e-6):
    """``d fun / d x`` by central differences, one entry of ``x`` at a time."""
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[idx] = h
        grad[idx] = (fun(x + step) - fun(x - step)) / (2 * h)
    return grad


def rel_error(a, b):
    """``|a - b| / |b|`` (``b`` the reference; a zero reference counts as tiny)."""
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300)
