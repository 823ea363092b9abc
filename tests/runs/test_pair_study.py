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
from csvm.model.virtual import SHIFTS_8
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
        virtual = unpack_correct(p["virtual"]["correct"], p["n_test"])
        assert p["virtual"]["stack_gain"] == pytest.approx(100 * (stack.mean() - virtual.mean()))
        assert p["virtual"]["shifts"] == [list(s) for s in SHIFTS_8]  # MNIST_VIRTUAL_SHIFTS
    plain_row, stack_row, virtual_row = run["models"]
    assert plain_row["name"].startswith("mean of 2 pairs: plain SVM")
    assert virtual_row["name"].startswith("mean of 2 pairs: plain SVM + virtual SVs (8 ")
    assert run["details"]["mcnemar"][-2].startswith("- stack vs plain SVM + virtual SVs (2 ")
    row = pair_rows(run)[0]
    assert row["tuned SVM + virtual SVs, %"] == f"{100 * pairs[0]['virtual']['test_accuracy']:.2f}"
    assert "vs virtual SVs, McNemar p" in row
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


def test_virtual_plain_svm_is_the_plain_svm_then_its_shifted_support_vectors():
    from types import SimpleNamespace

    from sklearn.svm import SVC

    from csvm.model.virtual import SHIFTS_4
    from tests._synthetic import square_blobs

    X, y = square_blobs(n_per_class=30, size=8, seed=1, shuffle=True)
    X4, y = X[:, None], np.where(y == 1, 1, -1)
    data = SimpleNamespace(
        X_train=X4[:40], y_train=y[:40], X_val=X4[40:50], y_val=y[40:50],
        X_test=X4[50:], y_test=y[50:], image_shape=(1, 8, 8),
    )  # fmt: skip
    params = {"kernel": "rbf", "gamma": 0.5, "C": 1.0, "degree": 2}
    svm, info = pair_study.virtual_plain_svm(data, params, SHIFTS_4, check_first_on_test=True)
    plain = SVC(kernel="rbf", gamma=0.5, C=1.0).fit(X[:40].reshape(40, -1), y[:40])
    val_right = plain.predict(X[40:50].reshape(10, -1)) == y[40:50]
    assert info["first_val_accuracy"] == val_right.mean()
    first_right = plain.predict(X[50:].reshape(10, -1)) == y[50:]
    assert info["first_correct"] == pack_correct(first_right)
    assert info["n_support_first"] == plain.n_support_.sum()
    assert svm.support_shift_.shape == (info["n_support"], 2)  # the virtual SVs' solve
    assert info["shifts"] == [list(s) for s in SHIFTS_4] and info["params"]["C"] == 1.0
    assert "first_correct" not in pair_study.virtual_plain_svm(data, params, SHIFTS_4)[1]
    poly = {"kernel": "poly", "gamma": 0.1, "C": 1.0, "degree": 3, "coef0": 0.5}
    info = pair_study.virtual_plain_svm(data, poly, SHIFTS_4[:1], check_first_on_test=True)[1]
    first_poly = SVC(kernel="poly", gamma=0.1, C=1.0, degree=3, coef0=0.5)
    first_poly.fit(X[:40].reshape(40, -1), y[:40])
    assert info["n_support_first"] == first_poly.n_support_.sum()
    assert info["params"]["degree"] == 3


def test_virtual_rows_compare_the_stack_with_plain_plus_virtual_svs():
    n = 100
    right = np.ones(n, bool)
    plain, virtual, stack, start = right.copy(), right.copy(), right.copy(), right.copy()
    plain[:10] = False  # virtual SVs fix 6 of the plain SVM's 10 errors
    virtual[:4] = False
    stack[2:5] = False  # the stack misses 3: two of virtual's and one more
    start[:8] = False

    def unit(r):
        return {"correct": pack_correct(r), "n_test": n, "test_accuracy": float(r.mean())}

    ablation = {"learned": pack_correct(stack), "fixed_start": pack_correct(start), "n_test": n}
    both = {"plain": unit(plain), "virtual": unit(virtual)}
    units = {"5-8": {**both, "stack": unit(stack), "ablation": ablation},
             "2-7": {**both, "stack": unit(virtual)}}  # fmt: skip
    ahead, level = pair_study.virtual_rows(units)
    assert ahead["pair"] == "5-8" and ahead["images"] == 1 and ahead["gain"] == pytest.approx(1.0)
    assert ahead["tuned"] == pytest.approx(0.90) and ahead["virtual_gain"] == pytest.approx(6.0)
    assert ahead["fixed_start"] == pytest.approx(0.92)
    assert ahead["learning_gain"] == pytest.approx(5.0)
    assert level["gain"] == 0 and level["outcome"] == "tie" and level["learning_gain"] is None
    s = pair_study.summarise([ahead, level])
    assert (s["ahead"], s["level"], s["behind"]) == (1, 1, 0)
    with pytest.raises(ValueError, match="different test sets"):
        pair_study.virtual_rows({"x": {**units["2-7"], "plain": {**unit(plain), "n_test": 99}}})
