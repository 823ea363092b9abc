import numpy as np
import pytest
from scipy.signal import correlate2d

from csvm.model.conv import (
    as_images,
    correlate,
    correlate_then,
    correlate_transpose,
    patch_view,
    stack_rgb,
)


def _reference(X, f):
    n, c = X.shape[:2]
    return np.array(
        [
            [
                sum(correlate2d(X[i, ch], f[k, ch], mode="valid") for ch in range(c))
                for k in range(f.shape[0])
            ]
            for i in range(n)
        ]
    )


@pytest.mark.parametrize(
    "channels,n_filters,fshape", [(1, 1, (5, 5)), (3, 1, (3, 3)), (1, 3, (4, 2)), (3, 2, (2, 5))]
)
def test_correlate_matches_scipy(channels, n_filters, fshape):
    rng = np.random.default_rng(0)
    X = rng.random((4, channels, 11, 9))
    f = rng.standard_normal((n_filters, channels, *fshape))
    np.testing.assert_allclose(correlate(X, f), _reference(X, f), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("channels,n_filters,fshape", [(1, 16, (5, 5)), (3, 4, (3, 2))])
@pytest.mark.parametrize("block_bytes", [1, 2**26])
def test_many_filters_one_product_per_block_matches_scipy(
    monkeypatch, channels, n_filters, fshape, block_bytes
):
    """From four filters on, correlate is one BLAS product of the patches per block of
    images (block_bytes 1: one image a block)."""
    from csvm.model import conv

    monkeypatch.setattr(conv, "_GEMM_BLOCK_BYTES", block_bytes)
    rng = np.random.default_rng(2)
    X = rng.random((5, channels, 11, 9))
    f = rng.standard_normal((n_filters, channels, *fshape))
    got = correlate(X, f)
    assert got.shape == (5, n_filters, 12 - fshape[0], 10 - fshape[1]) and got.dtype == np.float64
    np.testing.assert_allclose(got, _reference(X, f), rtol=1e-12, atol=1e-12)
    got32 = correlate(X.astype(np.float32), f.astype(np.float32))
    assert got32.dtype == np.float32 and got32.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(got32, _reference(X, f), rtol=1e-5, atol=1e-5)


def _abs_max2(Z):
    """|x| in place, then 2x2 max pooling of (..., H, W) maps (a block stage)."""
    np.abs(Z, out=Z)
    h, w = Z.shape[-2] // 2, Z.shape[-1] // 2
    return Z[..., : 2 * h, : 2 * w].reshape(*Z.shape[:-2], h, 2, w, 2).max(axis=(-3, -1))


@pytest.mark.parametrize("n_filters", [2, 16])
@pytest.mark.parametrize("block_bytes", [1, 2**20])
@pytest.mark.parametrize("n", [0, 1, 7])
def test_correlate_then_applies_the_stage_block_by_block(monkeypatch, n_filters, block_bytes, n):
    """The fused pass (the stage applied to each block's product in cache) gives the
    stage of the whole correlation bit for bit, for one image a block, many, and none."""
    from csvm.model import conv

    monkeypatch.setattr(conv, "_GEMM_BLOCK_BYTES", block_bytes)
    rng = np.random.default_rng(3)
    for dtype in (np.float32, np.float64):
        X = rng.standard_normal((n, 1, 12, 11)).astype(dtype)
        f = rng.standard_normal((n_filters, 1, 3, 3)).astype(dtype)
        expected = _abs_max2(correlate(X, f))
        got = correlate_then(X, f, _abs_max2)
        assert got.shape == (n, n_filters, 5, 4) and got.dtype == dtype
        assert got.flags["C_CONTIGUOUS"]
        np.testing.assert_array_equal(got, expected)


def test_correlate_accepts_2d_filter_and_3d_images():
    rng = np.random.default_rng(1)
    X = rng.random((2, 8, 8))
    f = rng.random((3, 3))
    np.testing.assert_allclose(correlate(X, f)[:, 0], [correlate2d(x, f, mode="valid") for x in X])


def test_patch_view_is_the_cmt():
    rng = np.random.default_rng(2)
    X = rng.random((3, 1, 7, 6))
    f = rng.random((1, 1, 3, 2))
    view = patch_view(X, (3, 2))  # (n, C, H', W', p, q)
    assert view.shape == (3, 1, 5, 5, 3, 2)
    assert not view.flags.writeable
    np.testing.assert_allclose(np.einsum("nchwpq,kcpq->nkhw", view, f), correlate(X, f))


@pytest.mark.parametrize("channels,n_filters", [(1, 1), (3, 2)])
def test_transpose_is_adjoint(channels, n_filters):
    rng = np.random.default_rng(3)
    X = rng.random((5, channels, 10, 12))
    f = rng.standard_normal((n_filters, channels, 3, 4))
    Z = correlate(X, f)
    V = rng.standard_normal(Z.shape)
    per_sample = correlate_transpose(X, V, (3, 4))
    assert per_sample.shape == (5, n_filters, channels, 3, 4)
    lhs = np.sum(Z * V)
    rhs = np.einsum("nkcpq,kcpq->", per_sample, f)
    np.testing.assert_allclose(lhs, rhs, rtol=1e-12)
    summed = correlate_transpose(X, V, (3, 4), sum_samples=True)
    np.testing.assert_allclose(summed, per_sample.sum(0), rtol=1e-12, atol=1e-12)


def test_float32_stays_float32():
    X = np.ones((2, 1, 6, 6), dtype=np.float32)
    f = np.ones((1, 1, 3, 3), dtype=np.float32)
    assert correlate(X, f).dtype == np.float32


def test_stack_rgb_is_thesis_layout():
    X = np.arange(2 * 3 * 32 * 32, dtype=float).reshape(2, 3, 32, 32)
    S = stack_rgb(X)
    assert S.shape == (2, 1, 96, 32)
    np.testing.assert_array_equal(S[0, 0, 32:64], X[0, 1])


def test_as_images_messages():
    with pytest.raises(ValueError, match="needs 784"):
        as_images(np.zeros((2, 100)), (28, 28))
    with pytest.raises(ValueError, match="image_shape"):
        as_images(np.zeros((2, 100)))
    assert as_images(np.zeros((2, 3 * 16)), (3, 4, 4)).shape == (2, 3, 4, 4)


def test_filter_larger_than_image_is_refused():
    with pytest.raises(ValueError, match="larger than the image"):
        correlate(np.zeros((1, 1, 4, 4)), np.zeros((1, 1, 5, 5)))
