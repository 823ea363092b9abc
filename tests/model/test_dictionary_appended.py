"""add_dictionary: a patch dictionary appended to a fitted K-CSVM's stack, its SVM solved
again on both (against LIBSVM on the concatenated features)."""

import copy
import pickle

import numpy as np
import pytest
from sklearn.svm import SVC

from csvm import KernelCSVM
from csvm.model.dictionary_appended import (
    DictionaryAppended,
    add_dictionary,
    mean_squared_distance,
)
from csvm.model.patch_dictionary import PatchDictionary
from csvm.model.virtual import SHIFTS_4, add_virtual, mirror_images


def _data(n=40, rows=12, seed=0):
    rng = np.random.default_rng(seed)
    X, y = rng.random((n, rows, 12)).astype(np.float32), np.repeat([0, 1], n // 2)
    X[y == 1, 3:9, 3:9] += 0.3
    return X, y


def _stack(**params):
    return KernelCSVM(layers="3x3x4-relu-avg2", kernel="rbf", gamma=0.05, C=10.0,
                      n_iter=2, random_state=0, **params)  # fmt: skip


def _dictionary():
    return PatchDictionary(n_atoms=8, patch_size=4, n_patches=3000)


def test_mean_squared_distance_is_the_mean_over_pairs_of_distinct_rows():
    F = np.array([[0.0], [1.0], [3.0]])
    # distinct pairs: 1, 9, 4 (each drawn about equally often)
    assert abs(mean_squared_distance(F) - 14 / 3) < 0.3
    assert mean_squared_distance(np.ones((5, 3))) == 0.0
    with pytest.raises(ValueError, match="two rows"):
        mean_squared_distance(np.ones((1, 3)))


def test_the_svm_is_libsvm_on_the_maps_and_the_scaled_dictionary_features():
    X, y = _data()
    clf = _stack().fit(X, y)
    maps = clf.estimators_[0].features(clf._images(X, reset=False)).reshape(len(X), -1)
    add_dictionary(clf, X, y, _dictionary(), weight=0.5)
    D = clf.dictionary_.transform(X[:, None])
    scale = clf.dictionary_scales_[0]
    # the scale makes the dictionary's mean squared distance half the maps'
    ratio = mean_squared_distance(scale * D) / mean_squared_distance(maps)
    assert ratio == pytest.approx(0.5, rel=1e-4)
    Z = np.hstack([maps, scale * D])
    ref = SVC(kernel="rbf", gamma=0.05, C=10.0, tol=clf.svm_tol).fit(Z, np.where(y == 1, 1, -1))
    np.testing.assert_allclose(clf.decision_function(X), ref.decision_function(Z), atol=1e-3)
    assert sorted(clf.support_.tolist()) == sorted(ref.support_.tolist())


def test_forward_appends_the_dictionary_to_the_inner_networks_output():
    X, y = _data()
    clf = add_dictionary(_stack().fit(X, y), X, y, _dictionary())
    model = clf.estimators_[0]
    net = model.network
    assert isinstance(net, DictionaryAppended)
    X4 = X[:, None]
    out = net.forward(X4, model.theta)
    inner = net.inner.forward(X4, model.theta)
    n_inner = int(np.prod(inner.shape[1:]))
    assert out.shape == (len(X), n_inner + 32, 1, 1) and net.output_shape == out.shape[1:]
    np.testing.assert_allclose(out[:, :n_inner, 0, 0], inner.reshape(len(X), -1))
    np.testing.assert_allclose(out[:, n_inner:, 0, 0], net.scale * clf.dictionary_.transform(X4),
                               rtol=1e-6)  # fmt: skip
    assert net.unpack(model.theta)[0].shape == net.inner.unpack(model.theta)[0].shape


def test_stacked_planes_are_read_as_channels():
    X, y = _data(rows=36)  # three 12 x 12 planes stacked
    clf = add_dictionary(_stack().fit(X, y), X, y, _dictionary(), planes=3)
    assert clf.dictionary_.image_shape_ == (3, 12, 12)
    assert clf.score(X, y) > 0.9


def test_virtual_copies_go_through_the_dictionary_and_the_model_pickles():
    X, y = _data()
    clf = add_dictionary(_stack().fit(X, y), X, y, _dictionary())
    clf = add_virtual(clf, X, y, SHIFTS_4, mirror=True)
    model = clf.estimators_[0]
    mirrored = np.flatnonzero(clf.support_mirrored_)
    assert len(mirrored)
    k = mirrored[0]
    image = mirror_images(X[clf.support_[k]][None, None])
    expected = model.network.forward(image, model.theta).ravel()
    np.testing.assert_allclose(model.Z_sv[k].ravel(), expected, rtol=1e-5)
    again = pickle.loads(pickle.dumps(copy.deepcopy(clf)))
    np.testing.assert_array_equal(again.predict(X), clf.predict(X))


def test_bad_uses_are_refused_with_a_message():
    X, y = _data()
    with pytest.raises(TypeError, match="needs a fitted KernelCSVM"):
        add_dictionary(SVC().fit(X.reshape(len(X), -1), y), X, y)
    plain = KernelCSVM(filter_shape=(3, 3), kernel="rbf", gamma=0.05, n_iter=1).fit(X, y)
    with pytest.raises(ValueError, match="stack of layers"):
        add_dictionary(plain, X, y)
    clf = _stack().fit(X, y)
    with pytest.raises(ValueError, match="12 rows do not split into 5 planes"):
        add_dictionary(clf, X, y, _dictionary(), planes=5)
    with pytest.raises(ValueError, match="weight must be greater than 0"):
        add_dictionary(clf, X, y, _dictionary(), weight=0)
    add_dictionary(clf, X, y, _dictionary())
    with pytest.raises(ValueError, match="already has a patch dictionary"):
        add_dictionary(clf, X, y, _dictionary())
    model = clf.estimators_[0]
    with pytest.raises(NotImplementedError, match="predicts only"):
        model.network.forward(X[:, None], model.theta, keep=True)
    with pytest.raises(NotImplementedError, match="predicts only"):
        model.network.backward(X[:, None], model.theta, np.ones((len(X), 1)))


def test_every_sub_problem_of_several_classes_gets_its_own_scale_on_the_same_atoms():
    rng = np.random.default_rng(1)
    X, y = rng.random((45, 12, 12)).astype(np.float32), np.repeat([0, 1, 2], 15)
    X[y == 1, 2:6, 2:6] += 0.4
    X[y == 2, 6:10, 6:10] += 0.4
    clf = add_dictionary(_stack().fit(X, y), X, y, _dictionary())
    assert len(clf.dictionary_scales_) == len(clf.estimators_) == 3
    assert all(m.network.dictionary is clf.dictionary_ for m in clf.estimators_)
    assert all(s > 0 for s in clf.dictionary_scales_)
    assert clf.score(X, y) > 0.9
