"""csvm.runs.pair_study: the stack-vs-tuned-SVM study and its saved run (reproduce
mnist45-stack / cifar10-stack)."""

import numpy as np
import pytest

from csvm.__main__ import main
from csvm.analysis.reproduced import (
    counts_text,
    load_run,
    pack_correct,
    pair_rows,
    unpack_correct,
)
from csvm.runs import pair_study
from tests.cli.test_cli import _fake_mnist

_TINY = {"layers": "3x3x2-abs-max2", "gamma": 0.2, "n_iter": 2}


def test_mnist45_stack_out_keeps_every_pair_and_its_test_images(tmp_path, monkeypatch, capsys):
    _fake_mnist(tmp_path / "mnist")
    tiny = {"mnist": {"a": _TINY, "b": {**_TINY, "gamma": 0.05}}}
    monkeypatch.setattr(pair_study, "STACK_CANDIDATES", tiny)  # the plumbing, fast
    out = tmp_path / "m45.json"
    argv = ["reproduce", "mnist45-stack", "--data-dir", str(tmp_path), "--pairs", "3-5,1-7"]
    assert main([*argv, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    run = load_run(out)
    pairs = run["details"]["pairs"]
    assert [p["pair"] for p in pairs] == ["3-5", "1-7"]
    for p in pairs:
        plain = unpack_correct(p["plain"]["correct"], p["n_test"])
        stack = unpack_correct(p["stack"]["correct"], p["n_test"])
        assert plain.mean() == pytest.approx(p["plain"]["test_accuracy"])
        assert stack.mean() == pytest.approx(p["stack"]["test_accuracy"])
        assert p["gain"] == pytest.approx(100 * (stack.mean() - plain.mean()))
        vals = p["stack"]["candidates_val"]
        assert p["stack"]["chosen"] == max(vals, key=vals.get)  # chosen on validation
        assert f"  {p['pair']}: plain {100 * plain.mean():.2f} %" in printed
    plain_row, stack_row = run["models"]
    assert plain_row["name"].startswith("mean of 2 pairs: plain SVM")
    assert stack_row["mean"] == pytest.approx(np.mean([p["stack"]["test_accuracy"] for p in pairs]))
    assert stack_row["config"]["a"]["layers"] == "3x3x2-abs-max2"
    assert run["details"]["mcnemar"][0].startswith("- stack vs tuned SVM (2 pairs)")
    assert [r["pair"] for r in pair_rows(run)] == ["3 v 5", "1 v 7"]
    total = sum(p["n_test"] for p in pairs)
    assert counts_text(run).startswith(f"{run['data']['n_train']:,} training and {total:,} test")
    assert "summed over the 2 pairs" in counts_text(run)
    assert counts_text({"data": {"n_train": 5, "n_test": 7}}) == "5 training and 7 test images. "
    assert counts_text({"data": {}}) == ""


@pytest.mark.parametrize(
    ("table", "pairs", "named"),
    [("mnist45-stack", "3-3", "3-3"), ("cifar10-stack", "cat-horse", "cat-horse"),
     ("mnist45-stack", ",", "no pair")],
)  # fmt: skip
def test_unknown_pairs_are_named(table, pairs, named, capsys):
    assert main(["reproduce", table, "--pairs", pairs]) == 2  # bad input: exit 2, on stderr
    out = capsys.readouterr().err
    assert f"{named} is not a pair of {table}" in out or "no pair is not" in out


def _row(pair: str, plain_right: np.ndarray, stack_right: np.ndarray) -> dict:
    unit = {"params": {"kernel": "rbf", "gamma": 0.03, "C": None}, "val_accuracy": 0.9}
    plain = {**unit, "correct": pack_correct(plain_right), "n_test": len(plain_right),
             "test_accuracy": float(plain_right.mean()), "seconds": 1.0}  # fmt: skip
    stack = {"correct": pack_correct(stack_right), "n_test": len(stack_right), "chosen": "16",
             "test_accuracy": float(stack_right.mean()), "seconds": 2.0, "val_accuracy": 0.95,
             "candidates": {"16": {"val_accuracy": 0.95}}}  # fmt: skip
    return {**pair_study.compare_units(plain, stack, pair), "n_train": 100}


def test_summary_counts_wins_ties_losses_and_the_sign_test():
    n = 200
    base = np.ones(n, bool)
    win = base.copy()
    lose = base.copy()
    base[:12] = False  # the plain SVM misses 12 images the stack gets right: p < 0.05
    lose[:12] = False
    rows = [_row("a", base, win), _row("b", base, base), _row("c", win, lose)]
    s = pair_study.summarise(rows)
    assert (s["wins"], s["ties"], s["losses"]) == (1, 1, 1)
    assert (s["ahead"], s["level"], s["behind"]) == (1, 1, 1)
    assert s["mean"] == pytest.approx(0.0) and s["sign_p"] == pytest.approx(1.0)


def test_cifar_record_names_each_pair_beside_the_thesis():
    right = np.arange(100) % 7 != 0
    rows = [_row("airplane-automobile", right, right), _row("cat-dog", right, ~right)]
    lines, models, extra = pair_study.study_record("cifar10", rows)
    names = [m["name"] for m in models]
    assert names[0].startswith("airplane v automobile: plain SVM") and len(names) == 4
    assert models[1]["reference"]["text"] == "85.56 ± 0.02"  # the thesis's K-CSVM, table 4.4
    assert models[2]["reference"] is None  # the thesis has no cat v dog
    assert extra["details"]["mcnemar"][1].startswith("- cat-dog: ")
    assert extra["data"]["n_test"] == 200
