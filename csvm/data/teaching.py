"""Teaching image sets: a small shape at an unknown place, in noise, with the shape known.

The class of an image is which 5×5 shape was stamped into it (a horizontal bar against a
vertical one, a cross against a corner, ...), at a random place, at a random strength,
among noise and round blobs that both classes share.  A plain SVM on the pixels has to
learn every place separately and struggles with a hundred images; one learned 5×5 filter
followed by a maximum over the whole map finds the shape wherever it is.  Because the set
knows the shape behind each class (:func:`class_shapes`), a page can draw the learned
filter beside it and say how close they are (:func:`shape_similarity`).

Every image is made from a fixed seed, so the set is the same on every machine, offline,
with no file.

Examples
--------
>>> X, y = shapes()
>>> X.shape, X.dtype, sorted(set(y.tolist())) == list(range(len(SHAPE_CLASSES)))
((6000, 1, 28, 28), dtype('float32'), True)
>>> round(shape_similarity(class_shapes()["horizontal"], ("horizontal", "vertical")), 3)
1.0
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = [
    "IMAGE_SIDE",
    "PER_CLASS",
    "SHAPE_CLASSES",
    "chance_similarity",
    "class_shapes",
    "make_shapes",
    "shape_similarity",
    "shapes",
]

#: Side of every image, as MNIST's: the digit presets' 5×5 filters fit both.
IMAGE_SIDE = 28
#: Images made of each class.
PER_CLASS = 1000
#: The seed every image is drawn from (one set, the same everywhere).
SEED = 20261126
#: Standard deviation of the pixel noise, and the background it is added to.
NOISE = 0.15
BACKGROUND = 0.25
#: Round blobs in every image, whatever its class: a blur or a single pixel responds to
#: them as strongly as to the shape, so only a filter with the shape's orientation helps.
BLOBS = 2

_ROWS = {
    "horizontal": ["     ", "     ", "#####", "     ", "     "],
    "vertical": ["  #  ", "  #  ", "  #  ", "  #  ", "  #  "],
    "diagonal": ["#    ", " #   ", "  #  ", "   # ", "    #"],
    "antidiagonal": ["    #", "   # ", "  #  ", " #   ", "#    "],
    "cross": ["     ", "  #  ", " ### ", "  #  ", "     "],
    "corner": ["     ", " #   ", " #   ", " ### ", "     "],
}
#: The classes, in label order: each is named by the shape that makes it.
SHAPE_CLASSES = tuple(_ROWS)


def class_shapes() -> dict[str, np.ndarray]:
    """The 5×5 shape behind each class (1 on the shape, 0 elsewhere), float64.

    Examples
    --------
    >>> int(class_shapes()["cross"].sum())
    5
    """
    return {
        name: np.array([[c == "#" for c in row] for row in rows], dtype=np.float64)
        for name, rows in _ROWS.items()
    }


def _unit_zero_mean(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64).ravel()
    a = a - a.mean()
    norm = np.linalg.norm(a)
    return a / norm if norm > 0 else a


def shape_similarity(filt: np.ndarray, classes: tuple[str, ...]) -> float:
    """How close a learned filter is to the shapes of ``classes``: in [0, 1].

    The largest absolute cosine between the filter and one of the shapes moved to any
    place in the filter's window (up to two cells each way; cells moved out are dropped),
    both taken with their mean removed.  A maximum over the whole map after the filter
    makes its place in the window irrelevant (a bar one row lower finds the same bars),
    the mean acts like a constant the kernel absorbs, and the absolute value is what the
    pooling keeps, so a filter that finds the shape in any of these ways matches it.

    Parameters
    ----------
    filt : array of shape (p, q)
        One learned filter.
    classes : tuple of str
        Names from :data:`SHAPE_CLASSES`.

    Returns
    -------
    float
        1 for the shape itself (anywhere in the window), low for a random filter.
    """
    filt = np.asarray(filt, dtype=np.float64)
    f = _unit_zero_mean(filt)
    return max(float(np.abs(_placements(name, filt.shape) @ f).max()) for name in classes)


@functools.lru_cache(maxsize=16)
def chance_similarity(classes: tuple[str, ...], shape: tuple[int, int] = (5, 5)) -> float:
    """What a random filter scores on :func:`shape_similarity` against ``classes``: the
    mean over 200 Gaussian random filters (a fixed seed), for a page to set a learned
    filter's similarity against.

    Examples
    --------
    >>> 0.3 < chance_similarity(("horizontal", "vertical")) < 0.6
    True
    """
    rng = np.random.default_rng(0)
    scores = [shape_similarity(rng.standard_normal(shape), classes) for _ in range(200)]
    return float(np.mean(scores))


@functools.lru_cache(maxsize=64)
def _placements(name: str, size: tuple[int, int], reach: int = 2) -> np.ndarray:
    """The shape ``name`` at every offset up to ``reach`` cells in a window of ``size``,
    one zero-mean unit row per offset (cells moved out of the window are dropped)."""
    shape = class_shapes()[name]
    p, q = size
    h, w = shape.shape
    # The shape drawn in the middle of a canvas padded by ``reach``; each offset is a crop.
    pad = reach + max(h, w, p, q)
    canvas = np.zeros((p + 2 * pad, q + 2 * pad))
    top, left = pad + (p - h) // 2, pad + (q - w) // 2
    canvas[top : top + h, left : left + w] = shape
    rows = []
    for di in range(-reach, reach + 1):
        for dj in range(-reach, reach + 1):
            window = canvas[pad - di : pad - di + p, pad - dj : pad - dj + q]
            if window.any():
                rows.append(_unit_zero_mean(window))
    return np.array(rows)


def _blob() -> np.ndarray:
    """A round 3×3 blob with the shapes' stroke strength at its centre."""
    return np.array([[0.3, 0.6, 0.3], [0.6, 1.0, 0.6], [0.3, 0.6, 0.3]])


