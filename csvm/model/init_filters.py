"""The random first filters of a K-CSVM (``filter_init``), every kind at unit L1 norm over
all filters together (the scale at which the thesis's eta works).

* ``uniform``: weights in [0, 1): each map starts as a local weighted average (the thesis);
* ``zero-mean``: Gaussian weights minus their mean: each map a local contrast;
* ``gabor``: even Gabor filters at evenly spread orientations (a random first angle), sigma
  a quarter of the filter's side, wavelength half of it: stroke detectors;
* ``gaussian``: Gaussian blurs of spread widths (randomly jittered), a smooth start;
* ``hog``: HOG's orientation channels, the derivative of a Gaussian (sigma a quarter of
  the filter's side) along ``k`` directions evenly spread over the full circle, the first
  at 0 (no randomness): after ``-relu`` each map is ``relu(grad . u_k)``, the soft vote of
  each pixel's gradient for orientation bin k (signed orientations; after ``-abs`` the
  opposite directions repeat each other).  With ``-avg<cell>`` and ``-bn<block>`` a stack
  starts as a HOG descriptor (:mod:`csvm.model.normalise`) and learning moves it;
* ``hog-colour``: on 3-channel (R, G, B) images, ``hog``'s directions along three colour
  axes, luminance ``(1, 1, 1)``, red-green ``(1, -1, 0)`` and yellow-blue ``(1, 1, -2)``
  (unit vectors, Gaussian opponent colours): the first third of the ``k`` filters are
  oriented derivatives of luminance, the next of red minus green, the last of yellow minus
  blue, each third over ``k / 3`` directions (``k`` a multiple of 3), so a stack starts
  as three HOG descriptors, one per colour axis, where HOG on grey sees only the first.
  On images of other channel counts it is ``hog``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "COLOUR_AXES",
    "FILTER_INITS",
    "colour_derivatives",
    "first_filters",
    "oriented_derivatives",
]

FILTER_INITS = ("uniform", "zero-mean", "gabor", "gaussian", "hog", "hog-colour")
#: The colour axes of ``hog-colour`` (rows: luminance, red-green, yellow-blue; unit norm).
COLOUR_AXES = np.array([[1, 1, 1], [1, -1, 0], [1, 1, -2]]) / np.sqrt([[3], [2], [6]])


def _grid(p: int, q: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.arange(q, dtype=np.float64) - (q - 1) / 2
    y = (p - 1) / 2 - np.arange(p, dtype=np.float64)  # row 0 at the top, y up on screen
    return x[None, :], y[:, None]


def _gabor(p: int, q: int, theta: float) -> np.ndarray:
    x, y = _grid(p, q)
    sigma, wavelength = max(p, q) / 4, max(p, q) / 2
    envelope = np.exp(-(x**2 + y**2) / (2 * sigma**2))
    f = envelope * np.cos(2 * math.pi * (x * math.cos(theta) + y * math.sin(theta)) / wavelength)
    return f - envelope * (f.sum() / envelope.sum())  # zero mean: strokes, not ink


def _gaussian(p: int, q: int, sigma: float) -> np.ndarray:
    x, y = _grid(p, q)
    return np.exp(-(x**2 + y**2) / (2 * sigma**2))


def oriented_derivatives(p: int, q: int, k: int) -> np.ndarray:
    """``(k, p, q)``: the derivative of a Gaussian (sigma a quarter of the longer side)
    along the directions ``2 pi i / k``, i = 0..k-1, x to the right and y up.

    Correlating an image with plane i gives ``grad(G * image) . u_i`` with
    ``u_i = (cos, sin)(2 pi i / k)``.

    Parameters
    ----------
    p, q : int
        Rows and columns of each filter.
    k : int
        Directions (the orientation bins).

    Returns
    -------
    array (k, p, q) float64
        Odd filters (zero sum), not normalised (:func:`first_filters` scales them).

    Examples
    --------
    >>> f = oriented_derivatives(3, 3, 4)
    >>> bool(np.allclose(f[0], -f[2]) and np.allclose(f[0].sum(), 0))
    True
    """
    x, y = _grid(p, q)
    envelope = _gaussian(p, q, max(p, q) / 4)
    angles = 2 * math.pi * np.arange(k) / k
    return np.stack([(x * math.cos(a) + y * math.sin(a)) * envelope for a in angles])


def colour_derivatives(p: int, q: int, k: int) -> np.ndarray:
    """``(k, 3, p, q)``: :func:`oriented_derivatives` over ``k / 3`` directions along each
    of the three :data:`COLOUR_AXES` (luminance, red-green, yellow-blue, in that order).

    Raises
    ------
    ValueError
        If ``k`` is not a positive multiple of 3.

    Examples
    --------
    >>> f = colour_derivatives(3, 3, 6)
    >>> f.shape, bool(np.allclose(f[2:].sum(axis=1), 0))  # opponent filters: no luminance
    ((6, 3, 3, 3), True)
    """
    if k < 3 or k % 3:
        raise ValueError(
            f"filter_init='hog-colour' needs a multiple of 3 filters (one third per colour "
            f"axis), got {k}."
        )
    planes = oriented_derivatives(p, q, k // 3)
    return np.einsum("aj,kpq->akjpq", COLOUR_AXES, planes).reshape(k, 3, p, q)


def first_filters(kind: str, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """First filters of ``shape`` (k, C, p, q) of the given kind (see the module docstring).

    Raises
    ------
    ValueError
        For an unknown kind (naming the kinds there are).
    """
    k, c, p, q = shape
    if kind == "uniform":
        f = rng.random(shape)
    elif kind == "zero-mean":
        f = rng.standard_normal(shape)
        f -= f.mean(axis=(-2, -1), keepdims=True)
    elif kind == "gabor":
        start = rng.uniform(0, math.pi / k)
        planes = [_gabor(p, q, start + i * math.pi / k) for i in range(k)]
        f = np.repeat(np.stack(planes)[:, None], c, axis=1)
    elif kind == "hog" or (kind == "hog-colour" and c != 3):
        f = np.repeat(oriented_derivatives(p, q, k)[:, None], c, axis=1)
    elif kind == "hog-colour":
        f = colour_derivatives(p, q, k)
    elif kind == "gaussian":
        widths = np.linspace(0.5, max(p, q) / 3, k) * rng.uniform(0.9, 1.1, k)
        f = np.repeat(np.stack([_gaussian(p, q, s) for s in widths])[:, None], c, axis=1)
    else:
        raise ValueError(f"Unknown filter_init {kind!r}: choose one of {', '.join(FILTER_INITS)}.")
    return f / np.abs(f).sum()
