"""Finite-difference checks of every gradient the trainers use."""

import numpy as np
import pytest

from csvm.model.conv import correlate
from csvm.model.kernelised import outer_objective
from csvm.model.kernels import kernel_gradient, kernel_matrix
from csvm.model.regularisers import REGULARISERS, regulariser_gradient, regulariser_value
from csvm.model.solve_settings import SolveSettings
from tests._fd import central_difference, rel_error


@pytest.mark.parametrize("name", list(REGULARISERS))
@pytest.mark.parametrize("scale", [0.3, 2.0])  # inside and outside the unit ball (DFO's kink)
def test_regulariser_gradient(name, scale):
    rng = np.random.default_rng(0)
    f = rng.standard_normal((2, 1, 3, 3))
    f *= scale / np.abs(f).sum() * (3 if scale > 1 else 1)
    numeric = central_difference(lambda g: regulariser_value(name, g, 0.7), f, 1e-6)
    analytic = regulariser_gradient(name, f, 0.7)
    if name == "none":
        assert np.all(analytic == 0) and np.all(numeric == 0)
    else:
        assert rel_error(analytic, numeric) < 1e-6


def test_dfo_is_zero_inside_unit_ball_and_corrects_erratum_3():
    f = np.full((1, 1, 2, 2), 0.2)  # ||f||_1 = 0.8
    assert regulariser_value("dfo1", f, 1.0) == 0.0
    assert np.all(regulariser_gradient("dfo1", f, 1.0) == 0)
    g = np.array([[[[1.0, -2.0], [0.5, 0.5]]]])  # ||g||_1 = 4
    expected = 2 * 0.1 * (4 - 1) * np.sign(g)  # not the thesis's lam f (||f||-1)/||f||
    np.testing.assert_allclose(regulariser_gradient("dfo1", g, 0.1), expected)


def test_unknown_regulariser_lists_valid_ones():
    with pytest.raises(ValueError, match="dfo2"):
        regulariser_value("l3", np.ones(3), 1.0)


KERNEL_CASES = [
    ("poly", {"degree": 1, "gamma": 1.0, "coef0": 1.0}),
    ("poly", {"degree": 2, "gamma": 1.0, "coef0": 1.0}),
    ("poly", {"degree": 3, "gamma": 0.5, "coef0": 0.3}),
    ("rbf", {"gamma": 0.2}),
]


@pytest.mark.parametrize("kernel,params", KERNEL_CASES)
@pytest.mark.parametrize("n_filters,channels", [(1, 1), (2, 1), (2, 3)])
def test_quadratic_form_gradient(kernel, params, n_filters, channels):
    """sum_ij a_i a_j dK_ij/df against central differences, alpha held fixed."""
    rng = np.random.default_rng(1)
    X = rng.random((9, channels, 7, 6))
    a = rng.standard_normal(9)
    f = rng.standard_normal((n_filters, channels, 3, 2)) * 0.3

    def quadratic(g):
        Z = correlate(X, g).reshape(9, -1)
        return a @ kernel_matrix(Z, kernel=kernel, **params) @ a

    numeric = central_difference(quadratic, f, 1e-6)
    analytic = kernel_gradient(X, correlate(X, f), a, (3, 2), kernel=kernel, **params)
    assert rel_error(analytic, numeric) < 1e-6


def test_kernel_matrix_matches_definitions():
    rng = np.random.default_rng(2)
    A, B = rng.random((5, 8)), rng.random((4, 8))
    np.testing.assert_allclose(
        kernel_matrix(A, B, kernel="poly", degree=3, gamma=0.5, coef0=2.0),
        (0.5 * A @ B.T + 2.0) ** 3,
        rtol=1e-5,
    )
    d2 = ((A[:, None] - B[None]) ** 2).sum(-1)
    np.testing.assert_allclose(
        kernel_matrix(A, B, kernel="rbf", gamma=0.3), np.exp(-0.3 * d2), rtol=1e-5
    )


def _toy_problem(channels=1, n=24, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.random((n, channels, 8, 8))
    y = np.where(np.arange(n) % 2 == 0, 1, -1)
    X[y > 0, :, 2:5, 2:5] += 0.5  # a blob that a filter can find, but noisy
    return X, y


@pytest.mark.parametrize("kernel,params", KERNEL_CASES)
@pytest.mark.parametrize("regulariser", ["l1", "l2", "l1sq", "l2sq", "dfo1", "dfo2", "none"])
@pytest.mark.parametrize("n_filters", [1, 2])
def test_outer_gradient_with_svm_resolved(kernel, params, regulariser, n_filters):
    """dT/df of the whole outer objective, the SVM re-solved at every probe (Danskin)."""
    X, y = _toy_problem()
    rng = np.random.default_rng(4)
    f = rng.random((n_filters, 1, 3, 3))
    f *= 1.5 / np.abs(f).sum()  # outside the unit ball so DFO's active branch is tested
    if kernel == "rbf":
        f *= 0.3
    settings = SolveSettings.from_keywords(
        kernel=kernel, **params, C=1.0, regulariser=regulariser, lam=0.3, svm_tol=1e-12
    )
    _, analytic = outer_objective(X, y, f, settings)
    numeric = central_difference(lambda g: outer_objective(X, y, g, settings)[0], f, 1e-6)
    assert rel_error(analytic, numeric) < 1e-4
