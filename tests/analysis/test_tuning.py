"""Tuned baselines: the choice maximises validation accuracy, the budget holds, test unseen."""

import dataclasses
import re
import warnings

import numpy as np
import pytest
from sklearn.svm import SVC

from csvm.analysis.tuning import (
    SVM_BUDGET,
    svm_grid,
    tune_cnn,
    tune_plain_svm,
)
from csvm.data import load_pair
from csvm.exceptions import DivergenceError
from csvm.model.baselines import SmallCNN
from csvm.runs import tuned
from csvm.runs.config import RunConfig
from csvm.runs.tuned import run_tuned_model
from tests._dataset_files import SHARED, needs_mnist
from tests._typed import assert_typed


@pytest.fixture(scope="module")
def pair():
    # 3 vs 5 of the offline MNIST sample: 700 training and 100 validation images, a pair
    # on which the settings matter.
    return load_pair("mnist-5k", 3, 5)


def _raw_svc_accuracy(d, cell):
    """The same cell fitted the ordinary way (SVC's own kernel on raw pixels)."""
    svc = SVC(
        kernel=cell["kernel"],
        degree=cell["degree"],
        gamma=cell["gamma"],
        coef0=cell["coef0"],
        C=1e10 if cell["C"] is None else cell["C"],
    )
    svc.fit(d.X_train.reshape(len(d.X_train), -1), d.y_train)
    return float(np.mean(svc.predict(d.X_val.reshape(len(d.X_val), -1)) == d.y_val))


@pytest.mark.parametrize("kernel", ["rbf", "poly", "linear"])
def test_svm_choice_maximises_validation_accuracy_over_the_grid(pair, kernel):
    result = tune_plain_svm(
        pair.X_train, pair.y_train, pair.X_val, pair.y_val, kernel=kernel, budget=12
    )
    scores = [cell["val_accuracy"] for cell in result.grid]
    # Every cell's score is what an ordinary SVC with those settings gets on validation.
    assert scores == pytest.approx([_raw_svc_accuracy(pair, c) for c in result.grid])
    assert result.val_accuracy == max(scores)
    chosen = result.grid[scores.index(max(scores))]  # ties: the earliest (simplest) cell
    assert result.params == {k: chosen[k] for k in result.params}
    # The refitted model is that cell's model.
    refit = np.mean(result.estimator.predict(pair.X_val) == pair.y_val)
    assert refit == pytest.approx(result.val_accuracy)
    if kernel == "rbf":  # the grid spans settings that matter
        assert len({c["val_accuracy"] for c in result.grid}) > 3


@pytest.mark.parametrize("budget", [1, 4, 10, 25, 30])
def test_svm_budget_is_respected(pair, budget, monkeypatch):
    fits = []
    original = SVC.fit
    monkeypatch.setattr(SVC, "fit", lambda self, *a, **k: fits.append(1) or original(self, *a, **k))
    result = tune_plain_svm(
        pair.X_train, pair.y_train, pair.X_val, pair.y_val, kernel="rbf", budget=budget
    )
    assert result.n_fits == len(result.grid) <= budget
    assert len(fits) == result.n_fits + 1  # the search, then one refit of the winner
    assert result.budget == budget
    if budget >= 4:
        assert result.n_fits >= budget * 0.8  # the budget is used, not wasted
    # The hard margin is always a candidate.
    assert any(c["C"] is None for c in result.grid)


def test_default_grid_shape_and_scale():
    rng = np.random.default_rng(0)
    X = rng.random((50, 64))
    cells = svm_grid(X, kernel="rbf", gamma=0.01, budget=SVM_BUDGET)
    assert len(cells) == 25
    gammas = sorted({c["gamma"] for c in cells})
    assert gammas == pytest.approx([0.001, 0.01 / 10**0.5, 0.01, 0.01 * 10**0.5, 0.1])
    poly = svm_grid(X, kernel="poly", budget=25)
    assert sorted({c["degree"] for c in poly}) == [1, 2, 3, 4, 5]
    # C is relative to the kernel's size: 10 times the data, a kernel (10²)² times larger
    # at degree 2 with coef0 = 0, C values 10⁴ times smaller.
    big = svm_grid(10 * X, kernel="poly", coef0=0.0, budget=25)
    small = svm_grid(X, kernel="poly", coef0=0.0, budget=25)
    for b, s in zip(big, small, strict=True):
        if b["degree"] == 2 and b["C"] is not None:
            assert b["C"] == pytest.approx(s["C"] / 1e4)


