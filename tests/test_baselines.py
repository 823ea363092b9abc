"""Baselines: backpropagation against finite differences, training, the plain-SVM builder."""

import numpy as np
import pytest
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from csvm import DivergenceError, KernelCSVM, LinearCSVM
from csvm.baselines import SmallCNN, make_plain_svm
from csvm.linear import lambda_to_C


def _images(n=12, channels=1, size=7, classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, channels, size, size))
    y = np.arange(n) % classes
    return X, y


def _fitted(hidden, activation, classes, channels=1):
    X, y = _images(classes=classes, channels=channels)
    cnn = SmallCNN(
        image_shape=(channels, 7, 7),
        filter_shape=(3, 2),
        n_filters=2,
        hidden=hidden,
        activation=activation,
        epochs=1,
        batch_size=4,
        weight_decay=0.01,
        dtype="float64",
        random_state=0,
    ).fit(X, y)
    return cnn, X, y


@pytest.mark.parametrize(
    "hidden,activation", [(5, "sigmoid"), (5, "tanh"), (5, "relu"), (None, "sigmoid")]
)
@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("channels", [1, 3])
def test_backprop_matches_finite_differences(hidden, activation, classes, channels):
    cnn, X, y = _fitted(hidden, activation, classes, channels)
    params = {k: v.copy() for k, v in cnn.params_.items()}
    if activation == "relu":  # keep every hidden unit away from the kink at 0
        h = cnn._forward(params, X)[1]["h"]
        assert np.min(np.abs(h)) > 1e-4
    targets = cnn._targets(np.searchsorted(cnn.classes_, y))
    _, grads, _ = cnn._loss_grad(params, X, targets)
    eps = 1e-6
    for name, value in params.items():
        numeric = np.zeros_like(value)
        for idx in np.ndindex(value.shape):
            old = value[idx]
            value[idx] = old + eps
            up = cnn._loss_grad(params, X, targets)[0]
            value[idx] = old - eps
            down = cnn._loss_grad(params, X, targets)[0]
            value[idx] = old
            numeric[idx] = (up - down) / (2 * eps)
        error = np.linalg.norm(grads[name] - numeric) / max(np.linalg.norm(numeric), 1e-12)
        assert error < 1e-5, f"{name}: relative error {error:.2e}"


def test_overfits_a_tiny_training_set():
    rng = np.random.default_rng(1)
    X = rng.random((40, 1, 10, 10)).astype(np.float32)
    y = rng.integers(0, 2, 40)
    cnn = SmallCNN(
        image_shape=(10, 10),
        filter_shape=(3, 3),
        hidden=64,
        lr=0.1,
        epochs=150,
        batch_size=8,
        weight_decay=0.0,
        random_state=0,
    ).fit(X, y)
    assert cnn.score(X, y) == 1.0


def test_same_seed_same_weights_and_history():
    X, y = _images(n=30)
    a = SmallCNN(image_shape=(7, 7), filter_shape=(3, 3), hidden=8, epochs=3, random_state=4).fit(
        X, y
    )
    b = SmallCNN(image_shape=(7, 7), filter_shape=(3, 3), hidden=8, epochs=3, random_state=4).fit(
        X, y
    )
    for key in a.params_:
        np.testing.assert_array_equal(a.params_[key], b.params_[key])
    assert len(a.history_) == 3
    assert [e["epoch"] for e in a.history_] == [0, 1, 2]
    assert a.filters_.shape == (1, 1, 3, 3)
    assert a.transform(X).shape == (30, 1, 5, 5)


def test_callback_false_stops_after_first_event():
    X, y = _images(n=30)
    seen = []
    cnn = SmallCNN(
        image_shape=(7, 7),
        filter_shape=(3, 3),
        hidden=8,
        epochs=5,
        batch_size=4,
        events_every=2,
        random_state=0,
    )
    cnn.fit(X, y, callback=lambda e: seen.append(e) or False)
    assert len(seen) == 1 and seen[0]["step"] == "batch" and "filters" in seen[0]
    assert cnn.stopped_ and cnn.predict(X).shape == (30,)


def test_huge_learning_rate_raises_divergence_and_still_predicts():
    X, y = _images(n=40)
    cnn = SmallCNN(
        image_shape=(7, 7), filter_shape=(3, 3), hidden=8, epochs=20, lr=1e12, random_state=0
    )
    with pytest.raises(DivergenceError, match="lr=1e\\+11") as info:
        cnn.fit(X * 1e3, y)
    assert info.value.suggested_eta == pytest.approx(1e11)
    assert cnn.predict(X).shape == (40,)


@pytest.mark.parametrize(
    "params,match",
    [
        ({"lr": 0}, "lr must be"),
        ({"activation": "softsign"}, "Unknown activation"),
        ({"filter_shape": (9, 9)}, "larger than the image"),
    ],
)
def test_validation_messages(params, match):
    X, y = _images()
    with pytest.raises(ValueError, match=match):
        SmallCNN(image_shape=(7, 7), **{"filter_shape": (3, 3), **params}).fit(X, y)


def test_plain_svm_is_like_for_like():
    X, y = _images(n=40, size=8)
    csvm = KernelCSVM(image_shape=(8, 8), kernel="poly", degree=3, gamma=0.5, coef0=2.0, C=3.0)
    pipe = make_plain_svm(csvm).fit(X, y)
    by_hand = SVC(kernel="poly", degree=3, gamma=0.5, coef0=2.0, C=3.0).fit(X.reshape(40, -1), y)
    np.testing.assert_allclose(
        pipe.decision_function(X), by_hand.decision_function(X.reshape(40, -1))
    )
    linear = make_plain_svm(LinearCSVM(image_shape=(8, 8), lam_w=0.2), n_samples=40)
    assert linear.named_steps["svc"].C == pytest.approx(lambda_to_C(0.2, 40))
    assert make_plain_svm({"kernel": "rbf", "gamma": 0.1, "C": None}).named_steps["svc"].C >= 1e9


_MAPS = (
    "transform() returns feature maps of shape (n, n_filters, H', W'), not the 2-D "
    "table transformer checks assume"
)


@parametrize_with_checks(
    [SmallCNN(image_shape=None, filter_shape=(1, 1), hidden=8, epochs=5, lr=0.1, random_state=0)],
    expected_failed_checks=lambda est: {
        "check_transformer_data_not_an_array": _MAPS,
        "check_transformer_general": _MAPS,
        "check_transformer_general(readonly_memmap=True)": _MAPS,
        "check_transformer_preserve_dtypes": _MAPS,
    },
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
