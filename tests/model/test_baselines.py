"""Baselines: backpropagation against finite differences, training, the plain-SVM builder."""

import numpy as np
import pytest
from sklearn.svm import SVC

from csvm import DivergenceError
from csvm.model.baselines import SmallCNN
from csvm.model.linear import lambda_to_C
from csvm.model.plain_svm import make_plain_svm


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
    assert a.feature_maps(X).shape == (30, 1, 5, 5)
    assert a.transform(X).shape == (30, 25)


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
        image_shape=(7, 7), filter_shape=(3, 3), hidden=0, epochs=20, lr=10.0, random_state=0
    )
    with pytest.raises(DivergenceError, match="lr=1\\b") as info:
        cnn.fit(X * 1e3, y)
    assert info.value.suggested_eta == pytest.approx(1.0)
    assert cnn.predict(X).shape == (40,)


@pytest.mark.parametrize(
    "params,match",
    [
        ({"lr": 0}, "'lr' parameter of SmallCNN must be a float in the range \\(0.0, 10"),
        ({"lr": -0.1}, "'lr' parameter"),
        ({"lr": float("nan")}, "'lr' parameter"),
        ({"lr": 11.0}, "'lr' parameter"),
        ({"activation": "softsign"}, "'activation' parameter of SmallCNN must be a str among"),
        ({"filter_shape": (9, 9)}, "larger than the image"),
        ({"filter_shape": (3,)}, "'filter_shape' parameter .* a tuple \\(p, q\\)"),
        ({"hidden": -2}, "'hidden' parameter"),
        ({"momentum": 1.0}, "'momentum' parameter"),
        ({"weight_decay": -1.0}, "'weight_decay' parameter"),
        ({"events_every": -1}, "'events_every' parameter"),
        ({"epochs": 0}, "'epochs' parameter"),
        ({"nesterov": "yes"}, "'nesterov' parameter"),
    ],
)
def test_validation_messages(params, match):
    X, y = _images()
    with pytest.raises(ValueError, match=match):
        SmallCNN(image_shape=(7, 7), **{"filter_shape": (3, 3), **params}).fit(X, y)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_pixels_are_rejected(bad):
    X, y = _images()
    X[3, 0, 2, 2] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        SmallCNN(image_shape=(7, 7), filter_shape=(3, 3)).fit(X, y)


def test_one_class_is_rejected():
    X, _ = _images()
    with pytest.raises(ValueError, match="one class only"):
        SmallCNN(image_shape=(7, 7), filter_shape=(3, 3)).fit(X, np.ones(len(X)))


def _one_step_cnn(**params):
    return SmallCNN(
        image_shape=(7, 7),
        filter_shape=(3, 3),
        hidden=6,
        batch_size=1000,  # one full batch per epoch: the update is deterministic
        dtype="float64",
        random_state=3,
        **params,
    )


@pytest.mark.parametrize("nesterov", [True, False])
def test_momentum_update_matches_the_formula(nesterov):
    """Two full-batch steps against v <- mu v - lr g and p <- p + mu v - lr g (Nesterov,
    the form of PyTorch's SGD) or p <- p + v (heavy ball)."""
    X, y = _images(n=20)
    lr, mu = 0.3, 0.8
    # lr so small the update rounds away: the fitted weights are the initial ones.
    start = _one_step_cnn(lr=1e-300, epochs=1).fit(X, y).params_
    cnn = _one_step_cnn(lr=lr, momentum=mu, nesterov=nesterov, epochs=2).fit(X, y)
    targets = cnn._targets(np.searchsorted(cnn.classes_, y))
    p = {k: v.copy() for k, v in start.items()}
    v = {k: np.zeros_like(a) for k, a in p.items()}
    for _ in range(2):
        grads = cnn._loss_grad(p, X, targets)[1]
        for key, g in grads.items():
            v[key] = mu * v[key] - lr * g
            p[key] = p[key] + (mu * v[key] - lr * g if nesterov else v[key])
    for key in p:
        np.testing.assert_allclose(cnn.params_[key], p[key], rtol=1e-10, atol=1e-12)


def test_input_layouts_give_the_same_model():
    X, y = _images(n=20)
    fits = [
        SmallCNN(image_shape=(7, 7), filter_shape=(3, 3), hidden=4, epochs=2, random_state=0).fit(
            Xv, y
        )
        for Xv in (X, X[:, 0], X.reshape(20, -1))
    ]
    for other in fits[1:]:
        np.testing.assert_array_equal(other.filters_, fits[0].filters_)
        np.testing.assert_array_equal(
            other.decision_function(X.reshape(20, -1)), fits[0].decision_function(X)
        )


