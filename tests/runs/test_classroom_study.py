"""csvm.runs.classroom_study: issue 19's Classroom report as a saved run (reproduce
classroom-stack): every draw kept, fixed filters at the learned norms, the sign test."""

import numpy as np
import pytest

from csvm.__main__ import main
from csvm.analysis import mnist10
from csvm.analysis.reproduced import load_run
from csvm.runs import classroom_study
from csvm.runs.classroom_study import draw_pair, summarise_draws

_TINY = {
    "stack": ("3x3x2-abs-max2", 0.2, 0.1, 2, True),
    "one layer": (None, 0.02, 0.1, 2, False),
}


def _digits(n: int, seed: int):
    """Images in [0, 1] whose class shows as a bright bar in a row of its own."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 10
    X = rng.uniform(0, 0.3, (n, 1, 28, 28)).astype(np.float32)
    for k in range(10):
        X[y == k, 0, 2 + 2 * k, 4:24] = 1.0
    return X, y


@pytest.fixture
def tiny_study(monkeypatch):
    (Xtr, ytr), (Xte, yte) = _digits(400, 0), _digits(100, 1)
    monkeypatch.setattr(mnist10, "load_mnist10", lambda data_dir=None: (Xtr, ytr, Xte, yte))
    monkeypatch.setattr(classroom_study, "REPORT_MODELS", _TINY)
    monkeypatch.setattr(classroom_study, "REPORT_PAIRS", [(0, 6), (1, 8)])
    monkeypatch.setattr(classroom_study, "REPORT_SEEDS", range(100, 103))
    return Xte, yte


def test_classroom_stack_out_keeps_every_draw_and_its_sign_test(tmp_path, tiny_study, capsys):
    out = tmp_path / "classroom.json"
    assert main(["reproduce", "classroom-stack", "--out", str(out)]) == 0
    run = load_run(out)
    draws = run["details"]["draws"]
    assert len(draws) == 2 * 2 * 3  # models x pairs x seeds
    for d in draws:
        assert d["best_fixed"] == max(d["fixed"].values())
        assert set(d["fixed"]) == {"start", "gaussian", "delta"} and -1 <= d["cosine"] <= 1
    for model, lines in zip(run["models"], run["details"]["sign_tests"], strict=True):
        mine = [d for d in draws if d["model"] == model["name"]]
        assert model["accuracies"] == [d["learned"] for d in mine]
        s = summarise_draws(mine)
        assert lines.startswith(f"- {model['name']} (6 draws)")
        assert f"{s['wins']}+/{s['losses']}−" in lines
    assert "mcnemar" not in run["details"]  # a sign test over draws, not McNemar
    assert run["details"]["sign_tests"][0] in capsys.readouterr().out
    # A report draw is tested on every image of its pair in the test set.
    Xte, yte = tiny_study
    X, y, Xe, ye = draw_pair(mnist10.load_mnist10(), 0, 6, 100, True)
    assert len(ye) == int(np.isin(yte, (0, 6)).sum()) and len(y) == 50
    assert set(y) == {-1, 1} and np.array_equal(ye, np.where(yte[np.isin(yte, (0, 6))] == 6, 1, -1))


def test_the_sign_test_counts_draws_where_learning_beat_the_best_fixed_filter():
    rows = [
        {"learned": 0.9, "best_fixed": f, "plain": 0.8, "plain_g002": 0.85, "cosine": 0.5,
         "seconds": 1.0}
        for f in (0.8, 0.8, 0.8, 0.95, 0.9)
    ]  # fmt: skip
    s = summarise_draws(rows)
    assert (s["wins"], s["losses"], s["n"]) == (3, 1, 5)  # one tie, not counted
    assert s["sign_p"] == pytest.approx(0.625)
    assert s["minus_best_fixed"] == pytest.approx(100 * (0.3 - 0.05) / 5)
    assert s["over_plain"] == pytest.approx(10.0) and s["cosine"] == 0.5


def test_selection_draws_never_touch_the_test_set():
    (Xtr, ytr), (Xte, yte) = _digits(400, 0), _digits(100, 1)
    X, y, Xv, yv = draw_pair((Xtr, ytr, Xte, yte), 3, 5, 0, False)
    assert len(y) == 50 and len(yv) == 30  # the pair's other 30 training images (< 100)
    pool = Xtr[np.isin(ytr, (3, 5))].reshape(80, -1)
    rows = lambda A: {pool.tolist().index(a) for a in A.reshape(len(A), -1).tolist()}  # noqa: E731
    assert not rows(X) & rows(Xv) and len(rows(X) | rows(Xv)) == 80
