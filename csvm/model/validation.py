"""Input and parameter checks shared by every image estimator of the library.

The constructor parameters are checked by scikit-learn's own machinery
(``_parameter_constraints`` tables read by ``_validate_params``), so a bad value gives the
familiar "The 'eta' parameter of KernelCSVM must be ... Got ... instead." message.  This
module adds the one constraint scikit-learn lacks (an image or filter shape), the rule that
reads a flat X as images, and the bound on the magnitude of X.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral
from typing import Any

import numpy as np
from sklearn.utils.validation import check_array

from csvm.exceptions import ImageShapeWarning
from csvm.model._sklearn import Interval, Options
from csvm.model.conv import as_images

__all__ = [
    "DEFAULT_FILTER_SIDE",
    "MAX_ABS_X",
    "SHAPE_RULE",
    "Shape",
    "Whole",
    "as_rows",
    "check_images",
    "check_init_filters",
    "check_planes",
    "check_two_classes",
    "infer_image_shape",
    "resolve_filter_shape",
]

#: How a flat X becomes images when ``image_shape`` is None (quoted in messages).
SHAPE_RULE = (
    "pass image_shape=(H, W) or (C, H, W); a flat X of n_features is read as a square "
    "image when n_features is a perfect square"
)
#: Largest |X| accepted: the kernels square and sum products of pixels in float32.
MAX_ABS_X = 1e30
#: Side of the default filter (``filter_shape=None``): the thesis's 5x5.
DEFAULT_FILTER_SIDE = 5
#: Largest side accepted in a shape parameter (a sanity bound, far above any dataset).
_MAX_SIDE = 100_000


class Shape(Options):
    """A tuple (or list) of ``lengths`` positive integers, e.g. (H, W) or (C, H, W).

    scikit-learn has no constraint for shapes and accepts only its own constraint classes
    in ``_parameter_constraints`` tables, so this one derives from ``Options`` (of which
    it keeps nothing but the type check's place) to plug into those tables and their
    error messages.
    """

    def __init__(self, lengths: tuple[int, ...], description: str):
        super().__init__(tuple, set())
        self.lengths = tuple(lengths)
        self.description = description

    def is_satisfied_by(self, val: Any) -> bool:
        if not isinstance(val, (tuple, list)) or len(val) not in self.lengths:
            return False
        return all(
            isinstance(s, Integral) and not isinstance(s, bool) and 1 <= s <= _MAX_SIDE for s in val
        )

    def __str__(self) -> str:
        return self.description


class Whole(Interval):
    """A whole number in a range, as ``Interval(Integral, ...)`` but refusing ``True`` and
    ``False``: Python counts bools as integers, so ``degree=True`` passed as 1."""

    def __init__(self, left: int | None, right: int | None, *, closed: str):
        super().__init__(Integral, left, right, closed=closed)

    def is_satisfied_by(self, val: Any) -> bool:
        return not isinstance(val, bool | np.bool_) and super().is_satisfied_by(val)


def infer_image_shape(X: np.ndarray, image_shape: Any) -> tuple[int, ...]:
    """The shape of one image of ``X``: ``image_shape`` when given, else read from ``X``.

    3-D input ``(n, H, W)`` gives ``(1, H, W)`` and 4-D input gives its last three sizes
    (refused, saying how to transpose it, when it looks channels-last: ``(n, H, W, C)``).
    A flat ``(n, n_features)`` X is read as one square grey image when ``n_features`` is a
    perfect square.  Otherwise it is read as one row of ``n_features`` pixels, with an
    :class:`~csvm.exceptions.ImageShapeWarning` that states the rule: an error there would
    make the estimators unusable on tabular data (scikit-learn's own estimator checks feed
    2, 3, 5 and 10 features), while the warning still stops a flat CIFAR-10 image
    (3,072 = 3 x 32 x 32 values) from being read as a row without anyone noticing.
    """
    if image_shape is not None:
        return tuple(int(s) for s in image_shape)
    if X.ndim == 3:
        return (1, *X.shape[1:])
    if X.ndim != 2:
        _refuse_channels_last(X.shape)
        return tuple(X.shape[1:])
    n_features = X.shape[1]
    side = math.isqrt(n_features)
    if side * side == n_features:
        return (1, side, side)
    warnings.warn(
        f"X has {n_features} features, not a perfect square, so each row is read as an "
        f"image of 1 x {n_features} pixels. To read it otherwise, {SHAPE_RULE}.",
        ImageShapeWarning,
        stacklevel=4,
    )
    return (1, 1, n_features)


def _refuse_channels_last(shape: tuple[int, ...]) -> None:
    """Refuse 4-D images that look channels-last, ``(n, H, W, C)`` as PIL and matplotlib
    hold them: read as ``(n, C, H, W)``, a (n, 32, 32, 3) CIFAR-10 batch became 32
    channels of 32 x 3 pixels, trained without a word.  ``image_shape`` given reads X as
    it is (the rare channels-first image with more than four channels and at most four
    columns)."""
    if len(shape) == 4 and shape[-1] <= 4 < shape[1]:
        n, h, w, c = shape
        raise ValueError(
            f"X has shape {tuple(shape)}, which looks like {n} images of {h} x {w} pixels "
            f"with {c} colour channel{'s' * (c != 1)} last (n, H, W, C); the estimators read "
            "4-D X as (n, C, H, W). Pass X.transpose(0, 3, 1, 2), or image_shape="
            f"({shape[1]}, {shape[2]}, {shape[3]}) to read it as (n, C, H, W) after all."
        )


def resolve_filter_shape(filter_shape: Any, image_shape: tuple[int, ...]) -> tuple[int, int]:
    """``filter_shape`` as a tuple; None gives the thesis's 5x5 on images of 9 pixels or
    more a side, and half the image's side (rounded up) on smaller ones.

    Half the side, not the whole: a filter as large as the image reduces each image to one
    number per filter, whereas half the side keeps a map of at least half the positions.
    The rule only matters for tiny or one-row images (scikit-learn's checks, tabular X).
    """
    if filter_shape is not None:
        return int(filter_shape[0]), int(filter_shape[1])
    h, w = (int(s) for s in image_shape[-2:])
    return min(DEFAULT_FILTER_SIDE, (h + 1) // 2), min(DEFAULT_FILTER_SIDE, (w + 1) // 2)


def check_init_filters(
    init_filters: Any, n_filters: int, n_channels: int, filter_shape: Any
) -> np.ndarray:
    """Starting filters given by the user, as a float64 array ``(n_filters, C, p, q)``.

    Parameters
    ----------
    init_filters : array-like (p, q), (n_filters, p, q) or (n_filters, C, p, q)
        A 2-D array is one filter; a 3-D array is ``n_filters`` grey filters (colour
        images need the 4-D form, one plane per channel).
    n_filters : int
        The estimator's ``n_filters``; the array must hold as many filters.
    n_channels : int
        Channels of the training images.
    filter_shape : tuple (p, q) or None
        The estimator's ``filter_shape``; None takes the shape of ``init_filters``.

    Raises
    ------
    ValueError
        When the array is not finite or its shape does not fit, naming both shapes.
    """
    f = np.asarray(init_filters, dtype=np.float64)
    if f.ndim == 2:
        f = f[None, None]
    elif f.ndim == 3:
        if n_channels != 1:
            raise ValueError(
                f"init_filters of shape {f.shape} is read as (n_filters, p, q), which fits "
                f"grey images only; these images have {n_channels} channels: pass "
                f"(n_filters, {n_channels}, p, q)."
            )
        f = f[:, None]
    if f.ndim != 4:
        raise ValueError(
            f"init_filters must be an array (p, q), (n_filters, p, q) or (n_filters, C, p, q), "
            f"got shape {np.shape(init_filters)}."
        )
    want = (
        int(n_filters),
        int(n_channels),
        *(f.shape[-2:] if filter_shape is None else filter_shape),
    )
    if f.shape != want:
        raise ValueError(
            f"init_filters has shape {np.shape(init_filters)}, read as {f.shape}, but "
            f"n_filters={n_filters}, filter_shape={filter_shape} and images with "
            f"{n_channels} channel{'s' if n_channels != 1 else ''} need {want}."
        )
    if not np.all(np.isfinite(f)):
        raise ValueError("init_filters holds NaN or infinite values: give finite numbers.")
    return f.copy()


def check_images(estimator: Any, X: Any, *, reset: bool, dtype: Any = np.float32) -> np.ndarray:
    """Validate images for ``fit`` (``reset=True``) or for prediction, as ``(n, C, H, W)``.

    scikit-learn's ``check_array`` gives the standard messages for sparse, empty, 1-D,
    non-numeric and non-finite input; values beyond ``1e30`` in magnitude are refused with
    a message saying to scale X.  On ``reset`` the image shape comes from
    ``estimator.image_shape`` (None: :func:`infer_image_shape`) and is stored with
    ``n_features_in_``; afterwards X must have as many pixels.
    """
    try:
        X = check_array(X, allow_nd=True, dtype=[np.float32, np.float64], input_name="X")
    except ValueError as exc:
        if "NaN" in str(exc) or "infinity" in str(exc):
            raise ValueError(
                f"{exc} Remove or impute those pixels before training or predicting."
            ) from None
        raise
    largest = float(np.max(np.abs(X))) if X.size else 0.0
    if largest > MAX_ABS_X:
        raise ValueError(
            f"X holds a value of magnitude {largest:.3g}, but {type(estimator).__name__} "
            f"accepts |X| <= {MAX_ABS_X:g} (its kernels multiply pixels in float32 and would "
            "overflow). Scale X first: pixels belong in [0, 1]."
        )
    if reset:
        shape = infer_image_shape(X, estimator.image_shape)
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


def as_rows(X: Any) -> Any:
    """Images ``(n, H, W)`` or ``(n, C, H, W)`` as flat rows, for the estimators of vectors
    (SMO, the two-layer SVM); anything else as given, for scikit-learn's checks to judge.

    Examples
    --------
    >>> as_rows(np.zeros((5, 2, 8, 8))).shape
    (5, 128)
    """
    if getattr(X, "ndim", 0) > 2:
        return np.reshape(X, (len(X), -1))
    return X


def check_two_classes(classes: np.ndarray) -> None:
    """Refuse a ``y`` of one class, naming it as the user wrote it (``3``, not
    ``np.int64(3)``).

    Examples
    --------
    >>> try:
    ...     check_two_classes(np.array([3]))
    ... except ValueError as err:
    ...     print(err)
    y holds one class only (3): training needs examples of at least two classes.
    """
    if len(classes) < 2:
        label = classes[0].item() if isinstance(classes[0], np.generic) else classes[0]
        raise ValueError(
            f"y holds one class only ({label!r}): training needs examples of at least two classes."
        )


def check_planes(rows: int, planes: int) -> None:
    """Refuse a ``planes`` that does not split an image's ``rows`` into planes of equal
    height (CIFAR-10's stacked 96 x 32 image holds 3: R, G, B), saying what to use.

    Examples
    --------
    >>> check_planes(96, 3)  # passes
    >>> try:
    ...     check_planes(28, 3)
    ... except ValueError as err:
    ...     print(str(err).split(";")[0])
    planes=3: 28 rows do not split into 3 planes of equal height
    """
    if int(planes) != planes or planes < 1 or rows % planes:
        raise ValueError(
            f"planes={planes!r}: {rows} rows do not split into {planes} planes of equal "
            "height; use 1, or 3 for CIFAR-10's stacked R, G, B."
        )
