"""Decision values of many binary CSVMs at once: the multi-class prediction path.

A one-vs-one K-CSVM on MNIST holds 45 binary models, each with its own filter and support
vectors.  Asking each model in turn correlates every test image 45 times and builds 45
small kernels; here the work is shared instead.

The kernels need the dot products ``z . z_sv`` of a test image's maps ``z = C_f x`` with
the support vectors' maps.  By adjointness ``(C_f x) . z_sv = x . (C_f^T z_sv)``, so each
support vector's map is projected back once onto image space (``C_f^T z_sv`` is the full
convolution of the map with the filter) and every dot product of every model becomes one
BLAS product ``X (n x D) @ G^T (D x sum_k s_k)``: no test feature map is formed.
The RBF kernel also needs ``|z|^2 = f^T (P^T P) f`` (P the image's patch matrix): one
small Gram matrix per image serves every model's filter (:func:`map_sq_norms`).  An L-CSVM
is linear in the image, ``w . C_f x = x . C_f^T w``, so all of them together are one
matrix product.

The dot products are float64 in :func:`decisions` (float32 ones, twice as fast, moved
decisions by about 1e-6 with the number of rows predicted together, which scikit-learn's
subset-invariance check refuses); kernel values and the weighted sums over support vectors
are float64.  Each decision carries a bound on how far round-off could have moved it;
decisions within that bound of zero are recomputed in float64 by the model's own path, so
the signs (the one-vs-one votes) equal the per-model path's.  Rows are processed in
chunks, so memory stays bounded for any number of test images.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from csvm.model.kernels import KernelSpec

__all__ = ["backproject", "decisions", "labels_from_decision", "map_sq_norms", "stacked_correlate"]

#: Bytes allowed for one chunk's temporaries (the dot products of a chunk of rows).
_CHUNK_BYTES = 64 * 2**20
#: Bound on float32 round-off of a dot product relative to |x| |y|: the unit round-off
#: 6e-8 times the worst-case growth D = 784 (MNIST) ... 3072 (CIFAR) of a D-term sum is
#: 5e-5 ... 2e-4; BLAS's blocked sums grow far slower, so this is a safe margin.
_F32_REL = 2e-4


def backproject(maps: np.ndarray, filters: np.ndarray, image_shape: Sequence[int]) -> np.ndarray:
    """``C_f^T z``: the image-space vector whose dot product with x equals ``(C_f x) . z``.

    Parameters
    ----------
    maps : array (s, k, H', W')
        One set of k maps per row (support vectors' maps, or SVM weights).
    filters : array (k, C, p, q)
    image_shape : (C, H, W)

    Returns
    -------
    float64 array (s, C, H, W)
        The full convolution of each map with its filter, summed over the k filters.
    """
    s, k, h2, w2 = maps.shape
    f = np.asarray(filters, dtype=np.float64)
    Z = np.asarray(maps, dtype=np.float64)
    out = np.zeros((s, *image_shape), dtype=np.float64)
    # One vectorised pass per filter tap, as in csvm.model.conv.correlate (of which it is the
    # adjoint).
    for a in range(f.shape[2]):
        for b in range(f.shape[3]):
            out[:, :, a : a + h2, b : b + w2] += np.einsum("skhw,kc->schw", Z, f[:, :, a, b])
    return out


def _patches(X4: np.ndarray, p: int, q: int, image_major: bool) -> np.ndarray:
    """The patch (im2col) values of every image, tap-major so that every copy is contiguous.

    Returns float32 ``(n, C*p*q, H'*W')`` when ``image_major``, else ``(C*p*q, n, H'*W')``;
    taps in the order of ``filters.reshape(K, C*p*q)``.
    """
    n, c, h, w = X4.shape
    h2, w2 = h - p + 1, w - q + 1
    shape = (n, c, p, q, h2, w2) if image_major else (c, p, q, n, h2, w2)
    patches = np.empty(shape, dtype=np.float32)
    for a in range(p):
        for b in range(q):
            window = X4[:, :, a : a + h2, b : b + w2]
            if image_major:
                patches[:, :, a, b] = window
            else:
                patches[:, a, b] = window.transpose(1, 0, 2, 3)
    d = c * p * q
    return patches.reshape((n, d, h2 * w2) if image_major else (d, n, h2 * w2))


def stacked_correlate(X4: np.ndarray, filters: np.ndarray) -> np.ndarray:
    """Correlation of every image with a stack of filters as one BLAS product.

    Parameters
    ----------
    X4 : float32 array (n, C, H, W)
    filters : array (K, C, p, q)
        All the filters of all the models, stacked.

    Returns
    -------
    float32 array (K, n, H', W')
        Filter-major, so that one filter's maps are contiguous.
    """
    K, c, p, q = filters.shape
    n, _, h, w = X4.shape
    F = np.asarray(filters, dtype=np.float32).reshape(K, -1)
    patches = _patches(X4, p, q, image_major=False)
    return (F @ patches.reshape(len(patches), -1)).reshape(K, n, h - p + 1, w - q + 1)


def map_sq_norms(X4: np.ndarray, filters: np.ndarray) -> np.ndarray:
    """``|C_f x|^2`` for every image and every filter, without forming the maps.

    With P the patch matrix of x, ``C_f x = P f``, so ``|C_f x|^2 = f^T (P^T P) f``: one
    small Gram matrix per image (C*p*q square) serves every filter, where the maps of 45
    filters would be 45 x H' x W' floats per image to write and read back.

    Returns
    -------
    float64 array (n, K)
    """
    K, c, p, q = filters.shape
    P = _patches(X4, p, q, image_major=True)
    gram = np.matmul(P, P.transpose(0, 2, 1)).reshape(len(X4), -1).astype(np.float64)
    F = np.asarray(filters, dtype=np.float64).reshape(K, c * p * q)
    outer = (F[:, :, None] * F[:, None, :]).reshape(K, -1)
    return gram @ outer.T


def _kind(model: Any) -> str:
    kernel_state = ("Z_sv", "dual_coef", "kernel_params", "filters")
    # A layered model's maps are not one correlation: it predicts through its own network.
    if all(hasattr(model, a) for a in kernel_state) and getattr(model, "network", None) is None:
        return "kernel"
    if hasattr(model, "w") and hasattr(model, "filters"):
        return "linear"
    return "other"


def _chunk_rows(columns: int, n: int, per_entry: int = 20) -> int:
    # Bytes per entry of a chunk: float64 dot products, their kernel and a temporary, or
    # float32 slopes; kernels that read the norms also hold a norm per column.
    return int(max(1, min(n, _CHUNK_BYTES // max(1, per_entry * columns))))


def decisions(models: Sequence[Any], X4: np.ndarray) -> np.ndarray:
    """Decision values of every binary model on every image.

    Parameters
    ----------
    models : sequence of fitted binary models
        K-CSVM states (``filters``, ``Z_sv``, ``dual_coef``, ``intercept``,
        ``kernel_params``), L-CSVM states (``filters``, ``w``, ``intercept``) or any
        object with ``decision_function(X4)``.
    X4 : array (n, C, H, W)

    Returns
    -------
    float64 array (n, len(models))
        Equal to ``column_stack([m.decision_function(X4) for m in models])`` up to
        round-off (float64 products for kernel models), and always of the same sign.
    """
    X4 = np.ascontiguousarray(X4, dtype=np.float32)
    out = np.empty((len(X4), len(models)))
    groups: dict[Any, list[int]] = {}
    for k, m in enumerate(models):
        kind = _kind(m)
        params = tuple(sorted(m.kernel_params.items())) if kind == "kernel" else ()
        groups.setdefault((kind, params), []).append(k)
    for (kind, _), idx in groups.items():
        group = [models[k] for k in idx]
        if kind == "kernel":
            # float64 products: with float32 the BLAS blocking, which depends on how many
            # rows are predicted together, moved decisions by ~1e-6, and a decision must
            # not depend on the other rows (scikit-learn's subset-invariance check).
            values, error = _kernel_group(group, X4, dtype=np.float64)
            _refine(values, error, group, X4)
        elif kind == "linear":
            values = _linear_group(group, X4)
        else:
            values = np.column_stack([m.decision_function(X4) for m in group])
        out[:, idx] = values
    return out


def _kernel_group(
    models: list, X4: np.ndarray, dtype: type = np.float32
) -> tuple[np.ndarray, np.ndarray]:
    """Decisions (n, len(models)) of K-CSVM binary models sharing one kernel, and a bound
    on how far round-off in the ``dtype`` dot products may have moved each of them.

    All models' support vectors form one column block, so each chunk of rows costs one
    product for the dot products, one pass for the kernel (its registry entry's
    ``from_dots``) and one product with the block-diagonal matrix of dual coefficients,
    whatever the number of models.
    """
    spec = KernelSpec.of(models[0].kernel_params)
    entry = spec.entry
    G = np.concatenate(
        [backproject(m.Z_sv, m.filters, X4.shape[1:]).reshape(len(m.Z_sv), -1) for m in models]
    )
    bounds = np.cumsum([0] + [len(m.dual_coef) for m in models])
    owner = np.repeat(np.arange(len(models)), np.diff(bounds))
    a = np.concatenate([np.asarray(m.dual_coef, dtype=np.float64) for m in models])
    A = np.zeros((len(a), len(models)))  # block-diagonal: model k's a_i in column k
    A[np.arange(len(a)), owner] = a
    # |a_i| |C^T z_i|: with u |x| it bounds the round-off of each term of a decision.
    A_err = (np.abs(A) * np.linalg.norm(G, axis=1)[:, None]).astype(np.float32)
    G = G.astype(dtype)
    b = np.array([m.intercept for m in models], dtype=np.float64)
    if entry.needs_norms:
        sq_sv = np.concatenate(
            [np.square(m.Z_sv.reshape(len(m.Z_sv), -1), dtype=np.float64).sum(1) for m in models]
        )[None, :]
        stack = np.concatenate([np.asarray(m.filters) for m in models])
        # One-hot (filters, models): a model's |z|^2 sums its filters' map norms.
        filter_owner = np.repeat(np.eye(len(models)), [len(m.filters) for m in models], axis=0)
        A_abs = np.abs(A).astype(np.float32)
    n = len(X4)
    X = X4.reshape(n, -1).astype(dtype, copy=False)
    # The bound scales with the products' unit round-off (float64's is 2^-29 float32's).
    rel = _F32_REL if np.dtype(dtype) == np.float32 else _F32_REL * 2.0**-29
    out, err = np.empty((n, len(models))), np.empty((n, len(models)))
    step = _chunk_rows(len(a), n, 32 if entry.needs_norms else 20)
    for start in range(0, n, step):
        rows = slice(start, start + step)
        K = (X[rows] @ G.T).astype(np.float64)  # every model's z . z_sv at once
        u_x = rel * np.linalg.norm(X[rows], axis=1).astype(np.float64)[:, None]
        sq = None
        if entry.needs_norms:  # each model's filter gives the image its own |z|^2
            sq = map_sq_norms(X4[rows], stack) @ filter_owner  # (rows, models)
            K = entry.from_dots(K, spec, sq[:, owner], sq_sv)
        else:
            K = entry.from_dots(K, spec, None, None)
        out[rows] = K @ A + b
        # |round-off of z . z_sv| <= u |x| |C^T z_sv|, carried through |dK/dg|; |z|^2
        # comes from a float32 Gram matrix, so its part of the bound stays float32's.
        slope_g, slope_n = entry.slopes(K, spec)
        err[rows] = u_x * (slope_g @ A_err)
        if slope_n is not None and sq is not None:
            err[rows] += _F32_REL * sq * (slope_n @ A_abs)
    return out, err


def _refine(values: np.ndarray, error: np.ndarray, models: list, X4: np.ndarray) -> None:
    """Recompute in float64 the decisions whose sign float32 round-off could have flipped.

    The bound is loose (the measured round-off is about 1,000 times smaller), so a few per
    cent of the decisions come here; each model's rows are one small product, run on one
    BLAS thread, where a second thread costs more to wake than it saves.
    """
    doubtful = np.abs(values) <= error
    with threadpool_limits(1, user_api="blas"):
        for k in np.flatnonzero(doubtful.any(axis=0)):
            rows = np.flatnonzero(doubtful[:, k])
            values[rows, k] = _kernel_group([models[k]], X4[rows], np.float64)[0][:, 0]


def _linear_group(models: list, X4: np.ndarray) -> np.ndarray:
    """Decisions of L-CSVM binary models: ``x . C_f^T w + b``, one product for all."""
    shape = X4.shape[1:]
    rows = []
    for m in models:
        f = np.asarray(m.filters)
        h2, w2 = shape[1] - f.shape[2] + 1, shape[2] - f.shape[3] + 1
        rows.append(backproject(np.reshape(m.w, (1, len(f), h2, w2)), f, shape).reshape(-1))
    G = np.stack(rows)  # float64, one row per model: a matrix-vector product per image
    b = np.array([m.intercept for m in models], dtype=np.float64)
    n = len(X4)
    X = X4.reshape(n, -1)
    out = np.empty((n, len(models)))
    step = _chunk_rows(X.shape[1], n)
    for start in range(0, n, step):
        out[start : start + step] = X[start : start + step].astype(np.float64) @ G.T + b
    return out


def labels_from_decision(classes: np.ndarray, decision: np.ndarray) -> np.ndarray:
    """The labels a decision names, as ``predict`` reads ``decision_function``: for two
    classes its sign (positive: ``classes[1]``), else the class with the largest value
    (one-vs-one votes plus confidence, or one-vs-rest scores)."""
    classes = np.asarray(classes)
    if decision.ndim == 1:
        return classes[(decision > 0).astype(int)]
    return classes[np.argmax(decision, axis=1)]
