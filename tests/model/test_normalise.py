"""HOG's stages in a stack (issue 35): block L2 normalisation and the signed square root,
their forward passes against direct definitions, every backward pass against central finite
differences, the grammar's round trip, and the ``hog`` first filters."""

import numpy as np
import pytest

from csvm import KernelCSVM
from csvm.model.init_filters import first_filters, oriented_derivatives
from csvm.model.kernelised import outer_objective
from csvm.model.layers import LayerSpec, Network, format_layers, parse_layers
from csvm.model.normalise import (
    block_normalise,
    block_normalise_backward,
    block_shape,
    signed_sqrt,
    signed_sqrt_backward,
)
from csvm.model.solve_settings import SolveSettings
from tests._fd import central_difference as _central_difference
from tests._fd import rel_error as _rel_error


@pytest.mark.parametrize("size", [1, 2, 3])
def test_block_normalise_matches_its_definition(size):
    rng = np.random.default_rng(0)
    V = rng.random((2, 3, 5, 4))
    Y, _ = block_normalise(V, size, eps=0.1)
    assert Y.shape == (2, *block_shape((3, 5, 4), size))
    for i in range(5 - size + 1):
        for j in range(4 - size + 1):
            v = V[:, :, i : i + size, j : j + size]  # (n, k, b, b): channel order (c, a, b)
            expect = v.reshape(2, -1) / np.sqrt((v**2).sum(axis=(1, 2, 3)) + 0.01)[:, None]
            np.testing.assert_allclose(Y[:, :, i, j], expect, rtol=1e-12)


@pytest.mark.parametrize("size,eps", [(1, 0.1), (2, 0.01), (3, 0.5)])
def test_block_normalise_backward_against_finite_differences(size, eps):
    rng = np.random.default_rng(1)
    V = rng.standard_normal((2, 2, 5, 4))
    Y, cache = block_normalise(V, size, eps)
    W = rng.standard_normal(Y.shape)
    numeric = _central_difference(
        lambda v: float(np.sum(W * block_normalise(v, size, eps)[0])), V, 1e-6
    )
    assert _rel_error(block_normalise_backward(W, cache), numeric) < 1e-7


def test_a_blank_block_stays_zero_and_a_block_too_large_is_named():
    Y, _ = block_normalise(np.zeros((1, 2, 3, 3)), 2)
    assert np.all(Y == 0)
    with pytest.raises(ValueError, match="block of 4x4 cells does not fit"):
        block_shape((2, 3, 3), 4)


def test_signed_sqrt_value_and_gradient_are_bounded_and_smooth_at_zero():
    V = np.array([-4.0, -1e-9, 0.0, 1e-9, 0.25, 9.0])
    Y = signed_sqrt(V, eps=1e-2)
    np.testing.assert_allclose(Y, np.sign(V) * (np.sqrt(np.abs(V) + 1e-2) - 0.1), atol=1e-15)
    dV = signed_sqrt_backward(V, np.ones_like(V), eps=1e-2)
    assert dV.max() <= 1 / (2 * np.sqrt(1e-2)) + 1e-12
    rng = np.random.default_rng(2)
    Z = rng.standard_normal((3, 2, 4, 4))
    W = rng.standard_normal(Z.shape)
    numeric = _central_difference(lambda z: float(np.sum(W * signed_sqrt(z))), Z, 1e-7)
    assert _rel_error(signed_sqrt_backward(Z, W), numeric) < 1e-6


STACKS = [
    "3x3x4-relu-avg2-bn2-sqrt",
    "3x3x2-abs-avg2-bn2",
    "3x3x2-sqrt",
    "2x2x2-relu-max2s1-bn3-sqrt",
    "3x3x2-relu-avg2-bn2-sqrt,2x2x2-abs",
    "2x2x2-abs-avg2s1,2x2x3-relu-avg2-bn2-sqrt",
]


@pytest.mark.parametrize("layers", STACKS)
def test_network_with_hog_stages_backward_against_finite_differences(layers):
    rng = np.random.default_rng(5)
    X = rng.random((3, 1, 11, 10))
    net = Network(parse_layers(layers), X.shape[1:])
    theta = rng.standard_normal(sum(net.sizes))
    out = net.forward(X.astype(np.float64), theta)
    assert out.shape == (3, *net.output_shape)
    W = rng.standard_normal(out.shape)
    numeric = _central_difference(lambda t: float(np.sum(W * net.forward(X, t))), theta, 1e-6)
    assert _rel_error(net.backward(X, theta, W), numeric) < 1e-6


