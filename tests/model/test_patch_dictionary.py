"""PatchDictionary: patches, whitening, k-means atoms, triangle codes, quadrant pooling."""

import numpy as np
import pytest
from sklearn.base import clone

from csvm import ImageShapeWarning
from csvm.model.patch_dictionary import PatchDictionary


def _images(n=12, c=3, h=10, w=9, seed=0):
    return np.random.default_rng(seed).random((n, c, h, w)).astype(np.float32)


def _small(**params):
    return PatchDictionary(n_atoms=6, patch_size=4, n_patches=3000, **params)


def test_transform_is_four_quadrants_of_atoms_in_float32_and_flat_rows_match_images():
    X = _images()
    d = _small().fit(X)
    F = d.transform(X)
    assert F.shape == (12, 24) and F.dtype == np.float32
    flat = _small(image_shape=(3, 10, 9)).fit(X.reshape(12, -1))
    np.testing.assert_array_equal(flat.transform(X.reshape(12, -1)), F)


def test_codes_are_the_triangle_of_each_normalised_whitened_patch():
    X = _images(n=3)
    d = _small().fit(X)
    codes = d.encode(X)  # (n, h, w, atoms)
    assert codes.shape == (3, 7, 6, 6)
    for i, r, c in [(0, 0, 0), (1, 3, 2), (2, 6, 5)]:
        x = X[i, :, r : r + 4, c : c + 4].ravel().astype(np.float64)  # channel, row, column
        x = (x - x.mean()) / np.sqrt(x.var() + d.contrast_eps)
        z = (x - d.patch_mean_) @ d.whitening_
        dist = np.linalg.norm(z - d.atoms_.astype(np.float64), axis=1)
        np.testing.assert_allclose(codes[i, r, c], np.maximum(0, dist.mean() - dist), atol=1e-4)
    assert (codes >= 0).all() and (codes > 0).any()


def test_pooling_sums_the_codes_of_each_quadrant_and_standardises_on_the_training_images():
    X = _images()
    d = _small().fit(X)
    codes = d.encode(X)  # positions 7 x 6: quadrants rows 0-3 / 4-6, columns 0-2 / 3-5
    quadrants = [codes[:, :4, :3], codes[:, :4, 3:], codes[:, 4:, :3], codes[:, 4:, 3:]]
    pooled = np.concatenate([q.sum(axis=(1, 2)) for q in quadrants], axis=1)
    np.testing.assert_allclose(d._pooled(X), pooled, rtol=1e-5)
    F = d.transform(X)
    np.testing.assert_allclose(F.mean(axis=0), 0, atol=1e-4)
    np.testing.assert_allclose(d.feature_scale_, pooled.std(axis=0) + 0.01, rtol=1e-4)


def test_whitening_makes_the_patch_covariance_the_identity_when_eps_is_tiny():
    X = _images(n=30, c=1, h=12, w=12)
    d = PatchDictionary(n_atoms=4, patch_size=3, n_patches=20_000, whiten_eps=1e-9).fit(X)
    P = d._patches(X).reshape(-1, 9).astype(np.float64)
    Z = (P - d.patch_mean_) @ d.whitening_
    # each normalised patch sums to zero, so one direction has no variance at all
    cov = np.cov(Z, rowvar=False)
    eig = np.sort(np.linalg.eigvalsh(cov))
    np.testing.assert_allclose(eig[1:], 1.0, atol=0.05)
    assert eig[0] < 1e-3


def test_the_same_random_state_gives_the_same_atoms_and_another_gives_others():
    X = _images()
    a, b = _small(random_state=3).fit(X), _small(random_state=3).fit(X)
    np.testing.assert_array_equal(a.atoms_, b.atoms_)
    assert not np.allclose(a.atoms_, _small(random_state=4).fit(X).atoms_)
    assert clone(a).get_params() == a.get_params()


@pytest.mark.parametrize(
    "params, X, message",
    [
        ({"patch_size": 11}, _images(), "patch_size 11 is larger than the images"),
        ({}, np.zeros((4, 30, 3)), "patch_size 4 is larger than the images \\(30, 3\\)"),
        (
            {"image_shape": (3, 5, 5)},
            np.zeros((4, 30)),
            "X has 30 features per sample but image_shape=\\(3, 5, 5\\) needs 75",
        ),
    ],
)
def test_bad_input_is_refused_with_a_message(params, X, message):
    with pytest.raises(ValueError, match=message):
        PatchDictionary(n_atoms=2, patch_size=params.pop("patch_size", 4), **params).fit(X)


def test_transform_refuses_images_of_another_shape():
    d = _small().fit(_images())
    with pytest.raises(
        ValueError, match="expecting 270 features as input \\(images of shape \\(3, 10, 9\\)\\)"
    ):
        d.transform(_images(h=11))


def test_a_flat_grey_image_may_be_given_as_height_and_width():
    X = _images(c=1)
    d = _small(image_shape=(10, 9)).fit(X.reshape(12, -1))
    assert d.image_shape_ == (1, 10, 9)
    np.testing.assert_array_equal(d.transform(X.reshape(12, -1)), _small().fit(X).transform(X))


@pytest.mark.parametrize("name, value", [("n_atoms", 0), ("patch_size", 0), ("whiten_eps", 0.0)])
def test_parameters_are_checked_with_scikit_learns_messages(name, value):
    with pytest.raises(ValueError, match=f"The '{name}' parameter of PatchDictionary must be"):
        PatchDictionary(**{name: value}).fit(_images())


def test_flat_rows_without_an_image_shape_are_read_as_every_estimator_reads_them():
    # a square row is a grey image; any other is one row of pixels, with the warning
    # that states the rule (then too small for a patch)
    X = _images(c=1, h=9, w=9)
    d = _small().fit(X.reshape(12, -1))
    assert d.image_shape_ == (1, 9, 9)
    np.testing.assert_array_equal(d.transform(X.reshape(12, -1)), _small().fit(X).transform(X))
    with pytest.warns(ImageShapeWarning, match="not a perfect square"):
        with pytest.raises(ValueError, match="patch_size 4 is larger than the images \\(1, 30\\)"):
            _small().fit(np.zeros((4, 30)))


def test_fit_transform_gives_what_fit_then_transform_gives():
    X = _images()
    np.testing.assert_array_equal(_small().fit_transform(X), _small().fit(X).transform(X))
