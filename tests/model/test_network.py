"""Pooling, nonlinearities and stacks of layers (issue 19, items 1 and 2): forward passes
against direct definitions, every backward pass against central finite differences, and the
layered K-CSVM's dT/df for every layer's filters."""

import numpy as np
import pytest

from csvm import KernelCSVM
from csvm.model.conv import correlate, correlate_input_gradient
from csvm.model.kernelised import outer_objective
from csvm.model.layers import LayerSpec, Network, format_layers, parse_layers
from csvm.model.pooling import activate, activation_gradient, pool, pool_backward
from csvm.model.solve_settings import SolveSettings
from tests._fd import central_difference as _central_difference
from tests._fd import rel_error as _rel_error


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("size,stride", [(2, 2), (3, 2), (2, 1), (3, 3)])
def test_pooling_matches_its_definition(mode, size, stride):
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((2, 3, 9, 8))
    P, _ = pool(Z, mode, size, stride)
    reduce = np.mean if mode == "avg" else np.max
    h2, w2 = (9 - size) // stride + 1, (8 - size) // stride + 1
    assert P.shape == (2, 3, h2, w2)
    for i in range(h2):
        for j in range(w2):
            window = Z[:, :, i * stride : i * stride + size, j * stride : j * stride + size]
            np.testing.assert_allclose(P[:, :, i, j], reduce(window, axis=(-2, -1)))


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("size,stride", [(2, 2), (3, 2), (2, 1)])
def test_pooling_backward_against_finite_differences(mode, size, stride):
    rng = np.random.default_rng(1)
    Z = rng.standard_normal((2, 2, 7, 6))
    P, cache = pool(Z, mode, size, stride)
    W = rng.standard_normal(P.shape)
    numeric = _central_difference(lambda z: float(np.sum(W * pool(z, mode, size, stride)[0])), Z)
    np.testing.assert_allclose(pool_backward(W, cache), numeric, atol=1e-8)


@pytest.mark.parametrize("size,stride", [(2, 2), (3, 2), (2, 1)])
def test_max_pooling_sends_a_tied_windows_gradient_to_its_first_maximum(size, stride):
    # After a rectifier whole windows tie at 0: the gradient goes to the first tap in
    # row-major order, numpy's argmax rule, computed here from the copied windows.
    rng = np.random.default_rng(5)
    Z = np.maximum(rng.integers(-2, 2, size=(2, 3, 7, 6)).astype(np.float32), 0)
    P, cache = pool(Z, "max", size, stride)
    W = rng.standard_normal(P.shape).astype(np.float32)
    expected = np.zeros_like(Z)
    for i in range(P.shape[2]):
        for j in range(P.shape[3]):
            window = Z[:, :, i * stride : i * stride + size, j * stride : j * stride + size]
            first = window.reshape(*window.shape[:2], -1).argmax(axis=-1)
            for n, k in np.ndindex(*first.shape):
                a, b = divmod(int(first[n, k]), size)
                expected[n, k, i * stride + a, j * stride + b] += W[n, k, i, j]
    # Overlapping windows add into one pixel in another order: equal to float32 rounding.
    np.testing.assert_allclose(pool_backward(W, cache), expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["none", "abs", "relu"])
def test_activation_gradient(name):
    Z = np.random.default_rng(2).standard_normal((3, 2, 4, 4))
    W = np.random.default_rng(3).standard_normal(Z.shape)
    numeric = _central_difference(lambda z: float(np.sum(W * activate(z, name))), Z)
    np.testing.assert_allclose(activation_gradient(Z, W, name), numeric, atol=1e-8)


def test_correlate_input_gradient_is_the_adjoint_of_correlate():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((3, 2, 8, 7))
    f = rng.standard_normal((4, 2, 3, 2))
    V = rng.standard_normal(correlate(X, f).shape)
    lhs = np.sum(correlate(X, f) * V)
    rhs = np.sum(X * correlate_input_gradient(V, f, X.shape))
    assert abs(lhs - rhs) < 1e-10 * max(1.0, abs(lhs))


@pytest.mark.parametrize(
    "layers",
    ["3x3x2-abs-avg2", "3x3x2-relu-max2,2x2x3", "2x2x2-abs-avg2s1,2x2x2-abs-max2", "3x3-max3s2"],
)
def test_network_backward_against_finite_differences(layers):
    rng = np.random.default_rng(5)
    X = rng.random((3, 1, 10, 9))
    net = Network(parse_layers(layers), X.shape[1:])
    theta = rng.standard_normal(sum(net.sizes))
    W = rng.standard_normal((3, *net.output_shape))
    numeric = _central_difference(lambda t: float(np.sum(W * net.forward(X, t))), theta)
    assert _rel_error(net.backward(X, theta, W), numeric) < 1e-6


