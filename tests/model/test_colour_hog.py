"""The ``hog-colour`` first filters (issue 35, addendum 4): HOG's oriented derivatives along
luminance, red-green and yellow-blue on (R, G, B) images, and dT/dθ of a stack on three
channels from that start against central finite differences."""

import numpy as np
import pytest

from csvm import KernelCSVM
from csvm.model.init_filters import COLOUR_AXES, colour_derivatives, first_filters
from csvm.model.kernelised import outer_objective
from csvm.model.layers import Network, parse_layers
from csvm.model.solve_settings import SolveSettings
from tests._fd import central_difference, rel_error


def test_colour_axes_are_orthonormal_luminance_first():
    np.testing.assert_allclose(COLOUR_AXES @ COLOUR_AXES.T, np.eye(3), atol=1e-15)
    np.testing.assert_allclose(COLOUR_AXES[0], np.full(3, 1 / np.sqrt(3)))


def test_hog_colour_filters_are_hog_along_each_colour_axis():
    f = first_filters("hog-colour", np.random.default_rng(0), (24, 3, 3, 3))
    assert f.shape == (24, 3, 3, 3) and np.isclose(np.abs(f).sum(), 1.0)
    hog = first_filters("hog", np.random.default_rng(0), (8, 1, 3, 3))[:, 0]
    for axis in range(3):
        third = f[8 * axis : 8 * (axis + 1)]
        # every channel of the third is the same oriented derivative, times the axis's weight
        expected = np.einsum("c,kpq->kcpq", COLOUR_AXES[axis], hog)
        np.testing.assert_allclose(third / np.abs(third).sum(), expected / np.abs(expected).sum())
    np.testing.assert_allclose(f.sum(axis=(-2, -1)), 0, atol=1e-15)  # no response to flat colour
    np.testing.assert_allclose(f[8:].sum(axis=1), 0, atol=1e-15)  # opponents: blind to grey


def test_an_isoluminant_edge_is_seen_by_the_red_green_filters_only():
    ramp = np.tile(np.arange(3.0), (3, 1))  # growing to the right
    image = np.stack([ramp, -ramp, np.zeros((3, 3))])  # red up, green down: grey constant
    f = colour_derivatives(3, 3, 24)
    responses = np.einsum("kcpq,cpq->k", f, image)
    np.testing.assert_allclose(responses[:8], 0, atol=1e-12)  # luminance: nothing
    assert int(np.argmax(responses)) == 8  # red-green, direction 0 (to the right)
    np.testing.assert_allclose(responses[16:], 0, atol=1e-12)  # yellow-blue: nothing


def test_hog_colour_needs_thirds_and_falls_back_to_hog_off_three_channels():
    with pytest.raises(ValueError, match="multiple of 3"):
        first_filters("hog-colour", np.random.default_rng(0), (8, 3, 3, 3))
    rng = np.random.default_rng(0)
    np.testing.assert_array_equal(
        first_filters("hog-colour", rng, (8, 1, 3, 3)), first_filters("hog", rng, (8, 1, 3, 3))
    )


def test_stack_on_rgb_images_starts_at_hog_colour_and_learns():
    rng = np.random.default_rng(4)
    n = 40
    X = rng.random((n, 3, 12, 12)) * 0.2
    y = np.where(np.arange(n) % 2, 1, -1)
    X[y == 1, 0, :, 6:] += 0.6  # a red right half ...
    X[y == -1, 1, :, 6:] += 0.6  # ... against a green one: the same grey
    common = {"layers": "3x3x6-relu-avg4-bn2-sqrt", "filter_init": "hog-colour"}
    common.update(kernel="rbf", gamma=0.1, random_state=0, image_shape=(3, 12, 12))
    frozen = KernelCSVM(n_iter=1, eta=0.0, **common).fit(X.reshape(n, -1), y)
    start = first_filters("hog-colour", rng, (6, 3, 3, 3))
    np.testing.assert_allclose(frozen.layer_filters_[0][0], start)
    clf = KernelCSVM(n_iter=3, step="relative", eta=0.1, **common).fit(X, y)
    assert not np.allclose(clf.layer_filters_[0][0], start)
    assert clf.score(X, y) > 0.9


def test_network_on_three_channels_backward_against_finite_differences():
    rng = np.random.default_rng(5)
    X = rng.random((3, 3, 10, 9))
    net = Network(parse_layers("3x3x6-relu-avg2-bn2-sqrt"), X.shape[1:])
    theta = first_filters("hog-colour", rng, net.filter_shapes[0]).ravel()
    theta = theta + 0.05 * rng.standard_normal(theta.shape)
    W = rng.standard_normal((3, *net.output_shape))
    numeric = central_difference(lambda t: float(np.sum(W * net.forward(X, t))), theta, 1e-6)
    assert rel_error(net.backward(X, theta, W), numeric) < 1e-6


def test_outer_objective_gradient_on_rgb_images_from_the_hog_colour_start():
    """dT/dθ through a three-channel correlation, relu, pooling, block norm and sqrt against
    central differences of T (each T an exact SVM solve)."""
    layers = "3x3x3-relu-avg2-bn2-sqrt"
    rng = np.random.default_rng(6)
    X = rng.random((24, 3, 8, 8))
    y = np.where(X[:, 0].mean(axis=(1, 2)) > X[:, 1].mean(axis=(1, 2)), 1, -1)
    net = Network(parse_layers(layers), X.shape[1:])
    theta = first_filters("hog-colour", rng, net.filter_shapes[0]).ravel()
    theta = theta + 0.02 * rng.standard_normal(theta.shape)
    settings = SolveSettings.from_keywords(
        kernel="rbf", gamma=0.2, C=1.0, regulariser="dfo2", lam=0.3, svm_tol=1e-12
    )
    _, analytic = outer_objective(X, y, theta, settings, layers=layers)
    numeric = central_difference(
        lambda t: outer_objective(X, y, t, settings, layers=layers)[0], theta, 1e-6
    )
    assert rel_error(analytic, numeric) < 1e-4
