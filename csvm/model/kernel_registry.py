"""The kernels of the K-CSVM, one registry entry each: add a kernel here and only here.

An entry (:class:`Kernel`) holds everything the rest of the library asks of a kernel:

* its value from the dot products ``g = z_i . z_j`` and the squared norms ``|z|^2``
  (:attr:`Kernel.from_dots`), which the training kernel, the landscapes, the tuning grid
  and the fast multi-class prediction all build on;
* its partial derivatives in ``g`` and ``|z|^2`` (:attr:`Kernel.partials`), from which
  :func:`csvm.model.kernels.kernel_map_gradient` assembles the filter gradient of any
  kernel (MATH.md);
* bounds on those partials from the kernel values alone (:attr:`Kernel.slopes`): the
  round-off bound of the fast prediction path (:mod:`csvm.model.prediction`);
* which of ``degree``, ``gamma``, ``coef0`` it reads (an RBF header lists γ alone), its
  label, and scikit-learn's name for it (the plain SVM on raw pixels).

RunConfig's choices (:mod:`csvm.runs.fields`), hence the app's widgets, the CLI's flags and
the URL parsing, and every estimator's parameter check read :data:`KERNELS` when asked, so
an entry added to it (even by a test's monkeypatch) is offered everywhere at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from csvm.exceptions import CSVMError

__all__ = [
    "KERNELS",
    "Kernel",
    "KernelOverflowError",
    "KernelSpec",
    "get_kernel",
    "kernels_using",
]

#: The parameters a kernel may read, in the order headers list them.
KERNEL_PARAMETERS = ("degree", "gamma", "coef0")


# Here, beside the kernels that raise it, so that kernels.py imports this module and not
# the other way round; csvm.model.kernels re-exports it.
class KernelOverflowError(CSVMError, ValueError):
    """A kernel's values are too large for float64 with these settings."""


