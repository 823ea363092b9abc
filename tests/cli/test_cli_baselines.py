"""``csvm train --baselines``: the run's other models trained on its split and printed
with their intervals and a McNemar test against the CSVM, as the Train page shows them."""

from csvm.__main__ import main
from csvm.runs.config import RunConfig
from csvm.runs.targets import run_model

ARGV = ["train", "--n-iter", "2", "--n-train", "60", "--seed", "2"]


def _rows(out: str) -> dict[str, str]:
    """Model label -> its row of the printed table."""
    return {
        line.split("  ")[0]: line for line in out.splitlines() if "% test  (95 % interval" in line
    }


def test_the_default_baselines_are_trained_on_the_same_split_and_compared(capsys):
    assert main(ARGV) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    assert list(rows) == ["K-CSVM", "plain SVM", "small CNN"]
    # The plain SVM's row is the app's job's result on the same settings.
    config = RunConfig(n_iter=2, n_train=60, seed=2)
    svm = run_model(lambda event: None, config, "svm")
    assert f"plain SVM  {100 * svm['test_accuracy']:6.2f} % test" in rows["plain SVM"]
    tests = [line for line in out.splitlines() if line.startswith("K-CSVM vs ")]
    assert [t.split(":")[0] for t in tests] == ["K-CSVM vs plain SVM", "K-CSVM vs small CNN"]
    assert all(" p " in t or "p = " in t for t in tests)


def test_tuned_and_other_baselines_are_named_and_none_trains_only_the_csvm(capsys):
    assert main([*ARGV, "--baselines", "svm,hog", "--tune-baselines", "true"]) == 0
    captured = capsys.readouterr()
    assert list(_rows(captured.out)) == ["K-CSVM", "plain SVM (tuned on validation)", "HOG + SVM"]
    assert "training plain SVM (tuned on validation)…" in captured.err
    assert main([*ARGV, "--baselines", "none"]) == 0
    out = capsys.readouterr().out
    assert not _rows(out) and "test accuracy" in out and " vs " not in out
