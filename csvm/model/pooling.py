"""Pointwise nonlinearities and spatial pooling of feature maps, with their backward passes.

The thesis's future work (section 5) names what a single correlation lacks: translation
invariance.  Pooling after the correlation gives some (a shift by less than the window
moves little of a pooled map), and a pointwise nonlinearity before it (|x| or a
rectifier) keeps opposite-signed responses from cancelling in an average.  Each forward
function returns what its backward pass needs, so dT/df is carried through exactly
(``tests/model/test_layers.py`` checks it against central finite differences).

Maps are ``(n, k, H, W)`` arrays throughout.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "ACTIVATIONS",
    "POOLS",
    "PoolCache",
    "activate",
    "activation_gradient",
    "pool",
    "pool_backward",
    "pooled_shape",
]

#: Pointwise nonlinearities, with what each does.
ACTIVATIONS: dict[str, str] = {
    "none": "the correlation itself",
    "abs": "|x|: a response of either sign counts",
    "relu": "max(0, x): only positive responses pass",
}
#: Pooling modes.
POOLS: dict[str, str] = {
    "none": "no pooling",
    "avg": "the mean of each window",
    "max": "the largest value of each window",
}


def activate(Z: np.ndarray, name: str, out: np.ndarray | None = None) -> np.ndarray:
    """The nonlinearity ``name`` applied to every value of ``Z`` (a new array, or ``out``:
    ``out=Z`` overwrites ``Z``)."""
    if name == "abs":
        return np.abs(Z, out=out)
    if name == "relu":
        return np.maximum(Z, 0, out=out)
    return Z


def activation_gradient(Z: np.ndarray, dH: np.ndarray, name: str) -> np.ndarray:
    """``dL/dZ`` from ``dL/dH`` where ``H = activate(Z, name)`` (subgradient 0 at 0)."""
    if name == "abs":
        return dH * np.sign(Z)
    if name == "relu":
        return dH * (Z > 0)
    return dH


def pooled_shape(shape: tuple[int, int], size: int, stride: int) -> tuple[int, int]:
    """Spatial shape after pooling ``shape`` with a ``size`` window every ``stride`` pixels
    (windows that would run past the edge are dropped, as in most CNN libraries)."""
    h, w = shape
    if size > h or size > w:
        raise ValueError(
            f"A pooling window of {size}x{size} does not fit maps of {h}x{w}: choose a "
            "smaller window, a smaller filter or fewer layers."
        )
    return (h - size) // stride + 1, (w - size) // stride + 1


@dataclass
class PoolCache:
    """What :func:`pool_backward` needs from the forward pass."""

    mode: str
    size: int
    stride: int
    in_shape: tuple[int, ...]
    # Max pooling keeps its input and output: the backward pass finds each window's first
    # maximum from them (the forward pass of a fit needs no argmax: only the gradient's
    # images, the support vectors, go backward).
    inputs: np.ndarray | None = None
    outputs: np.ndarray | None = None


def _taps(Z: np.ndarray, size: int, stride: int):
    """The strided views ``(n, k, H'', W'')`` of the value at each window tap of every
    window, taps in row-major order (no copy)."""
    h2, w2 = pooled_shape(Z.shape[-2:], size, stride)
    for a in range(size):
        for b in range(size):
            yield Z[
                ..., a : a + (h2 - 1) * stride + 1 : stride, b : b + (w2 - 1) * stride + 1 : stride
            ]


def pool(Z: np.ndarray, mode: str, size: int, stride: int) -> tuple[np.ndarray, PoolCache]:
    """Pool the maps ``Z`` (n, k, H, W): the pooled maps and the cache for the backward pass.

    ``mode="none"`` (or a 1x1 window with stride 1) returns ``Z`` itself.  Max pooling
    takes one elementwise maximum per window tap over strided views, ~10x an argmax over
    a copied window array on a 2x2 pooling of 24x24 maps (exact: a maximum does not
    depend on the order).
    """
    cache = PoolCache(mode, int(size), int(stride), Z.shape)
    if mode == "none" or (size == 1 and stride == 1):
        cache.mode = "none"
        return Z, cache
    if mode == "avg":
        view = np.lib.stride_tricks.sliding_window_view(Z, (size, size), axis=(2, 3))
        h2, w2 = pooled_shape(Z.shape[-2:], size, stride)
        windows = view[:, :, : (h2 - 1) * stride + 1 : stride, : (w2 - 1) * stride + 1 : stride]
        return windows.mean(axis=(-2, -1), dtype=Z.dtype), cache
    taps = _taps(Z, size, stride)
    out = np.array(next(taps), dtype=Z.dtype)  # a contiguous copy of the first tap
    for view in taps:
        np.maximum(out, view, out=out)
    cache.inputs, cache.outputs = Z, out
    return out, cache


def pool_backward(dP: np.ndarray, cache: PoolCache) -> np.ndarray:
    """``dL/dZ`` from ``dL/dP`` where ``P, cache = pool(Z, ...)``.

    One strided slice per window tap: each tap's slice touches every pooled value once, so
    ``+=`` on it is exact even when windows overlap (stride < size).
    """
    if cache.mode == "none":
        return dP
    size, stride = cache.size, cache.stride
    dZ = np.zeros(cache.in_shape, dtype=dP.dtype)
    if cache.mode == "avg":
        share = dP / (size * size)
        for view in _taps(dZ, size, stride):
            view += share
        return dZ
    # Each window's gradient goes to its first maximum in row-major order (numpy's argmax
    # rule): a tap takes it where it equals the window's maximum and no earlier tap did.
    taken = np.zeros(dP.shape, dtype=bool)
    for view, values in zip(
        _taps(dZ, size, stride), _taps(cache.inputs, size, stride), strict=True
    ):
        first = (values == cache.outputs) & ~taken
        taken |= first
        view += np.where(first, dP, 0)
    return dZ
