"""A bank of fixed, named image filters (pure numpy): the base kernels of filter-bank MKL.

Every filter is a float64 array applied by correlation (row 0 is the top of the window,
nothing is flipped), as every filter of the library is, and has unit L1 norm, so filters
differ in shape rather than size (the scale of a ``KernelCSVM``'s random start).  At size
3 the identity, box, Sobel and Laplacian filters are exactly those of the filter lab
(``csvm.analysis.lab_filters.classic_filter``), so that module can import them from here.

The default bank (:data:`DEFAULT_BANK`, 12 filters):

* ``identity``: a delta, the map is the image itself;
* ``gaussian_1``, ``gaussian_2``, ``gaussian_3``: Gaussian blurs with sigma 1, 2, 3 pixels
  (radius ``ceil(2 sigma)``: 5x5, 9x9, 13x13);
* ``box``: 3x3 mean;
* ``sobel_x``, ``sobel_y``: 3x3 Sobel derivatives (brightness rising to the right, down);
* ``laplacian``: the 3x3 four-neighbour Laplacian;
* ``gabor_0``, ``gabor_45``, ``gabor_90``, ``gabor_135``: 7x7 even (cosine) Gabor filters,
  zero mean, sigma 2, wavelength 4 pixels (about two MNIST stroke widths); ``gabor_t``'s
  wave runs at ``t`` degrees from the x axis (anticlockwise as seen on screen, y up), so
  ``gabor_0`` answers vertical strokes and ``gabor_90`` horizontal ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["BANK_FILTERS", "DEFAULT_BANK", "bank_filter", "resolve_bank"]

#: Every named filter of the bank, with what it does to an image.
BANK_FILTERS: dict[str, str] = {
    "identity": "delta: the map is the image itself",
    "gaussian_1": "Gaussian blur, sigma 1 pixel (5x5)",
    "gaussian_2": "Gaussian blur, sigma 2 pixels (9x9)",
    "gaussian_3": "Gaussian blur, sigma 3 pixels (13x13)",
    "box": "3x3 box blur (the mean of the window)",
    "sobel_x": "Sobel x: brightness rising from left to right",
    "sobel_y": "Sobel y: brightness rising from top to bottom",
    "laplacian": "4-neighbour Laplacian: centre against surround",
    "gabor_0": "Gabor, wave along x: vertical strokes",
    "gabor_45": "Gabor, wave at 45 degrees: strokes from top left to bottom right",
    "gabor_90": "Gabor, wave along y: horizontal strokes",
    "gabor_135": "Gabor, wave at 135 degrees: strokes from bottom left to top right",
}
#: The bank used when ``bank=None``: every named filter.
DEFAULT_BANK: tuple[str, ...] = tuple(BANK_FILTERS)

_GABOR_SIZE, _GABOR_SIGMA, _GABOR_WAVELENGTH = 7, 2.0, 4.0


def _gaussian(sigma: float) -> np.ndarray:
    r = np.arange(-math.ceil(2 * sigma), math.ceil(2 * sigma) + 1, dtype=np.float64)
    g = np.exp(-(r**2) / (2 * sigma**2))
    return np.outer(g, g)


def _gabor(theta_degrees: float) -> np.ndarray:
    half = _GABOR_SIZE // 2
    r = np.arange(-half, half + 1, dtype=np.float64)
    x = r[None, :]
    y = -r[:, None]  # row 0 is the top: y grows upwards on screen
    theta = math.radians(theta_degrees)
    along = x * math.cos(theta) + y * math.sin(theta)
    envelope = np.exp(-(x**2 + y**2) / (2 * _GABOR_SIGMA**2))
    f = envelope * np.cos(2 * math.pi * along / _GABOR_WAVELENGTH)
    # Zero mean: a flat patch gives no response, so the filter sees strokes, not ink.
    return f - envelope * (f.sum() / envelope.sum())


def bank_filter(name: str) -> np.ndarray:
    """One named filter of the bank, at unit L1 norm.

    Parameters
    ----------
    name : str
        A key of :data:`BANK_FILTERS`.

    Returns
    -------
    filter : float64 array (p, q), p and q odd.

    Raises
    ------
    ValueError
        For an unknown name, listing the known ones.
    """
    key = str(name).lower()
    if key == "identity":
        f = np.zeros((3, 3))
        f[1, 1] = 1.0
    elif key.startswith("gaussian_") and key in BANK_FILTERS:
        f = _gaussian(float(key.split("_")[1]))
    elif key == "box":
        f = np.ones((3, 3))
    elif key in ("sobel_x", "sobel_y"):
        f = np.outer([1.0, 2.0, 1.0], [-1.0, 0.0, 1.0])
        f = f.T if key == "sobel_y" else f
    elif key == "laplacian":
        f = np.array([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]])
    elif key.startswith("gabor_") and key in BANK_FILTERS:
        f = _gabor(float(key.split("_")[1]))
    else:
        raise ValueError(f"Unknown bank filter {name!r}: choose one of {', '.join(BANK_FILTERS)}.")
    return f / np.abs(f).sum()


def resolve_bank(bank: Sequence[Any] | None) -> tuple[list[str], list[np.ndarray]]:
    """Names and arrays of a bank given as None, names, or 2-D arrays (mixed freely).

    Arrays are copied as float64 and named ``"custom_<i>"`` by their place in the list.

    Raises
    ------
    ValueError
        For an empty bank, an unknown name, or an array that is not 2-D, empty or finite.
    """
    if bank is None:
        bank = DEFAULT_BANK
    if len(bank) == 0:
        raise ValueError("bank is empty: give at least one filter name or array (or None).")
    names, filters = [], []
    for i, item in enumerate(bank):
        if isinstance(item, str):
            names.append(item.lower())
            filters.append(bank_filter(item))
            continue
        f = np.asarray(item, dtype=np.float64)
        if f.ndim != 2 or f.size == 0 or not np.all(np.isfinite(f)):
            raise ValueError(
                f"bank[{i}] must be a filter name or a finite 2-D array, got "
                f"{type(item).__name__} of shape {np.shape(item)}."
            )
        names.append(f"custom_{i}")
        filters.append(f.copy())
    return names, filters
