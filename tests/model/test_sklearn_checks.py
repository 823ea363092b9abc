"""scikit-learn's own estimator checks on the three estimators, default-constructed.

The checks feed tabular data with 1 to 10 features.  With the default ``image_shape=None``
a perfect-square feature count is read as a square image and any other as one row of
pixels (with an ImageShapeWarning, expected here), and the default ``filter_shape=None``
keeps the filter at most half the image's side, so every check's data is valid input.
KernelCSVM's defaults (C=1.0, step="relative") train on the checks' data that no kernel
separates; the thesis's C=None with its constant step diverges there.
"""

import warnings

import pytest
from sklearn.utils.estimator_checks import check_param_validation, parametrize_with_checks

from csvm import ImageShapeWarning, KernelCSVM, LinearCSVM, SmallCNN

pytestmark = pytest.mark.filterwarnings("ignore::csvm.ImageShapeWarning")

_MAPS = (
    "transform() returns feature maps of shape (n, n_filters, H', W'), images rather than "
    "the 2-D table (and fit_transform) that transformer checks assume"
)
EXPECTED_FAILURES = {
    "check_transformer_data_not_an_array": _MAPS,
    "check_transformer_general": _MAPS,
    "check_transformer_general(readonly_memmap=True)": _MAPS,
    "check_transformer_preserve_dtypes": _MAPS,
}

ESTIMATORS = [KernelCSVM(), LinearCSVM(), SmallCNN()]


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=lambda est: EXPECTED_FAILURES)
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