def test_grid_over_budget_and_empty_validation_are_refused(pair):
    cells = svm_grid(pair.X_train, kernel="rbf", budget=9)
    with pytest.raises(ValueError, match="9 cells for a budget of 4"):
        tune_plain_svm(pair.X_train, pair.y_train, pair.X_val, pair.y_val, budget=4, grid=cells)
    with pytest.raises(ValueError, match="no validation images|none"):
        tune_plain_svm(pair.X_train, pair.y_train, pair.X_val[:0], pair.y_val[:0])
    with pytest.raises(ValueError, match="budget must be"):
        tune_plain_svm(pair.X_train, pair.y_train, pair.X_val, pair.y_val, budget=0)


def test_unconverged_fits_are_flagged(pair, monkeypatch):
    monkeypatch.setattr("csvm.analysis.tuning.SVM_MAX_ITER", 2)
    with pytest.warns(Warning, match="stopped at LIBSVM's 2 iterations"):
        result = tune_plain_svm(
            pair.X_train, pair.y_train, pair.X_val, pair.y_val, kernel="rbf", budget=4
        )
    assert not all(c["converged"] for c in result.grid)


# -- CNN ----------------------------------------------------------------------------------
CNN = {"image_shape": (1, 28, 28), "filter_shape": (5, 5), "hidden": 10, "random_state": 0}


def test_cnn_choice_maximises_validation_and_refit_reproduces_it(pair, monkeypatch):
    fits = []
    original = SmallCNN.fit
    monkeypatch.setattr(
        SmallCNN, "fit", lambda self, *a, **k: fits.append(self.epochs) or original(self, *a, **k)
    )
    result = tune_cnn(
        pair.X_train,
        pair.y_train,
        pair.X_val,
        pair.y_val,
        lr_values=[0.003, 0.03, 0.3],
        epoch_values=(1, 3),
        budget=3,
        **CNN,
    )
    assert result.n_fits == 3 and len(fits) == 4  # three runs to 3 epochs, one refit
    assert fits[:3] == [3, 3, 3]
    assert len(result.grid) == 6
    scores = [c["val_accuracy"] for c in result.grid]
    assert len(set(scores)) > 2  # the learning rate matters here
    assert result.val_accuracy == max(scores)
    assert result.params == {k: result.grid[scores.index(max(scores))][k] for k in ("lr", "epochs")}
    # Epoch checkpoints are exact: a fresh run with the chosen epochs scores the same.
    refit = np.mean(result.estimator.predict(pair.X_val) == pair.y_val)
    assert refit == result.val_accuracy
    assert result.estimator.epochs == result.params["epochs"]
    # And the epoch-1 cell of a run equals a 1-epoch run's score.
    one = SmallCNN(lr=0.03, epochs=1, **CNN).fit(pair.X_train, pair.y_train)
    cell = next(c for c in result.grid if c["lr"] == 0.03 and c["epochs"] == 1)
    assert np.mean(one.predict(pair.X_val) == pair.y_val) == cell["val_accuracy"]


