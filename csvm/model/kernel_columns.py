"""The columns of a kernel matrix, formed on demand from feature vectors and kept
(:class:`KernelColumns`), and the BLAS threads they are formed on.

The warm solver (:mod:`csvm.model.warm_solver`) reads the columns of the points it
touches, the support vectors and a few violators, never the whole ``n x n`` kernel: each
batch of new columns is one BLAS product of all the vectors with the batch's
(``csvm.model.kernels.kernel_matrix``: float32 products for float32 maps).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

__all__ = ["KernelColumns", "blas_threads", "one_blas_thread"]


# -- BLAS threads -------------------------------------------------------------------------
_BLAS: list[Any] = []  # the BLAS libraries' controller, made at first use (numpy and scipy's)


def _blas() -> Any:
    if not _BLAS:
        _BLAS.append(ThreadpoolController().select(user_api="blas"))
    return _BLAS[0]


def blas_threads() -> int:
    """The BLAS threads in effect now (the most among the loaded BLAS libraries)."""
    return max((lib.num_threads for lib in _blas().lib_controllers), default=1)


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run small dense algebra on one BLAS thread.  Two OpenBLAS threads spin-wait for each
    other on the products of a warm solve (a 160 x 160 system, the support vectors'
    gradient); with another process on the second core that made them 5-10x slower than
    one thread (docs/benchmarks.md, "Warm-started solves").  The kernel's products keep
    the threads they had (:class:`KernelColumns` forms them with ``threads``)."""
    with _blas().limit(limits=1):
        yield


@contextmanager
def _threads(n: int | None) -> Iterator[None]:
    if n is None:
        yield
        return
    with _blas().limit(limits=n):
        yield


