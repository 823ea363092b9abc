"""Kernels between sets of feature maps, and the K-CSVM filter gradient (MATH.md).

Feature maps are handled flattened: ``Z`` has shape ``(n, D)`` with ``D = k * H' * W'``
(the ``k`` maps of one image side by side, eq. 4.12).  Kernel products are computed in
float32 (BLAS ``sgemm``) in row blocks and written into a float64 matrix, which is what
LIBSVM consumes, so the peak memory for ``n`` samples is about ``8 n^2`` bytes plus one
block.

Each kernel is one entry of :data:`csvm.model.kernel_registry.KERNELS` (its value from dot
products and norms, its partials); the functions here are the same for every kernel.  The
filter gradient uses the collapsed, support-vectors-only form of MATH.md instead of the
appendix's per-pair ``F x F`` matrices, assembled from the entry's partials; for the two
kernels of the thesis it reads:

* polynomial: ``sum_ij a_i a_j dK_ij/df = 2 sum_i a_i X_i^T u_i``,
  ``u_i = sum_j a_j d gamma (gamma G_ij + c)^(d-1) z_j``
* RBF: ``sum_ij a_i a_j dK_ij/df = -4 gamma sum_i a_i X_i^T (s_i z_i - u_i)``,
  ``s_i = sum_j a_j K_ij``, ``u_i = sum_j a_j K_ij z_j``
"""

from __future__ import annotations

import numpy as np

from csvm.model.conv import correlate_transpose
from csvm.model.kernel_registry import KERNELS, KernelOverflowError, KernelSpec, get_kernel

__all__ = [
    "KERNELS",
    "KernelOverflowError",
    "KernelSpec",
    "check_kernel",
    "from_dots",
    "kernel_gradient",
    "kernel_map_gradient",
    "kernel_matrix",
]

#: Rows per block when forming an n x m kernel: bounds the float32 temporaries to
#: ``_BLOCK * m * 4`` bytes (about 46 MB for m = 11,552).
_BLOCK = 1024


def check_kernel(name: str) -> str:
    """Return the kernel name or raise a ValueError listing the valid ones."""
    return get_kernel(name).name


def from_dots(
    block: np.ndarray,
    spec: KernelSpec,
    sq_rows: np.ndarray | None = None,
    sq_cols: np.ndarray | None = None,
) -> np.ndarray:
    """Kernel values from a block of dot products, in place where possible.

    Parameters
    ----------
    block : float array (n, m)
        ``z_i . z_j``; overwritten.
    spec : KernelSpec
    sq_rows, sq_cols : arrays broadcasting against the block ((n, 1) and (1, m)), optional
        Squared norms of the rows and columns; needed by kernels that read them (RBF).

    Returns
    -------
    The kernel values (``block`` itself where the kernel works in place).
    """
    return spec.entry.from_dots(block, spec, sq_rows, sq_cols)


