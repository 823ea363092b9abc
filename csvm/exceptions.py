"""Errors and warnings raised by the csvm library, each with a message a user can act on."""

from sklearn.exceptions import ConvergenceWarning

__all__ = [
    "CSVMError",
    "CSVMWarning",
    "DatasetError",
    "DivergenceError",
    "ImageShapeWarning",
    "SVMIterationWarning",
]


class CSVMError(Exception):
    """Base class of every error the library raises on purpose."""


class DivergenceError(CSVMError, RuntimeError):
    """Training diverged; the estimator keeps its best state so far.

    Attributes
    ----------
    cause : str
        Short machine-readable cause: ``"non-finite"``, ``"norm-explosion"`` or
        ``"objective-rising"``.
    suggested_eta : float or None
        A step size that is likely to be safe (a tenth of the one that failed).
    """

    def __init__(self, message: str, cause: str = "", suggested_eta: float | None = None):
        super().__init__(message)
        self.cause = cause
        self.suggested_eta = suggested_eta


class DatasetError(CSVMError, ValueError):
    """A dataset is missing, corrupt, or was asked for with invalid arguments."""


class CSVMWarning(UserWarning):
    """Base class of every warning the library issues on purpose."""


class ImageShapeWarning(CSVMWarning):
    """A flat X was read with a guessed image shape (not a perfect square of pixels)."""


class SVMIterationWarning(CSVMWarning, ConvergenceWarning):
    """An SVM solve stopped at its iteration bound (``svm_max_iter``) before converging.

    A subclass of scikit-learn's ``ConvergenceWarning``, so filters written for
    scikit-learn's own solvers catch it too.
    """
