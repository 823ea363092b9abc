"""Multi-class wrappers for any csvm classifier: one-vs-rest with Platt scaling, or
one-vs-one voting.

Elbayad's report compares the two: one-vs-one votes over the 45 pairwise SVMs, and
one-vs-rest where each class's SVM score ``s`` is turned into ``P(y = c | x) =
1 / (1 + exp(a s + b))`` (Platt, fitted by logistic regression on held-out scores) so that
the ten scores are comparable; the class with the largest probability wins.  Here that is
scikit-learn's ``CalibratedClassifierCV(method="sigmoid")`` per class inside a
``OneVsRestClassifier``; each binary estimator is fitted ``cv`` times (on the folds whose
held-out scores fit the sigmoid) and the calibrated copies are averaged.
"""

from __future__ import annotations

from typing import Any

from sklearn.calibration import CalibratedClassifierCV
from sklearn.multiclass import OneVsOneClassifier, OneVsRestClassifier

__all__ = ["multiclass", "one_vs_one", "platt_one_vs_rest"]


def platt_one_vs_rest(
    estimator: Any, *, cv: int = 3, n_jobs: int | None = None
) -> OneVsRestClassifier:
    """One binary ``estimator`` per class against the rest, scores made probabilities by
    Platt scaling; ``predict`` takes the most probable class.

    Parameters
    ----------
    estimator : classifier
        Any binary classifier with ``decision_function`` (every csvm estimator); it is
        cloned for each class and fold.
    cv : int, default=3
        Folds whose held-out scores fit each class's sigmoid.
    n_jobs : int or None, default=None
        Classes fitted in parallel.

    Returns
    -------
    OneVsRestClassifier of ``CalibratedClassifierCV(estimator, method="sigmoid", cv=cv)``

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from csvm import MultiLayerSVM
    >>> from csvm.model.platt import platt_one_vs_rest
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = platt_one_vs_rest(MultiLayerSVM(n_epochs=2, random_state=0)).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 3)
    """
    calibrated = CalibratedClassifierCV(estimator, method="sigmoid", cv=cv)
    return OneVsRestClassifier(calibrated, n_jobs=n_jobs)


def one_vs_one(estimator: Any, *, n_jobs: int | None = None) -> OneVsOneClassifier:
    """One binary ``estimator`` per pair of classes; ``predict`` takes the most votes
    (ties broken by the summed confidences, scikit-learn's rule).  scikit-learn's wrapper
    takes flat rows ``(n, H*W)`` only: give the estimator its ``image_shape``."""
    return OneVsOneClassifier(estimator, n_jobs=n_jobs)


def multiclass(estimator: Any, strategy: str = "ovo", **kwargs: Any) -> Any:
    """``one_vs_one(estimator)`` for "ovo", ``platt_one_vs_rest(estimator)`` for
    "ovr-platt"; keyword arguments go to the wrapper."""
    if strategy == "ovo":
        return one_vs_one(estimator, **kwargs)
    if strategy == "ovr-platt":
        return platt_one_vs_rest(estimator, **kwargs)
    raise ValueError(f"Unknown strategy {strategy!r}: choose 'ovo' or 'ovr-platt'.")
