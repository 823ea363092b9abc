"""A dictionary of image patches learned without labels (k-means on whitened patches).

Coates, Lee and Ng (2011) showed that one layer of features learned this way — small
patches, each brightness- and contrast-normalised, whitened, and clustered by k-means —
with a soft "triangle" code and sum-pooling over the image's four quadrants feeds a
linear or RBF SVM as well as much deeper learned features did at the time.  Here it is a
second learned descriptor beside the K-CSVM's stack: the stack's filters are learned by
the SVM's own gradient, the dictionary's atoms by clustering the training images' patches
(:func:`csvm.model.dictionary_appended.add_dictionary` puts it into a fitted K-CSVM's
kernel).

Encoding, for a patch ``x`` (normalised and whitened) and atoms ``c_k``::

    z_k = |x - c_k|,    f_k = max(0, mean_j z_j - z_k)

(an atom answers when the patch is nearer to it than to the average atom), summed over
each quadrant of the image's patch positions: ``4 * n_atoms`` values per image, each
standardised by its mean and spread over the training images.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from csvm.model._sklearn import Interval, fit_context
from csvm.model.multiclass import COMMON_CONSTRAINTS
from csvm.model.validation import check_images

__all__ = ["PatchDictionary"]

#: Values per transform batch (images x positions x atoms), ~64 MB of float32 distances.
_BATCH_VALUES = 2**24
#: Added to each standardised feature's spread: an atom that never answers on the
#: training images gives 0, not a division by zero.
_SPREAD_FLOOR = 0.01


class PatchDictionary(TransformerMixin, BaseEstimator):
    """Patch features learned by k-means on whitened patches (Coates, Lee and Ng, 2011).

    Parameters
    ----------
    image_shape : tuple of int, default=None
        ``(channels, height, width)`` (or ``(height, width)``: one channel) of the images
        when ``X`` is given flat (n, d); None reads them as every estimator here does
        (3-D and 4-D ``X`` carry their own shape, a flat square row is a grey image).
    n_atoms : int, default=400
        How many atoms (k-means centres): the features are ``4 * n_atoms`` per image.
    patch_size : int, default=6
        Side of the square patches, taken at every position (stride 1).
    n_patches : int, default=100_000
        Training patches drawn (seeded) for the whitening and the k-means.
    whiten_eps : float, default=0.1
        Added to the patch covariance's eigenvalues before whitening (ZCA): it keeps the
        noisiest directions from being blown up.
    contrast_eps : float, default=10 / 255**2
        Added to each patch's variance before dividing by its spread (pixel values in
        [0, 1]: the paper's 10 on a 0-255 scale), so flat patches stay small.
    max_iter : int, default=50
        Passes of mini-batch k-means.
    random_state : int, default=0
        Seeds the patch draw and the k-means.

    Attributes
    ----------
    image_shape_ : tuple of int
        ``(C, H, W)`` seen in ``fit``.
    patch_mean_ : ndarray (C * p * p,)
        Mean of the normalised training patches.
    whitening_ : ndarray (C * p * p, C * p * p)
        The ZCA whitening matrix.
    atoms_ : ndarray (n_atoms, C * p * p), float32
        The k-means centres, in whitened coordinates.
    feature_mean_, feature_scale_ : ndarray (4 * n_atoms,)
        The standardisation of the pooled features over the training images.

    Examples
    --------
    >>> import numpy as np
    >>> from csvm.model.patch_dictionary import PatchDictionary
    >>> X = np.random.default_rng(0).random((20, 3, 12, 12))
    >>> d = PatchDictionary(n_atoms=8, patch_size=4, n_patches=2000).fit(X)
    >>> d.transform(X).shape
    (20, 32)
    """

    _parameter_constraints: dict = {
        "image_shape": COMMON_CONSTRAINTS["image_shape"],
        "n_atoms": [Interval(Integral, 2, None, closed="left")],
        "patch_size": [Interval(Integral, 1, None, closed="left")],
        "n_patches": [Interval(Integral, 2, None, closed="left")],
        "whiten_eps": [Interval(Real, 0, None, closed="neither")],
        "contrast_eps": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        image_shape: tuple[int, int, int] | None = None,
        n_atoms: int = 400,
        patch_size: int = 6,
        n_patches: int = 100_000,
        whiten_eps: float = 0.1,
        contrast_eps: float = 10 / 255**2,
        max_iter: int = 50,
        random_state: int = 0,
    ):
        self.image_shape = image_shape
        self.n_atoms = n_atoms
        self.patch_size = patch_size
        self.n_patches = n_patches
        self.whiten_eps = whiten_eps
        self.contrast_eps = contrast_eps
        self.max_iter = max_iter
        self.random_state = random_state

    def _images(self, X: Any, reset: bool) -> np.ndarray:
        """``X`` as (n, C, H, W) float32, checked as every estimator here checks images
        (:func:`csvm.model.validation.check_images`); on ``fit`` the patch must fit."""
        X4 = check_images(self, X, reset=reset)
        if reset:
            if min(X4.shape[2:]) < self.patch_size:
                raise ValueError(
                    f"patch_size {self.patch_size} is larger than the images {X4.shape[2:]}."
                )
            self.image_shape_ = self._image_shape
        return X4

    def _patches(self, X4: np.ndarray) -> np.ndarray:
        """(n, positions, C * p * p): every patch, each brightness- and contrast-normalised."""
        p = self.patch_size
        windows = sliding_window_view(X4, (p, p), axis=(2, 3))  # n, C, h, w, p, p
        P = windows.transpose(0, 2, 3, 1, 4, 5).reshape(len(X4), -1, X4.shape[1] * p * p)
        P = P - P.mean(axis=-1, keepdims=True)
        return P / np.sqrt(P.var(axis=-1, keepdims=True) + self.contrast_eps)

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None) -> PatchDictionary:
        """Draw patches, learn the whitening and the atoms, then the features' scale."""
        self._fit(self._images(X, reset=True))
        return self

    @fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X: Any, y: Any = None) -> np.ndarray:
        """:meth:`fit`, then :meth:`transform` of the same images, pooled only once."""
        return self._standardised(self._fit(self._images(X, reset=True)))

    def _fit(self, X4: np.ndarray) -> np.ndarray:
        """Learn everything from checked images; their pooled features (what the
        standardisation was measured on)."""
        from sklearn.cluster import MiniBatchKMeans

        rng = np.random.default_rng(self.random_state)
        P = self._patches(X4)
        rows = rng.integers(0, P.shape[0] * P.shape[1], int(self.n_patches))
        S = P.reshape(-1, P.shape[-1])[rows].astype(np.float64)
        self.patch_mean_ = S.mean(axis=0)
        values, vectors = np.linalg.eigh(np.cov(S - self.patch_mean_, rowvar=False))
        values = np.maximum(values, 0.0)  # round-off can leave tiny negative eigenvalues
        self.whitening_ = (vectors / np.sqrt(values + self.whiten_eps)) @ vectors.T
        kmeans = MiniBatchKMeans(
            int(self.n_atoms), batch_size=4096, n_init=1, max_iter=int(self.max_iter),
            random_state=self.random_state,
        )  # fmt: skip
        kmeans.fit((S - self.patch_mean_) @ self.whitening_)
        self.atoms_ = kmeans.cluster_centers_.astype(np.float32)
        pooled = self._pooled(X4)
        self.feature_mean_ = pooled.mean(axis=0)
        self.feature_scale_ = pooled.std(axis=0) + _SPREAD_FLOOR
        return pooled

    def encode(self, X: Any) -> np.ndarray:
        """The triangle codes at every patch position: (n, h, w, n_atoms), float32."""
        check_is_fitted(self, "atoms_")
        return self._encode(self._images(X, reset=False))

    def _encode(self, X4: np.ndarray) -> np.ndarray:
        """:meth:`encode` of images already checked."""
        p = self.patch_size
        h, w = X4.shape[2] - p + 1, X4.shape[3] - p + 1
        Z = ((self._patches(X4) - self.patch_mean_) @ self.whitening_).astype(np.float32)
        c = self.atoms_
        squared = (Z**2).sum(-1)[..., None] - 2 * Z @ c.T + (c**2).sum(-1)
        distance = np.sqrt(np.maximum(squared, 0.0))
        codes = np.maximum(0.0, distance.mean(axis=-1, keepdims=True) - distance)
        return codes.reshape(len(X4), h, w, len(c))

    def _pooled(self, X4: np.ndarray) -> np.ndarray:
        """The codes summed over each quadrant of the positions: (n, 4 * n_atoms)."""
        p = self.patch_size
        positions = (X4.shape[2] - p + 1) * (X4.shape[3] - p + 1)
        batch = max(1, _BATCH_VALUES // (positions * len(self.atoms_)))
        out = []
        for start in range(0, len(X4), batch):
            codes = self._encode(X4[start : start + batch])
            h2, w2 = (codes.shape[1] + 1) // 2, (codes.shape[2] + 1) // 2
            quadrants = [
                codes[:, rows, cols].sum(axis=(1, 2))
                for rows in (slice(None, h2), slice(h2, None))
                for cols in (slice(None, w2), slice(w2, None))
            ]
            out.append(np.concatenate(quadrants, axis=1))
        return np.concatenate(out) if out else np.zeros((0, 4 * len(self.atoms_)), np.float32)

    def transform(self, X: Any) -> np.ndarray:
        """The standardised pooled features: (n, 4 * n_atoms), float32."""
        check_is_fitted(self, "atoms_")
        return self._standardised(self._pooled(self._images(X, reset=False)))

    def _standardised(self, pooled: np.ndarray) -> np.ndarray:
        return ((pooled - self.feature_mean_) / self.feature_scale_).astype(np.float32)
