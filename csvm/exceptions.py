"""Errors raised by the csvm library, each with a message a user can act on."""


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
