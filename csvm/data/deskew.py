"""Deskewing: the classic MNIST preprocessing that stands a slanted digit upright.

People slant their digits; a slant is a shear of the image, and neither a convolution
filter nor an RBF kernel on its maps is invariant to it, so two 1s written at different
slants are far apart for the SVM.  Deskewing (LeCun et al.'s MNIST table lists it beside
many classifiers) removes the shear each image has on its own, from its second moments:
with the ink's centre of mass (m_r, m_c), row variance v_r and row-column covariance
c_rc, the shear ``alpha = c_rc / v_r`` is undone and the centre of mass moved to the image
centre.  It uses no labels and treats every image, training or test, alike.

Vectorised: the moments of all images are three ``einsum`` contractions, and one
bilinear :func:`scipy.ndimage.map_coordinates` call per chunk of images resamples them
all (the image index is a third, integer-valued coordinate, so no ink crosses images).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
from scipy import ndimage

__all__ = ["InkMoments", "chunks", "deskew", "ink_moments", "resample", "skew"]

#: Images resampled together: bounds the (3, chunk, H, W) float64 coordinates.
_CHUNK = 4096


class InkMoments(NamedTuple):
    """What :func:`ink_moments` measures of each image (float64 arrays)."""

    ink: np.ndarray  #: (n, H, W): the channels summed
    total: np.ndarray  #: (n,): the ink's sum (1 for a blank image)
    m_r: np.ndarray  #: (n,): centre of mass, rows (a blank image: the image centre)
    m_c: np.ndarray  #: (n,): centre of mass, columns
    dr: np.ndarray  #: (n, H, W): each pixel's row offset from the centre of mass
    dc: np.ndarray  #: (n, H, W): each pixel's column offset from it
    v_r: np.ndarray  #: (n,): the rows' variance
    alpha: np.ndarray  #: (n,): the shear, c_rc / v_r (0 for a blank image)


def skew(X4: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each image's shear ``alpha`` and ink centre of mass (rows, columns).

    Parameters
    ----------
    X4 : array (n, C, H, W)
        Non-negative ink; the channels are summed.

    Returns
    -------
    alpha, m_r, m_c : float64 arrays (n,)
        A blank image has alpha 0 and its centre of mass at the image centre.
    """
    moments = ink_moments(X4)
    return moments.alpha, moments.m_r, moments.m_c


def ink_moments(X4: np.ndarray) -> InkMoments:
    """Each image's ink, its centre of mass, every pixel's offset from it, the rows'
    variance and the shear (:class:`InkMoments`): what :func:`skew` and
    :func:`csvm.data.moment.moment_normalise` both read.

    Parameters
    ----------
    X4 : array (n, C, H, W)
        Non-negative ink; the channels are summed.

    Returns
    -------
    InkMoments
    """
    ink = np.asarray(X4, dtype=np.float64).sum(axis=1)
    H, W = ink.shape[-2:]
    rows, cols = np.mgrid[:H, :W].astype(np.float64)
    total = ink.sum(axis=(1, 2))
    blank = total <= 0
    total = np.where(blank, 1.0, total)
    m_r = np.where(blank, H / 2, np.einsum("nij,ij->n", ink, rows) / total)
    m_c = np.where(blank, W / 2, np.einsum("nij,ij->n", ink, cols) / total)
    dr = rows[None] - m_r[:, None, None]
    dc = cols[None] - m_c[:, None, None]
    v_r = np.einsum("nij,nij->n", ink, dr * dr) / total
    c_rc = np.einsum("nij,nij->n", ink, dr * dc) / total
    alpha = np.where(v_r > 0, c_rc / np.where(v_r > 0, v_r, 1.0), 0.0)
    return InkMoments(ink, total, m_r, m_c, dr, dc, v_r, alpha)


def deskew(X4: np.ndarray) -> np.ndarray:
    """The images with their shear undone and their ink centred.

    Output pixel (r, c) reads the input at row ``r + m_r - H/2`` and column
    ``c + alpha (r - H/2) + m_c - W/2`` (bilinear, zeros outside).

    Parameters
    ----------
    X4 : array (n, C, H, W)

    Returns
    -------
    array like ``X4`` (same dtype)
    """
    X4 = np.asarray(X4)
    n, _, H, W = X4.shape
    alpha, m_r, m_c = skew(X4)
    out = np.empty_like(X4)
    rows, cols = np.mgrid[:H, :W].astype(np.float64)
    for part in chunks(n):
        a, r0, c0 = (v[part, None, None] for v in (alpha, m_r, m_c))
        src_r = rows[None] + r0 - H / 2
        src_c = cols[None] + a * (rows[None] - H / 2) + c0 - W / 2
        resample(X4, part, src_r, src_c, out)
    return out


def chunks(n: int) -> Iterator[slice]:
    """The slices of ``n`` images that :func:`resample` is given one at a time: they bound
    its float64 coordinates to (3, 4096, H, W).

    Examples
    --------
    >>> list(chunks(5000))
    [slice(0, 4096, None), slice(4096, 5000, None)]
    """
    for start in range(0, n, _CHUNK):
        yield slice(start, min(n, start + _CHUNK))


def resample(
    X4: np.ndarray, part: slice, src_r: np.ndarray, src_c: np.ndarray, out: np.ndarray
) -> None:
    """``out[part]``: every channel of ``X4[part]`` read at rows ``src_r`` and columns
    ``src_c`` (bilinear, zeros outside), in one :func:`scipy.ndimage.map_coordinates`
    call per channel (the image index is a third, integer-valued coordinate).

    Parameters
    ----------
    X4, out : arrays (n, C, H, W)
    part : slice
        The chunk of images resampled.
    src_r, src_c : float arrays broadcastable to (len(part), H, W)
    """
    k, n_channels = part.stop - part.start, X4.shape[1]
    shape = (k, *X4.shape[2:])
    index = np.broadcast_to(np.arange(k, dtype=np.float64)[:, None, None], shape)
    src_r, src_c = np.broadcast_to(src_r, shape), np.broadcast_to(src_c, shape)
    for channel in range(n_channels):
        out[part, channel] = ndimage.map_coordinates(
            X4[part, channel].astype(np.float64),
            [index, src_r, src_c],
            order=1,
            mode="constant",
            cval=0.0,
        )
