"""Moment normalisation (csvm.data.moment): the ink's 4σ box scaled to a fixed size,
centred by mass, its shear undone; every image alike, any dtype and channel count."""

import numpy as np
import pytest

from csvm.data.deskew import deskew, skew
from csvm.data.moment import ink_box, moment_normalise


def _rectangle(top, left, height, width, shape=(28, 28)):
    X = np.zeros((1, 1, *shape), np.float32)
    X[0, 0, top : top + height, left : left + width] = 1.0
    return X


def test_a_small_and_a_large_digit_come_out_the_same_size_and_centred():
    small, large = _rectangle(3, 4, 6, 3), _rectangle(8, 9, 14, 7)  # same aspect
    out = moment_normalise(np.concatenate([small, large]), box=20.0)
    height, width = ink_box(out)
    assert height == pytest.approx([20.0, 20.0], abs=1.0)  # the longer side: the box
    assert width == pytest.approx(width[::-1], rel=0.1)  # same aspect: about the same size
    _, m_r, m_c = skew(out)
    assert m_r == pytest.approx([14.0, 14.0], abs=0.6) and m_c == pytest.approx(14.0, abs=0.6)


def test_the_shorter_side_follows_liu_et_als_aspect_rule_or_the_box():
    X = _rectangle(4, 10, 20, 5)  # tall and thin
    h, w = ink_box(X)
    aspect = w[0] / h[0]
    kept = ink_box(moment_normalise(X, box=20.0))
    assert kept[1] == pytest.approx(20.0 * np.sqrt(np.sin(np.pi / 2 * aspect)), rel=0.1)
    square = ink_box(moment_normalise(X, box=20.0, keep_aspect=False))
    assert square[0] == pytest.approx(20.0, abs=1.0) and square[1] == pytest.approx(20.0, rel=0.1)


def test_a_slanted_stroke_is_stood_upright_as_deskew_does():
    X = np.zeros((1, 1, 28, 28), np.float32)
    for r in range(6, 22):  # a stroke leaning right, one column per two rows
        X[0, 0, r, 8 + (22 - r) // 2 : 11 + (22 - r) // 2] = 1.0
    assert abs(skew(X)[0][0]) > 0.3
    assert abs(skew(moment_normalise(X))[0][0]) < 0.05
    assert abs(skew(deskew(X))[0][0]) < 0.05


def test_every_image_alike_in_chunks_channels_and_dtype(monkeypatch):
    from csvm.data import deskew as deskew_module  # its chunks() serve moment_normalise

    rng = np.random.default_rng(0)
    X = (rng.random((7, 2, 12, 12)) > 0.7).astype(np.float64)
    whole = moment_normalise(X, box=9.0)
    monkeypatch.setattr(deskew_module, "_CHUNK", 3)
    assert np.array_equal(moment_normalise(X, box=9.0), whole) and whole.dtype == np.float64
    one = moment_normalise(X[2:3], box=9.0)
    assert np.allclose(one, whole[2:3])  # an image does not depend on the others
    assert not moment_normalise(np.zeros((2, 1, 8, 8), np.float32)).any()  # blank stays blank


def test_a_box_that_is_not_a_positive_size_is_refused():
    with pytest.raises(ValueError, match="positive number of pixels"):
        moment_normalise(_rectangle(2, 2, 4, 4), box=0)
