"""The other answers to "let the SVM learn its features", trained beside a Train run on the
same split (issue 21): MKL over a fixed filter bank, HOG features with an RBF SVM, the
two-layer SVM, and the estimator the project recommends at the run's size
(:func:`csvm.recommended`, issue 35).  Each gives the same result fields as the baselines
(so it gets its row, interval and McNemar test) plus what its picture needs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from csvm.model.recommend import GRAM_LIMIT, HOG_MIN_SIDE
from csvm.runs.config import MODEL_LABELS
from csvm.runs.model_result import model_summary, pinned_indices

__all__ = ["COMPARISON_MODELS", "recommended_note", "train_comparison"]

#: model -> what it is, for the settings' help and the page.
COMPARISON_MODELS = {
    "mkl": "MKL over a fixed filter bank (Varma & Babu's GMKL): weights d ≥ 0 per filter",
    "hog": "HOG features (scikit-image) with an RBF SVM",
    "mlsvm": "two-layer SVM (Wiering & Schomaker): hidden SVMs, then an output SVM",
    "recommended": "the project's recommended model at this size (csvm.recommended): HOG "
    f"features with an RBF SVM up to {GRAM_LIMIT:,} images, a plain RBF SVM above (and on "
    f"images under {HOG_MIN_SIDE} px, too small for HOG's blocks)",
}


def _mkl(c, data):
    from csvm.model.mkl import FilterBankMKL

    clf = FilterBankMKL(
        image_shape=data.image_shape,
        kernel=c.kernel if c.kernel in ("rbf", "poly") else "rbf",
        gamma=c.gamma,
        degree=c.degree,
        coef0=c.coef0,
        C=1e10 if c.C is None else c.C,
    )
    clf.fit(data.X_train, data.y_train)
    weights = np.asarray(clf.weights_, dtype=float)
    picture = {
        "filter_names": list(clf.filter_names_),
        "bank": [np.asarray(f, dtype=np.float32) for f in clf.filters_],
        "weights": weights if weights.ndim == 1 else weights.mean(axis=0),
    }
    return clf, picture


def _hog(c, data):
    from skimage.feature import hog

    from csvm.model.hog import HOGSVC

    h, w = data.image_shape[-2:]
    clf = HOGSVC(image_shape=(h, w), hog_kernel="rbf", product=False)
    flat = data.X_train.reshape(len(data.X_train), -1)
    clf.fit(flat, data.y_train)
    image = np.asarray(data.X_test[0], dtype=float).reshape(-1, h, w)[0]
    _, cells = hog(
        image,
        orientations=clf.orientations,
        pixels_per_cell=clf.pixels_per_cell,
        cells_per_block=clf.cells_per_block,
        block_norm=clf.block_norm,
        visualize=True,
    )
    picture = {"image": image.astype(np.float32), "hog_image": cells.astype(np.float32)}
    return _Flat(clf), picture


def _mlsvm(c, data):
    from csvm.model.mlsvm import MultiLayerSVM

    clf = MultiLayerSVM(random_state=c.seed)
    flat = data.X_train.reshape(len(data.X_train), -1)
    clf.fit(flat, data.y_train)
    pinned = pinned_indices(data.y_train)
    picture = {
        "hidden": np.asarray(clf.hidden_outputs(flat[pinned]), dtype=np.float32),
        "pinned": pinned.tolist(),
    }
    return _Flat(clf), picture


def _recommended(c, data):
    from csvm.model.recommend import recommendation, recommended

    n = len(data.X_train)
    clf = recommended(n, data.image_shape)
    clf.fit(data.X_train.reshape(n, -1), data.y_train)
    what, why = recommendation(n, data.image_shape)
    picture = {"estimator": what, "why": why, "n_train": n}
    return _Flat(clf), picture


class _Flat:
    """A classifier on flat rows, used on images (n, C, H, W)."""

    def __init__(self, clf):
        self.clf = clf

    def predict(self, X):
        return self.clf.predict(np.asarray(X).reshape(len(X), -1))


_TRAIN: dict[str, Callable] = {
    "mkl": _mkl,
    "hog": _hog,
    "mlsvm": _mlsvm,
    "recommended": _recommended,
}


def train_comparison(emit: Callable[[dict[str, Any]], Any], c, data, model: str) -> dict:
    """Train comparison ``model`` on the run's split; its result as a baseline's, plus
    ``"picture"`` (the bank's weights, a test image's HOG cells, the hidden SVMs' outputs
    for the pinned images, or the recommended estimator in words and why it was chosen;
    its row's label then names that estimator too)."""
    start = time.perf_counter()
    clf, picture = _TRAIN[model](c, data)
    result = model_summary(model, clf, data, time.perf_counter() - start)
    result["picture"] = picture
    if "estimator" in picture:
        result["label"] = f"{MODEL_LABELS[model]}: {picture['estimator']}"
    emit(
        {
            "kind": "result",
            "model": model,
            "seconds": result["seconds"],
            "train_accuracy": result["train_accuracy"],
            "test_accuracy": result["test_accuracy"],
        }
    )
    return result


def recommended_note(result: Mapping[str, Any] | None) -> str | None:
    """The line under a Train run's comparison table: which estimator
    :func:`csvm.recommended` chose at the run's size, and the measurement it rests on;
    None without the "recommended" comparison's result (or its picture: a reloaded run).

    Examples
    --------
    >>> recommended_note({"picture": {"estimator": "HOG + RBF SVM, C 10", "n_train": 50,
    ...                               "why": "the most accurate method"}})
    ... # doctest: +NORMALIZE_WHITESPACE
    'Recommended model: csvm.recommended chose HOG + RBF SVM, C 10 for 50 training images
    — the most accurate method.'
    """
    picture = (result or {}).get("picture") or {}
    if "estimator" not in picture:
        return None
    return (
        f"Recommended model: csvm.recommended chose {picture['estimator']} for "
        f"{int(picture['n_train']):,} training images — {picture['why']}."
    )
