"""A hard-margin solve on data no kernel separates ends at its bound, and says why."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from csvm import DivergenceError, KernelCSVM, LinearCSVM, SVMIterationWarning
from csvm.model.plain_svm import make_plain_svm

# scikit-learn's own warning repeats ours, without the cause.
pytestmark = pytest.mark.filterwarnings("ignore:Solver terminated early:UserWarning")

CAUSE = (
    "with C=None (hard margin) the data may not be separable in this kernel, or the inputs "
    "are unscaled (pixels should be in [0, 1]); set a finite C or scale X"
)


def _inseparable(n=100, scale=1000.0, seed=0):
    """Every image twice, once per label: no kernel separates that; and unscaled."""
    X = np.random.default_rng(seed).random((n, 8, 8))
    return np.concatenate([X, X]) * scale, np.r_[np.zeros(n), np.ones(n)]


def test_hard_margin_on_inseparable_unscaled_data_stops_at_the_default_bound():
    X, y = _inseparable()
    clf = KernelCSVM(
        image_shape=(8, 8), filter_shape=(3, 3), C=None, n_iter=2, eta=0.0, random_state=0
    )
    assert clf.svm_max_iter == 10**6
    # Older LIBSVMs (scikit-learn < 1.9) ran to the iteration bound; 1.9's puts the
    # alphas at the hard-margin cap in ~100 iterations.  Either way the fit says why.
    ended = "stopped at its iteration bound|put an alpha at the hard-margin cap"
    with pytest.warns(SVMIterationWarning, match=ended) as record:
        clf.fit(X, y)
    ours = [w for w in record if issubclass(w.category, SVMIterationWarning)]
    assert len(ours) == 1  # once per sub-problem, not once per solve
    assert CAUSE in str(ours[0].message)
    assert issubclass(SVMIterationWarning, ConvergenceWarning)
    for e in clf.history_:
        assert e["svm_hit_max_iter"] or e["svm_at_hard_cap"]
        assert e["svm_iterations"] == 10**6 or not e["svm_hit_max_iter"]
        if e["svm_hit_max_iter"]:
            assert "svm_max_iter=1000000" in str(ours[0].message)


def test_divergence_after_hitting_the_bound_names_the_cause():
    X, y = _inseparable()
    clf = KernelCSVM(
        image_shape=(8, 8),
        filter_shape=(3, 3),
        C=None,
        step="constant",
        n_iter=5,
        svm_max_iter=10**4,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with pytest.raises(DivergenceError, match="set a finite C or scale X"):
            clf.fit(X, y)
    assert clf.history_[0]["svm_hit_max_iter"] or clf.history_[0]["svm_at_hard_cap"]


def test_converged_solves_say_so():
    rng = np.random.default_rng(1)
    X = rng.random((40, 8, 8))
    y = np.arange(40) % 2
    X[y == 1, 2:5, 2:5] += 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = KernelCSVM(image_shape=(8, 8), n_iter=2, random_state=0).fit(X, y)
    assert not any(e["svm_hit_max_iter"] for e in clf.history_)
    assert all(0 < e["svm_iterations"] < 10**6 for e in clf.history_)


def test_finite_C_message_names_the_other_causes():
    X, y = _inseparable(n=60)
    clf = KernelCSVM(
        image_shape=(8, 8), filter_shape=(3, 3), n_iter=1, C=1e6, svm_max_iter=50, random_state=0
    )
    with pytest.warns(SVMIterationWarning, match="with C=1e\\+06 the inputs may be unscaled"):
        clf.fit(X, y)


def test_lcsvm_solves_are_bounded_too():
    X, y = _inseparable(n=60)
    clf = LinearCSVM(
        image_shape=(8, 8),
        filter_shape=(3, 3),
        n_iter=1,
        lam_w=1e-6,
        lam_f=1e-6,
        solver="libsvm",
        svm_max_iter=100,
        random_state=0,
    )
    with pytest.warns(SVMIterationWarning, match="LinearCSVM: the SVM solve of the svm step"):
        clf.fit(X, y)
    assert clf.history_[0]["svm_hit_max_iter"]


def test_plain_svm_is_bounded_too():
    X, y = _inseparable(n=60)
    svm = make_plain_svm(C=None, max_iter=1000)
    assert svm.named_steps["svc"].max_iter == 1000
    assert make_plain_svm().named_steps["svc"].max_iter == 10**6
    with pytest.warns(ConvergenceWarning, match="max_iter=1000"):
        svm.fit(X, y)