def test_outputs_shapes_and_float32():
    X, y = _images(n=21, classes=3)
    cnn = SmallCNN(
        image_shape=(7, 7), filter_shape=(3, 3), n_filters=2, hidden=0, epochs=2, random_state=0
    ).fit(X, y)
    assert "hid_W" not in cnn.params_  # hidden=0: the linear CNN
    assert all(v.dtype == np.float32 for v in cnn.params_.values())
    assert cnn.decision_function(X).shape == (21, 3)
    proba = cnn.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(cnn.classes_[proba.argmax(1)], cnn.predict(X))
    assert cnn.feature_maps(X).shape == (21, 2, 5, 5) and cnn.transform(X).dtype == np.float32
    assert cnn.transform(X).shape == (21, 50)
    assert cnn.filters_.shape == (1, 2, 3, 3)
    binary = SmallCNN(image_shape=(7, 7), filter_shape=(3, 3), hidden=4, epochs=1).fit(
        X, y % 2 == 0
    )
    assert binary.decision_function(X).shape == (21,)
    colour = SmallCNN(image_shape=(3, 7, 7), filter_shape=(3, 2), n_filters=2, epochs=1)
    colour.fit(np.repeat(X, 3, axis=1), y)
    assert colour.filters_.shape == (1, 2, 3, 3, 2)


def test_epoch_and_batch_events():
    X, y = _images(n=30)
    seen = []
    cnn = SmallCNN(
        image_shape=(7, 7),
        filter_shape=(3, 3),
        hidden=4,
        epochs=3,
        batch_size=4,  # 8 batches per epoch
        events_every=3,
        random_state=0,
    ).fit(X, y, callback=seen.append)
    epochs = [e for e in seen if e["step"] == "epoch"]
    batches = [e for e in seen if e["step"] == "batch"]
    assert [e["epoch"] for e in epochs] == [0, 1, 2] == [e["iteration"] for e in epochs]
    assert [e["batch"] for e in batches] == [3, 6, 9, 12, 15, 18, 21, 24]
    assert all(e["model"] == "cnn" and e["filters"].shape == (1, 1, 3, 3) for e in seen)
    assert all(0 <= e["train_accuracy"] <= 1 and e["loss"] > 0 for e in epochs)
    assert [e["seconds"] for e in seen] == sorted(e["seconds"] for e in seen)
    # history_ keeps the epoch events, without the filters.
    assert cnn.history_ == [{k: v for k, v in e.items() if k != "filters"} for e in epochs]


def test_callback_false_on_an_epoch_event_keeps_one_epoch():
    X, y = _images(n=30)
    cnn = SmallCNN(image_shape=(7, 7), filter_shape=(3, 3), hidden=4, epochs=5, random_state=0)
    cnn.fit(X, y, callback=lambda e: False)
    assert cnn.stopped_ and len(cnn.history_) == 1
    assert cnn.score(X, y) >= 0


def test_divergence_on_the_first_batch_keeps_the_initial_weights(monkeypatch):
    X, y = _images(n=40)
    cnn = SmallCNN(image_shape=(7, 7), filter_shape=(3, 3), hidden=8, lr=0.1, random_state=0)
    real = SmallCNN._loss_grad
    # A non-finite loss at the very first batch, before any update.
    monkeypatch.setattr(SmallCNN, "_loss_grad", lambda self, *a: (np.nan, *real(self, *a)[1:]))
    with pytest.raises(DivergenceError, match="lr=0.01") as info:
        cnn.fit(X, y)
    assert info.value.cause == "non-finite" and info.value.suggested_eta == pytest.approx(0.01)
    assert all(np.all(np.isfinite(v)) for v in cnn.params_.values())
    assert cnn.predict(X).shape == (40,)


def test_plain_svm_is_like_for_like():
    X, y = _images(n=40, size=8)
    pipe = make_plain_svm(kernel="poly", degree=3, gamma=0.5, coef0=2.0, C=3.0).fit(X, y)
    by_hand = SVC(kernel="poly", degree=3, gamma=0.5, coef0=2.0, C=3.0).fit(X.reshape(40, -1), y)
    np.testing.assert_allclose(
        pipe.decision_function(X), by_hand.decision_function(X.reshape(40, -1))
    )
    linear = make_plain_svm(linear=True, lam_w=0.2, n_samples=40).named_steps["svc"]
    assert linear.kernel == "linear" and linear.C == pytest.approx(lambda_to_C(0.2, 40))
    assert make_plain_svm(kernel="rbf", gamma=0.1, C=None).named_steps["svc"].C >= 1e9
    with pytest.raises(ValueError, match="n_samples"):
        make_plain_svm(linear=True, lam_w=0.2)
    with pytest.raises(ValueError, match="lam_w"):
        make_plain_svm(linear=True, n_samples=40)
    with pytest.raises(TypeError):
        make_plain_svm({"kernel": "rbf"})  # keyword arguments only: no dict sniffing
    # Images of any layout: (n, H, W) and flattened rows give the same decisions.
    np.testing.assert_allclose(pipe.decision_function(X[:, 0]), pipe.decision_function(X))
