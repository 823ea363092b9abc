"""The learned stack beside HOG (issue 35): its output is the stack's maps then HOG's
descriptor, its RBF kernel is the product of the two RBFs, and its dT/dθ (the HOG half
held fixed) agrees with central differences of T, each T an exact SVM solve."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone

from csvm.model.hog import hog_features
from csvm.model.hog_product import HOGAppended, HOGProductCSVM, cached_hog
from csvm.model.kernel_state import solve_state, state_gradient
from csvm.model.layers import Network, parse_layers
from csvm.model.solve_settings import SolveSettings
from tests._fd import central_difference, rel_error

LAYERS = "3x3x2-relu-avg2-bn2-sqrt"


def _images(n=24, side=12, seed=6):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 1, side, side))
    y = np.where(np.arange(n) % 2 == 0, 1, -1)
    X[y > 0, 0, :, side // 2] += 0.8  # a vertical bar for one class, a horizontal one for the other
    X[y < 0, 0, side // 2, :] += 0.8
    return X, y


def test_the_output_is_the_stacks_maps_then_hogs_descriptor():
    X, _ = _images()
    specs = parse_layers(LAYERS)
    plain, net = Network(specs, X.shape[1:]), HOGAppended(specs, X.shape[1:])
    theta = plain.initial(np.random.default_rng(0))
    out = net.forward(X, theta)
    maps = plain.forward(X, theta).reshape(len(X), -1)
    assert out.shape == (len(X), *net.output_shape)
    assert net.output_shape[0] == maps.shape[1] + hog_features(X).shape[1]
    np.testing.assert_array_equal(out[:, : maps.shape[1], 0, 0], maps)
    np.testing.assert_allclose(out[:, maps.shape[1] :, 0, 0], hog_features(X))


def test_its_rbf_kernel_is_the_product_of_the_two_rbfs():
    X, _ = _images()
    specs = parse_layers(LAYERS)
    net, plain = HOGAppended(specs, X.shape[1:]), Network(specs, X.shape[1:])
    theta = plain.initial(np.random.default_rng(1))
    Z = net.forward(X, theta).reshape(len(X), -1)
    M, H = plain.forward(X, theta).reshape(len(X), -1), hog_features(X)

    def rbf(A, gamma=0.3):
        return np.exp(-gamma * ((A[:, None] - A[None]) ** 2).sum(-1))

    np.testing.assert_allclose(rbf(Z), rbf(M) * rbf(H), rtol=1e-10)


@pytest.mark.parametrize("kernel,params", [("rbf", {"gamma": 0.2}), ("poly", {"degree": 2})])
def test_outer_objective_gradient_against_finite_differences(kernel, params):
    X, y = _images()
    net = HOGAppended(parse_layers(LAYERS), X.shape[1:])
    rng = np.random.default_rng(7)
    theta = net.initial(rng) + 0.05 * rng.standard_normal(sum(net.sizes))
    settings = SolveSettings.from_keywords(
        kernel=kernel, **params, C=1.0, regulariser="dfo2", lam=0.3, svm_tol=1e-12
    )
    s = settings

    def objective(t):
        state, _ = solve_state(X, y, t, s.kernel, s.solver_C, s.regulariser, s.lam, s.svm_tol,
                               network=net)  # fmt: skip
        return state

    analytic = state_gradient(X, objective(theta), s.kernel, s.regulariser, s.lam)
    numeric = central_difference(lambda t: objective(t).objective, theta)
    assert rel_error(analytic, numeric) < 1e-4


def _clf(**params):
    return HOGProductCSVM(
        image_shape=(12, 12), layers=LAYERS, filter_init="hog", kernel="rbf", gamma=0.05,
        C=10.0, regulariser="dfo2", lam=0.1, random_state=0, **{"n_iter": 3, **params},
    )  # fmt: skip


def test_it_fits_predicts_clones_and_pickles():
    X, y = _images(40)
    clf = _clf().fit(X.reshape(len(X), -1), y)
    assert clf.score(X.reshape(len(X), -1), y) >= 0.9
    maps = clf.feature_maps(X.reshape(len(X), -1))
    assert maps.shape == (len(X), *clf.network_.output_shape)
    again = clone(clf)
    assert type(again) is HOGProductCSVM and again.get_params() == clf.get_params()
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(
        restored.predict(X.reshape(len(X), -1)), clf.predict(X.reshape(len(X), -1))
    )


def test_learning_moves_the_filters_and_keeps_hogs_half():
    X, y = _images(40)
    flat = X.reshape(len(X), -1)
    clf = _clf().fit(flat, y)
    start = _clf(eta=0.0, n_iter=1).fit(flat, y)
    assert not np.allclose(clf.layer_filters_[0][0], start.layer_filters_[0][0])
    n = clf.network_.n_learned
    np.testing.assert_allclose(
        clf.feature_maps(flat)[:, n:, 0, 0], start.feature_maps(flat)[:, n:, 0, 0]
    )


def test_the_descriptors_are_kept_by_the_images_bytes():
    X, _ = _images()
    first = cached_hog(X)
    assert cached_hog(X.copy()) is first  # equal images: the kept descriptors
    other = X.copy()
    other[0, 0, 0, 0] += 1.0
    assert cached_hog(other) is not first
    np.testing.assert_array_equal(cached_hog(X[:3]), hog_features(X[:3]))


def test_without_a_stack_it_says_what_to_give():
    X, y = _images(20)
    with pytest.raises(ValueError, match="needs a stack of layers"):
        HOGProductCSVM(image_shape=(12, 12), kernel="rbf").fit(X.reshape(len(X), -1), y)
