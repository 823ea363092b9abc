"""Two-dimensional toy problems for the SVM playground, seeded and labelled -1 / +1.

Every generator returns ``(X, y)`` with ``X`` of shape (n, 2) inside the square
``[-LIMIT, LIMIT]^2`` and ``y`` in {-1, +1}, the two classes as equal in size as ``n``
allows.  ``noise`` is the standard deviation of Gaussian jitter in the square's units.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from sklearn.datasets import make_circles, make_moons

__all__ = [
    "blobs",
    "circles",
    "make",
    "moons",
    "spirals",
    "xor",
]

#: Half the side of the square every data set lies in (and the playground draws).
LIMIT = 3.0
#: The bounds the generators accept for the number of points.
N_MIN, N_MAX = 20, 400


def _labels(n: int) -> np.ndarray:
    return np.where(np.arange(n) < n // 2, -1, 1)


def _finish(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.clip(X, -LIMIT, LIMIT), np.asarray(y, dtype=int)


def blobs(
    n: int = 100, noise: float = 0.1, seed: int = 0, overlap: float = 0.3
) -> tuple[np.ndarray, np.ndarray]:
    """Two round Gaussian blobs on the horizontal axis.

    Parameters
    ----------
    n : int, default=100
        Number of points (20-400).
    noise : float, default=0.1
        Added to the blobs' standard deviation of 0.45.
    seed : int, default=0
        Random seed.
    overlap : float, default=0.3
        0 puts the centres 3.2 apart (well separated), 1 puts them on top of each other.

    Examples
    --------
    >>> X, y = blobs(20, seed=1)
    >>> X.shape, sorted(set(y.tolist()))
    ((20, 2), [-1, 1])
    """
    rng = np.random.default_rng(seed)
    y = _labels(n)
    centre = 1.6 * (1.0 - float(np.clip(overlap, 0.0, 1.0)))
    X = rng.normal(scale=0.45 + noise, size=(n, 2))
    X[:, 0] += centre * y
    return _finish(X, y)


def moons(n: int = 100, noise: float = 0.1, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaving half circles (scikit-learn's ``make_moons``), scaled to the square.

    Examples
    --------
    >>> moons(30, seed=2)[0].shape
    (30, 2)
    """
    X, y = make_moons(n_samples=(n - n // 2, n // 2), noise=noise / 1.6, random_state=seed)
    X = (X - [0.5, 0.25]) * 1.6
    return _finish(X, np.where(y == 1, 1, -1))


def circles(n: int = 100, noise: float = 0.1, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A ring (-1) around a disc (+1): ``make_circles`` with factor 0.5, radius 2.2.

    Examples
    --------
    >>> X, y = circles(40, noise=0.0)
    >>> bool(np.all(np.linalg.norm(X[y > 0], axis=1) < np.linalg.norm(X[y < 0], axis=1).min()))
    True
    """
    X, y = make_circles(
        n_samples=(n - n // 2, n // 2), noise=noise / 2.2, factor=0.5, random_state=seed
    )
    return _finish(X * 2.2, np.where(y == 1, 1, -1))


def xor(n: int = 100, noise: float = 0.1, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Four quadrants, opposite ones alike: no straight line separates them.

    Examples
    --------
    >>> X, y = xor(40, noise=0.0)
    >>> bool(np.all(np.sign(X[:, 0] * X[:, 1]) == y))
    True
    """
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.25, 2.6, size=(n, 2)) * rng.choice([-1.0, 1.0], size=(n, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    return _finish(X + rng.normal(scale=noise, size=X.shape) if noise else X, y)


def spirals(n: int = 100, noise: float = 0.1, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaved spirals, one and a half turns each.

    Examples
    --------
    >>> spirals(21)[1].tolist().count(1)
    11
    """
    rng = np.random.default_rng(seed)
    y = _labels(n)
    t = rng.uniform(0.0, 1.0, size=n)
    angle = 3.0 * np.pi * t + np.where(y > 0, np.pi, 0.0)
    radius = 0.3 + 2.3 * t
    X = np.column_stack([radius * np.cos(angle), radius * np.sin(angle)])
    return _finish(X + rng.normal(scale=noise, size=X.shape), y)


#: The generators by name (the playground's "placed" points are not generated).
GENERATORS: dict[str, Callable[..., tuple[np.ndarray, np.ndarray]]] = {
    "blobs": blobs,
    "moons": moons,
    "circles": circles,
    "xor": xor,
    "spirals": spirals,
}


def make(
    name: str, n: int = 100, noise: float = 0.1, seed: int = 0, overlap: float = 0.3
) -> tuple[np.ndarray, np.ndarray]:
    """The named data set (``overlap`` is used by "blobs" only).

    Examples
    --------
    >>> make("moons", 50)[0].shape
    (50, 2)
    """
    if name not in GENERATORS:
        raise ValueError(f"unknown 2-D data set {name!r}; choose from {sorted(GENERATORS)}")
    if not N_MIN <= n <= N_MAX:
        raise ValueError(f"n must be between {N_MIN} and {N_MAX}, got {n}")
    if name == "blobs":
        return blobs(n, noise, seed, overlap)
    return GENERATORS[name](n, noise, seed)