@pytest.mark.parametrize("kernel,params", [("rbf", {"gamma": 0.2}), ("linear", {})])
def test_outer_objective_gradient_through_block_norm_and_sqrt(kernel, params):
    """dT/dθ of the K-CSVM through correlation, relu, pooling, block norm and sqrt
    against central differences of T (each T an exact SVM solve)."""
    layers = "3x3x3-relu-avg2-bn2-sqrt"
    rng = np.random.default_rng(6)
    X = rng.random((24, 1, 9, 9))
    y = np.where(X[:, 0, :4].mean(axis=(1, 2)) > X[:, 0, 5:].mean(axis=(1, 2)), 1, -1)
    net = Network(parse_layers(layers), X.shape[1:])
    theta = first_filters("hog", rng, net.filter_shapes[0]).ravel()
    theta = theta + 0.02 * rng.standard_normal(theta.shape)
    settings = SolveSettings.from_keywords(
        kernel=kernel, **params, C=1.0, regulariser="dfo2", lam=0.3, svm_tol=1e-12
    )
    _, analytic = outer_objective(X, y, theta, settings, layers=layers)
    numeric = _central_difference(
        lambda t: outer_objective(X, y, t, settings, layers=layers)[0], theta, 1e-6
    )
    assert _rel_error(analytic, numeric) < 1e-4


def test_hog_stages_round_trip_in_the_grammar():
    specs = parse_layers("3x3x8-sqrt-bn2-avg4-relu,2x2x4-abs-bn3")
    assert specs[0] == LayerSpec(8, (3, 3), "relu", "avg", 4, 4, block=2, power="sqrt")
    assert str(specs[0]) == "3x3x8-relu-avg4-bn2-sqrt"
    assert parse_layers(format_layers(specs)) == specs
    assert specs[0].n_maps == 32 and not specs[0].is_plain
    assert not parse_layers("3x3-sqrt")[0].is_plain
    with pytest.raises(ValueError, match="block normalisation"):
        parse_layers("3x3-bnx")
    with pytest.raises(ValueError, match="blocks must be 1 to"):
        parse_layers("3x3-bn0")


def test_block_norm_hands_the_next_layer_k_b2_channels():
    net = Network(parse_layers("3x3x8-relu-avg4-bn2-sqrt,2x2x4"), (1, 28, 28))
    assert net.map_shapes[0] == (32, 5, 5)
    assert net.filter_shapes[1] == (4, 32, 2, 2)
    with pytest.raises(ValueError, match="Layer 1"):
        Network(parse_layers("3x3x2-avg4-bn7"), (1, 28, 28))


def test_hog_first_filters_are_oriented_derivatives():
    f = first_filters("hog", np.random.default_rng(0), (8, 3, 3, 3))
    assert np.isclose(np.abs(f).sum(), 1.0)
    np.testing.assert_allclose(f.sum(axis=(-2, -1)), 0, atol=1e-15)  # no response to flat ink
    np.testing.assert_allclose(f[:4], -f[4:], atol=1e-15)  # opposite directions
    np.testing.assert_allclose(f[:, 0], f[:, 2])  # one plane per colour channel
    ramp = np.tile(np.arange(5.0), (5, 1))  # brighter to the right: x grows
    responses = [(oriented_derivatives(3, 3, 8)[i] * ramp[1:4, 1:4]).sum() for i in range(8)]
    assert int(np.argmax(responses)) == 0 and int(np.argmin(responses)) == 4
    again = first_filters("hog", np.random.default_rng(9), (8, 3, 3, 3))
    np.testing.assert_array_equal(f, again)  # no randomness: HOG's own bins


def test_learned_hog_stack_trains_from_its_hog_start():
    rng = np.random.default_rng(3)
    n = 60
    X = rng.random((n, 16, 16)) * 0.3
    y = np.arange(n) % 2
    X[y == 1, :, 8] += 0.7
    X[y == 0, 8, :] += 0.7
    common = {"layers": "3x3x4-relu-avg4-bn2-sqrt", "filter_init": "hog", "kernel": "rbf"}
    common.update(gamma=0.05, random_state=0)
    clf = KernelCSVM(n_iter=4, **common).fit(X.reshape(n, -1), y)
    frozen = KernelCSVM(n_iter=1, eta=0.0, **common).fit(X.reshape(n, -1), y)
    start = first_filters("hog", rng, (4, 1, 3, 3))
    np.testing.assert_allclose(frozen.layer_filters_[0][0], start)
    assert not np.allclose(clf.layer_filters_[0][0], start)
    assert clf.score(X.reshape(n, -1), y) > 0.9
    assert clf.feature_maps(X[:2].reshape(2, -1)).shape == (2, 16, 2, 2)