@pytest.mark.parametrize(
    "layers", ["5x5x16-abs-max2", "5x5x2-relu-max2", "5x5x8-abs-max3s2,3x3x4-relu-max2-bn2-sqrt"]
)
def test_a_fits_forward_pass_equals_the_pass_that_keeps_its_maps(layers):
    """A fit's forward pass rectifies and max-pools each block of maps while it is in
    cache; it must give what the kept, layer-by-layer pass gives, bit for bit."""
    rng = np.random.default_rng(4)
    net = Network(parse_layers(layers), (1, 28, 28))
    theta = net.initial(rng)
    for dtype in (np.float32, np.float64):
        X = rng.random((37, 1, 28, 28)).astype(dtype)
        fused = net.forward(X, theta)
        kept, _ = net.forward(X, theta, keep=True)
        assert fused.dtype == kept.dtype == dtype
        np.testing.assert_array_equal(fused, kept)
        np.testing.assert_array_equal(fused, net.layer_outputs(X, theta)[-1])


def test_layers_round_trip_and_name_what_is_wrong():
    specs = parse_layers("5x5x2-abs-avg2,3x3x4-relu-max3s2")
    assert specs[0] == LayerSpec(2, (5, 5), "abs", "avg", 2, 2)
    assert specs[1] == LayerSpec(4, (3, 3), "relu", "max", 3, 2)
    assert parse_layers(format_layers(specs)) == specs
    assert parse_layers(None) == parse_layers("  ") == ()
    for bad, says in [
        ("5x5-tanh", "tanh"),
        ("five", "filter size"),
        ("5x5x999", "1 to 64 filters"),
        ("3x3,3x3,3x3,3x3,3x3", "at most 4 layers"),
    ]:
        with pytest.raises(ValueError, match=says):
            parse_layers(bad)
    with pytest.raises(ValueError, match="Layer 2"):
        Network(parse_layers("5x5-avg2,9x9"), (1, 16, 16))
    with pytest.raises(ValueError, match="multiply-adds per image"):
        Network(parse_layers("5x5x64,5x5x64,5x5x64"), (1, 28, 28))


LAYERED_CASES = [
    ("poly", {"degree": 2, "gamma": 1.0, "coef0": 1.0}, "3x3x2-abs-avg2,2x2x2"),
    ("rbf", {"gamma": 0.5}, "3x3x2-relu-max2,2x2x2-abs-avg2s1"),
    ("poly", {"degree": 3, "gamma": 0.5, "coef0": 0.5}, "3x3-abs-max2s1"),
    ("rbf", {"gamma": 0.3}, "2x2x2-abs-avg2"),
]


@pytest.mark.parametrize("kernel,params,layers", LAYERED_CASES)
def test_layered_outer_objective_gradient(kernel, params, layers):
    """dT/df for every layer's filters (Danskin, alpha held at its optimum) against
    central differences of T, each T an exact SVM solve."""
    rng = np.random.default_rng(6)
    X = rng.random((24, 1, 9, 9))
    y = np.where(X[:, 0, :4].mean(axis=(1, 2)) > X[:, 0, 5:].mean(axis=(1, 2)), 1, -1)
    net = Network(parse_layers(layers), X.shape[1:])
    theta = net.initial(np.random.default_rng(7)) + 0.05 * rng.standard_normal(sum(net.sizes))
    settings = SolveSettings.from_keywords(
        kernel=kernel, **params, C=1.0, regulariser="dfo2", lam=0.3, svm_tol=1e-12
    )
    _, analytic = outer_objective(X, y, theta, settings, layers=layers)
    numeric = _central_difference(
        lambda t: outer_objective(X, y, t, settings, layers=layers)[0], theta
    )
    assert _rel_error(analytic, numeric) < 1e-4


