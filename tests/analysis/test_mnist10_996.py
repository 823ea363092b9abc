"""Issue 35's ten-class MNIST study (csvm.analysis.mnist10_996): its candidates, the
protocol's rule and ``reproduce mnist10-996``."""

from pathlib import Path

import numpy as np
import pytest

from csvm.analysis import mnist10_996 as study
from csvm.model.kernelised import KernelCSVM
from csvm.model.virtual import refit_virtual

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
needs_mnist = pytest.mark.skipif(
    not (SHARED / "mnist").is_dir(),
    reason=f"the real MNIST IDX files are not at {SHARED}/mnist (development checkout only)",
)


def test_shift_sets_are_distinct_moves_without_the_original():
    for name, shifts in study.SHIFT_SETS.items():
        assert len(set(shifts)) == len(shifts) and (0, 0) not in shifts, name
    assert [len(s) for s in study.SHIFT_SETS.values()] == [4, 8, 12, 16]
    assert max(max(abs(dy), abs(dx)) for dy, dx in study.SHIFT_SETS["16"]) == 2


def test_candidate_config_gives_each_stack_and_the_block_rule_for_hog_like_gamma():
    for name in study.CANDIDATES:
        config = study.candidate_config(name, (28, 28))
        assert config["layers"] == study.CANDIDATES[name]["layers"]
        assert config["n_iter"] == 30 and config["C"] is None
    # 28 - 4 = 24 positions, 2x2 cells -> 12 a side, 2x2-cell blocks -> 11 a side.
    assert study.n_blocks("5x5x16-relu-avg2-bn2-sqrt", (1, 28, 28)) == 121
    assert study.candidate_config("D", (28, 28))["gamma"] == pytest.approx(0.5 / 121)
    # E: the stack's 5x5 blocks and HOG's 6x6 (csvm.model.hog_product)
    assert study.candidate_config("E", (28, 28))["gamma"] == pytest.approx(0.5 / (25 + 36))
    assert "beside_hog" not in study.candidate_config("E", (28, 28))
    assert type(study.candidate_estimator("E", (1, 28, 28))).__name__ == "HOGProductCSVM"
    assert type(study.candidate_estimator("A", (1, 28, 28), n_jobs=2)).__name__ == "KernelCSVM"
    with pytest.raises(ValueError, match="Unknown candidate"):
        study.candidate_config("Z", (28, 28))


def _row(candidate, mult, shifts, n_right):
    return {"candidate": candidate, "gamma_mult": mult, "shifts": shifts, "n_right": n_right}


def test_choose_takes_the_most_right_and_breaks_near_ties_by_the_declared_order():
    rows = [_row("A", 1.0, "4", 9890), _row("B", 1.0, "8", 9900), _row("C", 2.0, "16", 9896)]
    assert study.choose(rows)["candidate"] == "B"  # 10 more than A, 4 more than C
    rows.append(_row("A", 0.5, "16", 9897))  # within 3 of B: the earlier candidate wins
    assert study.choose(rows) == rows[-1]
    rows.append(_row("A", 0.5, "8", 9898))  # same candidate and gamma: fewer shifts win
    assert study.choose(rows) == rows[-1]
    with pytest.raises(ValueError):
        study.choose([])


def test_the_chosen_recipe_is_a_screened_candidate():
    choice = study.MNIST10_996_CHOICE
    assert choice["candidate"] in study.CANDIDATES and choice["shifts"] in study.SHIFT_SETS
    assert study.MNIST10_996_VIRTUAL == choice["shifts"]
    base = study.candidate_config(choice["candidate"], (28, 28))["gamma"]
    assert study.MNIST10_996_CONFIG["gamma"] == pytest.approx(base * choice["gamma_mult"])
    beside = bool(study.CANDIDATES[choice["candidate"]].get("beside_hog"))
    assert study.MNIST10_996_CONFIG.get("beside_hog", False) == beside


