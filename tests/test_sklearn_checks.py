"""scikit-learn's own estimator checks for both CSVMs.

The checks feed 2-D tabular data with a few features; with ``image_shape=None`` such data
is read as one row of pixels per sample, and a 1x1 filter keeps every check's feature
count valid.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from csvm import KernelCSVM, LinearCSVM

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


@parametrize_with_checks(
    [
        KernelCSVM(
            image_shape=None, filter_shape=(1, 1), n_iter=3, C=1.0, step="armijo", random_state=0
        ),
        LinearCSVM(image_shape=None, filter_shape=(1, 1), n_iter=2, random_state=0),
    ],
    expected_failed_checks=lambda est: EXPECTED_FAILURES,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
