"""A patch dictionary beside a fitted K-CSVM's stack: its SVM solved again on both.

:class:`~csvm.model.patch_dictionary.PatchDictionary` learns atoms from the training
images' patches without labels; a K-CSVM's stack learns its filters by the SVM's gradient.
:func:`add_dictionary` keeps the learned filters, appends each image's dictionary features
to the maps the SVM sees (:class:`DictionaryAppended`) and solves every sub-problem's SVM
again on all the training images (:func:`csvm.model.refit.refit_all`).  With an RBF
kernel on the concatenation the kernel is the product of the stack's RBF and an RBF on the
dictionary's features.  :func:`csvm.model.virtual.add_virtual` can follow: its shifted and
mirrored copies go through the same network, dictionary included.

The dictionary's features are scaled so that their mean squared distance between two
training images is ``weight`` times that of the stack's output, so ``weight`` says how much
of the kernel's exponent the dictionary brings, whatever the stack's γ.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from csvm.model.patch_dictionary import PatchDictionary
from csvm.model.validation import check_planes

__all__ = ["DictionaryAppended", "add_dictionary", "mean_squared_distance"]

_PREDICTS_ONLY = (
    "a K-CSVM with a patch dictionary appended predicts only: learn the filters first, "
    "then add the dictionary."
)
#: Pairs of training images drawn (seeded) to measure the mean squared distances.
_PAIRS = 2000


def mean_squared_distance(F: np.ndarray, seed: int = 0) -> float:
    """The mean of ``|F[i] - F[j]|²`` over a seeded draw of pairs of rows (i != j).

    Examples
    --------
    >>> import numpy as np
    >>> F = np.array([[0.0, 0.0], [3.0, 4.0]])
    >>> mean_squared_distance(F)
    25.0
    """
    F = np.asarray(F, dtype=np.float64).reshape(len(F), -1)
    if len(F) < 2:
        raise ValueError("mean_squared_distance needs at least two rows.")
    rng = np.random.default_rng(seed)
    i = rng.integers(0, len(F), _PAIRS)
    j = (i + rng.integers(1, len(F), _PAIRS)) % len(F)  # never i itself
    return float(((F[i] - F[j]) ** 2).sum(axis=1).mean())


def _as_channels(X4: np.ndarray, planes: int) -> np.ndarray:
    """(n, C, H, W) images as (n, C * planes, H / planes, W): the same numbers, each of the
    ``planes`` stacked planes a channel (what the dictionary's patches see)."""
    n, c, h, w = X4.shape
    return X4.reshape(n, c * planes, h // planes, w)


class DictionaryAppended:
    """A network whose output is an inner network's, flattened, followed by ``scale``
    times each image's :class:`PatchDictionary` features, as ``(n, D, 1, 1)``.

    Everything else (unpacking the filters, the regulariser) is the inner network's.  Its
    filters take no further step here (a refitted K-CSVM predicts only), so there is no
    backward pass through it.

    Parameters
    ----------
    inner : Network
        The fitted stack (its ``forward(X4, theta)`` gives the maps the SVM saw).
    dictionary : PatchDictionary
        Fitted on the training images, seen as ``(planes, H / planes, W)``.
    scale : float
        Multiplies the dictionary's features.
    planes : int
        How many planes a (1, planes·H, W) image stacks (3 for CIFAR-10's R, G, B).
    """

    def __init__(self, inner: Any, dictionary: PatchDictionary, scale: float, planes: int = 1):
        self.inner = inner
        self.dictionary = dictionary
        self.scale = float(scale)
        self.planes = int(planes)

    def __getattr__(self, name: str) -> Any:
        # Only reached for names this class lacks; "inner" itself must not recurse while
        # an unpickled object is still empty.
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def dictionary_features(self, X4: np.ndarray) -> np.ndarray:
        """``scale`` times the dictionary's features of ``X4`` (n, 4 * n_atoms)."""
        return self.scale * self.dictionary.transform(_as_channels(X4, self.planes))

    @property
    def output_shape(self) -> tuple[int, int, int]:
        """``(D, 1, 1)``: the inner network's values and the dictionary's, one column."""
        inner = int(np.prod(self.inner.output_shape))
        return (inner + len(self.dictionary.feature_mean_), 1, 1)

    def forward(self, X4: np.ndarray, theta: np.ndarray, keep: bool = False):
        if keep:  # the cache of a backward pass, which this network has not
            raise NotImplementedError(_PREDICTS_ONLY)
        maps = np.asarray(self.inner.forward(X4, theta))
        D = self.dictionary_features(X4).astype(maps.dtype, copy=False)
        return np.concatenate([maps.reshape(len(maps), -1), D], axis=1)[:, :, None, None]

    def backward(self, X4: np.ndarray, theta: np.ndarray, dA: Any) -> np.ndarray:
        raise NotImplementedError(_PREDICTS_ONLY)


def _checked(estimator: Any) -> None:
    from csvm.model.kernelised import KernelCSVM

    if not isinstance(estimator, KernelCSVM):
        raise TypeError(
            f"add_dictionary needs a fitted KernelCSVM, got {type(estimator).__name__}."
        )
    check_is_fitted(estimator, "estimators_")
    if any(m.network is None for m in estimator.estimators_):
        raise ValueError(
            "add_dictionary needs a K-CSVM with a stack of layers (for example "
            "layers='3x3x8-relu-avg4-bn2-sqrt'): the dictionary is appended to its maps."
        )
    if any(isinstance(m.network, DictionaryAppended) for m in estimator.estimators_):
        raise ValueError("this K-CSVM already has a patch dictionary appended.")


def add_dictionary(
    estimator: Any,
    X: Any,
    y: Any,
    dictionary: PatchDictionary | None = None,
    weight: float = 0.5,
    planes: int = 1,
    n_jobs: int | None = None,
) -> Any:
    """Append a patch dictionary's features to a fitted K-CSVM's maps and solve again.

    Parameters
    ----------
    estimator : KernelCSVM
        Fitted on ``X``, ``y``, with a stack of layers.
    X, y : array-like
        Its training images (any layout it accepts) and labels.
    dictionary : PatchDictionary, optional
        Its settings (cloned and fitted on ``X``); default ``PatchDictionary()``.
    weight : float, default 0.5
        The dictionary's mean squared distance between two training images, as a multiple
        of the stack's (how much of an RBF's exponent it brings).
    planes : int, default 1
        Read each (1, planes·H, W) image as ``planes`` channels for the dictionary (3 for
        CIFAR-10's stacked R, G, B, so a patch sees colour).
    n_jobs : int, optional
        Sub-problems solved at once (:func:`csvm.model.refit.refit_all`).

    Returns
    -------
    estimator
        Changed in place, as :func:`~csvm.model.refit.refit_all` leaves it, with
        ``dictionary_`` (the fitted dictionary) and ``dictionary_scales_`` (each
        sub-problem's scale).

    Examples
    --------
    >>> import numpy as np
    >>> from csvm import KernelCSVM
    >>> from csvm.model.dictionary_appended import add_dictionary
    >>> from csvm.model.patch_dictionary import PatchDictionary
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.random((40, 12, 12)), np.repeat([0, 1], 20)
    >>> X[y == 1, 3:9, 3:9] += 0.5
    >>> clf = KernelCSVM(layers="3x3x4-relu-avg2", kernel="rbf", gamma=0.05, n_iter=2)
    >>> clf = add_dictionary(clf.fit(X, y), X, y, PatchDictionary(n_atoms=8, patch_size=4))
    >>> clf.score(X, y) > 0.9
    True
    """
    from csvm.model.refit import refit_all

    _checked(estimator)
    if not weight > 0:
        raise ValueError(f"weight must be greater than 0, got {weight!r}.")
    X4 = estimator._images(X, reset=False)
    check_planes(X4.shape[2], planes)
    planes = int(planes)
    fitted = clone(dictionary if dictionary is not None else PatchDictionary())
    # The same features for every sub-problem (a one-vs-one model's 45 share them); each
    # sub-problem's scale is measured on all the training images, against its own maps.
    spread = mean_squared_distance(fitted.fit_transform(_as_channels(X4, planes)))
    scales = []
    for model in estimator.estimators_:
        ratio = mean_squared_distance(model.features(X4)) / spread
        scales.append(float(np.sqrt(weight * ratio)))
        model.network = DictionaryAppended(model.network, fitted, scales[-1], planes)
    refit_all(estimator, X, y, n_jobs=n_jobs)
    estimator.dictionary_ = fitted
    estimator.dictionary_scales_ = scales
    return estimator
