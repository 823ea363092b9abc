"""The small CNN's elementwise pieces: its activations and their gradients, and an in-place
``y += a * x`` through BLAS (:class:`csvm.model.baselines.SmallCNN` trains with them)."""

from __future__ import annotations

import numpy as np
from scipy.linalg.blas import get_blas_funcs

__all__ = ["ACTIVATIONS", "activate", "activation_grad", "add_scaled", "sigmoid"]

#: The hidden layer's activations SmallCNN offers.
ACTIVATIONS = ("sigmoid", "relu", "tanh")


def sigmoid(x: np.ndarray) -> np.ndarray:
    """The logistic function 1 / (1 + exp(-x))."""
    # The tanh form never overflows and is one vectorised pass (no masks).
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def activate(name: str, h: np.ndarray) -> np.ndarray:
    """The activation ``name`` (one of :data:`ACTIVATIONS`) of the pre-activations ``h``."""
    if name == "sigmoid":
        return sigmoid(h)
    if name == "relu":
        return np.maximum(h, 0)
    return np.tanh(h)


def activation_grad(name: str, h: np.ndarray, a: np.ndarray) -> np.ndarray:
    """d activation / d h, from ``h`` and its activation ``a``."""
    if name == "sigmoid":
        return a * (1 - a)
    if name == "relu":
        return (h > 0).astype(h.dtype)
    return 1 - a * a


def add_scaled(y: np.ndarray, a: float, x: np.ndarray) -> None:
    """``y += a * x`` in place, through BLAS axpy when both are contiguous.

    ``y += a * x`` would first build ``a * x``: for the 2 million weights of the CIFAR-10
    network that temporary is 8 MB written and read again every mini-batch.
    """
    if y.flags.c_contiguous and x.flags.c_contiguous and y.dtype == x.dtype:
        get_blas_funcs("axpy", (y,))(x.ravel(), y.ravel(), a=a)
    else:
        y += a * x