@dataclass(frozen=True, eq=False)
class KernelSpec(Mapping):
    """A kernel and its parameters as one value (the four keywords that travel together).

    It is also a read-only mapping of those four names, so ``kernel_matrix(Z, **spec)``,
    ``dict(spec)`` and code that kept a plain dict (an older fitted model's
    ``kernel_params``) work alike.

    Parameters
    ----------
    kernel : str, default="poly"
        A name in :data:`KERNELS`.
    degree, gamma, coef0 : float
        ``(gamma z.z' + coef0)^degree`` for "poly", ``exp(-gamma |z - z'|^2)`` for "rbf";
        a kernel ignores those it does not use (:meth:`used`).

    Examples
    --------
    >>> spec = KernelSpec("rbf", gamma=0.02)
    >>> spec.used()
    {'gamma': 0.02}
    >>> dict(spec)["kernel"]
    'rbf'
    """

    kernel: str = "poly"
    degree: float = 2
    gamma: float = 1.0
    coef0: float = 1.0

    @classmethod
    def of(cls, params: Mapping[str, Any]) -> KernelSpec:
        """A KernelSpec from a mapping with some of its four keys (or a KernelSpec)."""
        if isinstance(params, KernelSpec):
            return params
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in params.items() if k in names})

    @property
    def entry(self) -> Kernel:
        """The registry entry of this kernel (ValueError for an unknown one)."""
        return get_kernel(self.kernel)

    def used(self) -> dict[str, Any]:
        """The parameters this kernel reads, by name, in header order."""
        return {name: getattr(self, name) for name in self.entry.params}

    def __getitem__(self, key: str) -> Any:
        if key in ("kernel", *KERNEL_PARAMETERS):
            return getattr(self, key)
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(("kernel", *KERNEL_PARAMETERS))

    def __len__(self) -> int:
        return 1 + len(KERNEL_PARAMETERS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        return dict(self.items()) == dict(other.items())

    def __hash__(self) -> int:
        return hash(tuple(self.items()))


#: ``from_dots(block, spec, sq_rows, sq_cols)``: kernel values from dot products.
FromDots = Callable[[np.ndarray, KernelSpec, Any, Any], np.ndarray]
#: ``partials(Z, K, spec)``: ``(dK/dg, dK/d|z_i|^2 or None)`` among the rows of ``Z``.
Partials = Callable[[np.ndarray, np.ndarray, KernelSpec], tuple[np.ndarray, Any]]
#: ``slopes(K, spec)``: ``(|dK/dg|, |dK/d|z|^2| or None)`` bounded from the values alone.
Slopes = Callable[[np.ndarray, KernelSpec], tuple[np.ndarray, Any]]


@dataclass(frozen=True)
class Kernel:
    """One kernel: its value, its derivatives, its parameters and its names.

    Parameters
    ----------
    name : str
        The key in :data:`KERNELS` (what ``KernelCSVM(kernel=...)`` and URLs take).
    label : str
        How pages name it ("RBF").
    formula : str
        One line: the kernel as a formula.
    params : tuple of str
        Which of ``degree``, ``gamma``, ``coef0`` it reads (headers and widgets show
        only these).
    from_dots : callable ``(block, spec, sq_rows, sq_cols) -> block``
        Turns a float block of dot products ``z_i . z_j`` into kernel values, in place where
        it can.  ``sq_rows`` and ``sq_cols`` are the squared norms of the rows and columns,
        shaped to broadcast against the block ((n, 1) and (1, m)); they are None unless
        ``needs_norms``.
    partials : callable ``(Z, K, spec) -> (D_g, D_n)``
        ``D_g[i, j] = dK_ij/d(z_i . z_j)`` and ``D_n[i, j] = dK_ij/d|z_i|^2`` (None when
        the kernel does not read the norms), float64, among the rows of ``Z`` (s, D)
        whose kernel is ``K``.  The filter gradient of every kernel is assembled from
        them (:func:`csvm.model.kernels.kernel_map_gradient`).
    slopes : callable ``(K, spec) -> (S_g, S_n)``
        Upper bounds on ``|D_g|`` and ``|D_n|`` from the kernel values alone (float32 is
        enough): how far round-off in the products can move a prediction.
    needs_norms : bool
        Whether ``from_dots`` reads the squared norms.
    svc_kernel : str or None
        scikit-learn ``SVC``'s name for the same kernel; None hands SVC a callable.
    tuned : {"gamma", "degree"} or None
        What tuning the plain SVM varies beside C (log steps around scikit-learn's
        "scale" for gamma, 1, 2, ... for degree); None: C alone.
    overflow : callable ``(Z1, Z2, spec) -> Exception``, optional
        The error for kernel values beyond float64 (checked only when given).
    """

    name: str
    label: str
    formula: str
    params: tuple[str, ...]
    from_dots: FromDots
    partials: Partials
    slopes: Slopes
    needs_norms: bool = False
    svc_kernel: str | None = None
    tuned: str | None = None
    overflow: Callable[[np.ndarray, np.ndarray, KernelSpec], Exception] | None = None


# -- the entries ---------------------------------------------------------------------------
def _linear_values(block, spec, sq_rows, sq_cols):
    return block


def _ones(Z, K, spec):
    return np.ones(K.shape), None


def _ones32(K, spec):
    return np.ones(K.shape, dtype=np.float32), None


def _poly_values(block, spec, sq_rows, sq_cols):
    block *= spec.gamma
    block += spec.coef0
    if spec.degree == 2:
        np.square(block, out=block)
    elif spec.degree != 1:
        np.power(block, spec.degree, out=block)
    return block


def _poly_partials(Z, K, spec):
    d, gamma = spec.degree, spec.gamma
    base = gamma * (Z @ Z.T) + spec.coef0
    return d * gamma * base ** (d - 1), None


def _poly_slopes(K, spec):
    # K = (gamma g + c)^d, so |dK/dg| = d gamma |K|^((d-1)/d); sqrt rather than a power
    # for d = 2 (the bound needs no precision).
    d = spec.degree
    if d == 1:
        slope = np.ones(K.shape, dtype=np.float32)
    elif d == 2:
        slope = np.sqrt(np.abs(K, dtype=np.float32))
    else:
        slope = np.abs(K, dtype=np.float32) ** np.float32((d - 1) / d)
    slope *= np.float32(d * spec.gamma)
    return slope, None


def _poly_overflow(Z1, Z2, spec):
    """The error names the settings, not the data: (γ z·z′ + coef0)^degree is too large."""
    base = float(np.max(np.abs(spec.gamma * (Z1 @ Z2.T).astype(np.float64) + spec.coef0)))
    return KernelOverflowError(
        f"The polynomial kernel (γ z·z′ + coef0)^degree overflows: with gamma="
        f"{spec.gamma:g}, coef0={spec.coef0:g} and degree={spec.degree:g} its base reaches "
        f"{base:.3g}, and {base:.3g}^{spec.degree:g} is beyond float64's 1.8e308. Lower the "
        "degree or coef0 (or gamma), or use the RBF kernel."
    )


def _rbf_values(block, spec, sq_rows, sq_cols):
    # ||a - b||^2 = |a|^2 + |b|^2 - 2 a.b, clipped at 0 against round-off.
    block *= -2.0
    block += sq_rows
    block += sq_cols
    np.maximum(block, 0.0, out=block)
    block *= -spec.gamma
    np.exp(block, out=block)
    return block


def _rbf_partials(Z, K, spec):
    K = np.asarray(K, dtype=np.float64)
    return 2.0 * spec.gamma * K, -spec.gamma * K


def _rbf_slopes(K, spec):
    slope = np.abs(K, dtype=np.float32) * np.float32(spec.gamma)
    return 2.0 * slope, slope


#: name -> entry: every kernel the library, the CLI, the URLs and the app offer.
KERNELS: dict[str, Kernel] = {
    "poly": Kernel(
        name="poly",
        label="polynomial",
        formula="polynomial (gamma z_i.z_j + coef0)^degree",
        params=("degree", "gamma", "coef0"),
        from_dots=_poly_values,
        partials=_poly_partials,
        slopes=_poly_slopes,
        svc_kernel="poly",
        tuned="degree",
        overflow=_poly_overflow,
    ),
    "rbf": Kernel(
        name="rbf",
        label="RBF",
        formula="Gaussian exp(-gamma ||z_i - z_j||^2)",
        params=("gamma",),
        from_dots=_rbf_values,
        partials=_rbf_partials,
        slopes=_rbf_slopes,
        needs_norms=True,
        svc_kernel="rbf",
        tuned="gamma",
    ),
    "linear": Kernel(
        name="linear",
        label="linear",
        formula="linear z_i.z_j",
        params=(),
        from_dots=_linear_values,
        partials=_ones,
        slopes=_ones32,
        svc_kernel="linear",
    ),
}


def get_kernel(name: str) -> Kernel:
    """The registry entry of ``name`` (any case), or a ValueError listing the kernels."""
    key = str(name).lower()
    if key not in KERNELS:
        raise ValueError(f"Unknown kernel {name!r}: choose one of {', '.join(KERNELS)}.")
    return KERNELS[key]


def kernels_using(parameter: str) -> tuple[str, ...]:
    """The kernels that read ``parameter`` ("degree", "gamma" or "coef0"), registry order."""
    return tuple(name for name, entry in KERNELS.items() if parameter in entry.params)
