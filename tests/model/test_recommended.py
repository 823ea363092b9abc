"""``csvm.recommended``: the unfitted estimator the project recommends at a size (issue 35)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline

import csvm
from csvm import HOGSVC, recommended
from csvm.model.recommend import GRAM_LIMIT, SMALL_N, recommendation


@pytest.mark.parametrize(
    "n,shape,C",
    [(20, (28, 28), 10.0), (SMALL_N, (1, 28, 28), 10.0), (SMALL_N + 1, (28, 28), 1.0),
     (500, (3, 32, 32), 1.0), (GRAM_LIMIT, (1, 96, 32), 1.0)],
)  # fmt: skip
def test_up_to_the_gram_limit_it_is_hog_with_rbf(n, shape, C):
    clf = recommended(n, shape)
    assert isinstance(clf, HOGSVC)
    assert (clf.hog_kernel, clf.product, clf.C, clf.image_shape) == ("rbf", False, C, shape)
    assert clone(clf).get_params() == clf.get_params()
    with pytest.raises(NotFittedError):
        clf.predict(np.zeros((1, *shape)))


def test_above_the_gram_limit_it_is_the_plain_svm_with_gamma_per_pixel():
    mnist = recommended(GRAM_LIMIT + 1, (28, 28))
    cifar = recommended(60_000, (3, 32, 32))
    assert isinstance(mnist, Pipeline) and isinstance(cifar, Pipeline)
    svc = mnist.steps[-1][1]
    assert svc.kernel == "rbf" and svc.gamma == pytest.approx(0.03)
    assert cifar.steps[-1][1].gamma == pytest.approx(0.03 * 784 / 3072)


def test_images_smaller_than_two_hog_blocks_get_the_plain_svm():
    """8 x 8 digits hold one HOG block: the plain SVM was 10-15 points ahead there
    (docs/protocol_small_images.md); 16 px and more keep HOG."""
    for shape in [(8, 8), (1, 8, 8), (3, 15, 32)]:
        clf = recommended(100, shape)
        assert isinstance(clf, Pipeline), shape
        pixels = int(np.prod(shape))
        assert clf.steps[-1][1].gamma == pytest.approx(0.03 * 784 / pixels)
    assert isinstance(recommended(100, (16, 16)), HOGSVC)
    what, why = recommendation(100, (8, 8))
    assert what.startswith("plain RBF SVM") and "HOG's 8-pixel blocks" in why


def test_it_fits_and_predicts_images():
    rng = np.random.default_rng(0)
    X = rng.random((40, 16, 16)) * 0.3
    y = np.arange(40) % 2
    X[y == 1, :, 8] += 0.7
    X[y == 0, 8, :] += 0.7
    clf = recommended(len(y), (16, 16)).fit(X, y)
    assert clf.score(X, y) == 1.0


@pytest.mark.parametrize(
    "n,shape,says",
    [(0, (28, 28), "n_train"), (2.5, (28, 28), "n_train"), (True, (28, 28), "n_train"),
     (10, (28,), "image_shape"), (10, (0, 28), "image_shape"), (10, (1, 2, 3, 4), "image_shape"),
     (10, 784, "image_shape")],
)  # fmt: skip
def test_bad_arguments_are_named(n, shape, says):
    with pytest.raises(ValueError, match=says):
        recommended(n, shape)


def test_exported():
    assert "recommended" in csvm.__all__ and csvm.recommended is recommended


@pytest.mark.parametrize("module", ["csvm.model.recommend", "csvm.model.init_filters"])
def test_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
