"""What a trained model's result holds (:func:`model_summary`) and which training images a
run pins to show (:func:`pinned_indices`).

Both the Train run's targets (:mod:`csvm.runs.targets`) and the comparison models
(:mod:`csvm.runs.comparison_models`) build their results with these, so they live here,
below both: neither module imports the other.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from csvm.runs.config import MODEL_LABELS
from csvm.runs.confusion import confusion_counts

__all__ = ["model_summary", "pinned_indices"]

_N_PINNED = 3  # pinned example images per class


def pinned_indices(y: np.ndarray, per_class: int = _N_PINNED) -> np.ndarray:
    """The first ``per_class`` training images of each class: fixed for a given split.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    per_class : int, default 3

    Returns
    -------
    ndarray of int
        Indices of the -1 images, then of the +1 images.
    """
    neg = np.flatnonzero(y < 0)[:per_class]
    pos = np.flatnonzero(y > 0)[:per_class]
    return np.concatenate([neg, pos])


def _labels(data) -> tuple[int, ...]:
    """The label of each class of the data: (-1, +1) for a pair, 0..k-1 for several."""
    k = len(data.class_names)
    return (-1, 1) if k == 2 and getattr(data, "classes", None) is not None else tuple(range(k))


def model_summary(model: str, clf, data, seconds: float) -> dict[str, Any]:
    """The result of a trained model on ``data``, as every model's row holds it.

    Parameters
    ----------
    model : str
        Its key in :data:`csvm.runs.config.MODEL_LABELS` ("csvm", "svm", "mkl", ...).
    clf : object with ``predict``
        The trained model, predicting on ``data``'s images.
    data : csvm.data.PairData or csvm.data.MulticlassData
    seconds : float
        How long it trained.

    Returns
    -------
    dict
        Train and test accuracy, the test predictions, the confusion counts, the first 32
        misclassified test images, the time; per-class accuracy for several classes.
    """
    pred_test = clf.predict(data.X_test)
    wrong = np.flatnonzero(pred_test != data.y_test)
    labels = _labels(data)
    confusion = confusion_counts(data.y_test, pred_test, labels)
    extra = {}
    if labels != (-1, 1):
        m = np.asarray(confusion, dtype=float)
        extra = {
            "class_names": [str(n) for n in data.class_names],
            # Recall per class (the share of each class's test images classified right).
            "per_class_accuracy": (np.diag(m) / np.maximum(m.sum(axis=1), 1)).tolist(),
        }
    return {
        **extra,
        "model": model,
        "label": MODEL_LABELS[model],
        "train_accuracy": float(np.mean(clf.predict(data.X_train) == data.y_train)),
        "test_accuracy": float(np.mean(pred_test == data.y_test)),
        "test_predictions": pred_test.astype(np.int8),
        "seconds": float(seconds),
        "confusion": confusion,
        "misclassified": wrong[:32].tolist(),
        "n_misclassified": int(len(wrong)),
        "n_test": int(len(data.y_test)),
        "status": "done",
    }
