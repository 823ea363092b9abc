"""SmallCNN on input it was not made for: raw load_digits (0-16) is named and the advice in
its "learned nothing" warning fits what happened (issue 36, SmallCNN defaults)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits

from csvm import CSVMWarning, SmallCNN
from csvm.model.cnn_advice import advice


@pytest.fixture(scope="module")
def digits3():
    """Three classes of scikit-learn's 8x8 digits, raw (0-16): 537 images."""
    X, y = load_digits(return_X_y=True)
    keep = y < 3
    return X[keep], y[keep]


def _fit(X, y, **params) -> tuple[SmallCNN, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = SmallCNN(epochs=5, hidden=50, **params).fit(X, y)
    return clf, [str(w.message) for w in caught if issubclass(w.category, CSVMWarning)]


def test_raw_pixels_are_named_with_the_fix(digits3):
    X, y = digits3
    _, messages = _fit(X, y, random_state=0)
    assert any("X's values reach 16" in m and "Divide X by 16" in m for m in messages)


def test_scaled_pixels_train_without_a_warning(digits3):
    X, y = digits3
    clf, messages = _fit(X / 16, y, lr=0.03, random_state=0)
    assert messages == []
    assert clf.score(X / 16, y) > 0.9


def test_the_warnings_point_at_the_callers_line(digits3):
    X, y = digits3
    with pytest.warns(CSVMWarning, match="values reach") as record:
        SmallCNN(epochs=1, hidden=5).fit(X, y)
    assert record[0].filename == __file__
    with pytest.warns(CSVMWarning, match="learned nothing") as record:
        SmallCNN(epochs=2, hidden=5, lr=5.0, random_state=0).fit(X / 16, y)
    assert [w.filename for w in record] == [__file__]


@pytest.mark.parametrize(
    ("lr", "says"),
    [
        (5.0, r"lr=5 is likely too large: the loss reached .* try lr=0\.5"),
        (1e-7, r"lr=1e-07 is likely too small"),
    ],
)
def test_learned_nothing_advises_the_way_that_fits(digits3, lr, says):
    """A step far too large or far too small ends at chance; the advice goes the right way
    (before, any lr was told to "try 0.1 (the default)", the default included)."""
    X, y = digits3
    clf, messages = _fit(X / 16, y, lr=lr, random_state=0)
    assert clf.score(X / 16, y) < 0.5
    (message,) = [m for m in messages if "learned nothing" in m]
    assert re.search(says, message)
    assert f"try lr={lr:g}" not in message


def test_a_run_at_chance_warns_whatever_its_last_batches_scored(digits3):
    """The epochs' accuracies are of batches under moving weights; the warning judges the
    final weights, so every run that ends near chance says so and no learned run does."""
    X, y = digits3
    X = X / 16
    majority = np.bincount(y).max() / len(y)
    for seed in range(3):
        clf, messages = _fit(X, y, random_state=seed, lr=0.5)
        warned = any("learned nothing" in m for m in messages)
        at_chance = clf.score(X, y) <= majority + 0.1 * (1 - majority)
        assert warned == at_chance, (seed, clf.score(X, y), messages)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ((0.1, 16.0, [1.2, 1.1], 1.1), "scale the images to [0, 1] first (e.g. X / 16)"),
        ((1e-6, 1.0, [1.1, 1.1], 1.1), "too small to move the weights"),
        ((5.0, 1.0, [14.0, 12.0], 0.69), "far above the 0.69 of answering"),
        ((0.1, 1.0, [1.0, 0.88], 0.69), "still falling (1 -> 0.88 in the last epoch)"),
        ((0.1, 1.0, [5.5, 1.12, 1.13], 1.1), "loss reached 5.5 (epoch 1), far above"),
        ((0.1, 1.0, [1.3, 1.12, 1.13], 1.1), "lr=0.1 is likely too large: try lr=0.01"),
    ],
)
def test_advice_follows_the_input_range_then_the_loss(args, says):
    assert says in advice(*args)
