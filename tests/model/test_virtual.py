"""Virtual support vectors: shifted images, and the second SVM solve of every sub-problem."""

import copy
from functools import partial

import numpy as np
import pytest
from scipy import ndimage

from csvm import LinearCSVM
from csvm.model.conv import correlate
from csvm.model.kernels import kernel_matrix
from csvm.model.prediction import labels_from_decision
from csvm.model.virtual import (
    SHIFTS_4,
    SHIFTS_8,
    add_virtual,
    mirror_images,
    predict_shifted,
    refit_virtual,
    shift_images,
    shifted_decision,
)
from tests._synthetic import small_kcsvm as _kcsvm
from tests._synthetic import square_blobs

blobs = partial(square_blobs, n_per_class=20, dtype=np.float32, shuffle=True)


@pytest.mark.parametrize("dy, dx", [(1, 0), (-1, 0), (0, 1), (0, -1), (2, -1), (-3, 3), (12, 0)])
def test_shift_images_moves_every_plane_and_fills_zeros_like_scipy(dy, dx):
    X = np.random.default_rng(0).random((4, 2, 10, 10)).astype(np.float32)
    expected = ndimage.shift(X, (0, 0, dy, dx), order=0, mode="constant", cval=0.0)
    got = shift_images(X, dy, dx)
    assert got.dtype == X.dtype and got.shape == X.shape
    np.testing.assert_array_equal(got, expected)


def _attribute_decision(clf, X_train, X, k):
    """Classifier k's decision rebuilt from support_, support_shift_, dual_coef_ and
    intercept_ alone: each support vector is its training row moved by its shift."""
    f = clf.filters_[k][:, None].astype(np.float64)
    rows, shifts = clf.support_[k], clf.support_shift_[k]
    sv = np.stack(
        [shift_images(X_train[r][None, None], dy, dx)[0] for r, (dy, dx) in zip(rows, shifts)]
    )
    Z = correlate(X[:, None].astype(np.float64), f).reshape(len(X), -1)
    Z_sv = correlate(sv.astype(np.float64), f).reshape(len(sv), -1)
    return kernel_matrix(Z, Z_sv, kernel="rbf", gamma=0.1) @ clf.dual_coef_[k] + clf.intercept_[k]


@pytest.mark.parametrize("strategy", ["ovo", "ovr"])
def test_refit_virtual_solves_each_sub_problem_on_its_support_vectors_and_their_shifts(strategy):
    X, y = blobs(classes=(3, 5, 8))
    clf = _kcsvm(multi_class=strategy, C=None).fit(X, y)  # hard margin
    before, finished = copy.deepcopy(clf), []
    assert refit_virtual(clf, X, SHIFTS_4, n_jobs=2, on_done=finished.append) is clf
    assert sorted(finished) == [0, 1, 2]
    assert [set(t) for t in clf.virtual_timings_] == [{"kernel", "svm"}] * 3
    allowed = {(0, 0), *SHIFTS_4}
    for k, (negative, positive) in enumerate(clf.pairs_):
        rows, shifts, a = clf.support_[k], clf.support_shift_[k], clf.dual_coef_[k]
        assert len(rows) == len(shifts) == len(a) == clf.n_support_[k]
        # Only the first fit's support vectors, moved by the given shifts, can support.
        assert set(rows) <= set(before.support_[k])
        assert {tuple(s) for s in shifts} <= allowed
        # The filter is kept; each support vector's sign is its source image's class.
        np.testing.assert_array_equal(clf.filters_[k], before.filters_[k])
        in_positive = y[rows] == positive if positive != "rest" else y[rows] != negative
        np.testing.assert_array_equal(a > 0, in_positive)
        # The attributes alone give the model's decision.
        np.testing.assert_allclose(
            _attribute_decision(clf, X, X, k), clf.estimators_[k].decision_function(X[:, None]),
            atol=1e-6,
        )  # fmt: skip
        # Hard margin: every image of the virtual set is on its own side.
        images = X[before.support_[k]][:, None]
        labels = np.where(before.dual_coef_[k] > 0, 1, -1)
        for dy, dx in [(0, 0), *SHIFTS_4]:
            side = np.sign(clf.estimators_[k].decision_function(shift_images(images, dy, dx)))
            np.testing.assert_array_equal(side, labels)
    assert clf.predict(X).shape == y.shape