def _pair(n=60, seed=0, side=12):
    rng = np.random.default_rng(seed)
    X = rng.random((n, side, side)) * 0.3
    y = np.arange(n) % 2
    X[y == 1, :, side // 2] += 0.7  # a vertical bar for class 1, a horizontal one for 0
    X[y == 0, side // 2, :] += 0.7
    return X.reshape(n, -1), y


def test_one_plain_layer_is_the_thesis_model_unchanged():
    X, y = _pair()
    common = {"kernel": "rbf", "gamma": 0.05, "n_iter": 4, "random_state": 3}
    plain = KernelCSVM(filter_shape=(3, 3), n_filters=2, **common).fit(X, y)
    layered = KernelCSVM(layers="3x3x2", **common).fit(X, y)
    assert layered.layers_ == ()
    np.testing.assert_array_equal(plain.filters_, layered.filters_)
    assert [e["objective"] for e in plain.history_] == [e["objective"] for e in layered.history_]


@pytest.mark.parametrize("n_classes", [2, 3])
def test_layered_kcsvm_trains_predicts_and_shows_every_layer(n_classes):
    X, y = _pair(90)
    y = np.arange(90) % n_classes
    events = []
    clf = KernelCSVM(
        layers="3x3x2-abs-avg2,2x2x3-relu", kernel="rbf", gamma=0.1, n_iter=5, random_state=0
    ).fit(X, y, callback=events.append)
    n_clf = 1 if n_classes == 2 else 3
    assert clf.predict(X).shape == (90,)
    assert clf.score(X, y) > 1.0 / n_classes
    assert clf.filters_.shape[-3:] == (2, 3, 3) if n_classes == 2 else (n_clf, 2, 3, 3)
    assert [f.shape for f in clf.layer_filters_[0]] == [(2, 1, 3, 3), (3, 2, 2, 2)]
    maps = clf.feature_maps(X[:4])
    assert maps.shape == ((4, 3, 4, 4) if n_classes == 2 else (4, n_clf, 3, 4, 4))
    assert clf.transform(X[:4]).shape == (4, n_clf * 3 * 16)
    first = events[0]
    assert [f.shape for f in first["layer_filters"]] == [(2, 1, 3, 3), (3, 2, 2, 2)]
    assert [g.shape for g in first["layer_gradients"]] == [(2, 1, 3, 3), (3, 2, 2, 2)]


def test_layered_training_lowers_the_objective_and_moves_every_layer():
    X, y = _pair(80, seed=1)
    clf = KernelCSVM(
        layers="3x3x2-abs-avg2,2x2x2", kernel="rbf", gamma=0.1, n_iter=8, random_state=0, eta=0.2
    ).fit(X, y)
    objectives = [e["objective"] for e in clf.history_]
    assert objectives[-1] < objectives[0]
    start = KernelCSVM(
        layers="3x3x2-abs-avg2,2x2x2", kernel="rbf", gamma=0.1, n_iter=1, random_state=0
    ).fit(X, y)
    for learned, first in zip(clf.layer_filters_[0], start.layer_filters_[0], strict=True):
        assert not np.allclose(learned, first)


def test_a_stack_that_does_not_fit_the_images_is_named():
    X, y = _pair(20, side=8)
    with pytest.raises(ValueError, match="Layer 2 .*does not fit|Layer 2 .*larger than"):
        KernelCSVM(layers="5x5-avg2,3x3").fit(X, y)


def test_zero_mean_first_filters_have_zero_mean_planes_and_unit_l1_norm():
    X, y = _pair(30)
    for layers in (None, "3x3x2-abs-avg2,2x2x2"):
        clf = KernelCSVM(
            filter_shape=(3, 3), n_filters=2, layers=layers, filter_init="zero-mean", n_iter=1
        ).fit(X, y)
        first = clf.layer_filters_[0][0]
        np.testing.assert_allclose(first.mean(axis=(-2, -1)), 0, atol=1e-12)
        assert np.isclose(np.abs(first).sum(), 1.0)
    uniform = KernelCSVM(filter_shape=(3, 3), n_iter=1, random_state=0).fit(X, y)
    assert np.all(uniform.filters_ >= 0)


@pytest.mark.parametrize("kind", ["gabor", "gaussian"])
def test_structured_first_filters_are_what_they_say(kind):
    from csvm.model.init_filters import first_filters

    f = first_filters(kind, np.random.default_rng(0), (4, 1, 5, 5))
    assert np.isclose(np.abs(f).sum(), 1.0)
    if kind == "gabor":  # zero mean, and four different orientations
        np.testing.assert_allclose(f.sum(axis=(-2, -1)), 0, atol=1e-12)
        assert len({np.round(g, 6).tobytes() for g in f}) == 4
    else:  # positive, centred, widths spread
        assert np.all(f > 0) and np.all(f[:, 0].argmax(axis=None) == f[0, 0].argmax())
        peaks = f[:, 0, 2, 2] / f[:, 0].sum(axis=(-2, -1))
        assert np.all(np.diff(peaks) < 0)  # wider blurs have a lower centre share
    with pytest.raises(ValueError, match="choose one of"):
        first_filters("sobel", np.random.default_rng(0), (1, 1, 3, 3))
