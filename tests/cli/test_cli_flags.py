"""The commands' flags as a user audit read them: one spelling across commands, help for
every flag, 0 jobs refused up front, a size or flag that cannot do what it says is said,
and multi-class steps named by their classes."""

from __future__ import annotations

import pytest

from csvm.cli.main import COMMANDS, main

CURVE = ["curve", "--sizes", "20", "--seeds", "1", "--methods", "svm"]


def _help(capsys, command: str) -> str:
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    return capsys.readouterr().out


def _refused(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    return capsys.readouterr().err


# -- one spelling ----------------------------------------------------------------------------
@pytest.mark.parametrize("pair", [["3", "5"], ["3,5"]], ids=["train's", "the saved commands'"])
@pytest.mark.parametrize("jobs", ["--n-jobs", "--jobs"])
def test_curve_takes_the_pair_and_jobs_as_train_and_sweep_write_them(pair, jobs, capsys):
    """``curve --pair 3 5`` was refused ("'3': give two different classes") and curve
    alone spelled --n-jobs as --jobs; the old spellings still work."""
    assert main([*CURVE, "--pair", *pair, jobs, "1"]) == 0
    assert "svm     n=20    seed 0" in capsys.readouterr().out


@pytest.mark.parametrize("pair", [["3"], ["3", "3"], ["3", "5", "7"], ["3,5,7"]])
def test_curve_refuses_a_pair_that_is_not_two_classes(pair, capsys):
    err = _refused(capsys, [*CURVE, "--pair", *pair])
    assert "give two different classes, e.g. 3 5 (or 3,5)" in err


# -- help --------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["train", "sweep", "reproduce", "curve"])
def test_data_dir_is_described(command, capsys):
    out = " ".join(_help(capsys, command).split())
    assert "--data-dir DIR folder of the downloaded datasets (default: $CSVM_DATA_DIR" in out


def test_every_flag_the_audit_named_has_help(capsys):
    reproduce = " ".join(_help(capsys, "reproduce").split())
    assert "--seeds SEEDS table4.1 / table4.4 / table3.1: seeds per model" in reproduce
    curve = " ".join(_help(capsys, "curve").split())
    assert "--sizes N,N,... training images per cell" in curve
    assert "--methods M,M,... a comma list of: svm, kcsvm, layers, hog, hoglearn," in curve
    sweep = " ".join(_help(capsys, "sweep").split())
    assert "the columns; NAME one of lam, eta, degree, gamma, C, filter_size," in sweep


def test_curve_help_keeps_its_example_on_two_lines(capsys):
    """The backslash ending the example's line joined the two lines in the docstring."""
    assert "--seeds 3 \\\n        --methods svm,kcsvm" in _help(capsys, "curve")


def test_reproduce_help_describes_reproduce(capsys):
    """reproduce --help showed train's old docstring ("train|reproduce", train examples)."""
    out = _help(capsys, "reproduce")
    description = out.split("\n\n")[1]
    assert description.startswith("``csvm reproduce``: a table of the thesis")
    assert "csvm train" not in out and "train|reproduce" not in out
    assert COMMANDS["reproduce"].summary  # the top-level list still names it


# -- refused or said -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "argv",
    [
        ["sweep", "--x", "lam=1", "--y", "eta=1"],
        CURVE,
        ["reproduce", "table4.1"],
    ],
    ids=["sweep", "curve", "reproduce"],
)
def test_zero_jobs_is_refused_up_front(argv, capsys):
    """``sweep --n-jobs 0`` ended with joblib's "n_jobs == 0 in Parallel has no meaning"."""
    err = _refused(capsys, [*argv, "--n-jobs", "0"])
    assert "argument --n-jobs" in err
    assert "0 jobs: give a positive number of jobs at once, or -1 for every core" in err


def test_sweep_takes_every_core(capsys):
    argv = ["sweep", "--x", "lam=1", "--y", "eta=1", "--n-train", "60", "--n-iter", "1"]
    assert main([*argv, "--n-jobs", "-1"]) == 0
    assert "validation accuracy %" in capsys.readouterr().out


def test_a_curve_size_above_the_data_is_said(capsys):
    """``--sizes 100000`` trained on every image the pair has without a word, where train
    prints a note when it trains on fewer images than asked."""
    argv = ["curve", "--sizes", "100000", "--seeds", "1", "--methods", "svm"]
    assert main(argv) == 0
    printed = capsys.readouterr()
    assert (
        "note: --sizes 100000 asked for more training images than mnist-5k has for 3 vs 5; "
        "that size trains on all 700 of them." in printed.err
    )
    assert "   700  plain SVM" in printed.out


def test_curve_resume_without_out_is_refused(capsys):
    """--resume without --out was silently ignored: every cell ran again."""
    err = _refused(capsys, [*CURVE, "--resume"])
    assert "--resume needs --out" in err


# -- multi-class lines -------------------------------------------------------------------------
def test_multi_class_steps_are_named_by_their_classes(capsys):
    """Shapes' sub-problems printed as label numbers (``0 vs 1``), and one-vs-rest as
    ``rest vs 0`` where the docstring said ``3 vs rest``."""
    tiny = ["--n-train", "60", "--n-iter", "1", "--baselines", "none"]
    assert main(["train", "--dataset", "shapes", "--classes", "all", *tiny]) == 0
    steps = [line for line in capsys.readouterr().out.splitlines() if "objective" in line]
    assert steps[0].startswith("horizontal vs vertical ")
    argv = ["train", "--classes", "3,5,7", "--multi-class", "ovr", *tiny]
    assert main(argv) == 0
    steps = [line for line in capsys.readouterr().out.splitlines() if "objective" in line]
    assert [line.split("    ")[0] for line in steps] == ["3 vs rest", "5 vs rest", "7 vs rest"]


def test_a_flag_the_model_does_not_read_is_named(capsys):
    """--kernel with the L-CSVM was accepted and changed nothing, without a word."""
    argv = ["train", "--model", "lcsvm", "--kernel", "poly", "--n-train", "60"]
    assert main([*argv, "--n-iter", "1", "--baselines", "none"]) == 0
    err = capsys.readouterr().err
    assert "note: --kernel is not read by the L-CSVM; it changes nothing." in err
    assert "--n-train" not in err and "--model" not in err


def test_cnn_epochs_with_tuned_baselines_is_named_and_why(capsys):
    """The tuned CNN chooses its epochs on validation: --cnn-epochs 1 and 20 gave the same
    93.37 %, and the app offered the box."""
    from csvm.runs.config import RunConfig

    assert not RunConfig(tune_baselines=True).uses("cnn_epochs")
    assert RunConfig(tune_baselines=False).uses("cnn_epochs")
    argv = ["train", "--tune-baselines", "true", "--cnn-epochs", "3", "--n-train", "60"]
    assert main([*argv, "--n-iter", "1", "--baselines", "none"]) == 0
    err = capsys.readouterr().err
    assert "note: --cnn-epochs is not read with --tune-baselines" in err
    assert "chosen on validation" in err and "--n-train" not in err
