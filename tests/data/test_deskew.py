"""Deskewing: the moments, against scipy's affine transform, and an upright result."""

import numpy as np
import pytest
from scipy import ndimage

from csvm.data.deskew import deskew, skew


def _slanted_bar(alpha: float, size: int = 28) -> np.ndarray:
    """A vertical bar sheared so that its column moves by ``alpha`` per row."""
    image = np.zeros((size, size))
    for r in range(6, size - 6):
        c = size / 2 + alpha * (r - size / 2)
        lo = int(np.floor(c))
        image[r, lo - 1 : lo + 2] = 1.0
    return image


def test_deskew_equals_scipys_affine_transform_of_each_image():
    rng = np.random.default_rng(0)
    X = np.stack([_slanted_bar(a) for a in (-0.4, 0.0, 0.3)])[:, None]
    X = X + 0.1 * rng.random(X.shape)
    alpha, m_r, m_c = skew(X)
    expected = []
    for image, a, r0, c0 in zip(X[:, 0], alpha, m_r, m_c, strict=True):
        # Output (r, c) reads input (r, a r + c) + offset.
        offset = (r0 - 14, c0 - 14 - 14 * a)
        matrix = np.array([[1.0, 0.0], [a, 1.0]])
        expected.append(ndimage.affine_transform(image, matrix, offset=offset, order=1))
    np.testing.assert_allclose(deskew(X)[:, 0], np.stack(expected), atol=1e-12)


@pytest.mark.parametrize("alpha", [-0.5, -0.2, 0.25, 0.45])
def test_a_slanted_bar_comes_out_upright_and_centred(alpha):
    X = _slanted_bar(alpha)[None, None].astype(np.float32)
    assert skew(X)[0][0] == pytest.approx(alpha, abs=0.05)
    out = deskew(X)
    assert out.dtype == np.float32 and out.shape == X.shape
    a, m_r, m_c = skew(out)
    assert abs(a[0]) < 0.03
    assert m_r[0] == pytest.approx(14, abs=0.3) and m_c[0] == pytest.approx(14, abs=0.3)
    assert out.sum() == pytest.approx(X.sum(), rel=0.02)  # ink is moved, not made


def test_blank_images_stay_blank_and_channels_share_one_shear():
    X = np.zeros((2, 3, 28, 28))
    X[1] = _slanted_bar(0.3)
    out = deskew(X)
    assert not out[0].any()
    np.testing.assert_allclose(out[1, 0], out[1, 1])
    np.testing.assert_allclose(out[1, 1], out[1, 2])
