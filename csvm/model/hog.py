"""HOG features with RBF, chi-squared and histogram-intersection kernels (Elbayad's report).

Histograms of oriented gradients come from ``skimage.feature.hog`` image by image (about a
millisecond per 28x28 image); the kernels on them are the Gaussian (csvm.model.kernels), the
exponential chi-squared (``sklearn.metrics.pairwise.chi2_kernel``) and the histogram
intersection ``sum_i min(h_i, h'_i)``, all fed to LIBSVM as precomputed kernels.  With
``product=True`` the HOG kernel is multiplied elementwise by an RBF kernel on the raw
pixels: the report's best single kernel, raw-RBF (sigma 7) ⊙ HOG-RBF (sigma 4), 96.9 % in
5-fold CV on 5,000 MNIST images.  It is the default because HOG alone is blind to where an
image is bright: on tabular data (a row of a few "pixels", as scikit-learn's estimator
checks feed) the descriptors carry nothing, while the product keeps the raw RBF's view.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.metrics.pairwise import additive_chi2_kernel, chi2_kernel
from sklearn.svm import SVC
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from csvm.model._sklearn import Interval, StrOptions, fit_context
from csvm.model.kernels import kernel_matrix
from csvm.model.multiclass import COMMON_CONSTRAINTS
from csvm.model.validation import Shape, check_images, check_two_classes

__all__ = ["HOGSVC", "hog_features", "hog_kernel", "intersection_kernel", "scale_gamma"]

HOG_KERNELS = ("rbf", "chi2", "intersection")
#: Pairs whose chi-squared distances set gamma="scale" (the first rows of the training set).
_SCALE_ROWS = 500
#: Elements of the (rows x m x features) block of the intersection kernel.
_BLOCK_ELEMENTS = 1 << 22


def hog_features(
    X4: np.ndarray,
    *,
    orientations: int = 9,
    pixels_per_cell: tuple[int, int] = (4, 4),
    cells_per_block: tuple[int, int] = (2, 2),
    block_norm: str = "L2-Hys",
) -> np.ndarray:
    """HOG descriptors of every image (scikit-image's, unchanged), as float64 rows.

    Parameters
    ----------
    X4 : array (n, C, H, W)
        Colour images are passed with their channel axis (scikit-image then takes, at
        each pixel, the channel with the largest gradient).
    orientations, pixels_per_cell, cells_per_block, block_norm
        As in ``skimage.feature.hog``.

    Returns
    -------
    features : float64 array (n, n_features), non-negative

    Images smaller than one block (``pixels_per_cell * cells_per_block``) are zero-padded
    at the bottom and right to that size, so any image gives a descriptor.
    """
    n, c, h, w = X4.shape
    need_h = pixels_per_cell[0] * cells_per_block[0]
    need_w = pixels_per_cell[1] * cells_per_block[1]
    if h < need_h or w < need_w:
        X4 = np.pad(X4, ((0, 0), (0, 0), (0, max(0, need_h - h)), (0, max(0, need_w - w))))
    opts = {
        "orientations": int(orientations),
        "pixels_per_cell": tuple(pixels_per_cell),
        "cells_per_block": tuple(cells_per_block),
        "block_norm": block_norm,
        "feature_vector": True,
    }
    from skimage.feature import hog  # here: `import csvm` need not load scikit-image

    if c == 1:
        rows = [hog(image[0], **opts) for image in X4]
    else:
        rows = [hog(image, channel_axis=0, **opts) for image in X4]
    return np.asarray(rows, dtype=np.float64).reshape(n, -1)


def intersection_kernel(A: np.ndarray, B: np.ndarray | None = None) -> np.ndarray:
    """Histogram intersection ``K_ij = sum_f min(A_if, B_jf)`` (positive definite on
    non-negative features), in row blocks that bound the temporary to ~32 MB."""
    A = np.asarray(A, dtype=np.float64)
    B = A if B is None else np.asarray(B, dtype=np.float64)
    out = np.empty((len(A), len(B)))
    rows = max(1, _BLOCK_ELEMENTS // max(1, B.size))
    for start in range(0, len(A), rows):
        block = A[start : start + rows]
        out[start : start + rows] = np.minimum(block[:, None, :], B[None, :, :]).sum(axis=2)
    return out


def scale_gamma(features: np.ndarray, kind: str) -> float:
    """The "scale" gamma: ``1 / (F var)`` for RBF (scikit-learn SVC's rule), and for chi2 one
    over the mean chi-squared distance among the first rows, so ``gamma * distance`` is
    about 1 for a typical pair either way."""
    F = np.asarray(features, dtype=np.float64)
    if kind == "chi2":
        sample = F[:_SCALE_ROWS]
        mean = float(-additive_chi2_kernel(sample).mean()) * len(sample) / max(1, len(sample) - 1)
        return 1.0 / mean if mean > 0 else 1.0
    var = float(F.var()) * F.shape[1]
    return 1.0 / var if var > 0 else 1.0


def hog_kernel(A: np.ndarray, B: np.ndarray | None, kind: str, gamma: float) -> np.ndarray:
    """The HOG kernel ``kind`` between two sets of descriptors (float64)."""
    if kind == "rbf":
        A = np.asarray(A, dtype=np.float64)
        return kernel_matrix(
            A, None if B is None else np.asarray(B, np.float64), kernel="rbf", gamma=gamma
        )
    if kind == "chi2":
        return chi2_kernel(A, B, gamma=gamma)
    return intersection_kernel(A, B)


class HOGSVC(ClassifierMixin, BaseEstimator):
    """SVM on HOG descriptors with an RBF, chi-squared or intersection kernel, optionally
    times an RBF kernel on the raw pixels (Elbayad's product kernel).

    Multi-class problems are LIBSVM's one-vs-one votes (``SVC``); for one-vs-rest with
    Platt scaling wrap it with :func:`csvm.model.platt.platt_one_vs_rest`.

    Parameters
    ----------
    image_shape : tuple (H, W) or (C, H, W), or None, default=None
        Shape of one image; None reads it from X (a perfect-square number of features is
        a square image, any other one row of pixels, with a warning).
    hog_kernel : {"rbf", "chi2", "intersection"}, default="rbf"
        ``exp(-gamma ||h - h'||^2)``, ``exp(-gamma sum (h - h')^2 / (h + h'))`` or
        ``sum min(h, h')`` on the HOG descriptors h.
    product : bool, default=True
        Multiply the HOG kernel elementwise by ``exp(-raw_gamma ||x - x'||^2)`` on the
        raw pixels.
    gamma : "scale" or float > 0, default="scale"
        Width of the HOG kernel (rbf, chi2); "scale" is ``1 / (F var(h))`` for rbf and one
        over the mean chi-squared distance for chi2.  Ignored by "intersection".
    raw_gamma : "scale" or float > 0, default="scale"
        Width of the raw-pixel RBF of the product; "scale" is ``1 / (D var(x))``.
    C : float > 0, default=1.0
        The SVM's bound on each alpha (soft margin).
    orientations : int >= 1, default=9
        Gradient-direction bins of each cell's histogram (unsigned, over 0-180 degrees).
    pixels_per_cell : tuple (int, int), default=(4, 4)
        Rows and columns of pixels whose gradients make one histogram.
    cells_per_block : tuple (int, int), default=(2, 2)
        Cells normalised together (a block; blocks overlap by all but one cell).
    block_norm : {"L1", "L1-sqrt", "L2", "L2-Hys"}, default="L2-Hys"
        As in ``skimage.feature.hog``; images smaller than one block are zero-padded.
    class_weight : dict, "balanced" or None, default=None
        As in SVC (the report's ``C+ = beta C-`` for one-vs-rest).
    svm_tol : float > 0, default=1e-3
        Stopping tolerance of LIBSVM's solve.

    Attributes
    ----------
    classes_, n_features_in_
    svc_ : the fitted ``SVC(kernel="precomputed")``
    gamma_, raw_gamma_ : float
        The widths used (after "scale").
    support_, dual_coef_, intercept_, n_support_ : from ``svc_``

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from csvm import HOGSVC
    >>> X, y = load_digits(return_X_y=True)
    >>> clf = HOGSVC(image_shape=(8, 8), hog_kernel="chi2", C=10).fit(X[:1000] / 16, y[:1000])
    >>> round(clf.score(X[1000:] / 16, y[1000:]), 2) > 0.8
    True
    """

    _parameter_constraints: dict = {
        "image_shape": COMMON_CONSTRAINTS["image_shape"],
        "hog_kernel": [StrOptions(set(HOG_KERNELS))],
        "product": ["boolean"],
        "gamma": [StrOptions({"scale"}), Interval(Real, 0, None, closed="neither")],
        "raw_gamma": [StrOptions({"scale"}), Interval(Real, 0, None, closed="neither")],
        "C": [Interval(Real, 0, None, closed="neither")],
        "orientations": [Interval(Integral, 1, 360, closed="both")],
        "pixels_per_cell": [Shape((2,), "a tuple (rows, cols) of positive integers")],
        "cells_per_block": [Shape((2,), "a tuple (rows, cols) of positive integers")],
        "block_norm": [StrOptions({"L1", "L1-sqrt", "L2", "L2-Hys"})],
        "class_weight": [None, dict, StrOptions({"balanced"})],
        "svm_tol": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        *,
        image_shape: tuple[int, ...] | None = None,
        hog_kernel: str = "rbf",
        product: bool = True,
        gamma: str | float = "scale",
        raw_gamma: str | float = "scale",
        C: float = 1.0,
        orientations: int = 9,
        pixels_per_cell: tuple[int, int] = (4, 4),
        cells_per_block: tuple[int, int] = (2, 2),
        block_norm: str = "L2-Hys",
        class_weight: dict | str | None = None,
        svm_tol: float = 1e-3,
    ):
        self.image_shape = image_shape
        self.hog_kernel = hog_kernel
        self.product = product
        self.gamma = gamma
        self.raw_gamma = raw_gamma
        self.C = C
        self.orientations = orientations
        self.pixels_per_cell = pixels_per_cell
        self.cells_per_block = cells_per_block
        self.block_norm = block_norm
        self.class_weight = class_weight
        self.svm_tol = svm_tol

    def hog_features(self, X: Any) -> np.ndarray:
        """The HOG descriptors this model uses for the images X, shape (n, n_features)."""
        check_is_fitted(self, "svc_")
        return self._features(check_images(self, X, reset=False, dtype=np.float64))

    def _features(self, X4: np.ndarray) -> np.ndarray:
        return hog_features(
            X4,
            orientations=self.orientations,
            pixels_per_cell=tuple(self.pixels_per_cell),
            cells_per_block=tuple(self.cells_per_block),
            block_norm=self.block_norm,
        )

    def _kernel(self, H: np.ndarray, R: np.ndarray | None, train: bool) -> np.ndarray:
        """Kernel between (H, R) and the training rows (their Gram when ``train``)."""
        other = None if train else self._train_hog
        K = hog_kernel(H, other, self.hog_kernel, self.gamma_)
        if self.product:
            raw = kernel_matrix(
                R, None if train else self._train_raw, kernel="rbf", gamma=self.raw_gamma_
            )
            K *= raw
        return K

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any) -> HOGSVC:
        """HOG descriptors of X, their kernel, and LIBSVM on it.

        Parameters
        ----------
        X : array (n, H*W), (n, H, W) or (n, C, H, W)
        y : array (n,), two or more classes

        Returns
        -------
        self
        """
        if y is None:
            raise ValueError("HOGSVC requires y to be passed, but the target y is None.")
        X4 = check_images(self, X, reset=True, dtype=np.float64)
        y = column_or_1d(y, warn=True)
        if len(y) != len(X4):
            raise ValueError(f"y has {len(y)} labels for {len(X4)} images: give one per image.")
        check_classification_targets(y)
        check_two_classes(np.unique(y))  # LIBSVM's own message says less
        self._train_hog = self._features(X4)
        self._train_raw = X4.reshape(len(X4), -1) if self.product else None
        kind = self.hog_kernel
        self.gamma_ = scale_gamma(self._train_hog, kind) if self.gamma == "scale" else self.gamma
        self.gamma_ = float(self.gamma_)
        self.raw_gamma_ = None
        if self.product:
            rg = self.raw_gamma
            self.raw_gamma_ = float(scale_gamma(self._train_raw, "rbf") if rg == "scale" else rg)
        K = self._kernel(self._train_hog, self._train_raw, train=True)
        self.svc_ = SVC(
            kernel="precomputed", C=self.C, tol=self.svm_tol, class_weight=self.class_weight
        ).fit(K, y)
        self.classes_ = self.svc_.classes_
        for name in ("support_", "dual_coef_", "intercept_", "n_support_"):
            setattr(self, name, getattr(self.svc_, name))
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """(n,) for two classes (positive: ``classes_[1]``), else (n, n_classes) from the
        one-vs-one votes (SVC's ``decision_function_shape="ovr"``).

        Parameters
        ----------
        X : array-like of shape (n, H*W), (n, H, W) or (n, C, H, W)
            As ``fit`` took them.

        Returns
        -------
        ndarray of shape (n,) or (n, n_classes)
            As described above.
        """
        check_is_fitted(self, "svc_")
        X4 = check_images(self, X, reset=False, dtype=np.float64)
        R = X4.reshape(len(X4), -1) if self.product else None
        return self.svc_.decision_function(self._kernel(self._features(X4), R, train=False))

    def predict(self, X: Any) -> np.ndarray:
        """Class labels of the images in X.

        Parameters
        ----------
        X : array-like of shape (n, H*W), (n, H, W) or (n, C, H, W)
            As ``fit`` took them.

        Returns
        -------
        ndarray of shape (n,)
            The predicted class of each image (one of ``classes_``).
        """
        check_is_fitted(self, "svc_")
        X4 = check_images(self, X, reset=False, dtype=np.float64)
        R = X4.reshape(len(X4), -1) if self.product else None
        return self.svc_.predict(self._kernel(self._features(X4), R, train=False))
