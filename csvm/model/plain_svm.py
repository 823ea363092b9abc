"""The plain SVM that a CSVM is compared with: the same kernel, degree, γ, coef0 and C on
raw pixels (a Pipeline that flattens the images, then an SVC)."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.pipeline import Pipeline
from sklearn.svm import SVC

from csvm.model.kernels import KernelSpec, kernel_matrix

__all__ = ["FlattenImages", "make_plain_svm", "svc_kernel"]


class FlattenImages(TransformerMixin, BaseEstimator):
    """Reshape images ``(n, ...)`` to rows ``(n, prod(...))`` so an SVC can read them."""

    def fit(self, X: Any, y: Any = None) -> FlattenImages:
        """Nothing to learn."""
        return self

    def transform(self, X: Any) -> np.ndarray:
        """Flattened images."""
        X = np.asarray(X)
        return X.reshape(len(X), -1)


def svc_kernel(spec: KernelSpec) -> dict[str, Any]:
    """``SVC``'s keywords for a kernel of the registry: its own name and parameters where
    scikit-learn has the kernel (the entry's ``svc_kernel``), else a callable that computes
    it with :func:`csvm.model.kernels.kernel_matrix`.

    Parameters
    ----------
    spec : KernelSpec

    Returns
    -------
    dict
        ``kernel`` and, for scikit-learn's own kernels, ``degree``, ``gamma``, ``coef0``.
    """
    name = spec.entry.svc_kernel
    if name is None:  # a partial of a module-level function: the SVC still pickles
        return {"kernel": partial(kernel_matrix, **spec)}
    return {"kernel": name, "degree": spec.degree, "gamma": spec.gamma, "coef0": spec.coef0}


def make_plain_svm(
    *,
    kernel: str = "poly",
    degree: int = 2,
    gamma: float = 1.0,
    coef0: float = 1.0,
    C: float | None = None,
    linear: bool = False,
    lam_w: float | None = None,
    n_samples: int | None = None,
    max_iter: int = 10**6,
) -> Pipeline:
    """The plain SVM on raw pixels that matches a CSVM: same kernel, degree, gamma, coef0, C.

    Parameters
    ----------
    kernel, degree, gamma, coef0 : as in :class:`~csvm.KernelCSVM`
    C : float or None
        None (no bound) becomes ``C = 1e10`` (``csvm.model.kernelised.HARD_MARGIN_C``), the same
        large C the K-CSVM hands to LIBSVM, which no alpha reaches in practice.
    linear : bool
        Match an L-CSVM instead: a linear SVM with ``C = 1 / (lam_w * n_samples)``, the
        solver form of the L-CSVM's weight step (the kernel arguments are then unused).
    lam_w : float, optional
        The L-CSVM's weight regularisation; needed when ``linear``.
    n_samples : int, optional
        Training-set size; needed when ``linear``.
    max_iter : int
        Bound on LIBSVM's iterations, as the CSVMs' ``svm_max_iter``: a hard-margin solve
        on data that are not separable in the kernel then ends (with scikit-learn's
        ConvergenceWarning) instead of running on.

    Returns
    -------
    Pipeline
        ``FlattenImages`` followed by ``SVC``; accepts images of any shape.

    Raises
    ------
    ValueError
        For ``linear=True`` without ``lam_w`` or ``n_samples``.
    """
    from csvm.model.kernelised import HARD_MARGIN_C
    from csvm.model.linear import lambda_to_C

    if linear:
        if lam_w is None or n_samples is None:
            raise ValueError(
                "make_plain_svm(linear=True) needs lam_w and n_samples: "
                "C = 1 / (lam_w * n_samples)."
            )
        svc = SVC(kernel="linear", C=lambda_to_C(float(lam_w), int(n_samples)), max_iter=max_iter)
    else:
        svc = SVC(
            **svc_kernel(KernelSpec(kernel, degree, gamma, coef0)),
            C=HARD_MARGIN_C if C is None else float(C),
            max_iter=max_iter,
        )
    return Pipeline([("flatten", FlattenImages()), ("svc", svc)])
