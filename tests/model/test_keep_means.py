"""The relative step on a layer with block normalisation keeps each filter's mean (issue 35):
the projection itself, that the projected gradient is T's gradient on the mean-keeping
subspace (central finite differences of T along such directions), and that layers without
``-bn`` move exactly as before."""

import numpy as np
import pytest

from csvm.model.init_filters import first_filters
from csvm.model.kernelised import outer_objective
from csvm.model.layers import Network, keep_means, parse_layers
from csvm.model.solve_settings import SolveSettings


def test_keep_means_is_the_orthogonal_projection_that_zeroes_every_filter_channel_mean():
    g = np.random.default_rng(0).standard_normal((3, 2, 4, 5))
    p = keep_means(g)
    np.testing.assert_allclose(p.mean(axis=(-2, -1)), 0.0, atol=1e-15)
    np.testing.assert_allclose(keep_means(p), p, atol=1e-15)  # idempotent
    assert abs(float(np.sum(p * (g - p)))) < 1e-12  # orthogonal


def _stack(layers: str, seed: int = 3):
    rng = np.random.default_rng(seed)
    X = rng.random((24, 1, 9, 9))
    y = np.where(X[:, 0, :4].mean(axis=(1, 2)) > X[:, 0, 5:].mean(axis=(1, 2)), 1, -1)
    net = Network(parse_layers(layers), X.shape[1:])
    return rng, X, y, net


def test_relative_move_on_a_bn_layer_keeps_the_means_and_moves_eta_of_the_norm():
    layers = "3x3x3-relu-avg2-bn2-sqrt,2x2x2-abs"
    rng, _, _, net = _stack(layers)
    theta = rng.standard_normal(sum(net.sizes))
    grad = rng.standard_normal(theta.shape)
    move = net.unpack(net.relative_move(theta, grad, 0.1))
    filters, grads = net.unpack(theta), net.unpack(grad)
    np.testing.assert_allclose(move[0].mean(axis=(-2, -1)), 0.0, atol=1e-15)
    assert np.linalg.norm(move[0]) == pytest.approx(0.1 * np.linalg.norm(filters[0]))
    np.testing.assert_allclose(move[0], -0.1 * np.linalg.norm(filters[0]) * keep_means(grads[0])
                               / np.linalg.norm(keep_means(grads[0])), rtol=1e-12)  # fmt: skip
    # layer 2 has no -bn: the whole gradient, as before
    expect = -0.1 * np.linalg.norm(filters[1]) / np.linalg.norm(grads[1]) * grads[1]
    np.testing.assert_array_equal(move[1], expect)


def test_relative_move_without_bn_is_unchanged():
    rng, _, _, net = _stack("3x3x2-abs-avg2,2x2x2-relu")
    theta, grad = rng.standard_normal(sum(net.sizes)), rng.standard_normal(sum(net.sizes))
    old = [-0.3 * np.linalg.norm(f) / np.linalg.norm(g) * g
           for f, g in zip(net.unpack(theta), net.unpack(grad), strict=True)]  # fmt: skip
    np.testing.assert_array_equal(net.relative_move(theta, grad, 0.3), net.pack(old))


@pytest.mark.parametrize("seed", [6, 7])
def test_projected_gradient_is_the_gradient_of_t_on_the_mean_keeping_subspace(seed):
    """Along any direction that keeps the filters' means, T's central difference equals the
    projected gradient's product with it (each T an exact SVM solve)."""
    layers = "3x3x3-relu-avg2-bn2-sqrt"
    rng, X, y, net = _stack(layers, seed)
    theta = first_filters("hog", rng, net.filter_shapes[0]).ravel()
    theta = theta + 0.02 * rng.standard_normal(theta.shape)
    settings = SolveSettings.from_keywords(
        kernel="rbf", gamma=0.2, C=1.0, regulariser="dfo2", lam=0.3, svm_tol=1e-12
    )
    _, grad = outer_objective(X, y, theta, settings, layers=layers)
    projected = keep_means(grad.reshape(net.filter_shapes[0])).ravel()
    for _ in range(3):
        d = keep_means(rng.standard_normal(net.filter_shapes[0])).ravel()
        d /= np.linalg.norm(d)
        h = 1e-6
        plus = outer_objective(X, y, theta + h * d, settings, layers=layers)[0]
        minus = outer_objective(X, y, theta - h * d, settings, layers=layers)[0]
        numeric = (plus - minus) / (2 * h)
        assert numeric == pytest.approx(float(projected @ d), rel=1e-4, abs=1e-8)
