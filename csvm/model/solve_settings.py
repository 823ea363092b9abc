"""The settings of one SVM solve at fixed filters, as one value.

Eight keywords travel together through the lab, the landscapes and the stack lab:
``kernel, degree, gamma, coef0`` (a :class:`~csvm.model.kernels.KernelSpec`), ``C``,
``regulariser``, ``lam`` and ``svm_tol``.  The estimators keep them as flat keywords
(scikit-learn estimators have flat parameters); inside, they are checked once and passed
on as one :class:`SolveSettings` (``KernelCSVM``'s fit, ``outer_objective``, the labs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from csvm.model.kernels import KernelSpec

__all__ = ["HARD_MARGIN_C", "SolveSettings"]

#: The C that stands for "no upper bound on alpha" (erratum 5): LIBSVM needs a number.
#: (Here, below the kernels, so that :mod:`csvm.model.kernel_state` can take a
#: :class:`SolveSettings` without an import cycle; it re-exports the constant.)
HARD_MARGIN_C = 1e10


@dataclass(frozen=True)
class SolveSettings:
    """A kernel, the SVM's C and tolerance, and the filter penalty.

    Parameters
    ----------
    kernel : KernelSpec
        The kernel on the feature maps.
    C : float or None, default=None
        The bound on every alpha; None is the hard margin.
    regulariser : str, default="dfo1"
        A name in :data:`csvm.model.regularisers.REGULARISERS`.
    lam : float, default=0.01
        The penalty's strength.
    svm_tol : float, default=1e-3
        LIBSVM's stopping tolerance.

    Examples
    --------
    >>> s = SolveSettings.from_keywords(kernel="rbf", gamma=0.02, regulariser="dfo2")
    >>> s.kernel.used(), s.solver_C
    ({'gamma': 0.02}, 10000000000.0)
    >>> s.keywords()["regulariser"]
    'dfo2'
    """

    kernel: KernelSpec = field(default_factory=KernelSpec)
    C: float | None = None
    regulariser: str = "dfo1"
    lam: float = 0.01
    svm_tol: float = 1e-3

    @classmethod
    def from_keywords(
        cls,
        *,
        kernel: str = "poly",
        degree: float = 2,
        gamma: float = 1.0,
        coef0: float = 1.0,
        C: float | None = None,
        regulariser: str = "dfo1",
        lam: float = 0.01,
        svm_tol: float = 1e-3,
    ) -> SolveSettings:
        """The settings from the eight flat keywords (``KernelCSVM``'s names)."""
        return cls(KernelSpec(kernel, degree, gamma, coef0), C, regulariser, lam, svm_tol)

    def keywords(self) -> dict[str, Any]:
        """The eight flat keywords again, e.g. for ``KernelCSVM(**settings.keywords())``."""
        return {
            **self.kernel,
            "C": self.C,
            "regulariser": self.regulariser,
            "lam": self.lam,
            "svm_tol": self.svm_tol,
        }

    @property
    def solver_C(self) -> float:
        """The C handed to LIBSVM: :data:`HARD_MARGIN_C` for the hard margin."""
        return HARD_MARGIN_C if self.C is None else float(self.C)
