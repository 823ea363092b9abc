"""The multi-class wrappers accept every csvm estimator."""

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.multiclass import OneVsOneClassifier, OneVsRestClassifier

from csvm import HOGSVC, FilterBankMKL, KernelCSVM, MultiLayerSVM
from csvm.model.platt import multiclass, one_vs_one, platt_one_vs_rest
from tests._synthetic import square_blobs

pytestmark = pytest.mark.filterwarnings("ignore::csvm.ImageShapeWarning")

ESTIMATORS = [
    FilterBankMKL(bank=["identity", "box"], n_iter=3),
    HOGSVC(image_shape=(10, 10), pixels_per_cell=(5, 5), cells_per_block=(1, 1)),
    MultiLayerSVM(n_epochs=2, random_state=0),
    KernelCSVM(image_shape=(10, 10), filter_shape=(3, 3), n_iter=2, random_state=0),
]


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_platt_one_vs_rest_and_one_vs_one_wrap_every_estimator(estimator):
    X, y = square_blobs(12, classes=(0, 1, 2), seed=0, shuffle=True)
    X = X.reshape(len(X), -1)
    ovr = platt_one_vs_rest(estimator, cv=2).fit(X, y)
    proba = ovr.predict_proba(X)
    assert proba.shape == (36, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(ovr.predict(X), ovr.classes_[proba.argmax(axis=1)])
    assert ovr.score(X, y) > 0.8
    ovo = one_vs_one(estimator).fit(X, y)
    assert len(ovo.estimators_) == 3 and ovo.score(X, y) > 0.8


def test_factory():
    est = MultiLayerSVM()
    assert isinstance(multiclass(est, "ovo"), OneVsOneClassifier)
    wrapped = multiclass(est, "ovr-platt", cv=4)
    assert isinstance(wrapped, OneVsRestClassifier)
    assert isinstance(wrapped.estimator, CalibratedClassifierCV)
    assert wrapped.estimator.method == "sigmoid" and wrapped.estimator.cv == 4
    with pytest.raises(ValueError, match="ovr-platt"):
        multiclass(est, "nope")
