"""Multi-class CSVMs: every sub-problem's fitted attributes, and the batched prediction path."""

from functools import partial

import numpy as np
import pytest

from csvm import KernelCSVM, LinearCSVM
from csvm.model.conv import correlate
from csvm.model.kernels import kernel_matrix
from csvm.model.prediction import decisions as batched_decisions
from tests._synthetic import square_blobs

blobs = partial(square_blobs, n_per_class=20, classes=(3, 5, 8), dtype=np.float32, shuffle=True)


def _kcsvm(**kw):
    params = dict(image_shape=(10, 10), filter_shape=(3, 3), n_iter=3, C=10.0, random_state=0)
    return KernelCSVM(**{**params, **kw})


def _decision_from_attributes(clf, X, X_train, k):
    """Classifier k's decision rebuilt from support_, dual_coef_ and intercept_ alone."""
    f = clf.filters_[k][:, None].astype(np.float64)
    Z = correlate(X[:, None].astype(np.float64), f).reshape(len(X), -1)
    Z_sv = correlate(X_train[clf.support_[k], None].astype(np.float64), f)
    K = kernel_matrix(Z, Z_sv.reshape(len(Z_sv), -1), kernel="poly", degree=2)
    return K @ clf.dual_coef_[k] + clf.intercept_[k]


@pytest.mark.parametrize("strategy", ["ovo", "ovr"])
def test_three_class_kcsvm_attributes_hold_every_sub_problem(strategy):
    X, y = blobs()
    clf = _kcsvm(multi_class=strategy).fit(X, y)
    assert len(clf.support_) == len(clf.dual_coef_) == len(clf.pairs_) == 3
    assert clf.intercept_.shape == (3,) and clf.n_support_.shape == (3,)
    assert not hasattr(clf, "coef_")  # kernel weights live in feature space, as for SVC
    per_pair = np.column_stack([m.decision_function(X[:, None]) for m in clf.estimators_])
    for k, (negative, positive) in enumerate(clf.pairs_):
        support, a = clf.support_[k], clf.dual_coef_[k]
        assert len(support) == len(a) == clf.n_support_[k] > 0
        # Indices into the training set: each support vector belongs to the pair, and the
        # sign of a_i = alpha_i y_i says which side it is on.
        assert np.all(y[support[a > 0]] == positive)
        if strategy == "ovo":
            assert np.all(y[support[a < 0]] == negative)
        else:
            assert negative == "rest" and np.all(y[support[a < 0]] != positive)
        np.testing.assert_allclose(
            _decision_from_attributes(clf, X, X, k), per_pair[:, k], rtol=1e-6, atol=1e-6
        )
    assert [p[1] for p in clf.pairs_] == ([5, 8, 8] if strategy == "ovo" else [3, 5, 8])


def test_three_class_lcsvm_coef_and_intercept_per_classifier():
    X, y = blobs()
    clf = LinearCSVM(
        image_shape=(10, 10), filter_shape=(3, 3), n_iter=2, multi_class="ovr", random_state=0
    ).fit(X, y)
    assert clf.coef_.shape == (3, 8 * 8) and clf.intercept_.shape == (3,)
    X64 = X[:, None].astype(np.float64)
    rebuilt = np.stack(
        [
            correlate(X64, clf.filters_[k][:, None]).reshape(len(X), -1) @ clf.coef_[k]
            + clf.intercept_[k]
            for k in range(3)
        ],
        axis=1,
    )
    np.testing.assert_allclose(rebuilt, clf.decision_function(X), rtol=1e-5, atol=1e-5)


def test_two_classes_keep_the_flat_layout():
    X, y = blobs(classes=(0, 1))
    clf = _kcsvm().fit(X, y)
    assert clf.support_.ndim == 1 and clf.dual_coef_.shape == clf.support_.shape
    assert isinstance(clf.intercept_, float) and clf.pairs_ == [(0, 1)]
    lin = LinearCSVM(image_shape=(10, 10), filter_shape=(3, 3), n_iter=2).fit(X, y)
    assert lin.coef_.shape == (64,) and isinstance(lin.intercept_, float)


# -- the batched prediction path (csvm.model.prediction) ----------------------------------------
@pytest.fixture(scope="module")
def digits10():
    """Real digits, 10 classes (the built-in mnist-5k set): 300 to train, 1,000 to test."""
    from csvm.data import load_multiclass

    d = load_multiclass("mnist-5k", protocol=None, n_train=300)
    return d.X_train, d.y_train, d.X_test