def test_refit_virtual_keeps_the_flat_layout_of_two_classes():
    X, y = blobs()
    clf = refit_virtual(_kcsvm().fit(X, y), X, SHIFTS_8)
    assert clf.support_.ndim == 1 and clf.support_shift_.shape == (len(clf.support_), 2)
    assert clf.dual_coef_.shape == clf.support_.shape and np.ndim(clf.intercept_) == 0
    assert clf.decision_function(X).shape == y.shape


def test_refit_virtual_names_what_it_cannot_do():
    X, y = blobs()
    linear = LinearCSVM(image_shape=(10, 10), filter_shape=(3, 3), n_iter=1).fit(X, y)
    with pytest.raises(TypeError, match="KernelCSVM"):
        refit_virtual(linear, X)
    with pytest.raises(ValueError, match=r"\(0, 0\)"):
        refit_virtual(_kcsvm().fit(X, y), X, [(0, 0), (1, 0)])


def test_mirror_images_reverses_the_columns_of_every_plane():
    X = np.random.default_rng(0).random((3, 2, 4, 5)).astype(np.float32)
    got = mirror_images(X)
    assert got.flags.c_contiguous and got.dtype == X.dtype
    np.testing.assert_array_equal(got, np.flip(X, axis=-1))
    np.testing.assert_array_equal(mirror_images(got), X)


def test_refit_virtual_adds_the_mirrored_support_vectors():
    X, y = blobs()
    before = _kcsvm(C=None).fit(X, y)  # hard margin: every virtual image on its side
    clf = refit_virtual(copy.deepcopy(before), X, [(1, 0)], mirror=True)
    rows, shifts, mirrored = clf.support_, clf.support_shift_, clf.support_mirrored_
    assert len(rows) == len(shifts) == len(mirrored) == clf.n_support_[0]
    assert set(rows) <= set(before.support_)
    # A mirrored copy is never also shifted; the others come from the originals or (1, 0).
    assert all(tuple(s) == (0, 0) for s in shifts[mirrored])
    assert {tuple(s) for s in shifts[~mirrored]} <= {(0, 0), (1, 0)}
    images = X[before.support_][:, None]
    labels = np.where(before.dual_coef_ > 0, 1, -1)
    for moved in (images, shift_images(images, 1, 0), mirror_images(images)):
        np.testing.assert_array_equal(np.sign(clf.estimators_[0].decision_function(moved)), labels)
    # Without mirror=True nothing is mirrored.
    plain = refit_virtual(copy.deepcopy(before), X, [(1, 0)])
    assert not plain.support_mirrored_.any()


def test_add_virtual_solves_hog_again_on_its_support_vectors_and_their_copies():
    from csvm import HOGSVC

    X, y = blobs()
    X = X.reshape(len(X), -1)  # the flat rows the curves give HOG
    hog = HOGSVC(image_shape=(10, 10), product=False, C=1e6).fit(X, y)
    again = add_virtual(hog, X, y, [(1, 0)], mirror=True)
    assert again is not hog and again.gamma == hog.gamma_ == again.gamma_
    images = X[hog.support_].reshape(-1, 1, 10, 10)
    labels = y[hog.support_]
    # hard margin: each support vector, its shift and its mirror on its own side
    for moved in (images, shift_images(images, 1, 0), mirror_images(images)):
        np.testing.assert_array_equal(again.predict(moved.reshape(len(moved), -1)), labels)
    # its training set was those copies: its support vectors index into them
    assert again.support_.max() < 3 * len(hog.support_)
    # a K-CSVM goes through refit_virtual
    clf = add_virtual(_kcsvm().fit(X.reshape(-1, 10, 10), y), X.reshape(-1, 10, 10), y, mirror=True)
    assert clf.support_mirrored_.dtype == bool


@pytest.mark.parametrize("dy, dx", [(1, 0), (-1, 0), (0, 1), (-2, 1)])
def test_shift_images_moves_stacked_planes_each_on_its_own(dy, dx):
    # CIFAR-10's R, G, B planes stacked into one 96 x 32 image: a row must not cross planes
    X = np.random.default_rng(1).random((3, 1, 12, 4)).astype(np.float32)
    planes = X.reshape(3, 3, 4, 4)
    expected = ndimage.shift(planes, (0, 0, dy, dx), order=0, mode="constant", cval=0.0)
    got = shift_images(X, dy, dx, planes=3)
    assert got.shape == X.shape
    np.testing.assert_array_equal(got, expected.reshape(X.shape))
    if dy:  # one plane-blind shift would differ: rows cross from one plane to the next
        assert not np.array_equal(shift_images(X, dy, dx), got)
    with pytest.raises(ValueError, match="5 planes"):
        shift_images(X, dy, dx, planes=5)


