"""One registry per concept: a kernel or a regulariser added in one place is offered by
RunConfig, the CLI, the URL and the estimator, and every estimator choice is offered
everywhere (issue 36)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits

from csvm import KernelCSVM, LinearCSVM, RunConfig
from csvm.cli.main import main
from csvm.model._sklearn import StrOptions
from csvm.model.kernel_registry import KERNELS, Kernel, KernelSpec
from csvm.model.kernelised import outer_objective
from csvm.model.kernels import kernel_matrix
from csvm.model.plain_svm import make_plain_svm
from csvm.model.regularisers import REGULARISERS, Regulariser
from csvm.model.solve_settings import SolveSettings
from csvm.runs.config import SPECS, parse
from csvm.runs.query import from_query, to_query
from csvm.runs.summary import run_name


def _scaled_dots(block, spec, sq_rows, sq_cols):
    block *= spec.gamma
    return block


#: gamma z.z': a kernel the library does not have, with a known value and derivative.
DUMMY_KERNEL = Kernel(
    name="dummy",
    label="dummy",
    formula="gamma z_i.z_j",
    params=("gamma",),
    from_dots=_scaled_dots,
    partials=lambda Z, K, spec: (np.full(K.shape, spec.gamma), None),
    slopes=lambda K, spec: (np.full(K.shape, spec.gamma, dtype=np.float32), None),
)
#: lam * sum f^4.
DUMMY_REGULARISER = Regulariser(
    name="quartic",
    description="lam * sum(f^4)",
    value=lambda f, lam: lam * float(np.sum(f**4)),
    gradient=lambda f, lam: 4.0 * lam * f**3,
)


@pytest.fixture
def registered(monkeypatch):
    """The dummy kernel and regulariser, registered in one place each."""
    monkeypatch.setitem(KERNELS, DUMMY_KERNEL.name, DUMMY_KERNEL)
    monkeypatch.setitem(REGULARISERS, DUMMY_REGULARISER.name, DUMMY_REGULARISER)


@pytest.fixture(scope="module")
def digits_pair():
    X, y = load_digits(return_X_y=True)
    keep = np.flatnonzero(np.isin(y, (0, 1)))[:60]
    return (X[keep] / 16.0).reshape(-1, 8, 8), y[keep]


def test_runconfig_and_the_url_offer_the_new_entries(registered):
    assert "dummy" in SPECS["kernel"].choices
    assert "quartic" in SPECS["regulariser"].choices
    config, problems = from_query({"kernel": "dummy", "regulariser": "quartic", "gamma": "0.5"})
    assert problems == []
    assert (config.kernel, config.regulariser, config.gamma) == ("dummy", "quartic", 0.5)
    assert from_query(to_query(config))[0] == config
    # Its header names only the parameters it reads.
    assert config.uses("gamma") and not config.uses("degree") and not config.uses("coef0")
    assert run_name(config).startswith("K-CSVM dummy γ 0.5,")


def test_the_cli_offers_and_trains_the_new_entries(registered, capsys):
    argv = ["train", "--dataset", "digits", "--pair", "0", "1", "--n-train", "30"]
    argv += ["--n-iter", "2", "--filter-size", "3", "--n-filters", "1"]
    argv += ["--kernel", "dummy", "--gamma", "0.5", "--regulariser", "quartic"]
    assert main(argv) == 0
    assert "test accuracy" in capsys.readouterr().out
    with pytest.raises(SystemExit):  # --help lists it among the choices
        main(["train", "--help"])
    assert "--kernel {poly,rbf,linear,dummy}" in capsys.readouterr().out


def test_the_estimator_fits_the_new_entries(registered, digits_pair):
    X, y = digits_pair
    clf = KernelCSVM(filter_shape=(3, 3), kernel="dummy", gamma=0.5, regulariser="quartic", lam=0.1)
    clf.set_params(n_iter=3, random_state=0).fit(X[:40], y[:40])
    assert clf.score(X[40:], y[40:]) > 0.9
    # The fast prediction path equals the per-model one.
    state = clf.estimators_[0]
    X4 = X[40:, None].astype(np.float32)
    np.testing.assert_allclose(
        clf.decision_function(X[40:]), state.decision_function(X4), rtol=1e-9, atol=1e-9
    )
    # A plain SVM with this kernel gets it from the registry too (a callable for SVC).
    svm = make_plain_svm(kernel="dummy", gamma=0.5, C=1.0).fit(X[:40], y[:40])
    assert svm.score(X[40:], y[40:]) > 0.9


def test_the_filter_gradient_of_a_new_kernel_is_assembled_from_its_partials(registered):
    rng = np.random.default_rng(0)
    X = rng.random((16, 1, 6, 6))
    y = np.where(np.arange(16) < 8, 1, -1)
    X[y > 0, :, :3] += 0.5
    f = rng.standard_normal((1, 1, 3, 3))
    settings = {"kernel": "dummy", "gamma": 0.7, "C": 10.0, "regulariser": "quartic"}
    settings |= {"lam": 0.05, "svm_tol": 1e-10}
    solve = SolveSettings.from_keywords(**settings)
    _, analytic = outer_objective(X, y, f, solve)
    numeric = np.zeros_like(f)
    for i in np.ndindex(f.shape):
        step = np.zeros_like(f)
        step[i] = 1e-6
        up = outer_objective(X, y, f + step, solve)[0]
        down = outer_objective(X, y, f - step, solve)[0]
        numeric[i] = (up - down) / 2e-6
    np.testing.assert_allclose(analytic, numeric, rtol=1e-4, atol=1e-6)
    # And its kernel is gamma z.z'.
    Z = rng.random((5, 4))
    np.testing.assert_allclose(kernel_matrix(Z, kernel="dummy", gamma=0.7), 0.7 * Z @ Z.T)


def test_an_unknown_value_is_refused_everywhere_and_a_removed_entry_is_gone(capsys):
    config, problems = from_query({"regulariser": "quartic"})  # not registered here
    assert config.regulariser == RunConfig().regulariser
    assert [p.name for p in problems] == ["regulariser"]
    assert "quartic" in problems[0].message and "dfo2" in problems[0].message
    with pytest.raises(SystemExit) as exit_:
        main(["train", "--kernel", "dummy"])
    assert exit_.value.code == 2
    assert "dummy" in capsys.readouterr().err
    with pytest.raises(ValueError, match="kernel"):
        KernelCSVM(kernel="dummy").fit(np.zeros((4, 6, 6)), [0, 0, 1, 1])
    assert "dummy" not in SPECS["kernel"].choices


def _estimator_options(estimator, param: str) -> set[str]:
    [options] = [c for c in estimator._parameter_constraints[param] if isinstance(c, StrOptions)]
    return set(options.options)


@pytest.mark.parametrize(
    "name", [n for n, s in SPECS.items() if s.param and s.choices and s.kind == "str"]
)
def test_every_estimator_choice_is_offered_everywhere(name):
    spec = SPECS[name]
    estimator = KernelCSVM if "kcsvm" in spec.models else LinearCSVM
    offered = set(spec.choices)
    assert offered == _estimator_options(estimator, spec.param)
    for value in offered:  # the URL, the CLI's flag (the same parser) and the fit accept it
        config, problems = parse({name: value})
        assert problems == [] and getattr(config, name) == value
        estimator(**{spec.param: value})._validate_params()


def test_kernel_parameters_are_the_registrys():
    for parameter in ("degree", "gamma", "coef0"):
        users = {n for n, e in KERNELS.items() if parameter in e.params}
        assert set(SPECS[parameter].kernels) == users
    assert KernelSpec("rbf", degree=3, coef0=2.0).used() == {"gamma": 1.0}
    assert list(KernelSpec("poly").used()) == ["degree", "gamma", "coef0"]
