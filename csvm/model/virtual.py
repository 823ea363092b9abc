"""Virtual support vectors: a second SVM solve on shifted copies of the support vectors.

A learned 5x5 filter followed by an RBF kernel is a translation-*equivariant* front end
with a kernel that is not translation-*invariant*: a digit written one pixel to the left
is a different point in the kernel's feature space.  Schölkopf, Burges and Vapnik (1996)
and DeCoste and Schölkopf (2002) added that invariance after training: the support
vectors are the only training points the decision depends on, so shifting them by one
pixel and solving the SVM again on the originals plus the shifted copies teaches the
machine the shift at a fraction of the cost of augmenting the whole training set.

Here each binary sub-problem of a fitted :class:`~csvm.KernelCSVM` keeps its learned
filter and kernel; only its SVM is solved again, on its support vectors and their
shifted copies (:func:`refit_virtual`).  The filter is not learned again: it was learned
on real images, and the step this adds is one kernel and one SVM solve per sub-problem.
For photographs the mirror image is the same invariance (``mirror=True``: a car facing
left is still a car); for digits it is not.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from csvm.model.prediction import labels_from_decision
from csvm.model.validation import check_planes
from csvm.parallel import run_tasks

__all__ = [
    "SHIFTS_4",
    "SHIFTS_8",
    "SHIFT_SETS",
    "add_virtual",
    "mirror_images",
    "predict_shifted",
    "refit_virtual",
    "shifted_decision",
    "shift_images",
]

#: One pixel up, down, left and right (row shift, column shift).
SHIFTS_4: tuple[tuple[int, int], ...] = ((-1, 0), (1, 0), (0, -1), (0, 1))
#: The four above and the four diagonal one-pixel shifts.
SHIFTS_8: tuple[tuple[int, int], ...] = SHIFTS_4 + ((-1, -1), (-1, 1), (1, -1), (1, 1))
#: The four two-pixel moves along the axes, and the four along the diagonals.
_TWO_PIXEL = ((-2, 0), (2, 0), (0, -2), (0, 2))
_TWO_PIXEL_DIAGONAL = ((-2, -2), (-2, 2), (2, -2), (2, 2))
#: Named sets of shifts (the CLI's ``--virtual`` choices and issue 35's screen).
SHIFT_SETS: dict[str, tuple[tuple[int, int], ...]] = {
    "4": SHIFTS_4,
    "8": SHIFTS_8,
    "8+2px": SHIFTS_8 + _TWO_PIXEL,
    "16": SHIFTS_8 + _TWO_PIXEL + _TWO_PIXEL_DIAGONAL,
}


def shift_images(X4: np.ndarray, dy: int, dx: int, planes: int = 1) -> np.ndarray:
    """The images moved by ``dy`` rows and ``dx`` columns, zeros shifted in.

    Parameters
    ----------
    X4 : array (..., H, W)
        Images on the last two axes, (n, C, H, W) or (n, H, W).
    dy, dx : int
        Positive moves down / right.
    planes : int, default 1
        The rows are ``planes`` images of ``H / planes`` rows stacked one above the other
        (CIFAR-10's R, G, B planes as one 96 x 32 image, ``planes=3``); each moves on its
        own, so no row crosses from one plane into the next.

    Returns
    -------
    array like ``X4``
    """
    if planes > 1:
        H, W = X4.shape[-2:]
        check_planes(H, planes)
        planar = X4.reshape(*X4.shape[:-2], planes, H // planes, W)
        return shift_images(planar, dy, dx).reshape(X4.shape)
    out = np.zeros_like(X4)
    H, W = X4.shape[-2:]
    if abs(dy) >= H or abs(dx) >= W:
        return out
    # Destination and source windows of the same size along each axis.
    rows_to, rows_from = slice(max(dy, 0), H + min(dy, 0)), slice(max(-dy, 0), H + min(-dy, 0))
    cols_to, cols_from = slice(max(dx, 0), W + min(dx, 0)), slice(max(-dx, 0), W + min(-dx, 0))
    out[..., rows_to, cols_to] = X4[..., rows_from, cols_from]
    return out


def mirror_images(X4: np.ndarray) -> np.ndarray:
    """The images mirrored left to right (a photograph's own invariance; not a digit's).

    Parameters
    ----------
    X4 : array (n, C, H, W)

    Returns
    -------
    array like ``X4`` (a contiguous copy)
    """
    return np.ascontiguousarray(X4[..., ::-1])


def _virtual_set(
    images: np.ndarray,
    labels: np.ndarray,
    shifts: Sequence[tuple[int, int]],
    mirror: bool = False,
    planes: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """The images followed by each shifted copy (then the mirrored copy), and the labels
    repeated to match."""
    copies = [images] + [shift_images(images, dy, dx, planes) for dy, dx in shifts]
    if mirror:
        copies.append(mirror_images(images))
    return np.concatenate(copies), np.tile(labels, len(copies))


def _refit_one(
    model: Any,
    images: np.ndarray,
    shifts,
    mirror: bool,
    C: float,
    solver: dict[str, Any],
    planes: int = 1,
) -> tuple[Any, dict[str, float]]:
    """One sub-problem's SVM solved again on its support vectors and their shifts: the
    solved state and its kernel / SVM seconds."""
    from csvm.model.refit import solve_fixed

    # a_i = alpha_i y_i with alpha_i > 0, so its sign is the support vector's label.
    labels = np.where(np.asarray(model.dual_coef) > 0, 1, -1)
    return solve_fixed(model, *_virtual_set(images, labels, shifts, mirror, planes), C, solver)


def _checked_shifts(estimator: Any, shifts: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The shifts as int pairs, once the estimator is known to be a fitted KernelCSVM."""
    from csvm.model.kernelised import KernelCSVM

    if not isinstance(estimator, KernelCSVM):
        raise TypeError(
            f"refit_virtual needs a fitted KernelCSVM, got {type(estimator).__name__}: an "
            "L-CSVM's weights live on its feature maps, not on support vectors."
        )
    check_is_fitted(estimator, "estimators_")
    return _int_shifts(shifts)


def _int_shifts(shifts: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The shifts as int pairs; (0, 0) would only copy the originals, which are kept."""
    shifts = [(int(dy), int(dx)) for dy, dx in shifts]
    if any((dy, dx) == (0, 0) for dy, dx in shifts):
        raise ValueError("shifts must not contain (0, 0): the originals are always kept.")
    return shifts


def _sources(
    supports: Sequence[Any],
    states: Sequence[Any],
    shifts: Sequence[tuple[int, int]],
    mirror: bool = False,
) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """For each sub-problem, the training row, the shift and whether it is mirrored, of
    every new support vector."""
    offsets = np.array([(0, 0)] + list(shifts) + ([(0, 0)] if mirror else []), dtype=np.intp)
    new_support, new_shift, new_mirrored = [], [], []
    for rows, state in zip(supports, states, strict=True):
        rows = np.asarray(rows, dtype=np.intp)
        # The virtual set is [originals, shift 1, shift 2, ..., mirrored], each len(rows).
        copy, source = np.divmod(np.asarray(state.support, dtype=np.intp), len(rows))
        new_support.append(rows[source])
        new_shift.append(offsets[copy])
        new_mirrored.append(copy == len(shifts) + 1)
    return new_support, new_shift, new_mirrored


def refit_virtual(
    estimator: Any,
    X: Any,
    shifts: Sequence[tuple[int, int]] = SHIFTS_4,
    n_jobs: int | None = None,
    on_done: Callable[[int], Any] | None = None,
    mirror: bool = False,
    planes: int = 1,
) -> Any:
    """Solve every sub-problem's SVM again on its support vectors plus shifted copies.

    Each sub-problem keeps its learned filter and kernel; its support vectors (rows of
    ``X``) and their copies moved by each of ``shifts`` become its new training set, with
    the same C (the final C when ``C_last_only``).  The estimator is changed in place.

    Parameters
    ----------
    estimator : KernelCSVM
        Fitted on ``X``.
    X : array-like
        The images the estimator was fitted on (its ``support_`` indexes them).
    shifts : sequence of (int, int)
        (row, column) moves; the default is one pixel in the four directions.
    n_jobs : int, optional
        Sub-problems solved at once (threads; a cluster inside
        :func:`csvm.parallel.backend`).
    on_done : callable, optional
        Called with each sub-problem's index as it finishes (a progress bar).
    mirror : bool, default False
        Also add each support vector mirrored left to right (photographs: a car facing
        left is still a car; never digits).
    planes : int, default 1
        Shift each of the image's ``planes`` stacked planes on its own
        (:func:`shift_images`; 3 for CIFAR-10's stacked R, G, B).

    Returns
    -------
    estimator
        With new ``estimators_``, ``dual_coef_``, ``intercept_`` and ``n_support_``;
        ``support_`` now gives, for each new support vector, the training row it is a
        (possibly shifted) copy of, and ``support_shift_`` its (row, column) shift
        ((0, 0) for the original image), ``support_mirrored_`` whether it is the
        mirrored copy (then its shift is (0, 0)), and ``virtual_planes_`` the
        ``planes`` the shifts moved separately.  ``virtual_timings_`` holds each sub-problem's
        kernel and SVM seconds.  The sub-problems keep no support-vector kernel, so the
        refitted estimator predicts but takes no further filter step.
    """
    from csvm.model.refit import report_to, solver_settings

    shifts = _checked_shifts(estimator, shifts)
    X4 = estimator._images(X, reset=False)
    check_planes(X4.shape[-2], planes)
    single = len(estimator.estimators_) == 1
    supports = [estimator.support_] if single else list(estimator.support_)
    C, solver = solver_settings(estimator)
    args = [
        (model, X4[np.asarray(rows)], shifts, bool(mirror), C, solver, int(planes))
        for model, rows in zip(estimator.estimators_, supports, strict=True)
    ]
    results = run_tasks(_refit_one, args, n_jobs, on_result=report_to(on_done))
    states = [state for state, _ in results]
    new_support, new_shift, new_mirrored = _sources(supports, states, shifts, bool(mirror))
    estimator.estimators_ = states
    estimator.virtual_timings_ = [timings for _, timings in results]
    estimator.virtual_planes_ = int(planes)
    dual = [np.asarray(s.dual_coef, dtype=np.float64) for s in states]
    intercept = np.array([s.intercept for s in states], dtype=np.float64)
    estimator.n_support_ = np.array([len(s) for s in new_support], dtype=np.intp)
    if single:
        estimator.support_, estimator.support_shift_ = new_support[0], new_shift[0]
        estimator.support_mirrored_ = new_mirrored[0]
        estimator.dual_coef_, estimator.intercept_ = dual[0], intercept[0]
    else:
        estimator.support_, estimator.support_shift_ = new_support, new_shift
        estimator.support_mirrored_ = new_mirrored
        estimator.dual_coef_, estimator.intercept_ = dual, intercept
    return estimator


def add_virtual(
    estimator: Any,
    X: Any,
    y: Any,
    shifts: Sequence[tuple[int, int]] = (),
    mirror: bool = False,
    planes: int = 1,
) -> Any:
    """Virtual support vectors for a fitted K-CSVM or :class:`~csvm.HOGSVC`.

    A K-CSVM goes through :func:`refit_virtual`.  A HOGSVC is solved again, with its γ
    (and raw-pixel γ) fixed at the first fit's values ("scale" would move with the set),
    on its support vectors and their copies; the result is that new HOGSVC.  The curves
    use this to give a learned model and the HOG baseline the same virtual copies.

    Parameters
    ----------
    estimator : KernelCSVM or HOGSVC
        Fitted on ``X``, ``y`` (two classes for a HOGSVC).
    X, y : array-like
        Its training images (any layout it accepts) and labels.
    shifts : sequence of (int, int), default ()
        (row, column) moves of each support vector.
    mirror : bool, default False
        Also each support vector mirrored left to right.
    planes : int, default 1
        Shift each of the image's ``planes`` stacked planes on its own.

    Returns
    -------
    estimator
        The K-CSVM changed in place, or a new fitted HOGSVC.

    Examples
    --------
    >>> import numpy as np
    >>> from csvm import HOGSVC
    >>> from csvm.model.virtual import add_virtual
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.random((20, 16, 16)), np.repeat([0, 1], 10)
    >>> hog = HOGSVC(image_shape=(16, 16), C=10.0).fit(X, y)
    >>> again = add_virtual(hog, X, y, mirror=True)
    >>> again.gamma == hog.gamma_, len(again.support_) >= len(hog.support_)
    (True, True)
    """
    from sklearn.base import clone

    from csvm.model.hog import HOGSVC

    if not isinstance(estimator, HOGSVC):
        return refit_virtual(estimator, X, shifts, mirror=mirror, planes=planes)
    check_is_fitted(estimator, "svc_")
    shifts = _int_shifts(shifts)
    rows = np.asarray(estimator.support_)
    X = np.asarray(X)
    images = X[rows].reshape(len(rows), *estimator.image_shape)
    check_planes(images.shape[-2], planes)
    copies, labels = _virtual_set(images, np.asarray(y)[rows], shifts, mirror, planes)
    again = clone(estimator).set_params(gamma=estimator.gamma_)
    if estimator.product:
        again.set_params(raw_gamma=estimator.raw_gamma_)
    return again.fit(copies.reshape(len(copies), *X.shape[1:]), labels)


def shifted_decision(
    estimator: Any,
    X: Any,
    shifts: Sequence[tuple[int, int]],
    planes: int = 1,
    decision: np.ndarray | None = None,
    n_jobs: int | None = None,
) -> np.ndarray:
    """Test-time shifts: the estimator's decision on each image summed with its decisions
    on the image moved by each of ``shifts``.

    The virtual support vectors teach the machine a shift at training time; this asks it
    about the moved copies at test time too, so one image that lies a pixel off the
    training digits' position is voted on from where it sits and from around it.

    Parameters
    ----------
    estimator : fitted estimator with ``decision_function``
    X : array (n, C, H, W), or what the estimator's ``decision_function`` accepts
        Images (a 4-d array is moved with :func:`shift_images`).
    shifts : sequence of (int, int)
        Row and column moves (e.g. :data:`SHIFTS_4`); empty: the plain decision.
    planes : int, default 1
        See :func:`shift_images`.
    decision : array, optional
        ``estimator.decision_function(X)`` when already computed (not computed again).
    n_jobs : int, optional
        Moved copies decided at once (threads, or the active cluster:
        :func:`csvm.parallel.run_tasks`); None: one at a time.  The sum is taken in the
        order of ``shifts`` either way, so the result does not depend on it.

    Returns
    -------
    array
        The summed decision, shaped as ``decision_function``'s.
    """
    X = np.asarray(X)
    if decision is None:
        decision = estimator.decision_function(X)
    summed = np.asarray(decision, dtype=np.float64)
    tasks = [(estimator, X, dy, dx, planes) for dy, dx in _int_shifts(shifts)]
    for moved in run_tasks(_moved_decision, tasks, n_jobs):
        summed = summed + moved
    return summed


def _moved_decision(estimator: Any, X: np.ndarray, dy: int, dx: int, planes: int) -> np.ndarray:
    """The estimator's decision on the images moved by (dy, dx): one task of
    :func:`shifted_decision`."""
    return estimator.decision_function(shift_images(X, dy, dx, planes))


def predict_shifted(
    estimator: Any, X: Any, shifts: Sequence[tuple[int, int]], planes: int = 1
) -> np.ndarray:
    """Class labels from :func:`shifted_decision`: the sign of a two-class decision, else
    the class with the largest summed decision (one-vs-one votes plus confidence).

    Examples
    --------
    >>> import numpy as np
    >>> from csvm import KernelCSVM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((40, 1, 8, 8)).astype(np.float32)
    >>> y = (X[:, 0, :, :4].sum((1, 2)) > X[:, 0, :, 4:].sum((1, 2))).astype(int)
    >>> clf = KernelCSVM(image_shape=(8, 8), filter_shape=(3, 3), n_iter=1).fit(X, y)
    >>> bool((predict_shifted(clf, X, []) == clf.predict(X)).all())
    True
    >>> predict_shifted(clf, X, SHIFTS_4).shape
    (40,)
    """
    decision = shifted_decision(estimator, X, shifts, planes)  # first: an unfitted model says so
    return labels_from_decision(estimator.classes_, decision)