def kernel_matrix(
    Z1: np.ndarray,
    Z2: np.ndarray | None = None,
    *,
    kernel: str = "poly",
    degree: float = 2,
    gamma: float = 1.0,
    coef0: float = 1.0,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Kernel matrix between two sets of flattened feature maps.

    Parameters
    ----------
    Z1 : array (n, D)
        Computed in float32 unless ``Z1`` is float64.
    Z2 : array (m, D), optional
        Defaults to ``Z1`` (the symmetric training kernel).
    kernel : str
        A name in :data:`KERNELS` ("poly", "rbf", "linear", …).
    degree, gamma, coef0 : float
        ``(gamma z1.z2 + coef0)^degree`` for "poly"; ``exp(-gamma ||z1 - z2||^2)`` for "rbf".
    out : float64 array (n, m), optional
        Where to write the result.  Reusing one buffer across iterations matters: a fresh
        gigabyte-sized array costs seconds of page faults before it is even written.

    Returns
    -------
    K : float64 array (n, m)
    """
    spec = KernelSpec(check_kernel(kernel), degree, gamma, coef0)
    entry = spec.entry
    # float32 products (twice the BLAS speed) unless the caller works in float64.
    dtype = np.float64 if np.asarray(Z1).dtype == np.float64 else np.float32
    Z1 = np.ascontiguousarray(Z1, dtype=dtype)
    Z2 = Z1 if Z2 is None else np.ascontiguousarray(Z2, dtype=dtype)
    n, m = Z1.shape[0], Z2.shape[0]
    sq1 = sq2 = None
    if entry.needs_norms:
        sq1 = np.einsum("ij,ij->i", Z1, Z1, dtype=np.float64).astype(dtype)
        sq2 = sq1 if Z2 is Z1 else np.einsum("ij,ij->i", Z2, Z2, dtype=np.float64).astype(dtype)
        sq2 = sq2[None, :]
    if out is None or out.shape != (n, m) or out.dtype != np.float64:
        out = np.empty((n, m), dtype=np.float64)
    block = np.empty((min(_BLOCK, n), m), dtype=dtype)
    Z2T = Z2.T
    for start in range(0, n, _BLOCK):
        stop = min(start + _BLOCK, n)
        buf = block[: stop - start]
        np.matmul(Z1[start:stop], Z2T, out=buf)
        rows = None if sq1 is None else sq1[start:stop, None]
        with np.errstate(over="ignore"):  # an overflow is named below, not warned about
            out[start:stop] = entry.from_dots(buf, spec, rows, sq2)
        if entry.overflow is not None and not np.isfinite(out[start:stop]).all():
            raise entry.overflow(Z1[start:stop], Z2, spec)
    return out


def kernel_map_gradient(
    Z_sv: np.ndarray,
    a_sv: np.ndarray,
    *,
    kernel: str = "poly",
    degree: float = 2,
    gamma: float = 1.0,
    coef0: float = 1.0,
    K_sv: np.ndarray | None = None,
) -> np.ndarray:
    """``d(a^T K a)/dZ``: the derivative of the quadratic term in every support vector's
    maps, the first half of the filter gradient (the second carries it back through the
    correlation: :func:`kernel_gradient` for one layer, :class:`csvm.model.layers.Network`
    for a stack).

    With ``K_ij = k(z_i . z_j, |z_i|^2, |z_j|^2)`` and the kernel's partials ``D_g``,
    ``D_n`` (its registry entry), ``dQ/dz_i = 2 a_i (sum_j a_j D_g,ij z_j
    + 2 z_i sum_j a_j D_n,ij)``.

    Parameters
    ----------
    Z_sv : array (s, ...)
        The support vectors' feature maps (any shape after the first axis).
    a_sv : array (s,)
        ``a_i = alpha_i y_i`` (scikit-learn's ``dual_coef_``).
    kernel, degree, gamma, coef0 : as in :func:`kernel_matrix`.
    K_sv : array (s, s), optional
        The kernel among the support vectors (recomputed when not given).

    Returns
    -------
    float64 array shaped like ``Z_sv``.
    """
    spec = KernelSpec(check_kernel(kernel), degree, gamma, coef0)
    s = Z_sv.shape[0]
    Zf = np.asarray(Z_sv, dtype=np.float64).reshape(s, -1)
    a = np.asarray(a_sv, dtype=np.float64)
    if K_sv is None:
        K_sv = kernel_matrix(Zf, **spec)
    D_g, D_n = spec.entry.partials(Zf, K_sv, spec)
    weights = 2.0 * a[:, None] * ((D_g * a[None, :]) @ Zf)
    if D_n is not None:
        weights += (4.0 * a * (D_n @ a))[:, None] * Zf
    return weights.reshape(Z_sv.shape)


def kernel_gradient(
    X_sv: np.ndarray,
    Z_sv: np.ndarray,
    a_sv: np.ndarray,
    filter_shape: tuple[int, int],
    *,
    kernel: str = "poly",
    degree: float = 2,
    gamma: float = 1.0,
    coef0: float = 1.0,
    K_sv: np.ndarray | None = None,
) -> np.ndarray:
    """``sum_ij a_i a_j dK_ij/df`` over the support vectors, for every filter.

    Parameters
    ----------
    X_sv : array (s, C, H, W)
        Images of the support vectors.
    Z_sv : array (s, k, H', W')
        Their feature maps under the current filters.
    a_sv : array (s,)
        ``a_i = alpha_i y_i`` (scikit-learn's ``dual_coef_``).
    filter_shape : (p, q)
    kernel, degree, gamma, coef0 : as in :func:`kernel_matrix`.
    K_sv : array (s, s), optional
        The kernel among the support vectors (recomputed when not given).

    Returns
    -------
    grad : float64 array (k, C, p, q)
        The gradient of ``a^T K a`` with respect to the filters.  The outer objective's
        gradient is ``dr/df - grad / 2``.
    """
    maps = kernel_map_gradient(
        Z_sv, a_sv, kernel=kernel, degree=degree, gamma=gamma, coef0=coef0, K_sv=K_sv
    )
    return correlate_transpose(
        np.asarray(X_sv, dtype=np.float64), maps, filter_shape, sum_samples=True
    )
