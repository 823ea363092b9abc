"""The lab on a stack held fixed: the numbers of a layered K-CSVM at eta 0, and dT/df per
layer equal to the estimator's own gradient."""

import numpy as np
import pytest

from csvm import KernelCSVM
from csvm.analysis.lab_layers import solve_fixed_stack
from csvm.runs.config import RunConfig
from csvm.runs.targets import load_data

LAYERS = "5x5x2-abs-max2,3x3x2-abs-avg2"


def test_a_stack_held_fixed_gives_the_estimators_numbers_and_every_layers_gradient():
    data = load_data(RunConfig(n_train=60).to_dict())
    events = []
    clf = KernelCSVM(
        layers=LAYERS,
        kernel="rbf",
        gamma=0.05,
        C=None,
        regulariser="dfo2",
        lam=0.1,
        n_iter=3,
        random_state=0,
    ).fit(data.X_train, data.y_train, callback=events.append)
    filters = clf.layer_filters_[0]
    result = solve_fixed_stack(
        data.X_train, data.y_train, filters, LAYERS, X_test=data.X_test, y_test=data.y_test
    )
    last = [e for e in clf.history_ if e["kind"] == "iteration"][-1]
    assert result.objective == pytest.approx(last["objective"], rel=1e-9)
    assert result.test_accuracy == pytest.approx(clf.score(data.X_test, data.y_test))
    assert [g.shape for g in result.layer_gradients] == [(2, 1, 5, 5), (2, 2, 3, 3)]
    assert all(n > 0 for n in result.gradient_norms())
    # The gradient at the first filters is the one the estimator stepped against.
    first = solve_fixed_stack(data.X_train, data.y_train, events[0]["layer_filters"], LAYERS)
    for mine, theirs in zip(first.layer_gradients, events[0]["layer_gradients"], strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-6, atol=1e-12)
    with pytest.raises(ValueError, match="need"):
        solve_fixed_stack(data.X_train, data.y_train, filters[:1], LAYERS)