def _per_model(clf, X):
    """The old path: each sub-problem's own float64 decision function, one at a time."""
    X4 = np.ascontiguousarray(X, dtype=np.float32)
    return np.column_stack([m.decision_function(X4) for m in clf.estimators_])


def test_ovo_predictions_equal_the_per_model_path(digits10):
    from csvm.model.multiclass import ovo_decision

    X, y, X_test = digits10
    clf = KernelCSVM(
        image_shape=(28, 28), filter_shape=(5, 5), n_iter=3, multi_class="ovo", random_state=0
    ).fit(X, y)
    old = _per_model(clf, X_test)
    assert old.shape == (1000, 45)
    expected = clf.classes_[np.argmax(ovo_decision(old, 10), axis=1)]
    np.testing.assert_array_equal(clf.predict(X_test), expected)
    new = batched_decisions(clf.estimators_, X_test)
    np.testing.assert_array_equal(np.sign(new), np.sign(old))
    np.testing.assert_allclose(new, old, rtol=1e-4, atol=1e-4 * np.abs(old).max())


@pytest.mark.parametrize(
    "params",
    [
        {"kernel": "rbf", "gamma": 0.05, "regulariser": "dfo2", "lam": 0.1, "eta": 0.01},
        {"kernel": "linear", "eta": 0.01},
        {"kernel": "poly", "degree": 3, "eta": 0.001},
        {"n_filters": 2, "eta": 0.01},
    ],
)
def test_batched_decisions_match_for_every_kernel(params):
    X, y = blobs(classes=(0, 1, 2, 3))
    clf = _kcsvm(**params).fit(X, y)
    old = _per_model(clf, X[:, None])
    new = batched_decisions(clf.estimators_, X[:, None])
    np.testing.assert_array_equal(np.sign(new), np.sign(old))
    np.testing.assert_allclose(new, old, rtol=1e-4, atol=1e-5 * np.abs(old).max())


def test_colour_images_and_one_vs_rest():
    X, y = blobs(classes=(0, 1, 2))
    X3 = np.stack([X, X[:, ::-1], X.transpose(0, 2, 1)], axis=1)  # (n, 3, 10, 10)
    clf = _kcsvm(image_shape=(3, 10, 10), multi_class="ovr", eta=0.01).fit(X3, y)
    np.testing.assert_allclose(
        batched_decisions(clf.estimators_, X3), _per_model(clf, X3), rtol=1e-4, atol=1e-6
    )
    maps = clf.feature_maps(X3)
    assert maps.shape == (60, 3, 1, 8, 8) and maps.dtype == np.float32
    for k, m in enumerate(clf.estimators_):
        np.testing.assert_allclose(maps[:, k], correlate(X3, m.filters), rtol=1e-5, atol=1e-5)


def test_lcsvm_batched_decisions_equal_per_model():
    X, y = blobs(classes=(0, 1, 2, 3))
    clf = LinearCSVM(image_shape=(10, 10), filter_shape=(3, 3), n_iter=2, random_state=0)
    clf.fit(X, y)
    old = _per_model(clf, X[:, None])
    np.testing.assert_allclose(batched_decisions(clf.estimators_, X[:, None]), old, atol=1e-5)


def test_chunks_and_the_round_off_bound(monkeypatch, digits10):
    """The round-off bound really bounds the float32 error, for one chunk and for tiny
    ones; decisions refined in float64 match the per-model path to float64 precision."""
    import csvm.model.prediction as prediction

    X, y, X_test = digits10
    keep = np.isin(y, [1, 4, 7, 9])
    clf = KernelCSVM(image_shape=(28, 28), filter_shape=(5, 5), n_iter=2, random_state=1)
    clf.fit(X[keep], y[keep])
    old = _per_model(clf, X_test)
    whole, bound = prediction._kernel_group(clf.estimators_, X_test)
    assert np.all(np.abs(whole - old) <= bound)
    monkeypatch.setattr(prediction, "_CHUNK_BYTES", 5000)
    assert prediction._chunk_rows(100, 1000) < 10
    chunked, _ = prediction._kernel_group(clf.estimators_, X_test)
    # BLAS blocks a few rows differently from many: equal within the float32 bound.
    assert np.all(np.abs(chunked - old) <= bound)
    monkeypatch.setattr(prediction, "_F32_REL", 1.0)  # every decision is "doubtful"
    refined = batched_decisions(clf.estimators_, X_test)
    np.testing.assert_allclose(refined, old, rtol=1e-10, atol=1e-10)
