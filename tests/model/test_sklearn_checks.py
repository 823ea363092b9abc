"""scikit-learn's own estimator checks on the estimators, default-constructed.

The checks feed tabular data with 1 to 10 features.  With the default ``image_shape=None``
a perfect-square feature count is read as a square image and any other as one row of
pixels (with an ImageShapeWarning, expected here), and the default ``filter_shape=None``
keeps the filter at most half the image's side, so every check's data is valid input.
KernelCSVM's defaults (C=1.0, step="relative") train on the checks' data that no kernel
separates; the thesis's C=None with its constant step diverges there.
"""

import inspect
import warnings
from pathlib import Path

import pytest
from sklearn.base import BaseEstimator
from sklearn.utils.estimator_checks import check_param_validation, parametrize_with_checks

import csvm
from csvm import SMO, ImageShapeWarning, KernelCSVM, LinearCSVM, SmallCNN

pytestmark = [
    pytest.mark.filterwarnings("ignore::csvm.ImageShapeWarning"),
    # The checks' data are not pixels in [0, 1]; SmallCNN says so (tested elsewhere).
    pytest.mark.filterwarnings("ignore:SmallCNN:csvm.CSVMWarning"),
]

ESTIMATORS = [KernelCSVM(), LinearCSVM(), SmallCNN(), SMO()]
#: Estimators whose checks run in their own test module (with their other tests).
CHECKED_ELSEWHERE = {
    "FilterBankMKL": "test_mkl.py",
    "HOGSVC": "test_hog.py",
    "MultiLayerSVM": "test_mlsvm.py",
}


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_every_parameter_is_validated_with_sklearn_messages(estimator):
    """One constraint per constructor parameter; a bad type or value for any of them gives
    "The 'name' parameter of Estimator must be ... Got ... instead." (not run by
    check_estimator itself, which keeps this check for scikit-learn's own estimators)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ImageShapeWarning)
        check_param_validation(type(estimator).__name__, estimator)


def test_every_exported_estimator_is_checked():
    """A new estimator exported from csvm must join the checks (here or in its own module)."""
    exported = {
        name
        for name in csvm.__all__
        if inspect.isclass(obj := getattr(csvm, name)) and issubclass(obj, BaseEstimator)
    }
    here = {type(e).__name__ for e in ESTIMATORS}
    assert exported == here | set(CHECKED_ELSEWHERE)
    folder = Path(__file__).parent
    for name, module in CHECKED_ELSEWHERE.items():
        assert f"parametrize_with_checks([{name}()])" in (folder / module).read_text(), name


def test_transform_feeds_a_pipeline():
    """transform gives the 2-D table a Pipeline step passes on: the flattened feature maps."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    rng = np.random.default_rng(0)
    X = rng.random((40, 64)).astype(np.float32)
    y = np.where(X[:, :32].sum(1) > X[:, 32:].sum(1), 1, -1)
    csvm = KernelCSVM(image_shape=(8, 8), filter_shape=(3, 3), n_iter=2, random_state=0)
    pipe = make_pipeline(csvm, LogisticRegression()).fit(X, y)
    maps = pipe[0].feature_maps(X)
    assert maps.shape == (40, 1, 6, 6)  # one filter by default, 8 - 3 + 1 = 6
    np.testing.assert_array_equal(pipe[0].transform(X), maps.reshape(40, -1))
    assert pipe.score(X, y) > 0.5
