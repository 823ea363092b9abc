"""HOGSVC: its descriptors are scikit-image's, its kernels are the named ones, and it is a
scikit-learn estimator."""

import numpy as np
import pytest
from skimage.feature import hog
from sklearn.datasets import load_digits
from sklearn.metrics.pairwise import chi2_kernel, rbf_kernel
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import check_param_validation, parametrize_with_checks

from csvm import HOGSVC
from csvm.model.hog import hog_features, intersection_kernel, scale_gamma

pytestmark = pytest.mark.filterwarnings("ignore::csvm.ImageShapeWarning")


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:400] / 16.0, y[:400]


def test_hog_features_equal_scikit_image():
    rng = np.random.default_rng(0)
    X = rng.random((5, 1, 28, 28))
    opts = {"orientations": 8, "pixels_per_cell": (7, 7), "cells_per_block": (2, 2)}
    got = hog_features(X, block_norm="L1", **opts)
    want = np.stack([hog(x[0], block_norm="L1", **opts) for x in X])
    np.testing.assert_array_equal(got, want)
    colour = rng.random((3, 3, 24, 24))
    want = np.stack(
        [hog(x, channel_axis=0, pixels_per_cell=(8, 8), cells_per_block=(3, 3)) for x in colour]
    )
    got = hog_features(colour, pixels_per_cell=(8, 8), cells_per_block=(3, 3))
    np.testing.assert_array_equal(got, want)


def test_small_images_are_zero_padded_to_one_block():
    X = np.random.default_rng(1).random((2, 1, 3, 5))
    padded = np.zeros((2, 8, 8))
    padded[:, :3, :5] = X[:, 0]
    np.testing.assert_array_equal(
        hog_features(X),
        np.stack([hog(p, pixels_per_cell=(4, 4), cells_per_block=(2, 2)) for p in padded]),
    )


def test_estimator_features_are_scikit_image_hog(digits):
    X, y = digits
    clf = HOGSVC(image_shape=(8, 8), product=False, pixels_per_cell=(4, 4)).fit(X, y)
    want = np.stack(
        [hog(x.reshape(8, 8), pixels_per_cell=(4, 4), cells_per_block=(2, 2)) for x in X[:10]]
    )
    np.testing.assert_array_equal(clf.hog_features(X[:10]), want)


def test_intersection_kernel_is_the_sum_of_minima():
    rng = np.random.default_rng(2)
    A, B = rng.random((7, 5)), rng.random((4, 5))
    want = np.array([[np.minimum(a, b).sum() for b in B] for a in A])
    np.testing.assert_allclose(intersection_kernel(A, B), want)
    K = intersection_kernel(A)
    assert np.linalg.eigvalsh(K).min() > -1e-10  # positive semi-definite on histograms


@pytest.mark.parametrize("kind", ["rbf", "chi2", "intersection"])
def test_decision_is_svc_on_the_named_kernel(digits, kind):
    X, y = digits
    Xb, yb = X[y < 2], y[y < 2]
    clf = HOGSVC(image_shape=(8, 8), hog_kernel=kind, product=False, gamma=0.5, C=3.0)
    clf.fit(Xb[:60], yb[:60])
    H, Ht = clf.hog_features(Xb[:60]), clf.hog_features(Xb[60:])
    kernel = {
        "rbf": lambda A, B: rbf_kernel(A, B, gamma=0.5),
        "chi2": lambda A, B: chi2_kernel(A, B, gamma=0.5),
        "intersection": intersection_kernel,
    }[kind]
    svc = SVC(kernel=kernel, C=3.0).fit(H, yb[:60])
    np.testing.assert_allclose(clf.decision_function(Xb[60:]), svc.decision_function(Ht), atol=1e-6)


def test_product_kernel_is_raw_rbf_times_hog_rbf(digits):
    X, y = digits
    clf = HOGSVC(image_shape=(8, 8), product=True, gamma=0.3, raw_gamma=0.05, C=2.0)
    clf.fit(X[:200], y[:200])
    H, Ht = clf.hog_features(X[:200]), clf.hog_features(X[200:])

    def product(A, B):
        return rbf_kernel(A[:, :64], B[:, :64], gamma=0.05) * rbf_kernel(
            A[:, 64:], B[:, 64:], gamma=0.3
        )

    svc = SVC(kernel=product, C=2.0).fit(np.hstack([X[:200], H]), y[:200])
    np.testing.assert_allclose(
        clf.decision_function(X[200:]),
        svc.decision_function(np.hstack([X[200:], Ht])),
        atol=1e-6,
    )


def test_scale_gammas(digits):
    X, _ = digits
    H = hog_features(X.reshape(-1, 1, 8, 8))
    assert scale_gamma(H, "rbf") == pytest.approx(1 / (H.shape[1] * H.var()))
    d = -np.mean(np.sum((H[:, None] - H[None]) ** 2 / (H[:, None] + H[None] + 1e-300), -1))
    # The chi-squared scale is one over the mean distance between different rows.
    assert 1 / scale_gamma(H, "chi2") == pytest.approx(-d * len(H) / (len(H) - 1), rel=1e-6)


def test_learns_digits(digits):
    X, y = digits
    for kind in ("rbf", "chi2", "intersection"):
        clf = HOGSVC(image_shape=(8, 8), hog_kernel=kind, product=False, C=10).fit(X[:300], y[:300])
        assert clf.score(X[300:], y[300:]) > 0.7  # 8x8 digits: one HOG block


@parametrize_with_checks([HOGSVC()])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_every_parameter_is_validated_with_sklearn_messages():
    check_param_validation("HOGSVC", HOGSVC())