def test_two_pixel_virtual_shifts_train_on_the_moved_support_vectors():
    rng = np.random.default_rng(0)
    X = rng.random((40, 12, 12)).astype(np.float32) * 0.2
    y = np.repeat([0, 1], 20)
    X[y == 1, 4:8, 4:8] += 1.0
    clf = KernelCSVM(image_shape=(12, 12), layers="3x3x2-abs-max2", gamma=0.1, n_iter=1)
    clf = refit_virtual(clf.fit(X, y), X, study.SHIFT_SETS["16"])
    moved = {tuple(s) for s in clf.support_shift_}
    assert moved <= {(0, 0), *study.SHIFT_SETS["16"]}
    assert np.mean(clf.predict(X) == y) == 1.0


@needs_mnist
def test_reproduce_mnist10_996_saves_its_table_with_the_chosen_recipe(
    tmp_path, capsys, monkeypatch
):
    from csvm.__main__ import main
    from csvm.analysis import mnist10
    from csvm.analysis.reproduced import load_run

    monkeypatch.setattr(mnist10, "MNIST10_STACK_LEARN_ON", 150)
    load = mnist10._load

    def fewer_test_images(*args):  # 45 stacks predicting 10,000 images is slow
        X, y, X_test, y_test, prep = load(*args)
        return X, y, X_test[:200], y_test[:200], prep

    monkeypatch.setattr(mnist10, "_load", fewer_test_images)
    out = tmp_path / "mnist10-996.json"
    argv = ["reproduce", "mnist10-996", "--data-dir", str(SHARED), "--n-train", "300"]
    assert main([*argv, "--n-iter", "1", "--out", str(out)]) == 0
    run = load_run(out)
    config = run["models"][0]["config"]
    assert run["table"] == "mnist10-996"
    assert config["layers"] == study.MNIST10_996_CONFIG["layers"]
    assert config["gamma"] == pytest.approx(study.MNIST10_996_CONFIG["gamma"])
    shifts = [list(s) for s in study.SHIFT_SETS[study.MNIST10_996_VIRTUAL]]
    assert config["virtual_shifts"] == shifts
    assert "γ 0.03" in run["models"][2]["name"]  # the same-recipe plain SVM
    if study.MNIST10_996_CONFIG.get("beside_hog"):
        assert "beside HOG" in run["models"][0]["name"] and config["beside_hog"] is True
    assert "mcnemar" in run["details"]
    # H's images and test-time shifts, the same for the plain SVM (the same recipe).
    box, at_test = study.MNIST10_996_MOMENT_BOX, study.MNIST10_996_TEST_SHIFTS
    assert config.get("moment_box") == box and config["deskew"] is True
    assert "moment-normalised images (22 px)" in run["models"][0]["name"] and box == 22.0
    moved = [list(s) for s in study.SHIFT_SETS[at_test]]
    assert config["test_shifts"] == moved == run["models"][2]["config"]["test_shifts"]
    record = run["details"]["seed 0"]
    assert record["test_shifts"]["shifts"] == moved and record["baseline"]["test_shifts"]
    assert 0 <= record["test_shifts"]["accuracy_unshifted"] <= 1
    first = run["models"][1]
    assert "first fit" in first["name"] and "test_shifts" not in first["config"]


@pytest.mark.parametrize("no_deskew", [False, True])
def test_reproduce_mnist10_996_passes_its_images_and_test_time_shifts(monkeypatch, no_deskew):
    from csvm.__main__ import main
    from csvm.analysis import mnist10

    seen = {}
    monkeypatch.setattr(mnist10, "run_mnist10", lambda *a, **kw: seen.update(kw) or [])
    assert main(["reproduce", "mnist10-996", *(["--no-deskew"] if no_deskew else [])]) == 0
    box = None if no_deskew else study.MNIST10_996_MOMENT_BOX  # images as they are
    assert seen["moment_box"] == box and seen["deskewed"] is not no_deskew
    assert seen["test_shifts"] == study.MNIST10_996_TEST_SHIFTS
    assert seen["virtual"] == study.MNIST10_996_VIRTUAL
    main(["reproduce", "mnist10"])  # the other tables keep their own images
    assert seen["moment_box"] is None and seen["test_shifts"] == "none"
