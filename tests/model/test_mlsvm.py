"""MultiLayerSVM: the output layer is an exact SVM solve, the hidden step follows the
gradient of the output duals, and it is a scikit-learn estimator."""

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import check_param_validation, parametrize_with_checks

from csvm import MultiLayerSVM
from csvm.model.mlsvm import _rbf, output_dual, output_dual_gradient


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(y))
    X = (X - X.min(0)) / (X.max(0) - X.min(0))
    return X[order], y[order]


def test_output_layer_is_an_exact_svm_solve_for_fixed_hidden_outputs(iris):
    X, y = iris
    clf = MultiLayerSVM(n_epochs=3, C=2.0, svm_tol=1e-8, random_state=0).fit(X[:120], y[:120])
    F, Ft = clf.hidden_outputs(X[:120]), clf.hidden_outputs(X[120:])
    decision = clf.decision_function(X[120:])
    assert decision.shape == (30, 3)
    for c, label in enumerate(clf.classes_):
        svc = SVC(kernel="rbf", gamma=clf.gamma_out_, C=2.0, tol=1e-8)
        svc.fit(F, np.where(y[:120] == label, 1, -1))
        np.testing.assert_allclose(decision[:, c], svc.decision_function(Ft), atol=1e-6)


def test_dual_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    F = rng.uniform(-1, 1, (12, 3))
    a = rng.normal(size=12)
    grad = output_dual_gradient(F, a, 0.7)
    h = 1e-6
    for i, j in [(0, 0), (3, 1), (11, 2)]:
        E = np.zeros_like(F)
        E[i, j] = h
        fd = (output_dual(F + E, a, 0.7) - output_dual(F - E, a, 0.7)) / (2 * h)
        assert fd == pytest.approx(grad[i, j], rel=1e-6, abs=1e-9)


def test_gradient_of_the_solved_dual_is_the_fixed_alpha_gradient(iris):
    """Danskin: d/dF max_alpha J = dJ/dF at alpha*, checked by re-solving the SVM."""
    X, y = iris
    F = np.column_stack([X[:40, 0] - X[:40, 1], X[:40, 2]])
    t = np.where(y[:40] == 1, 1, -1)

    def solved(F):
        svc = SVC(kernel="precomputed", C=1.0, tol=1e-12).fit(_rbf(F, None, 2.0), t)
        a = np.zeros(len(F))
        a[svc.support_] = svc.dual_coef_[0]
        return output_dual(F, a, 2.0), a

    value, a = solved(F)
    grad = output_dual_gradient(F, a, 2.0)
    h = 1e-6
    for i, j in [(np.flatnonzero(a)[0], 0), (np.flatnonzero(a)[1], 1)]:
        E = np.zeros_like(F)
        E[i, j] = h
        fd = (solved(F + E)[0] - solved(F - E)[0]) / (2 * h)
        assert fd == pytest.approx(grad[i, j], rel=1e-3, abs=1e-5)


def test_a_small_step_against_the_gradient_lowers_the_dual():
    rng = np.random.default_rng(2)
    F = rng.uniform(-1, 1, (20, 4))
    a = rng.normal(size=20)
    grad = output_dual_gradient(F, a, 0.5)
    assert output_dual(F - 1e-3 * grad, a, 0.5) < output_dual(F, a, 0.5)


def test_hidden_layer_starts_from_each_class_in_turn(iris):
    X, y = iris
    clf = MultiLayerSVM(n_hidden=5, n_epochs=0, perturbation=0.0, random_state=0).fit(X, y)
    F = clf.hidden_outputs(X)
    assert F.shape == (150, 5) and clf.history_ == []
    for h in range(5):  # hidden SVM h regresses the +-1 target of class h mod 3
        target = np.where(y == clf.classes_[h % 3], 1, -1)
        assert np.corrcoef(F[:, h], target)[0, 1] > 0.8


def test_two_classes_use_one_output_svm(iris):
    X, y = iris
    keep = y > 0
    clf = MultiLayerSVM(random_state=0).fit(X[keep], y[keep])
    assert len(clf.output_) == 1 and clf.n_hidden_ == 4
    assert clf.decision_function(X[keep]).shape == (int(keep.sum()),)
    assert clf.score(X[keep], y[keep]) > 0.9


def test_seeded_fits_are_identical_and_learn(iris):
    X, y = iris
    a = MultiLayerSVM(random_state=3).fit(X[:120], y[:120])
    b = MultiLayerSVM(random_state=3).fit(X[:120], y[:120])
    np.testing.assert_array_equal(a.decision_function(X[120:]), b.decision_function(X[120:]))
    assert len(a.history_) == a.n_epochs
    assert a.score(X[120:], y[120:]) > 0.85


@parametrize_with_checks([MultiLayerSVM()])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_every_parameter_is_validated_with_sklearn_messages():
    check_param_validation("MultiLayerSVM", MultiLayerSVM())


def test_images_are_read_as_flat_rows_as_the_other_estimators_take_them():
    """MultiLayerSVM and SMO refused (n, H, W) with scikit-learn's 'dim <= 2' message while
    every image estimator took it."""
    from csvm import SMO

    rng = np.random.default_rng(0)
    images = rng.random((30, 2, 4, 4))
    y = np.arange(30) % 2
    flat = images.reshape(30, -1)
    for make in (lambda: MultiLayerSVM(random_state=0), lambda: SMO(gamma=0.1)):
        on_images, on_rows = make().fit(images, y), make().fit(flat, y)
        assert np.array_equal(on_images.decision_function(images), on_rows.decision_function(flat))
        assert on_images.n_features_in_ == 32