def test_cnn_budget_and_divergence(pair):
    with pytest.raises(ValueError, match="3 learning rates for a budget of 2"):
        tune_cnn(
            pair.X_train,
            pair.y_train,
            pair.X_val,
            pair.y_val,
            lr_values=[1, 2, 3],
            budget=2,
            **CNN,
        )
    with pytest.raises(ValueError, match="epochs is tuned here"):
        tune_cnn(
            pair.X_train,
            pair.y_train,
            pair.X_val,
            pair.y_val,
            lr=0.1,
            budget=2,
            **{**CNN, "epochs": 3},
        )
    # A rate that blows up is never chosen; its unreached epochs score None.  lr = 10 (the
    # largest SmallCNN accepts) diverges in the first epoch without the hidden layer.
    linear = {**CNN, "hidden": None}
    result = tune_cnn(
        pair.X_train,
        pair.y_train,
        pair.X_val,
        pair.y_val,
        lr_values=[0.03, 10.0],
        epoch_values=(1, 2),
        budget=2,
        **linear,
    )
    blown = [c for c in result.grid if c["lr"] == 10.0]
    assert all(c["diverged"] and c["val_accuracy"] is None for c in blown)
    assert result.params["lr"] == 0.03
    with pytest.raises(DivergenceError, match="Every learning rate"):
        tune_cnn(
            pair.X_train,
            pair.y_train,
            pair.X_val,
            pair.y_val,
            lr_values=[10.0],
            epoch_values=(1,),
            budget=1,
            **linear,
        )


# -- the job target -----------------------------------------------------------------------
@pytest.mark.parametrize("model", ["svm", "cnn"])
def test_job_target_never_looks_at_the_test_split(model, monkeypatch):
    config = {
        **RunConfig().to_dict(),
        "dataset": "mnist-5k",
        "class_a": "3",
        "class_b": "5",
        "n_train": None,
        "cnn_epochs": 2,
        "cnn_hidden": 10,
    }
    real = load_pair("mnist-5k", 3, 5)

    def run_with(test_images, test_labels):
        data = dataclasses.replace(real, X_test=test_images, y_test=test_labels)
        monkeypatch.setattr(tuned, "load_data", lambda c, d=None: data)
        events = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = run_tuned_model(events.append, config, model, budget=3)
        return out, events

    out, events = run_with(real.X_test, real.y_test)
    rng = np.random.default_rng(1)
    scrambled, _ = run_with(rng.random(real.X_test.shape).astype(np.float32), -real.y_test)
    assert out["tuning"]["params"] == scrambled["tuning"]["params"]
    assert out["tuning"]["grid"] == scrambled["tuning"]["grid"]
    assert out["test_accuracy"] != scrambled["test_accuracy"]
    assert out["label"].endswith("(tuned on validation)")
    assert len(out["predictions"]) == len(real.y_test)
    assert events[0]["kind"] == "start"
    assert sum(e["kind"] == "tuning" for e in events) == len(out["tuning"]["grid"])
    for event in events:
        assert_typed(event)
    assert out["tuning"]["n_fits"] <= 3


# -- python -m csvm reproduce -------------------------------------------------------------
@needs_mnist
@pytest.mark.slow
def test_reproduce_reports_thesis_and_tuned_rows_with_intervals_and_mcnemar(capsys):
    from csvm.__main__ import main

    assert (
        main(["reproduce", "table4.1", "--data-dir", str(SHARED), "--seeds", "1", "--epochs", "1"])
        == 0
    )
    out = capsys.readouterr().out
    table = [line for line in out.splitlines() if line.startswith("| ")][1:]
    labels = [line.split(" | ")[0][2:] for line in table]
    assert labels == [
        "plain SVM",
        "small CNN",
        "K-CSVM",
        "plain SVM poly, tuned on validation",
        "plain SVM rbf, tuned on validation",
        "small CNN, tuned on validation",
    ]
    # Every row: an accuracy with its Wilson interval over the 1,902 test images.
    for line in table:
        acc, low, high = (
            float(v) for v in re.search(r"\| ([\d.]+) % \(([\d.]+)–([\d.]+)\) \|", line).groups()
        )
        assert low < acc < high
    assert "| 98.32 % (97.63–98.81) |" in table[0]  # the thesis's plain SVM, 1,870 of 1,902
    mcnemar = [line for line in out.splitlines() if line.startswith("- K-CSVM vs ")]
    assert len(mcnemar) == 5
    assert all(re.search(r"points \(−?\d+ images?\), p [=<] ", line) for line in mcnemar)
