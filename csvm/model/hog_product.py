"""A learned stack beside HOG: the SVM sees both, and learning moves only the stack.

Issue 35 asks for learned features that beat a hand-made HOG descriptor.  A learned
HOG-like stack alone levels with HOG from a few hundred images on and falls behind it
below; this model keeps HOG's descriptor and learns what it misses.  The SVM's RBF kernel
on the concatenation ``[maps(x; theta), hog(x)]`` is the product of an RBF on the learned
maps and an RBF on the HOG descriptor (with the same γ)::

    k(x, x') = exp(-γ |maps(x) - maps(x')|²) · exp(-γ |hog(x) - hog(x')|²)

The HOG half does not depend on the filters, so ``dT/dθ`` is the layered K-CSVM's, with
the kernel's derivative in the HOG coordinates dropped: the gradient still sees the whole
product kernel (the support vectors and their weights are those of the product), so the
filters learn what HOG's kernel leaves unexplained.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from csvm.model.hog import hog_features
from csvm.model.kernelised import KernelCSVM
from csvm.model.layers import Network

__all__ = ["HOGAppended", "HOGProductCSVM"]

#: HOG's values per block: 9 orientations in each of 2 x 2 cells (hog_features' defaults).
_HOG_BLOCK_VALUES = 9 * 2 * 2
#: How many images' HOG descriptors a network keeps (a fit's training images, and the
#: last batch it was asked for), so the training images' descriptors are computed once.
_CACHED_ARRAYS = 2


class HOGAppended(Network):
    """A :class:`~csvm.model.layers.Network` whose output is its maps, flattened, followed
    by each image's HOG descriptor (:func:`csvm.model.hog.hog_features`, scikit-image's,
    9 orientations, 4 × 4 cells, 2 × 2 blocks, L2-Hys), as ``(n, D, 1, 1)``.

    :meth:`forward` with ``keep=True`` returns the learned maps alone and their cache (what
    :meth:`backward` needs); :meth:`backward` takes the derivative in the whole output and
    carries the learned maps' part back to the filters (the HOG part has none).
    """

    def __init__(self, specs, image_shape: tuple[int, int, int]):
        super().__init__(specs, image_shape)
        probe = np.zeros((1, *self.image_shape))
        self.n_hog = int(hog_features(probe).shape[1])
        self._hog_cache: dict[tuple, np.ndarray] = {}

    @property
    def n_learned(self) -> int:
        """How many of the output's values the filters make."""
        return int(np.prod(self.map_shapes[-1]))

    @property
    def n_hog_blocks(self) -> int:
        """HOG's blocks (each block-normalised, as the stack's are)."""
        return self.n_hog // _HOG_BLOCK_VALUES

    @property
    def output_shape(self) -> tuple[int, int, int]:
        """``(D, 1, 1)``: the learned maps' values and the HOG descriptor's, one column."""
        return (self.n_learned + self.n_hog, 1, 1)

    def forward(self, X4: np.ndarray, theta: np.ndarray, keep: bool = False):
        if keep:  # the backward pass's cache: the learned maps only
            return super().forward(X4, theta, keep=True)
        maps = super().forward(X4, theta)
        H = self.hog(X4).astype(maps.dtype, copy=False)
        out = np.concatenate([maps.reshape(len(maps), -1), H], axis=1)
        return out[:, :, None, None]

    def backward(self, X4: np.ndarray, theta: np.ndarray, dA: np.ndarray) -> np.ndarray:
        dA = np.asarray(dA).reshape(len(X4), -1)[:, : self.n_learned]
        return super().backward(X4, theta, dA.reshape(len(X4), *self.map_shapes[-1]))

    def hog(self, X4: np.ndarray) -> np.ndarray:
        """The HOG descriptors of ``X4`` (n, n_hog), float64; the last few arrays' are kept,
        keyed by their bytes, so each of a fit's solves does not compute them again."""
        X4 = np.ascontiguousarray(X4)
        key = (X4.shape, X4.dtype.str, hashlib.blake2b(X4.tobytes(), digest_size=16).digest())
        if key not in self._hog_cache:
            while len(self._hog_cache) >= _CACHED_ARRAYS:
                self._hog_cache.pop(next(iter(self._hog_cache)))
            self._hog_cache[key] = hog_features(X4)
        return self._hog_cache[key]

    def __getstate__(self) -> dict[str, Any]:
        # A pickled network (a Dask worker's, a saved model's) does not carry descriptors.
        return {**self.__dict__, "_hog_cache": {}}


class HOGProductCSVM(KernelCSVM):
    """A layered K-CSVM whose SVM also sees each image's HOG descriptor.

    The parameters are :class:`~csvm.model.kernelised.KernelCSVM`'s; ``layers`` must name a
    stack.  With ``kernel="rbf"`` the SVM's kernel is the product of an RBF on the learned
    maps and an RBF on the HOG descriptor, with the same ``gamma`` (so a ``gamma`` written
    per block of a block-normalised stack counts HOG's blocks too).  The K-CSVM's gradient
    steps move only the filters (:class:`HOGAppended`).

    Examples
    --------
    >>> import numpy as np
    >>> from csvm.model.hog_product import HOGProductCSVM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((40, 16 * 16)); y = np.arange(40) % 2
    >>> X[y == 1, :128] += 0.5
    >>> clf = HOGProductCSVM(image_shape=(16, 16), layers="3x3x4-relu-avg4-bn2-sqrt",
    ...                      filter_init="hog", kernel="rbf", gamma=0.05, C=10.0,
    ...                      regulariser="dfo2", lam=0.1, n_iter=2, random_state=0)
    >>> clf.fit(X, y).score(X, y) > 0.9
    True
    """

    def _resolve_filters(self, image_shape: tuple[int, ...]) -> None:
        super()._resolve_filters(image_shape)
        if self._network is None:
            raise ValueError(
                "HOGProductCSVM needs a stack of layers (for example "
                "layers='5x5x8-relu-avg4-bn2-sqrt'): its HOG descriptor is appended to the "
                "stack's maps."
            )
        self._network = HOGAppended(self._network.specs, self._network.image_shape)
