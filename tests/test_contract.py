"""The library contract: imports, keyword-only parameters, the image-shape rule, the
parameter table and the bound on |X| (issue 8, item 5)."""

import inspect
import warnings

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

import csvm
from csvm import ImageShapeWarning, KernelCSVM, LinearCSVM, SmallCNN
from csvm.model.validation import SHAPE_RULE, resolve_filter_shape

CLASSES = [KernelCSVM, LinearCSVM, SmallCNN]


def _data(n=24, shape=(6, 6), seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, *shape))
    y = np.arange(n) % 2
    X[y == 1, ..., :2, :2] += 1.0  # a corner blob: separable
    return X, y


def _quick(cls, **kw):
    if cls is KernelCSVM:
        return cls(n_iter=2, C=1.0, **kw)
    if cls is LinearCSVM:
        return cls(n_iter=1, **kw)
    return cls(hidden=4, epochs=1, **kw)


def test_top_level_imports():
    from csvm import KernelCSVM as K  # noqa: F401
    from csvm import LinearCSVM as L  # noqa: F401
    from csvm import SmallCNN as S  # noqa: F401

    assert {"KernelCSVM", "LinearCSVM", "SmallCNN"} <= set(csvm.__all__)


@pytest.mark.parametrize("cls", CLASSES)
def test_constructor_parameters_are_keyword_only(cls):
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    assert params and all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params)
    with pytest.raises(TypeError):
        cls((28, 28))


@pytest.mark.parametrize("cls", CLASSES)
def test_one_constraint_per_parameter(cls):
    assert set(cls._parameter_constraints) == set(cls().get_params())


@pytest.mark.parametrize("cls", CLASSES)
def test_square_feature_count_is_read_as_a_square_image(cls):
    X, y = _data(shape=(6, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ImageShapeWarning)
        flat = _quick(cls, random_state=0).fit(X.reshape(len(X), -1), y)
    assert flat._image_shape == (1, 6, 6)
    assert flat.filter_shape_ == (3, 3)  # half of 6: the default 5x5 would leave 2x2 maps
    grey = _quick(cls, random_state=0).fit(X, y)
    np.testing.assert_array_equal(flat.filters_, grey.filters_)
    colour = _quick(cls, random_state=0).fit(np.stack([X, X], axis=1), y)
    assert colour._image_shape == (2, 6, 6)


@pytest.mark.parametrize("cls", CLASSES)
def test_non_square_feature_count_warns_with_the_rule(cls):
    X, y = _data(shape=(6, 6))
    flat = X.reshape(len(X), -1)[:, :30]  # 30 is not a perfect square
    with pytest.warns(ImageShapeWarning, match="30 features, not a perfect square") as record:
        model = _quick(cls, random_state=0).fit(flat, y)
    assert SHAPE_RULE in str(record[0].message)
    assert model._image_shape == (1, 1, 30) and model.filter_shape_ == (1, 5)
    # An explicit shape reads the same values as images, without a warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error", ImageShapeWarning)
        model = _quick(cls, image_shape=(5, 6), random_state=0).fit(flat, y)
    assert model._image_shape == (1, 5, 6)


def test_default_filter_is_the_thesis_5x5_on_real_images():
    assert resolve_filter_shape(None, (1, 28, 28)) == (5, 5)
    assert resolve_filter_shape(None, (3, 32, 32)) == (5, 5)
    assert resolve_filter_shape(None, (1, 9, 9)) == (5, 5)
    assert resolve_filter_shape(None, (1, 8, 8)) == (4, 4)
    assert resolve_filter_shape(None, (1, 1, 3)) == (1, 2)
    assert resolve_filter_shape((7, 3), (1, 28, 28)) == (7, 3)


@pytest.mark.parametrize("cls", CLASSES)
def test_an_explicit_filter_larger_than_the_image_is_refused(cls):
    X, y = _data(shape=(6, 6))
    with pytest.raises(ValueError, match="larger than the image"):
        _quick(cls, filter_shape=(7, 7)).fit(X, y)


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("value", [1e31, -2e30])
def test_huge_inputs_are_refused_with_what_to_do(cls, value):
    X, y = _data()
    X[3, 1, 1] = value
    with pytest.raises(ValueError, match=r"\|X\| <= 1e\+30.*pixels belong in \[0, 1\]"):
        _quick(cls).fit(X, y)
    fitted = _quick(cls, random_state=0).fit(_data()[0], y)
    with pytest.raises(ValueError, match="magnitude"):
        fitted.predict(X)


BAD_VALUES = [
    (KernelCSVM, "degree", 2.0),
    (KernelCSVM, "degree", 21),
    (KernelCSVM, "gamma", float("inf")),
    (KernelCSVM, "gamma", 0.0),
    (KernelCSVM, "gamma", 2e6),
    (KernelCSVM, "eta", 1e7),
    (KernelCSVM, "eta", float("nan")),
    (KernelCSVM, "C", 0.0),
    (KernelCSVM, "C", 1e31),
    (KernelCSVM, "C", float("inf")),
    (KernelCSVM, "lam", 2e6),
    (KernelCSVM, "C_last_only", "yes"),
    (KernelCSVM, "nesterov", 1.5),
    (KernelCSVM, "n_jobs", "all"),
    (KernelCSVM, "image_shape", (28,)),
    (KernelCSVM, "image_shape", (0, 28)),
    (KernelCSVM, "filter_shape", (5, 5, 5)),
    (KernelCSVM, "n_filters", 0),
    (KernelCSVM, "step", "newton"),
    (LinearCSVM, "lam_w", 0.0),
    (LinearCSVM, "n_jobs", 1.5),
    (LinearCSVM, "multi_class", "crammer"),
    (SmallCNN, "lr", 10.5),
    (SmallCNN, "lr", float("inf")),
    (SmallCNN, "dtype", "float16"),
    (SmallCNN, "batch_size", 0),
]


@pytest.mark.parametrize("cls,name,value", BAD_VALUES)
def test_bad_parameter_names_itself(cls, name, value):
    X, y = _data()
    with pytest.raises(InvalidParameterError, match=f"The '{name}' parameter of {cls.__name__}"):
        _quick(cls).set_params(**{name: value}).fit(X, y)


def test_check_params_is_the_fit_time_check():
    """``_check_params`` (used by the app to refuse settings before a run) raises what
    ``fit`` would, without data."""
    with pytest.raises(InvalidParameterError, match="'gamma' parameter"):
        KernelCSVM(gamma=-1.0)._check_params()
    with pytest.raises(ValueError, match="step='armijo'"):
        KernelCSVM(eta=0.0, step="armijo")._check_params()
    KernelCSVM()._check_params()
    LinearCSVM()._check_params()
    SmallCNN()._check_params()
