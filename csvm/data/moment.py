"""Moment normalisation: each digit deskewed, centred and scaled to a fixed size.

Deskewing (:mod:`csvm.data.deskew`) stands a slanted digit upright and centres its ink,
but leaves its size as written: a small 0 and a large 0 still differ in every pixel.
Liu, Nakashima, Sako and Fujisawa (2003, "Handwritten digit recognition: benchmarking of
state-of-the-art techniques", Pattern Recognition 36) also rescale each digit so that the
box of four standard deviations of its ink has a fixed size: the longer side ``box``
pixels, the shorter one scaled by ``sqrt(sin(pi/2 * aspect))`` so a thin 1 stays thin but
not too thin.  Like deskewing it uses no labels and treats every image alike.

Vectorised as :func:`csvm.data.deskew.deskew` is: the moments of all images are
``einsum`` contractions, and one bilinear :func:`scipy.ndimage.map_coordinates` call per
chunk of images and channel resamples them.

Examples
--------
>>> import numpy as np
>>> X = np.zeros((1, 1, 28, 28), np.float32)
>>> X[0, 0, 12:16, 10:14] = 1  # a small square, off centre
>>> out = moment_normalise(X, box=16.0)
>>> out.shape, out.dtype, bool(out[0, 0, 14, 14] > 0.9), bool(out[0, 0, 12:16, 10:14].all())
((1, 1, 28, 28), dtype('float32'), True, True)
"""

from __future__ import annotations

import numpy as np

from csvm.data.deskew import chunks, ink_moments, resample

__all__ = ["ink_box", "moment_normalise"]


def ink_box(X4: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each image's ink height and width once deskewed: four standard deviations of its
    rows and of its sheared columns (the box Liu et al. scale to a fixed size).

    Parameters
    ----------
    X4 : array (n, C, H, W)
        Non-negative ink; the channels are summed.

    Returns
    -------
    height, width : float64 arrays (n,)
    """
    return _moments(X4)[3:]


def _moments(X4: np.ndarray) -> tuple[np.ndarray, ...]:
    """Each image's shear, centre of mass (rows, columns) and :func:`ink_box`, from one
    pass over the ink (:func:`csvm.data.deskew.ink_moments`)."""
    m = ink_moments(X4)
    dc = m.dc - m.alpha[:, None, None] * m.dr  # the columns' offsets after the shear
    height = 4 * np.sqrt(np.maximum(m.v_r, 1e-6))
    width = 4 * np.sqrt(np.maximum(np.einsum("nij,nij->n", m.ink, dc * dc) / m.total, 1e-6))
    return m.alpha, m.m_r, m.m_c, height, width


def _target_sizes(
    height: np.ndarray, width: np.ndarray, box: float, keep_aspect: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The output box of each image: the longer side ``box``, the shorter one scaled by
    sqrt(sin(pi/2 * aspect)) (or both ``box``)."""
    if not keep_aspect:
        return np.full_like(height, box), np.full_like(width, box)
    aspect = np.minimum(height, width) / np.maximum(height, width)
    shorter = box * np.sqrt(np.sin(np.pi / 2 * aspect))
    tall = height >= width
    return np.where(tall, box, shorter), np.where(tall, shorter, box)


def moment_normalise(X4: np.ndarray, box: float = 22.0, keep_aspect: bool = True) -> np.ndarray:
    """The images deskewed, centred by their ink's mass and scaled to a ``box``-pixel box.

    Output pixel (r, c) reads the input at row ``m_r + (h / h_out)(r - H/2)`` and column
    ``m_c + alpha (row - m_r) + (w / w_out)(c - W/2)`` (bilinear, zeros outside), where
    ``h, w`` is :func:`ink_box` and ``h_out, w_out`` the box it is scaled to.

    Parameters
    ----------
    X4 : array (n, C, H, W)
        Non-negative ink.
    box : float, default=22.0
        The longer side of the ink's four-standard-deviation box after scaling, in
        pixels (22 of MNIST's 28 was chosen on validation images:
        docs/protocol_mnist10_996.md).
    keep_aspect : bool, default=True
        Scale the shorter side by ``sqrt(sin(pi/2 * aspect))`` (Liu et al.'s rule);
        False scales both sides to ``box``.

    Returns
    -------
    array like ``X4`` (same dtype)
    """
    if not box > 0:
        raise ValueError(f"box must be a positive number of pixels, got {box!r}.")
    X4 = np.asarray(X4)
    n, _, H, W = X4.shape
    alpha, m_r, m_c, height, width = _moments(X4)
    out_h, out_w = _target_sizes(height, width, float(box), keep_aspect)
    rows, cols = np.mgrid[:H, :W].astype(np.float64)
    out = np.empty_like(X4)
    for part in chunks(n):
        r0, c0, a = (v[part, None, None] for v in (m_r, m_c, alpha))
        src_r = r0 + (height / out_h)[part, None, None] * (rows[None] - H / 2)
        src_c = c0 + a * (src_r - r0) + (width / out_w)[part, None, None] * (cols[None] - W / 2)
        resample(X4, part, src_r, src_c, out)
    return out
