"""Settings that used to pass silently or blame the data are refused, warned or named
correctly: bools as whole numbers, a CNN that learned nothing, a kernel that overflows."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from csvm import CSVMWarning, KernelCSVM, LinearCSVM, SmallCNN
from csvm.model.kernels import KernelOverflowError


def _blobs(n=20, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 64)).astype(np.float32)
    y = np.r_[np.ones(n // 2), -np.ones(n // 2)]
    X[y > 0, :32] += 0.5
    return X, y


@pytest.mark.parametrize(
    "estimator",
    [
        KernelCSVM(degree=True),
        KernelCSVM(n_iter=True),
        LinearCSVM(n_iter=False),
        SmallCNN(epochs=True),
        SmallCNN(n_filters=np.True_),
    ],
    ids=lambda e: f"{type(e).__name__}",
)
def test_a_bool_is_not_a_whole_number(estimator):
    X, y = _blobs()
    with pytest.raises(InvalidParameterError, match=r"Got (np\.)?(True|False)_? instead"):
        estimator.set_params(image_shape=(8, 8)).fit(X, y)


@pytest.fixture(scope="module")
def digits():
    from csvm.data import load_pair

    data = load_pair("mnist-5k", 3, 5)
    return data.X_train, data.y_train  # 700 images of 3 and 5


def test_a_cnn_that_learned_nothing_says_so(digits):
    X, y = digits
    with pytest.warns(CSVMWarning, match=r"learned nothing.*lr=5 "):
        SmallCNN(lr=5, epochs=3, hidden=20, random_state=0).fit(X, y)


def test_a_cnn_that_learned_nothing_in_one_epoch_says_so(digits):
    """One epoch was never judged: a network at chance after it trained without a word."""
    from csvm.model.cnn_advice import advice

    X, y = digits
    with pytest.warns(CSVMWarning, match=r"learned nothing: after 1 epoch its"):
        SmallCNN(epochs=1, hidden=None, random_state=0).fit(X[::7], y[::7])  # 100, both
    assert advice(0.1, 1.0, [0.69], 0.693) == "Only one epoch ran: train for more epochs."


def test_a_cnn_search_does_not_warn_for_the_rates_it_tries_and_drops(digits, recwarn):
    from csvm.analysis.tuning import tune_cnn

    X, y = digits
    found = tune_cnn(
        X[::2], y[::2], X[1::4], y[1::4],  # both classes in each (the set is sorted)
        lr_values=[5.0, 0.1], epoch_values=[3], hidden=20, random_state=0,
    )  # fmt: skip
    assert found.params["lr"] == 0.1
    assert not [w for w in recwarn if "learned nothing" in str(w.message)]


def test_a_cnn_that_learns_does_not_warn(digits, recwarn):
    X, y = digits
    SmallCNN(epochs=3, hidden=20, random_state=0).fit(X, y)
    assert not [w for w in recwarn if "learned nothing" in str(w.message)]


def test_a_kernel_overflow_names_the_settings_not_the_data():
    X, y = _blobs()
    clf = KernelCSVM(
        image_shape=(8, 8), filter_shape=(3, 3), kernel="poly", coef0=1e6, degree=20, n_iter=2
    )
    with pytest.raises(KernelOverflowError, match=r"coef0=1e\+06 and degree=20") as info:
        clf.fit(X, y)
    assert "Input X" not in str(info.value)


@pytest.mark.parametrize(
    "name", ["KernelCSVM", "LinearCSVM", "SmallCNN", "HOGSVC", "FilterBankMKL"]
)
def test_channels_last_images_are_refused_with_the_transpose_to_use(name):
    """A (n, 32, 32, 3) batch, as PIL and matplotlib hold images, was read as 32 channels
    of 32 x 3 pixels and trained without a word."""
    import csvm

    rng = np.random.default_rng(0)
    X, y = rng.random((20, 32, 32, 3)), np.repeat([0, 1], 10)
    with pytest.raises(ValueError, match=r"colour channels last.*X\.transpose\(0, 3, 1, 2\)"):
        getattr(csvm, name)().fit(X, y)


def test_channels_first_images_and_an_explicit_image_shape_are_read_as_given():
    rng = np.random.default_rng(0)
    X, y = rng.random((20, 3, 16, 16)), np.repeat([0, 1], 10)
    clf = KernelCSVM(n_iter=1, filter_shape=(3, 3)).fit(X, y)
    assert clf.filters_.shape[-3:] == (3, 3, 3)  # three channels, a 3 x 3 filter each
    odd = rng.random((20, 8, 6, 2))  # eight channels of 6 x 2 pixels, said so
    clf = KernelCSVM(n_iter=1, image_shape=(8, 6, 2), filter_shape=(2, 2)).fit(odd, y)
    assert clf.filters_.shape[-3:] == (8, 2, 2)


@pytest.mark.parametrize(
    "name", ["KernelCSVM", "SmallCNN", "HOGSVC", "FilterBankMKL", "MultiLayerSVM"]
)
def test_one_class_is_named_as_written(name):
    """HOGSVC gave LIBSVM's message, and the others showed np.int64(3)."""
    import csvm

    X, y = np.random.default_rng(0).random((10, 8, 8)), np.full(10, 3)
    with pytest.raises(ValueError, match=r"^y holds one class only \(3\): training needs"):
        getattr(csvm, name)().fit(X, y)