def test_virtual_copies_shift_each_plane_of_a_stacked_image():
    X, y = blobs()
    before = _kcsvm(C=None).fit(X, y)  # hard margin: every virtual image on its side
    clf = refit_virtual(copy.deepcopy(before), X, [(1, 0)], planes=2)
    images = X[before.support_][:, None]
    labels = np.where(before.dual_coef_ > 0, 1, -1)
    moved = shift_images(images, 1, 0, planes=2)
    np.testing.assert_array_equal(np.sign(clf.estimators_[0].decision_function(moved)), labels)
    # the attributes name the shift and the planes it moved
    assert {tuple(s) for s in clf.support_shift_} <= {(0, 0), (1, 0)}
    assert clf.virtual_planes_ == 2
    # planes that do not split the rows are refused before any solve, with what to use
    with pytest.raises(ValueError, match="3 for CIFAR-10"):
        refit_virtual(copy.deepcopy(before), X, [(1, 0)], planes=3)


def test_add_virtual_shifts_each_plane_for_hog_too():
    from csvm import HOGSVC

    X, y = blobs()
    X = X.reshape(len(X), -1)  # the flat rows the curves give HOG
    hog = HOGSVC(image_shape=(10, 10), product=False, C=1e6).fit(X, y)
    again = add_virtual(hog, X, y, [(1, 0)], planes=2)
    images = X[hog.support_].reshape(-1, 10, 10)
    moved = shift_images(images, 1, 0, planes=2)  # (n, H, W): no channel axis
    np.testing.assert_array_equal(moved, shift_images(images[:, None], 1, 0, planes=2)[:, 0])
    # hard margin: each plane-shifted support vector on its own side
    np.testing.assert_array_equal(again.predict(moved.reshape(len(moved), -1)), y[hog.support_])


def test_add_virtual_refuses_the_null_shift_for_hog_as_for_a_kcsvm():
    from csvm import HOGSVC

    X, y = blobs()
    hog = HOGSVC(image_shape=(10, 10), product=False).fit(X.reshape(len(X), -1), y)
    with pytest.raises(ValueError, match=r"\(0, 0\)"):
        add_virtual(hog, X.reshape(len(X), -1), y, [(0, 0)])


@pytest.mark.parametrize("classes", [(3, 5), (3, 5, 8)])
def test_test_time_shifts_sum_the_decisions_of_each_image_and_its_moved_copies(classes):
    X, y = blobs(classes=classes)
    clf = _kcsvm().fit(X, y)
    plain = clf.decision_function(X)
    assert np.array_equal(shifted_decision(clf, X, []), plain)
    expected = plain + sum(clf.decision_function(shift_images(X, dy, dx)) for dy, dx in SHIFTS_4)
    np.testing.assert_allclose(shifted_decision(clf, X, SHIFTS_4), expected, rtol=1e-12)
    np.testing.assert_allclose(shifted_decision(clf, X, SHIFTS_4, decision=plain), expected)
    one_by_one = shifted_decision(clf, X, SHIFTS_8)
    assert np.array_equal(shifted_decision(clf, X, SHIFTS_8, n_jobs=2), one_by_one)  # same sum
    assert np.array_equal(predict_shifted(clf, X, []), clf.predict(X))
    assert np.array_equal(
        predict_shifted(clf, X, SHIFTS_4), labels_from_decision(clf.classes_, expected)
    )
    with pytest.raises(ValueError, match=r"\(0, 0\)"):
        shifted_decision(clf, X, [(0, 0)])  # the image itself is always counted once


def test_test_time_shifts_vote_back_an_image_moved_off_its_class_position():
    X, y = blobs(classes=(3, 5))
    clf = _kcsvm().fit(X, y)
    moved = shift_images(X, 0, 3)  # every square three pixels right of where it trained
    assert np.mean(clf.predict(moved) == y) < 0.8
    assert np.mean(predict_shifted(clf, moved, [(0, -3)]) == y) == 1.0
