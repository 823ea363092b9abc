"""Kernels between sets of feature maps, and the K-CSVM filter gradient (MATH.md).

Feature maps are handled flattened: ``Z`` has shape ``(n, D)`` with ``D = k * H' * W'``
(the ``k`` maps of one image side by side, eq. 4.12).  Kernel products are computed in
float32 (BLAS ``sgemm``) in row blocks and written into a float64 matrix, which is what
LIBSVM consumes, so the peak memory for ``n`` samples is about ``8 n^2`` bytes plus one
block.

The filter gradient uses the collapsed, support-vectors-only form of MATH.md instead of the
appendix's per-pair ``F x F`` matrices:

* polynomial: ``sum_ij a_i a_j dK_ij/df = 2 sum_i a_i X_i^T u_i``,
  ``u_i = sum_j a_j d gamma (gamma G_ij + c)^(d-1) z_j``
* RBF: ``sum_ij a_i a_j dK_ij/df = -4 gamma sum_i a_i X_i^T (s_i z_i - u_i)``,
  ``s_i = sum_j a_j K_ij``, ``u_i = sum_j a_j K_ij z_j``
"""

from __future__ import annotations

import numpy as np

from csvm.exceptions import CSVMError
from csvm.model.conv import correlate_transpose

__all__ = [
    "KERNELS",
    "KernelOverflowError",
    "check_kernel",
    "kernel_gradient",
    "kernel_map_gradient",
    "kernel_matrix",
]

KERNELS: dict[str, str] = {
    "poly": "polynomial (gamma z_i.z_j + coef0)^degree",
    "rbf": "Gaussian exp(-gamma ||z_i - z_j||^2)",
    "linear": "linear z_i.z_j (polynomial with degree 1, gamma 1, coef0 0)",
}

#: Rows per block when forming an n x m kernel: bounds the float32 temporaries to
#: ``_BLOCK * m * 4`` bytes (about 46 MB for m = 11,552).
_BLOCK = 1024


class KernelOverflowError(CSVMError, ValueError):
    """A kernel's values are too large for float64 with these settings."""


def check_kernel(name: str) -> str:
    """Return the kernel name or raise a ValueError listing the valid ones."""
    key = str(name).lower()
    if key not in KERNELS:
        raise ValueError(f"Unknown kernel {name!r}: choose one of {', '.join(KERNELS)}.")
    return key


def _apply(
    block: np.ndarray,
    kernel: str,
    degree: float,
    gamma: float,
    coef0: float,
    sq_rows: np.ndarray | None,
    sq_cols: np.ndarray | None,
) -> np.ndarray:
    """Turn a block of dot products into kernel values (in place where possible)."""
    if kernel == "linear":
        return block
    if kernel == "poly":
        block *= gamma
        block += coef0
        if degree == 2:
            np.square(block, out=block)
        elif degree != 1:
            np.power(block, degree, out=block)
        return block
    # rbf: ||a - b||^2 = |a|^2 + |b|^2 - 2 a.b, clipped at 0 against round-off.
    block *= -2.0
    block += sq_rows[:, None]
    block += sq_cols[None, :]
    np.maximum(block, 0.0, out=block)
    block *= -gamma
    np.exp(block, out=block)
    return block


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
    kernel : {"poly", "rbf", "linear"}
    degree, gamma, coef0 : float
        ``(gamma z1.z2 + coef0)^degree`` for "poly"; ``exp(-gamma ||z1 - z2||^2)`` for "rbf".
    out : float64 array (n, m), optional
        Where to write the result.  Reusing one buffer across iterations matters: a fresh
        gigabyte-sized array costs seconds of page faults before it is even written.

    Returns
    -------
    K : float64 array (n, m)
    """
    kernel = check_kernel(kernel)
    # float32 products (twice the BLAS speed) unless the caller works in float64.
    dtype = np.float64 if np.asarray(Z1).dtype == np.float64 else np.float32
    Z1 = np.ascontiguousarray(Z1, dtype=dtype)
    Z2 = Z1 if Z2 is None else np.ascontiguousarray(Z2, dtype=dtype)
    n, m = Z1.shape[0], Z2.shape[0]
    sq1 = sq2 = None
    if kernel == "rbf":
        sq1 = np.einsum("ij,ij->i", Z1, Z1, dtype=np.float64).astype(dtype)
        sq2 = sq1 if Z2 is Z1 else np.einsum("ij,ij->i", Z2, Z2, dtype=np.float64).astype(dtype)
    if out is None or out.shape != (n, m) or out.dtype != np.float64:
        out = np.empty((n, m), dtype=np.float64)
    block = np.empty((min(_BLOCK, n), m), dtype=dtype)
    Z2T = Z2.T
    for start in range(0, n, _BLOCK):
        stop = min(start + _BLOCK, n)
        buf = block[: stop - start]
        np.matmul(Z1[start:stop], Z2T, out=buf)
        rows = None if sq1 is None else sq1[start:stop]
        with np.errstate(over="ignore"):  # an overflow is named below, not warned about
            out[start:stop] = _apply(buf, kernel, degree, gamma, coef0, rows, sq2)
        if kernel == "poly" and not np.isfinite(out[start:stop]).all():
            raise _overflow(Z1[start:stop], Z2, degree, gamma, coef0)
    return out


def _overflow(Z1: np.ndarray, Z2: np.ndarray, degree: float, gamma: float, coef0: float):
    """The error for a polynomial kernel too large for float64: it names the settings, not
    the data (the data are fine; (γ z·z′ + coef0)^degree is not)."""
    base = float(np.max(np.abs(gamma * (Z1 @ Z2.T).astype(np.float64) + coef0)))
    return KernelOverflowError(
        f"The polynomial kernel (γ z·z′ + coef0)^degree overflows: with gamma={gamma:g}, "
        f"coef0={coef0:g} and degree={degree:g} its base reaches {base:.3g}, and "
        f"{base:.3g}^{degree:g} is beyond float64's 1.8e308. Lower the degree or coef0 (or "
        "gamma), or use the RBF kernel."
    )


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
    kernel = check_kernel(kernel)
    s = Z_sv.shape[0]
    Zf = np.asarray(Z_sv, dtype=np.float64).reshape(s, -1)
    a = np.asarray(a_sv, dtype=np.float64)
    if kernel in ("poly", "linear"):
        if kernel == "linear":
            degree, gamma, coef0 = 1, 1.0, 0.0
        G = Zf @ Zf.T
        M = degree * gamma * (gamma * G + coef0) ** (degree - 1)
        U = (M * a[None, :]) @ Zf
        weights = a[:, None] * U
        scale = 2.0
    else:
        if K_sv is None:
            K_sv = kernel_matrix(Zf, kernel="rbf", gamma=gamma)
        Ka = K_sv * a[None, :]
        s_vec = Ka.sum(axis=1)
        U = Ka @ Zf
        weights = a[:, None] * (s_vec[:, None] * Zf - U)
        scale = -4.0 * gamma
    return (scale * weights).reshape(Z_sv.shape)


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
