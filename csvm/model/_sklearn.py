"""The parts of scikit-learn that it keeps private, imported here and nowhere else.

The estimators check their parameters the way scikit-learn's own do (the same messages,
which its ``check_estimator`` looks for): with the constraint classes of
``sklearn.utils._param_validation`` and the ``sklearn.base._fit_context`` decorator.
scikit-learn may move them in any release, so every estimator imports them from this
module; if a release moves them, the error below names this file and the fix, instead of
thirteen tracebacks from thirteen modules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

try:
    from sklearn.base import _fit_context as fit_context
    from sklearn.utils._param_validation import Interval, Options, StrOptions
except ImportError as err:  # pragma: no cover - only with a scikit-learn that moved them
    import sklearn

    raise ImportError(
        f"csvm uses scikit-learn's parameter validation (Interval, Options, StrOptions in "
        f"sklearn.utils._param_validation, _fit_context in sklearn.base), which scikit-learn "
        f"{sklearn.__version__} no longer has there ({err}). Install a scikit-learn that "
        "csvm supports (pip install 'scikit-learn>=1.6,<2'), or point the imports of "
        "csvm/model/_sklearn.py at their new home."
    ) from err

__all__ = ["Interval", "Options", "RegistryOptions", "StrOptions", "fit_context"]


class RegistryOptions(StrOptions):
    """A ``StrOptions`` constraint whose options are a registry's names at check time.

    ``StrOptions(set(KERNELS))`` would freeze the names when the estimator class is
    defined; this one reads ``names()`` whenever a parameter is checked, so an entry added
    to a registry later (a plug-in, a test's monkeypatch) is accepted by ``fit``.

    Parameters
    ----------
    names : callable returning an iterable of str
        E.g. ``KERNELS.keys`` (the registry dict's bound method).
    """

    def __init__(self, names: Callable[[], Iterable[str]]):
        self._names = names
        super().__init__(set(names()))

    @property
    def options(self) -> set[str]:
        """The registry's names now."""
        return set(self._names())

    @options.setter
    def options(self, value: set[str]) -> None:
        # StrOptions.__init__ assigns the names once; the registry stays the truth.
        pass
