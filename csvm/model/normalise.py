"""HOG's normalisations as stages of a stack of layers, with their backward passes.

What a histogram of oriented gradients adds to correlation, rectification and pooling
over cells (Dalal & Triggs 2005), both differentiable so dT/dθ reaches every filter:

* **block contrast normalisation** (``-bn<b>``): every ``b x b`` block of neighbouring
  cells (stride one cell, as HOG's overlapping blocks) has its channel vector ``v`` (the
  ``k b^2`` values of its cells) divided by ``sqrt(|v|^2 + eps^2)``.  Each cell appears in
  up to ``b^2`` blocks, each time under its own block's norm, so the output has ``k b^2``
  channels on a ``(H - b + 1) x (W - b + 1)`` grid of blocks: HOG's descriptor layout.
  HOG's L2-Hys clipping (clip at 0.2, renormalise) is left out: its derivative is zero
  over every clipped value, which would stop learning there.
* **power normalisation** (``-sqrt``): the signed square root
  ``sign(v) (sqrt(|v| + eps) - sqrt(eps))``.  Its derivative ``1 / (2 sqrt(|v| + eps))``
  is continuous (also at 0) and bounded by ``1 / (2 sqrt(eps))``.  On non-negative
  histograms a linear kernel on square roots is the Hellinger (Bhattacharyya) kernel and
  an RBF on them ``exp(-gamma * 2 * (1 - Hellinger))`` for L1-normalised ones: histogram
  kernels written through dot products and norms, which is all the kernel registry
  (:mod:`csvm.model.kernel_registry`) asks of a kernel.  The chi-squared kernel
  ``sum (x - y)^2 / (x + y)`` is not a function of ``x . y``, ``|x|^2`` and ``|y|^2``, so
  it would need a gradient path of its own in every kernel-using module; the square root
  is the one that fits.

Maps are ``(n, k, H, W)`` arrays; ``tests/model/test_normalise.py`` checks every backward
pass against central finite differences.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "BLOCK_EPS",
    "SQRT_EPS",
    "BlockCache",
    "block_normalise",
    "block_normalise_backward",
    "block_shape",
    "signed_sqrt",
    "signed_sqrt_backward",
]

#: The ``eps`` of ``v / sqrt(|v|^2 + eps^2)``, in the units of the pooled maps.  A stack's
#: first filters have unit L1 norm together and images are in [0, 1], so a block of HOG
#: channels on a stroke has a norm of a few hundredths to a tenth (measured on MNIST at the
#: ``hog`` start: docs/protocol_learned_hog.md); 1e-2 damps blank and faint blocks only.
BLOCK_EPS = 1e-2
#: The ``eps`` of the signed square root; block-normalised values lie in [-1, 1].
SQRT_EPS = 1e-3


def block_shape(shape: tuple[int, int, int], size: int) -> tuple[int, int, int]:
    """``(k b^2, H - b + 1, W - b + 1)``: the maps after ``b x b`` block normalisation of
    maps of shape ``(k, H, W)``.

    Raises
    ------
    ValueError
        When a block does not fit the maps.
    """
    k, h, w = shape
    if not 1 <= size <= min(h, w):
        raise ValueError(
            f"A block of {size}x{size} cells does not fit maps of {h}x{w}: choose a smaller "
            "block, a smaller pooling or fewer layers."
        )
    return k * size * size, h - size + 1, w - size + 1


@dataclass
class BlockCache:
    """What :func:`block_normalise_backward` needs from the forward pass."""

    size: int
    in_shape: tuple[int, ...]
    Y: np.ndarray  # (n, H', W', k b^2) the normalised blocks
    norm: np.ndarray  # (n, H', W') sqrt(|v|^2 + eps^2)


def block_normalise(
    V: np.ndarray, size: int, eps: float = BLOCK_EPS
) -> tuple[np.ndarray, BlockCache]:
    """Every ``size x size`` block of cells of ``V`` (n, k, H, W), L2-normalised.

    Parameters
    ----------
    V : array (n, k, H, W)
        Pooled maps (one value per cell and channel).
    size : int
        Cells per block side; blocks overlap with a stride of one cell.
    eps : float, default=BLOCK_EPS
        ``v / sqrt(|v|^2 + eps^2)``: keeps blank blocks finite and the derivative bounded.

    Returns
    -------
    out : array (n, k size^2, H - size + 1, W - size + 1)
        Channel ``(c, a, b)`` (in that order, flattened) of block ``(i, j)`` is channel c
        of cell ``(i + a, j + b)`` over its block's norm.
    cache : BlockCache
    """
    n, k, h, w = V.shape
    _, h2, w2 = block_shape((k, h, w), size)
    win = np.lib.stride_tricks.sliding_window_view(V, (size, size), axis=(2, 3))
    blocks = win.transpose(0, 2, 3, 1, 4, 5).reshape(n, h2, w2, k * size * size)
    norm = np.sqrt(np.einsum("nijf,nijf->nij", blocks, blocks) + eps * eps)
    Y = blocks / norm[..., None]
    return np.ascontiguousarray(Y.transpose(0, 3, 1, 2)), BlockCache(size, V.shape, Y, norm)


def block_normalise_backward(dY: np.ndarray, cache: BlockCache) -> np.ndarray:
    """``dL/dV`` from ``dL/dY`` where ``Y, cache = block_normalise(V, ...)``.

    Per block, ``y = v / n`` with ``n = sqrt(|v|^2 + eps^2)`` has the Jacobian
    ``(I - y y^T) / n``, so ``dL/dv = (g - y (y . g)) / n``; each cell then collects the
    shares of every block it belongs to.

    Parameters
    ----------
    dY : array (n, k b^2, H', W')
        The derivative of a loss in the normalised blocks.
    cache : BlockCache
        From :func:`block_normalise`.

    Returns
    -------
    dV : array (n, k, H, W)
    """
    size, Y, norm = cache.size, cache.Y, cache.norm
    n, k, h, w = cache.in_shape
    _, h2, w2, _ = Y.shape
    g = np.asarray(dY).transpose(0, 2, 3, 1)
    dB = (g - Y * np.einsum("nijf,nijf->nij", Y, g)[..., None]) / norm[..., None]
    dB = dB.reshape(n, h2, w2, k, size, size)
    dV = np.zeros(cache.in_shape, dtype=dB.dtype)
    for a in range(size):
        for b in range(size):
            dV[:, :, a : a + h2, b : b + w2] += dB[..., a, b].transpose(0, 3, 1, 2)
    return dV


def signed_sqrt(V: np.ndarray, eps: float = SQRT_EPS) -> np.ndarray:
    """``sign(v) (sqrt(|v| + eps) - sqrt(eps))`` of every value (a new array).

    Parameters
    ----------
    V : array
    eps : float, default=SQRT_EPS
        Bounds the derivative by ``1 / (2 sqrt(eps))``.

    Returns
    -------
    array like V
    """
    root = np.sqrt(np.abs(V) + eps) - np.sqrt(eps)
    return np.copysign(root, V).astype(V.dtype, copy=False)


def signed_sqrt_backward(V: np.ndarray, dY: np.ndarray, eps: float = SQRT_EPS) -> np.ndarray:
    """``dL/dV`` from ``dL/dY`` where ``Y = signed_sqrt(V, eps)``.

    Parameters
    ----------
    V : array
        The square root's input.
    dY : array like V
        The derivative of a loss in its output.
    eps : float, default=SQRT_EPS

    Returns
    -------
    array like V
        ``dY / (2 sqrt(|V| + eps))``.
    """
    return dY / (2.0 * np.sqrt(np.abs(V) + eps))
