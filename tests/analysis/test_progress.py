"""The command line's progress bar and the ten-class run's report."""

import io
from pathlib import Path

import numpy as np
import pytest

from csvm.analysis.progress import ProgressBar, format_seconds

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
needs_mnist = pytest.mark.skipif(
    not (SHARED / "mnist").is_dir(),
    reason=f"the real MNIST IDX files are not at {SHARED}/mnist (development checkout only)",
)


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_format_seconds():
    assert format_seconds(65) == "1:05"
    assert format_seconds(3725) == "1:02:05"
    assert format_seconds(-3) == "0:00"


def test_bar_counts_and_estimates_the_time_left(monkeypatch):
    now = [0.0]
    monkeypatch.setattr("csvm.analysis.progress.time.perf_counter", lambda: now[0])
    out = io.StringIO()
    bar = ProgressBar(total=4, unit="pairs", stream=out, interval=0.0, width=4)
    assert bar.eta() is None
    now[0] = 10.0
    bar.update(1, note="pair (0, 1)")  # 1 step in 10 s: 3 left, 30 s
    assert out.getvalue().splitlines()[-1] == (
        "[#---] 1/4 pairs  25 % 0:10 elapsed, ETA 0:30  pair (0, 1)"
    )
    now[0] = 30.0
    bar.update(1)  # 2 steps in 30 s: 2 left, 30 s
    assert out.getvalue().splitlines()[-1].endswith("0:30 elapsed, ETA 0:30  pair (0, 1)")


def test_bar_on_a_file_writes_a_line_now_and_then_and_redraws_on_a_terminal():
    quiet = io.StringIO()
    bar = ProgressBar(total=100, stream=quiet, interval=3600)
    for _ in range(99):
        bar.callback({"pair": [3, 5]})
    assert len(quiet.getvalue().splitlines()) == 1  # the first update only
    bar.update(1)  # the last step always shows
    bar.close()
    lines = quiet.getvalue().splitlines()
    assert lines[-2].startswith("[###") and "100/100" in lines[-2]
    assert lines[-1].startswith("done: 100 steps in")
    tty = _Tty()
    bar = ProgressBar(total=3, stream=tty)
    bar.update()
    bar.update()
    assert tty.getvalue().count("\r") == 2 and "\n" not in tty.getvalue()