@functools.lru_cache(maxsize=1)
def shapes() -> tuple[np.ndarray, np.ndarray]:
    """The teaching set: float32 ``(6000, 1, 28, 28)`` in [0, 1] and int64 labels.

    :data:`PER_CLASS` images of each class of :data:`SHAPE_CLASSES`, in a fixed order
    drawn from :data:`SEED` (:func:`make_shapes`).
    """
    return make_shapes(PER_CLASS, SEED)


def make_shapes(per_class: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``per_class`` images of every class of :data:`SHAPE_CLASSES` drawn from ``seed``.

    Another seed gives images never seen before (the teaching study reports on them).
    Each image: background :data:`BACKGROUND` plus Gaussian noise (σ :data:`NOISE`),
    :data:`BLOBS` round blobs at random places, and its class's shape at a random place
    with a strength between 0.5 and 1, clipped to [0, 1].
    """
    rng = np.random.default_rng(seed)
    known = class_shapes()
    n = per_class * len(SHAPE_CLASSES)
    y = np.repeat(np.arange(len(SHAPE_CLASSES)), per_class)
    y = y[rng.permutation(n)]
    side = IMAGE_SIDE
    X = BACKGROUND + NOISE * rng.standard_normal((n, side, side))
    blob = _blob()
    for _ in range(BLOBS):
        _stamp(X, np.broadcast_to(blob, (n, 3, 3)), rng, rng.uniform(0.5, 1.0, n))
    stamps = np.stack([known[name] for name in SHAPE_CLASSES])[y]
    _stamp(X, stamps, rng, rng.uniform(0.5, 1.0, n))
    X = np.clip(X, 0.0, 1.0).astype(np.float32)[:, None]
    return X, y.astype(np.int64)


def _stamp(X: np.ndarray, patches: np.ndarray, rng: np.random.Generator, strength) -> None:
    """Add ``patches[i] * strength[i]`` to image ``i`` at a random place (in place)."""
    n, p, q = patches.shape
    rows = rng.integers(0, X.shape[1] - p + 1, n)
    cols = rng.integers(0, X.shape[2] - q + 1, n)
    # One fancy-indexed add for all images: index grids of shape (n, p, q).
    ii = rows[:, None, None] + np.arange(p)[None, :, None]
    jj = cols[:, None, None] + np.arange(q)[None, None, :]
    X[np.arange(n)[:, None, None], ii, jj] += patches * np.asarray(strength)[:, None, None]