class KernelColumns:
    """The columns of a kernel matrix, formed on demand and kept.

    Either a precomputed ``(n, n)`` matrix ``K`` (the columns are its own), or feature
    vectors ``Z`` ``(n, D)`` with a kernel function ``kernel(A, B)`` between the rows of
    ``A`` and of ``B`` (``B=None``: ``A`` with itself), called once per batch of new
    columns: one BLAS product of all the vectors with the batch's.

    A float32 product need not give ``K_ij`` and ``K_ji`` the same rounding; where kept
    columns cross, both entries become the mean of the two (exact in float64), so that a
    linear system on them and the gradient read from them describe one symmetric matrix,
    whose quadratic form ``a' K a`` is the one of the matrix as computed.

    Parameters
    ----------
    K : ndarray (n, n), optional
        A precomputed kernel matrix (symmetric).
    Z : ndarray (n, D), optional
        Feature vectors (with ``kernel``).
    kernel : callable, optional
        ``kernel(A, B) -> (len(A), len(B))`` float64, e.g.
        ``functools.partial(csvm.model.kernels.kernel_matrix, kernel="poly")``.
    threads : int, optional
        BLAS threads for the kernel's products (:func:`~csvm.model.warm_solver.solve_dual`
        runs the rest on one); None: whatever is in effect.
    batch_threads : int, optional
        BLAS threads for the products of a batch of columns (:meth:`rows`, :meth:`times`,
        :meth:`block`, :meth:`square`), if not ``threads``: a batch is a few hundred
        columns, a product two threads spin-wait on when another process has the second
        core, where :meth:`whole` (LIBSVM's input, to be formed as ``kernel_matrix``
        forms it in the caller) keeps ``threads``.

    Attributes
    ----------
    seconds : float
        Time spent forming columns.
    n_formed : int
        Columns formed so far.
    """

    def __init__(
        self,
        K: np.ndarray | None = None,
        *,
        Z: np.ndarray | None = None,
        kernel: Callable[[np.ndarray, np.ndarray | None], np.ndarray] | None = None,
        threads: int | None = None,
        batch_threads: int | None = None,
    ):
        if (K is None) == (Z is None):
            raise ValueError("KernelColumns needs a precomputed K or feature vectors Z, not both")
        if K is not None:
            K = np.asarray(K, dtype=np.float64)
            if K.ndim != 2 or K.shape[0] != K.shape[1]:
                raise ValueError(f"a precomputed kernel must be square, got shape {K.shape}")
            self.n = K.shape[0]
        else:
            if kernel is None:
                raise ValueError("KernelColumns with feature vectors Z needs a kernel function")
            self.n = len(Z)
        self._K, self._Z, self._kernel = K, Z, kernel
        self._whole = None  # the whole matrix once whole() formed it
        self._threads = threads
        self._batch_threads = threads if batch_threads is None else batch_threads
        self._pos = np.full(self.n, -1, dtype=np.intp)  # column -> row of _store
        self._store = np.empty((0, self.n))  # the kept columns, one per row
        self._count = 0
        self.seconds = 0.0
        self.n_formed = 0

    def whole(self) -> np.ndarray:
        """The whole ``(n, n)`` matrix by one call of the kernel, as it comes (LIBSVM's
        input is then exactly what ``kernel_matrix`` gives); later columns are read from
        it instead of formed."""
        if self._K is None and self._whole is None:
            t0 = time.perf_counter()
            with _threads(self._threads):
                self._whole = self._kernel(self._Z, None)
            self.seconds += time.perf_counter() - t0
        return self._K if self._K is not None else self._whole

    @property
    def whole_matrix(self) -> np.ndarray | None:
        """The matrix :meth:`whole` formed, as it came (None before)."""
        return self._K if self._K is not None else self._whole

    def square(self, idx: np.ndarray) -> np.ndarray:
        """``K[idx][:, idx]`` by one call of the kernel on those points alone, keeping
        nothing (a cold start's sample: its whole columns are not needed)."""
        idx = np.asarray(idx, dtype=np.intp)
        if self._K is not None:
            return self._K[np.ix_(idx, idx)]
        t0 = time.perf_counter()
        with _threads(self._batch_threads):
            K = self._kernel(self._Z[idx], None)
        self.seconds += time.perf_counter() - t0
        return K

    def rows(self, idx: np.ndarray) -> np.ndarray:
        """``K[idx, :]`` (``= K[:, idx].T``), shape ``(len(idx), n)``; the columns not yet
        kept are formed by one call of the kernel."""
        idx = np.asarray(idx, dtype=np.intp)
        if self._K is not None:
            return self._K[idx]
        self._ensure(idx)
        return self._store[self._pos[idx]]

    def times(self, idx: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``K[:, idx] @ v`` without copying the columns out of the store."""
        idx = np.asarray(idx, dtype=np.intp)
        if self._K is not None:
            return self._K[:, idx] @ v
        self._ensure(idx)
        w = np.zeros(self._count)
        w[self._pos[idx]] = v
        return self._store[: self._count].T @ w

    def block(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """``K[rows][:, cols]``, read from the kept columns of ``cols``."""
        rows, cols = np.asarray(rows, dtype=np.intp), np.asarray(cols, dtype=np.intp)
        if self._K is not None:
            return self._K[np.ix_(rows, cols)]
        self._ensure(cols)
        return self._store[np.ix_(self._pos[cols], rows)].T

    def _ensure(self, idx: np.ndarray) -> None:
        """Form the columns of ``idx`` not kept yet (one call of the kernel)."""
        missing = np.unique(idx[self._pos[idx] < 0])
        if len(missing):
            t0 = time.perf_counter()
            if self._whole is not None:
                self._form(missing, self._whole[:, missing])
            else:
                with _threads(self._batch_threads):
                    columns = self._kernel(self._Z, self._Z[missing])
                self._form(missing, columns)
            self.seconds += time.perf_counter() - t0

    def _form(self, idx: np.ndarray, columns: np.ndarray) -> None:
        """Keep ``columns = K[:, idx]`` (n, m), symmetric with what is kept already."""
        new = np.array(columns.T, dtype=np.float64)  # (m, n): one row per column
        kept = np.flatnonzero(self._pos >= 0)
        if len(kept):
            where = np.ix_(self._pos[kept], idx)
            mean = (self._store[where] + new[:, kept].T) / 2
            self._store[where] = mean
            new[:, kept] = mean.T
        own = new[:, idx]
        new[:, idx] = (own + own.T) / 2
        need = self._count + len(idx)
        if need > len(self._store):
            grown = np.empty((min(self.n, max(need, 2 * len(self._store), 64)), self.n))
            grown[: self._count] = self._store[: self._count]
            self._store = grown
        self._store[self._count : need] = new
        self._pos[idx] = np.arange(self._count, need)
        self._count = need
        self.n_formed += len(idx)
