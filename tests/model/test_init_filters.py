"""``init_filters``: a given first filter instead of the random start."""

import numpy as np
import pytest
from sklearn.svm import SVC

from csvm import KernelCSVM, LinearCSVM
from csvm.model.conv import correlate


def _data(n=40, classes=2, channels=None, seed=0):
    rng = np.random.default_rng(seed)
    shape = (n, 9, 9) if channels is None else (n, channels, 9, 9)
    X = rng.random(shape) * 0.6
    y = np.arange(n) % classes
    for c in range(classes):
        X[y == c, ..., 1 + 2 * c : 4 + 2 * c, 2:5] += 0.4
    return X, y


def _gaussian(size=3, sigma=1.0):
    r = np.arange(size) - (size - 1) / 2
    g = np.exp(-(r[:, None] ** 2 + r[None, :] ** 2) / (2 * sigma**2))
    return g / g.sum()


def test_fixed_filter_svm_equals_kcsvm_with_zero_eta_started_there():
    """The filter lab's claim: an SVM on the maps of a fixed filter is K-CSVM(eta=0)."""
    X, y = _data()
    f = _gaussian()
    kw = {"kernel": "poly", "degree": 2, "gamma": 0.5, "coef0": 1.0, "C": 1.0}
    clf = KernelCSVM(
        image_shape=(9, 9), eta=0.0, n_iter=3, init_filters=f, svm_tol=1e-10, **kw
    ).fit(X, y)
    np.testing.assert_array_equal(clf.filters_[0, 0], f)
    assert clf.filter_shape_ == (3, 3)  # taken from init_filters (filter_shape=None)
    Z = correlate(X[:, None].astype(np.float32), f[None, None].astype(np.float32))
    svc = SVC(tol=1e-10, **kw).fit(Z.reshape(len(X), -1), y)
    np.testing.assert_allclose(
        clf.decision_function(X), svc.decision_function(Z.reshape(len(X), -1)), atol=1e-4
    )
    assert clf.history_[0]["filter_norm"] == pytest.approx(np.linalg.norm(f))


@pytest.mark.parametrize("cls", [KernelCSVM, LinearCSVM])
def test_every_layout_of_one_filter_gives_the_same_run(cls):
    X, y = _data()
    f = _gaussian()
    runs = [
        cls(image_shape=(9, 9), n_iter=2, init_filters=g, random_state=0).fit(X, y)
        for g in (f, f[None], f[None, None], f.tolist())
    ]
    for other in runs[1:]:
        np.testing.assert_array_equal(other.filters_, runs[0].filters_)
    # The run starts where it was told to, whatever the seed.
    seeded = cls(image_shape=(9, 9), n_iter=2, init_filters=f, random_state=5).fit(X, y)
    np.testing.assert_array_equal(seeded.filters_, runs[0].filters_)
    random_start = cls(image_shape=(9, 9), n_iter=2, filter_shape=(3, 3), random_state=0)
    assert not np.array_equal(random_start.fit(X, y).filters_, runs[0].filters_)


def test_lcsvm_first_svm_step_uses_the_given_filter():
    X, y = _data()
    f = _gaussian()
    seen = []
    LinearCSVM(image_shape=(9, 9), n_iter=1, init_filters=f).fit(X, y, callback=seen.append)
    assert seen[0]["step"] == "svm"
    np.testing.assert_array_equal(seen[0]["filters"], f[None, None])


def test_every_sub_problem_starts_from_the_given_filters():
    X, y = _data(n=45, classes=3)
    f = np.stack([_gaussian(), _gaussian(sigma=0.5)])
    clf = KernelCSVM(image_shape=(9, 9), n_filters=2, eta=0.0, n_iter=1, C=1.0, init_filters=f)
    clf.fit(X, y)
    assert clf.filters_.shape == (3, 2, 3, 3)
    for row in clf.filters_:
        np.testing.assert_array_equal(row, f)


def test_colour_filters_and_the_array_is_not_modified():
    X, y = _data(channels=3)
    f = np.random.default_rng(1).random((1, 3, 3, 3))
    before = f.copy()
    clf = KernelCSVM(image_shape=(3, 9, 9), n_iter=2, eta=0.01, C=1.0, init_filters=f)
    clf.fit(X, y)
    assert clf.filters_.shape == (1, 1, 3, 3, 3)
    np.testing.assert_array_equal(f, before)


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"init_filters": np.ones((3, 3)), "filter_shape": (5, 5)}, r"need \(1, 1, 5, 5\)"),
        ({"init_filters": np.ones((2, 3, 3))}, r"n_filters=1"),
        ({"init_filters": np.ones((3, 3)), "n_filters": 2}, r"need \(2, 1, 3, 3\)"),
        ({"init_filters": np.ones(9)}, r"\(p, q\), \(n_filters, p, q\) or"),
        ({"init_filters": np.full((3, 3), np.nan)}, "NaN or infinite"),
        ({"init_filters": np.ones((10, 10))}, "larger than the image"),
    ],
)
@pytest.mark.parametrize("cls", [KernelCSVM, LinearCSVM])
def test_bad_initial_filters_are_refused(cls, kw, match):
    X, y = _data()
    with pytest.raises(ValueError, match=match):
        cls(image_shape=(9, 9), n_iter=1, **kw).fit(X, y)


def test_grey_layout_for_colour_images_is_refused():
    X, y = _data(channels=3)
    with pytest.raises(ValueError, match=r"3 channels: pass \(n_filters, 3, p, q\)"):
        KernelCSVM(image_shape=(3, 9, 9), n_iter=1, init_filters=np.ones((1, 3, 3))).fit(X, y)
