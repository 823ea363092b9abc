"""Input checks shared by every image estimator of the library."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.validation import check_array

from csvm.conv import as_images

__all__ = ["check_images"]


def check_images(estimator: Any, X: Any, *, reset: bool, dtype: Any = np.float32) -> np.ndarray:
    """Validate images for ``fit`` (``reset=True``) or for prediction, as ``(n, C, H, W)``.

    scikit-learn's ``check_array`` gives the standard messages for sparse, empty, 1-D,
    non-numeric and non-finite input.  On ``reset`` the image shape comes from
    ``estimator.image_shape`` (None: inferred; a 2-D table is read as one row of pixels)
    and is stored with ``n_features_in_``; afterwards X must have as many pixels.
    """
    try:
        X = check_array(X, allow_nd=True, dtype=[np.float32, np.float64], input_name="X")
    except ValueError as exc:
        if "NaN" in str(exc) or "infinity" in str(exc):
            raise ValueError(
                f"{exc} Remove or impute those pixels before training or predicting."
            ) from None
        raise
    if reset:
        if estimator.image_shape is not None:
            shape = tuple(estimator.image_shape)
        elif X.ndim == 2:
            shape = (1, 1, X.shape[1])
        else:
            shape = (1, *X.shape[1:]) if X.ndim == 3 else X.shape[1:]
    else:
        shape = estimator._image_shape
        n_features = int(np.prod(X.shape[1:]))
        if n_features != estimator.n_features_in_:
            raise ValueError(
                f"X has {n_features} features, but {type(estimator).__name__} is expecting "
                f"{estimator.n_features_in_} features as input (images of shape {shape})."
            )
    X4 = as_images(X, shape)
    if reset:
        estimator._image_shape = tuple(int(s) for s in X4.shape[1:])
        estimator.n_features_in_ = int(np.prod(X4.shape[1:]))
    return np.ascontiguousarray(X4, dtype=dtype)