@needs_mnist
def test_reproduce_mnist10_runs_end_to_end_on_a_subsample(tmp_path, capsys):
    from csvm.__main__ import main
    from csvm.analysis.reproduced import load_run

    out = tmp_path / "mnist10.json"
    argv = ["reproduce", "mnist10", "--data-dir", str(SHARED), "--n-train", "300"]
    assert main([*argv, "--n-iter", "2", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert "300 training images, 10,000 test images" in printed.out
    assert "done: 90 pair iterations" in printed.err  # 45 pairs x 2 iterations
    run = load_run(out)
    assert run["table"] == "mnist10" and run["models"][0]["reference"]["mean"] == 99.6
    record = run["details"]["seed 0"]
    assert run["models"][0]["accuracies"] == [record["test_accuracy"]]
    assert len(record["pairs"]) == 45 and all(p["steps"] == 2 for p in record["pairs"])
    assert 0.5 < record["test_accuracy"] <= 1.0
    assert f"{100 * record['test_accuracy']:.2f} %" in printed.out
    assert np.isclose(
        sum(record["split_seconds"].values()), sum(p["seconds"] for p in record["pairs"])
    )
    # The virtual support vectors (4 shifts by default) come after the first fit, and the
    # first fit's own figures are kept beside them.
    first, virtual = record["first_fit"], record["virtual"]
    assert len(virtual["shifts"]) == 4 and virtual["n_support"] > first["n_support"]
    assert len(virtual["pairs"]) == 45 and {"kernel", "svm"} <= set(virtual["pairs"][0])
    assert "done: 45 pairs solved again" in printed.err
    assert record["fit_seconds"] == pytest.approx(first["fit_seconds"] + virtual["refit_seconds"])
    # Then the plain SVM per pair given the same images and virtual support vectors.
    base = record["baseline"]
    assert [m["accuracies"] for m in run["models"]] == [
        [record["test_accuracy"]],
        [first["test_accuracy"]],
        [base["test_accuracy"]],
        [base["first_fit"]["test_accuracy"]],
    ]
    assert base["n_support"] > base["first_fit"]["n_support"]
    assert "plain RBF SVM" in run["models"][2]["name"] and "virtual" in run["models"][2]["name"]
    assert f"{100 * base['test_accuracy']:.2f} % (first fit" in printed.out
    assert "virtual SVs" in run["models"][0]["name"] and "first fit" in run["models"][1]["name"]
    assert all(m["config"]["deskew"] is True for m in run["models"])  # deskewed by default
    assert "deskewed images" in run["models"][0]["name"] and record["deskew_seconds"] > 0
    assert f"first fit alone: {100 * first['test_accuracy']:.2f} %" in printed.out


@needs_mnist
def test_reproduce_mnist10_stack_learns_on_a_subsample_solves_on_all_and_keeps_mcnemar(
    tmp_path, capsys, monkeypatch
):
    from csvm.__main__ import main
    from csvm.analysis import mnist10
    from csvm.analysis.reproduced import load_run, unpack_correct

    monkeypatch.setattr(mnist10, "MNIST10_STACK_LEARN_ON", 150)
    load = mnist10._load

    def fewer_test_images(*args):  # 45 stacks predicting 10,000 images three times is slow
        X, y, X_test, y_test, prep = load(*args)
        return X, y, X_test[:400], y_test[:400], prep

    monkeypatch.setattr(mnist10, "_load", fewer_test_images)
    out = tmp_path / "mnist10-stack.json"
    argv = ["reproduce", "mnist10-stack", "--data-dir", str(SHARED), "--n-train", "300"]
    assert main([*argv, "--n-iter", "2", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert "filters learned on 150 images; solving the 45 SVMs on all" in printed.out
    run = load_run(out)
    record = run["details"]["seed 0"]
    assert run["table"] == "mnist10-stack" and "5x5x16-abs-max2" in run["models"][0]["name"]
    assert run["models"][0]["config"]["layers"] == "5x5x16-abs-max2"
    # The plain baseline keeps reproduce mnist10's gamma, not the stack's.
    assert "γ 0.03" in run["models"][2]["name"]
    # Predictions kept (one bit per test image) and the McNemar test computed from them.
    n = run["data"]["n_test"]
    bits = [unpack_correct(r["test_correct"], n) for r in (record, record["baseline"])]
    assert [b.mean() for b in bits] == pytest.approx(
        [record["test_accuracy"], record["baseline"]["test_accuracy"]]
    )
    m = record["mcnemar"]
    assert m["model_only"] == int(np.sum(bits[0] & ~bits[1].astype(bool)))
    assert 0 <= m["p"] <= 1 and "McNemar" in printed.out
    assert run["details"]["mcnemar"][0].startswith(f"- {run['models'][0]['name']}")


@needs_mnist
def test_reproduce_mnist10_without_deskewing_or_virtual_support_vectors_is_one_model(
    tmp_path, capsys
):
    from csvm.__main__ import main
    from csvm.analysis.reproduced import load_run

    out = tmp_path / "mnist10.json"
    argv = ["reproduce", "mnist10", "--data-dir", str(SHARED), "--n-train", "200"]
    flags = ["--n-iter", "1", "--virtual", "none", "--no-deskew", "--no-baseline"]
    assert main([*argv, *flags, "--out", str(out)]) == 0
    run = load_run(out)
    record = run["details"]["seed 0"]
    assert "virtual" not in record and "baseline" not in record and len(run["models"]) == 1
    assert run["models"][0]["config"]["deskew"] is False and record["deskew_seconds"] is None
    assert run["models"][0]["accuracies"] == [record["first_fit"]["test_accuracy"]]
    assert "first fit alone" not in capsys.readouterr().out
