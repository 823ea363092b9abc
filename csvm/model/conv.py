"""Convolution machinery: the thesis's CMT matrix as strided views, never materialised.

The thesis writes the valid correlation of image ``x_i`` with filter ``f`` as ``z_i = X_i f``
where ``X_i`` (P x F) is the patch (im2col) matrix.  Here images are always handled as a
4-D array ``(n, C, H, W)`` and filters as ``(k, C, p, q)``.  Both products

* ``X_i f``    -> :func:`correlate`            (images, filters)   -> maps ``(n, k, H', W')``
* ``X_i^T v``  -> :func:`correlate_transpose`  (images, maps)      -> ``(n, k, C, p, q)``
  or, summed over the samples, -> ``(k, C, p, q)``

loop only over the ``p*q`` filter taps (25 for a 5x5 filter), each step being one
vectorised operation over all images and pixels, so no patch matrix is ever copied.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = [
    "BlockStage",
    "as_filters",
    "as_images",
    "correlate",
    "correlate_then",
    "correlate_input_gradient",
    "correlate_transpose",
    "map_shape",
    "patch_view",
    "stack_rgb",
]


def stack_rgb(X: np.ndarray) -> np.ndarray:
    """Stack the colour planes of ``(n, C, H, W)`` images vertically into ``(n, 1, C*H, W)``.

    This is the thesis's treatment of CIFAR-10 (section 4.5): a 3x32x32 image becomes one
    96x32 grey image over which a single 2-D filter slides.
    """
    X = np.asarray(X)
    if X.ndim != 4:
        raise ValueError(f"stack_rgb expects (n, C, H, W) images, got shape {X.shape}.")
    n, c, h, w = X.shape
    return X.reshape(n, 1, c * h, w)


def as_images(X: np.ndarray, image_shape: tuple[int, ...] | None = None) -> np.ndarray:
    """Return ``X`` as a 4-D ``(n, C, H, W)`` array (a view when possible).

    Parameters
    ----------
    X : array of shape (n, H*W), (n, C*H*W), (n, H, W) or (n, C, H, W)
        The images.
    image_shape : tuple (H, W) or (C, H, W), optional
        The shape of one image.  Needed when ``X`` is 2-D; when given for 3-D or 4-D input
        it is checked.

    Raises
    ------
    ValueError
        If ``X`` does not match ``image_shape``, with a message saying both shapes.
    """
    X = np.asarray(X)
    if image_shape is not None:
        shape = tuple(int(s) for s in image_shape)
        if len(shape) == 2:
            shape = (1, *shape)
        if len(shape) != 3 or min(shape) < 1:
            raise ValueError(
                f"image_shape must be (H, W) or (C, H, W) with positive sizes, got {image_shape}."
            )
        size = int(np.prod(shape))
        if X.ndim == 2:
            if X.shape[1] != size:
                raise ValueError(
                    f"X has {X.shape[1]} features per sample but image_shape={tuple(image_shape)}"
                    f" needs {size}. Pass images of that shape or set image_shape to match X."
                )
            return X.reshape(X.shape[0], *shape)
        if X.ndim in (3, 4):
            got = X.shape[1:] if X.ndim == 4 else (1, *X.shape[1:])
            if got != shape:
                raise ValueError(
                    f"X holds images of shape {X.shape[1:]} but image_shape="
                    f"{tuple(image_shape)}. Set image_shape to match the images."
                )
            return X.reshape(X.shape[0], *shape)
        raise ValueError(f"X must be 2-D, 3-D or 4-D, got {X.ndim} dimensions.")
    if X.ndim == 3:
        return X[:, None]
    if X.ndim == 4:
        return X
    raise ValueError(
        f"Cannot tell the image shape of X with shape {X.shape}: pass image_shape=(H, W)."
    )


def map_shape(image_shape: tuple[int, int], filter_shape: tuple[int, int]) -> tuple[int, int]:
    """Spatial shape ``(H-p+1, W-q+1)`` of a valid correlation."""
    h, w = image_shape[-2:]
    p, q = filter_shape[-2:]
    if p > h or q > w:
        raise ValueError(
            f"The filter {p}x{q} is larger than the image {h}x{w}: choose a filter no larger "
            "than the image."
        )
    return h - p + 1, w - q + 1


def patch_view(X: np.ndarray, filter_shape: tuple[int, int]) -> np.ndarray:
    """The CMT as a read-only strided view ``(n, C, H', W', p, q)`` (no copy)."""
    X = as_images(X)
    map_shape(X.shape[-2:], filter_shape)
    return np.lib.stride_tricks.sliding_window_view(X, tuple(filter_shape), axis=(2, 3))


def as_filters(filters: np.ndarray, n_channels: int) -> np.ndarray:
    """Filters as ``(k, C, p, q)`` for images of ``n_channels`` channels: one ``(p, q)``
    filter, or ``(k, p, q)`` (k filters of one channel, or one filter of C channels).

    Raises
    ------
    ValueError
        The shape fits no such reading.
    """
    f = np.asarray(filters)
    if f.ndim == 2:
        f = f[None, None]
    elif f.ndim == 3:
        f = f[:, None] if n_channels == 1 else f[None]
    if f.ndim != 4 or f.shape[1] != n_channels:
        raise ValueError(
            f"filters of shape {np.shape(filters)} do not fit images with {n_channels} "
            f"channel{'s' if n_channels != 1 else ''}; expected (k, C, p, q)."
        )
    return f


#: From this many filters on, :func:`correlate` copies the patches once and makes one BLAS
#: product of them with all filters; with fewer, one pass per filter tap is as fast
#: and needs no patch copy (the one- and two-filter models keep their exact sums).
_GEMM_MIN_FILTERS = 4
#: The patch copy's size per block of images: bounded memory whatever n is, and small
#: enough to stay in cache between its copy and its product (1 MiB: 2.4x the speed of
#: 64 MiB blocks on 1,926 MNIST images and a 16-filter 5x5 layer, bench/bench_conv.py).
_GEMM_BLOCK_BYTES = 2**20


def _correlate_gemm(
    X: np.ndarray, f: np.ndarray, map_hw: tuple[int, int], dtype, then: BlockStage | None = None
) -> np.ndarray:
    """:func:`correlate` as one product per block of images: the filters (k, C p q) times
    the patches (C p q, m H' W').  The patches are laid out tap by tap, so each tap's copy
    is one shifted slice of the block (contiguous rows), and the product's output
    (k, m, H', W') needs one transpose: on a 16-filter 5x5 layer of 28x28 images that is
    ~4x the (m H' W', C p q) layout, whose copy gathers 25 scattered values per row, and
    ~40x the per-tap einsum (which made the forward pass most of a pooled stack's fit).
    ``then`` (see :func:`correlate_then`) maps each block's product while it is in cache."""
    n = X.shape[0]
    k, c, p, q = f.shape
    h2, w2 = map_hw
    F = f.reshape(k, c * p * q).astype(dtype, copy=False)
    out = None if then is not None else np.empty((n, k, h2, w2), dtype=dtype)
    rows = max(1, _GEMM_BLOCK_BYTES // (h2 * w2 * c * p * q * np.dtype(dtype).itemsize))
    if out is None and n == 0:  # the stage's output shape, from an empty block
        return then(np.empty((k, 0, h2, w2), dtype=dtype)).transpose(1, 0, 2, 3).copy()
    for start in range(0, n, rows):
        block = X[start : start + rows].transpose(1, 0, 2, 3)  # (C, m, H, W), a view
        m = block.shape[1]
        cols = np.empty((c, p, q, m, h2, w2), dtype=dtype)
        for a in range(p):
            for b in range(q):
                cols[:, a, b] = block[:, :, a : a + h2, b : b + w2]
        product = (F @ cols.reshape(c * p * q, m * h2 * w2)).reshape(k, m, h2, w2)
        if then is not None:
            product = then(product)
        if out is None:
            out = np.empty((n, k, *product.shape[2:]), dtype=product.dtype)
        out[start : start + m] = product.transpose(1, 0, 2, 3)
    return out


#: A map from one block's correlation (k, m, H', W') to its next stage (k, m, H'', W''),
#: free to overwrite its input; it must treat each image's values alone.
BlockStage = Callable[[np.ndarray], np.ndarray]


def correlate_then(X: np.ndarray, filters: np.ndarray, then: BlockStage) -> np.ndarray:
    """``then`` of :func:`correlate`'s maps, ``(n, k, H'', W'')``, block by block.

    With enough filters for one BLAS product (:data:`_GEMM_MIN_FILTERS`) each block of
    images goes through ``then`` (a nonlinearity and pooling) while its product is still
    in the cache, so the full-size maps are never written: on a 16-filter 5x5 layer with
    |x| and 2x2 max pooling, 28x28 images, that is one pass over memory instead of four
    (``bench/bench_conv.py``).  With fewer filters, ``then`` of the whole maps.  Equal to
    ``then`` applied to ``correlate(X, filters)`` wherever ``then`` is elementwise or a
    maximum; an average may round its sums in another order.
    """
    X = as_images(X)
    f = as_filters(filters, X.shape[1])
    k, _, p, q = f.shape
    h2, w2 = map_shape(X.shape[-2:], (p, q))
    if k < _GEMM_MIN_FILTERS:
        staged = then(np.ascontiguousarray(correlate(X, f).transpose(1, 0, 2, 3)))
        return np.ascontiguousarray(staged.transpose(1, 0, 2, 3))
    dtype = np.result_type(X.dtype, f.dtype, np.float32)
    return _correlate_gemm(X, f, (h2, w2), dtype, then=then)


def correlate(X: np.ndarray, filters: np.ndarray) -> np.ndarray:
    """Valid correlation of every image with every filter: ``z_i = X_i f``.

    Parameters
    ----------
    X : array (n, C, H, W) or (n, H, W)
    filters : array (k, C, p, q), (k, p, q) or (p, q)

    Returns
    -------
    maps : array (n, k, H-p+1, W-q+1), in the result type of ``X`` and ``filters``.
    """
    X = as_images(X)
    f = as_filters(filters, X.shape[1])
    k, c, p, q = f.shape
    h2, w2 = map_shape(X.shape[-2:], (p, q))
    dtype = np.result_type(X.dtype, f.dtype, np.float32)
    if k >= _GEMM_MIN_FILTERS:
        return _correlate_gemm(X, f, (h2, w2), dtype)
    out = np.zeros((X.shape[0], k, h2, w2), dtype=dtype)
    # One pass per filter tap: out[n,k] += sum_c f[k,c,a,b] * X[n,c,a:a+h2,b:b+w2].
    for a in range(p):
        for b in range(q):
            window = X[:, :, a : a + h2, b : b + w2]
            out += np.einsum("nchw,kc->nkhw", window, f[:, :, a, b].astype(dtype, copy=False))
    return out


def correlate_transpose(
    X: np.ndarray,
    maps: np.ndarray,
    filter_shape: tuple[int, int],
    *,
    sum_samples: bool = False,
) -> np.ndarray:
    """Apply the transposed CMT: ``X_i^T v_i`` for every image (or summed over images).

    Parameters
    ----------
    X : array (n, C, H, W) or (n, H, W)
    maps : array (n, k, H', W') or (n, H', W')
        One map ``v_i`` per image and filter, with ``H' = H-p+1`` and ``W' = W-q+1``.
    filter_shape : (p, q)
    sum_samples : bool
        If True return ``sum_i X_i^T v_i`` of shape (k, C, p, q) (one BLAS-backed
        contraction per tap); otherwise the per-image products ``(n, k, C, p, q)``.
    """
    X = as_images(X)
    V = np.asarray(maps)
    if V.ndim == 3:
        V = V[:, None]
    p, q = filter_shape[-2:]
    h2, w2 = map_shape(X.shape[-2:], (p, q))
    if V.shape[0] != X.shape[0] or V.shape[2:] != (h2, w2):
        raise ValueError(
            f"maps of shape {V.shape} do not match images {X.shape} and filter {p}x{q}."
        )
    n, c = X.shape[:2]
    k = V.shape[1]
    dtype = np.result_type(X.dtype, V.dtype, np.float32)
    V = V.astype(dtype, copy=False)
    if sum_samples:
        out = np.empty((k, c, p, q), dtype=dtype)
        Vm = V.transpose(1, 0, 2, 3).reshape(k, -1)  # (k, n*h2*w2)
        for a in range(p):
            for b in range(q):
                window = X[:, :, a : a + h2, b : b + w2].transpose(1, 0, 2, 3)
                out[:, :, a, b] = Vm @ window.reshape(c, -1).astype(dtype, copy=False).T
        return out
    out = np.empty((n, k, c, p, q), dtype=dtype)
    for a in range(p):
        for b in range(q):
            window = X[:, :, a : a + h2, b : b + w2]
            out[:, :, :, a, b] = np.einsum("nchw,nkhw->nkc", window, V)
    return out


def correlate_input_gradient(
    maps: np.ndarray, filters: np.ndarray, input_shape: tuple[int, ...]
) -> np.ndarray:
    """The adjoint of :func:`correlate` in its images: ``dL/dX`` from ``dL/dZ``.

    Parameters
    ----------
    maps : array (n, k, H', W')
        ``dL/dZ`` for ``Z = correlate(X, filters)``.
    filters : array (k, C, p, q)
    input_shape : tuple (n, C, H, W)

    Returns
    -------
    array (n, C, H, W): ``dX[n, c, a+i, b+j] = sum_k f[k, c, a, b] dZ[n, k, i, j]`` (the
    full convolution of the map gradients with the filters; one contraction per tap).
    """
    V = np.asarray(maps)
    f = np.asarray(filters)
    k, c, p, q = f.shape
    h2, w2 = V.shape[-2:]
    dtype = np.result_type(V.dtype, f.dtype, np.float32)
    out = np.zeros(input_shape, dtype=dtype)
    for a in range(p):
        for b in range(q):
            out[:, :, a : a + h2, b : b + w2] += np.einsum(
                "nkhw,kc->nchw", V, f[:, :, a, b].astype(dtype, copy=False)
            )
    return out
