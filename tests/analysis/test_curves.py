"""The learning curve of issue 21: cells reproducible by seed, tuned on validation only,
summarised against the plain SVM of the same draws; the CLI's errors."""

import json

import numpy as np
import pytest

from csvm.analysis.curves import (
    METHODS,
    curve_cells,
    grid_gamma,
    map_values,
    run_cell,
    run_curve,
    summarise_curve,
)
from csvm.cli.main import main


def _cell(method, seed, bits, n_train=10):
    """A cell as run_cell gives it, with the test images it got right given as bits."""
    correct = np.array(bits, dtype=bool)
    return {
        "method": method,
        "n_train": n_train,
        "seed": seed,
        "test_accuracy": float(correct.mean()),
        "n_test": len(correct),
        "correct": np.packbits(correct).tobytes().hex(),
    }


def test_a_cell_is_reproducible_by_its_seed_and_tuned_on_validation():
    first = run_cell("mnist-5k", "3", "5", "kcsvm", 20, 0)
    again = run_cell("mnist-5k", "3", "5", "kcsvm", 20, 0)
    other = run_cell("mnist-5k", "3", "5", "kcsvm", 20, 1)
    drop = ("seconds",)
    assert {k: v for k, v in first.items() if k not in drop} == {
        k: v for k, v in again.items() if k not in drop
    }
    assert first["correct"] != other["correct"]  # another draw of the 20 images
    assert first["n_train"] == 20 and 0.5 < first["test_accuracy"] <= 1
    assert 0 <= first["validation"] <= 1 and "gamma" in first["params"]
    grid = {p["gamma"] for p in METHODS["kcsvm"][1]}
    assert first["params"]["gamma"] in grid  # MNIST's maps: the grid as written


def test_the_kcsvm_grids_move_with_the_size_of_the_maps():
    # Two 5x5 filters: 2 x 24 x 24 values on MNIST, 2 x 92 x 28 on CIFAR's stacked planes.
    assert map_values("kcsvm", (1, 28, 28)) == 2 * 24 * 24
    assert map_values("kcsvm", (1, 96, 32)) == 2 * 92 * 28
    # The stack: 5x5x8, max 2 then 3x3x8, max 2: 8 x 5 x 5 on MNIST, 8 x 22 x 6 on CIFAR.
    assert map_values("layers", (28, 28)) == 8 * 5 * 5
    assert map_values("layers", (1, 96, 32)) == 8 * 22 * 6
    assert grid_gamma("kcsvm", 0.05, (1, 28, 28)) == 0.05
    assert grid_gamma("kcsvm", 0.05, (1, 96, 32)) == pytest.approx(0.05 * 1152 / 5152)
    # The stack keeps its grid as written (chosen on CIFAR-10's validation draws).
    assert grid_gamma("layers", 0.05, (1, 96, 32)) == 0.05


def test_the_summary_sets_every_method_against_the_svm_of_the_same_draws():
    cell = _cell
    cells = [
        cell("svm", 0, [1, 0, 0, 1, 1, 0, 1, 0, 1, 1]),
        cell("svm", 1, [1, 1, 0, 1, 1, 0, 1, 0, 1, 1]),
        cell("kcsvm", 0, [1, 1, 1, 1, 1, 0, 1, 0, 1, 1]),
        cell("kcsvm", 1, [1, 1, 1, 1, 1, 1, 1, 1, 1, 0]),
    ]
    rows = {r["method"]: r for r in summarise_curve(cells)}
    assert rows["svm"]["accuracy"] == pytest.approx(0.65)
    assert rows["kcsvm"]["accuracy"] == pytest.approx(0.85)
    assert rows["kcsvm"]["gain_over_svm"] == pytest.approx(0.20)
    # Each test image once: over the two seeds kcsvm gains 1, 2, 1, 1 images' worth on five
    # images and loses 1 on one.  Of the 32 sign flips of (1, 2, 1, 1, -1), 10 give a sum
    # of 4 or more in size: p = 10/32, where pooling the seeds' discordant counts (5 and
    # 1) as independent trials gave 7/32.
    assert rows["kcsvm"]["mcnemar_p"] == pytest.approx(10 / 32)
    # The interval also counts each of the 10 test images once: 8.5 right on average.
    from csvm.analysis.stats import wilson_interval

    assert rows["kcsvm"]["interval"] == list(wilson_interval(9, 10))
    assert "gain_over_svm" not in rows["svm"]


def test_two_sizes_above_the_data_count_their_one_draw_once():
    """csvm curve --sizes 1000,2000 on a pair of 700 images trains both on all 700: the
    same draw, which was pooled twice (its seeds and McNemar counts doubled)."""
    from csvm.analysis.stats import mcnemar_p

    svm, kcsvm = [1, 0, 0, 1, 1, 0, 1, 0, 1, 1], [1, 1, 1, 1, 1, 0, 1, 0, 1, 1]
    cells = [_cell("svm", 0, svm), _cell("kcsvm", 0, kcsvm)]
    rows = {r["method"]: r for r in summarise_curve(cells + cells)}
    assert rows["kcsvm"]["seeds"] == 1 and rows["svm"]["seeds"] == 1
    assert rows["kcsvm"]["mcnemar_p"] == pytest.approx(mcnemar_p(2, 0))


def test_cells_put_the_reference_svm_first_and_refuse_unknown_methods():
    assert curve_cells(["hog", "svm"], [20], [0])[0] == ("svm", 20, 0)
    with pytest.raises(ValueError, match="choose from"):
        curve_cells(["cnn"], [20], [0])
    assert len(run_curve("mnist-5k", ("3", "5"), ["svm", "hog"], [20], [0, 1])) == 4


def test_the_cli_saves_the_curve_and_names_bad_arguments(tmp_path, capsys):
    out = tmp_path / "curve.json"
    argv = ["curve", "--sizes", "20", "--seeds", "1", "--methods", "svm,layers"]
    assert main([*argv, "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["kind"] == "curve" and record["command"].startswith("python -m csvm curve")
    assert [r["method"] for r in record["rows"]] == ["layers", "svm"]
    assert "gain over SVM" in capsys.readouterr().out
    for bad, says in [
        (["--methods", "svm,cnn"], "unknown method"),
        (["--sizes", "1"], "give sizes of 2"),
        (["--out", str(tmp_path)], "is a folder"),
        (["--pair", "3,3"], "two different classes"),
    ]:
        with pytest.raises(SystemExit):
            main(["curve", *bad])
        assert says in capsys.readouterr().err


def test_pairwise_sets_any_two_methods_against_each_other():
    from csvm.analysis.curves import pairwise

    cells = [_cell("hog", 0, [1, 1, 0, 0]), _cell("layers", 0, [1, 0, 1, 1])]
    (row,) = pairwise(cells, "layers", "hog")
    assert row["difference"] == pytest.approx(0.25)
    from csvm.analysis.stats import mcnemar_p

    assert row["mcnemar_p"] == pytest.approx(mcnemar_p(2, 1))
    assert pairwise(cells, "layers", "mkl") == []


def test_the_cli_writes_after_every_cell_and_resumes_where_it_stopped(tmp_path, capsys):
    out = tmp_path / "curve.json"
    base = ["curve", "--sizes", "20", "--methods", "svm", "--out", str(out)]
    assert main([*base, "--seeds", "1"]) == 0
    first = json.loads(out.read_text())
    assert first["complete"] and len(first["cells"]) == 1
    capsys.readouterr()
    assert main([*base, "--seeds", "2", "--resume"]) == 0
    printed = capsys.readouterr().out
    assert "seed 0" not in printed and "seed 1" in printed  # only the new cell ran
    second = json.loads(out.read_text())
    assert [c["seed"] for c in second["cells"]] == [0, 1]
    assert second["cells"][0] == first["cells"][0]
    assert main(["curve", "--pair", "4,9", "--sizes", "20", "--out", str(out), "--resume"]) == 2
    assert "holds a curve of mnist-5k" in capsys.readouterr().err


def test_the_learned_hog_stack_is_a_curve_method_tuned_on_c_only():
    from csvm.analysis.curves import HOG_STACK, HOG_STACK_G, _estimator

    clf = _estimator("hoglearn", {"C": 10.0}, (28, 28), 3)
    # 5x5 filters on 28x28: 24x24 maps, 6x6 cells of 4x4, 5x5 blocks of 2x2 cells
    assert clf.layers == HOG_STACK and clf.filter_init == "hog" and clf.C == 10.0
    assert clf.gamma == pytest.approx(HOG_STACK_G / 25) and clf.random_state == 3
    cell = run_cell("mnist-5k", "3", "5", "hoglearn", 20, 0)
    assert cell["params"]["C"] in {p["C"] for p in METHODS["hoglearn"][1]}
    assert 0.5 < cell["test_accuracy"] <= 1


def test_cifar10s_learned_hog_setting_is_the_3x3_stack_at_g_1():
    from csvm.analysis.curves import HOG_STACKS, LEARNED_METHODS, _estimator

    # docs/protocol_learned_hog.md, addendum 3: chosen on deer v horse's validation images
    assert HOG_STACKS["hoglearn3"] == ("3x3x8-relu-avg4-bn2-sqrt", 1.0)
    assert {"hoglearn", "hoglearn3"} <= set(LEARNED_METHODS) <= set(METHODS)
    clf = _estimator("hoglearn3", {"C": 100.0}, (96, 32), 1)
    # 3x3 filters on CIFAR-10's stacked 96x32: 94x30 maps, 23x7 cells, 22x6 blocks
    assert clf.layers == "3x3x8-relu-avg4-bn2-sqrt" and clf.filter_init == "hog"
    assert clf.gamma == pytest.approx(1.0 / 132) and clf.C == 100.0 and clf.random_state == 1
    assert clf.step == "relative" and clf.eta == 0.1 and clf.n_iter == 10
    cell = run_cell("mnist-5k", "3", "5", "hoglearn3", 20, 0)
    assert cell["method"] == "hoglearn3" and 0.5 < cell["test_accuracy"] <= 1


def test_the_colour_stack_sees_cifar10s_planes_as_three_channels():
    from csvm.analysis.curves import COLOUR_STACKS, LEARNED_METHODS, _estimator, _flat

    # docs/protocol_learned_hog.md, addendum 4: chosen on deer v horse and ship v truck
    assert COLOUR_STACKS["hogcolour"] == ("3x3x24-relu-avg4-bn2-sqrt", 2.0, "hog-colour")
    assert "hogcolour" in LEARNED_METHODS and "hogcolour" in METHODS
    clf = _estimator("hogcolour", {"C": 10.0}, (1, 96, 32), 2)
    # 3x3 filters on 32x32 planes: 30x30 maps, 7x7 cells, 6x6 blocks
    assert clf.image_shape == (3, 32, 32) and clf.filter_init == "hog-colour"
    assert clf.gamma == pytest.approx(2.0 / 36) and clf.C == 10.0 and clf.random_state == 2
    X = np.random.default_rng(0).random((4, 1, 96, 32))
    np.testing.assert_array_equal(_flat("hogcolour", X), X.reshape(4, 3072))
    cell = run_cell("mnist-5k", "3", "5", "hogcolour", 20, 0)  # grey: hog-colour is hog
    assert cell["method"] == "hogcolour" and 0.5 < cell["test_accuracy"] <= 1


def test_the_stacks_beside_hog_count_hogs_blocks_in_their_gamma():
    from csvm.analysis.curves import LEARNED_METHODS, PRODUCT_STACKS, _estimator
    from csvm.model.hog_product import HOGProductCSVM

    # docs/protocol_learned_hog.md, addendum 6: g chosen on the selection pairs
    assert {"hogprod", "hogprod3"} <= set(LEARNED_METHODS) and "hogprod0" not in LEARNED_METHODS
    assert set(PRODUCT_STACKS) <= set(METHODS)
    clf = _estimator("hogprod", {"C": 10.0}, (28, 28), 3)
    g = PRODUCT_STACKS["hogprod"][1]
    # the stack's 5x5 blocks, and HOG's 6x6 blocks of 2x2 cells of 4x4 pixels
    assert isinstance(clf, HOGProductCSVM) and clf.gamma == pytest.approx(g / (25 + 36))
    assert clf.eta == 0.1 and clf.n_iter == 10 and clf.random_state == 3
    start = _estimator("hogprod0", {"C": 10.0}, (28, 28), 3)
    assert start.eta == 0.0 and start.gamma == clf.gamma
    cifar = _estimator("hogprod3", {"C": 1.0}, (96, 32), 0)
    # 22x6 blocks of the 3x3 stack, and HOG's 23x7 on the stacked 96x32 image
    assert cifar.gamma == pytest.approx(PRODUCT_STACKS["hogprod3"][1] / (132 + 161))
    cell = run_cell("mnist-5k", "3", "5", "hogprod", 20, 0)
    assert cell["method"] == "hogprod" and 0.5 < cell["test_accuracy"] <= 1


def test_virtual_methods_solve_their_base_again_with_the_same_copies(monkeypatch):
    from csvm.analysis import curves
    from csvm.model import virtual

    # docs/protocol_learned_hog.md, addenda 8 and 9: one base method each, the learned
    # model and HOG given the same copies
    assert set(curves.VIRTUAL) <= set(METHODS)
    assert {"hogprodv", "hogprod3m"} <= set(curves.LEARNED_METHODS)
    by_copies = {}
    for method, (base, shifts, mirror) in curves.VIRTUAL.items():
        assert base in METHODS and base not in curves.VIRTUAL
        by_copies.setdefault((shifts, mirror), set()).add(base)
    assert all(bases >= {"hog"} and len(bases) == 2 for bases in by_copies.values())
    seen = []
    real = virtual.add_virtual
    monkeypatch.setattr(
        virtual, "add_virtual", lambda *a, **k: seen.append((a[3], a[4])) or real(*a, **k)
    )
    cell = run_cell("mnist-5k", "3", "5", "hogv", 20, 0)
    assert cell["method"] == "hogv" and 0.5 < cell["test_accuracy"] <= 1
    shifts = virtual.SHIFT_SETS[curves.VIRTUAL["hogv"][1]]
    assert seen == [(shifts, False)] * len(METHODS["hogv"][1])  # once per grid point
    plain = run_cell("mnist-5k", "3", "5", "hog", 20, 0)
    assert len(seen) == 3 and plain["method"] == "hog"


def test_where_learning_pays_sorts_the_sizes_by_the_mcnemar_p():
    from csvm.analysis.curves import where_learning_pays

    right, wrong = [True] * 40, [False] * 40
    cells = [_cell("hoglearn", 0, right, 50), _cell("hog", 0, wrong, 50),  # ahead
             _cell("hoglearn", 0, right[:20] + wrong[:20], 100),
             _cell("hog", 0, wrong[:20] + right[:20], 100),  # 20 / 20: level
             _cell("hoglearn", 0, wrong, 200), _cell("hog", 0, right, 200)]  # fmt: skip
    line = where_learning_pays(cells, "hoglearn")
    assert "ahead at 50; level at 100; behind at 200" in line
    assert where_learning_pays(cells, "kcsvm") is None  # never ran


def test_the_recommended_method_is_csvm_recommended_at_the_cells_size_with_no_grid(
    tmp_path, capsys
):
    from sklearn.pipeline import Pipeline

    from csvm.analysis.curves import _estimator
    from csvm.model.hog import HOGSVC

    assert METHODS["recommended"][1] == [{}]  # one point: nothing chosen on validation
    small = _estimator("recommended", {}, (1, 28, 28), 0, 200)
    assert isinstance(small, HOGSVC) and small.C == 10.0 and small.product is False
    large = _estimator("recommended", {}, (1, 96, 32), 0, 201)
    assert isinstance(large, HOGSVC) and large.C == 1.0 and large.image_shape == (1, 96, 32)
    plain = _estimator("recommended", {}, (1, 28, 28), 0, 15_001)
    assert isinstance(plain, Pipeline) and plain[-1].gamma == pytest.approx(0.03)
    out = tmp_path / "curve.json"
    argv = ["curve", "--sizes", "20", "--seeds", "1", "--methods", "recommended"]
    assert main([*argv, "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["methods"] == {"recommended": "recommended model (HOG + RBF SVM, fixed C)"}
    (cell,) = [c for c in record["cells"] if c["method"] == "recommended"]
    assert cell["params"] == {"estimator": "HOG + RBF SVM, C 10"}
    assert 0.5 < cell["test_accuracy"] <= 1
    (row,) = [r for r in record["rows"] if r["method"] == "recommended"]
    assert "mcnemar_p" in row  # set against the tuned plain SVM of the same draw
    assert "recommended model (HOG + RBF SVM, fixed C)" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["curve_mnist_3v5.json", "curve_cifar10_airplane_automobile.json"])
def test_the_saved_recommended_cells_are_hogs_cells_where_hog_chose_the_same_c(name):
    """csvm.recommended is HOG + RBF SVM at C 10 up to 200 images and C 1 above: in the
    saved curves it has a cell per size and seed, and where the HOG cell of the same draw
    chose that C on validation, both got the very same test images right."""
    from csvm.analysis.curves import RUNS_DIR, load_curve
    from csvm.model.recommend import SMALL_N

    record = load_curve(RUNS_DIR / name)
    index = {(c["method"], c["n_train"], c["seed"]): c for c in record["cells"]}
    mine = [c for c in record["cells"] if c["method"] == "recommended"]
    assert len(mine) == len(record["sizes"]) * record["seeds"]
    same_c = 0
    for cell in mine:
        C = 10.0 if cell["n_train"] <= SMALL_N else 1.0
        assert cell["params"] == {"estimator": f"HOG + RBF SVM, C {C:g}"}
        hog = index[("hog", cell["n_train"], cell["seed"])]
        if hog["params"]["C"] == C:
            assert hog["correct"] == cell["correct"]
            same_c += 1
    assert same_c >= len(mine) // 2


def test_a_saved_curve_is_summarised_again_from_its_cells(tmp_path):
    """A saved curve's rows are today's: the method's name now (the saved curves named
    csvm.recommended without saying it is HOG + RBF SVM) and the test by image (curves
    saved before 2026-11-28 pooled the seeds' discordant counts)."""
    from csvm.analysis.curves import METHODS, RUNS_DIR, load_curve, summarise_curve

    record = json.loads((RUNS_DIR / "curve_mnist_3v5.json").read_text("utf-8"))
    for row in record["rows"]:  # as an old file held them
        row["label"], row["mcnemar_p"] = "recommended model (csvm.recommended)", 1e-9
    path = tmp_path / "curve_old.json"
    path.write_text(json.dumps(record), "utf-8")
    rows = load_curve(path)["rows"]
    assert rows == summarise_curve(record["cells"])
    assert {r["label"] for r in rows if r["method"] == "recommended"} == {METHODS["recommended"][0]}
    assert "HOG + RBF SVM" in METHODS["recommended"][0]
    # Cells this version cannot read: the rows as saved, under today's names.
    record["cells"] = [{"method": "recommended"}]
    record["rows"] = [{"method": "recommended", "label": "old"}, {"method": "x", "label": "kept"}]
    path.write_text(json.dumps(record), "utf-8")
    assert [r["label"] for r in load_curve(path)["rows"]] == [METHODS["recommended"][0], "kept"]


def test_the_estimate_takes_the_median_cell_at_the_nearest_measured_size():
    from csvm.analysis.curves import estimate_seconds

    saved = [{"cells": [
        {"method": "hog", "n_train": 500, "seconds": s} for s in (880.0, 35.0, 50.0)
    ] + [{"method": "hog", "n_train": 20, "seconds": 4.0}]}]  # fmt: skip
    assert estimate_seconds([("hog", 500, 0)], saved) == 50.0  # not the starved 880 s
    assert estimate_seconds([("hog", 1000, 0)], saved) == 50.0 * 4  # (1000 / 500)²
    assert estimate_seconds([("hog", 10, 0)], saved) == 4.0  # smaller: not scaled down
    assert estimate_seconds([("svm", 30, 0)], saved) is None


def test_virtual_copies_must_be_images_of_the_same_class(tmp_path, capsys):
    from csvm.analysis.curve_virtual import left_out_note, suited_methods, unsuited

    assert unsuited("hogm", "mnist").startswith("mirrored")  # a mirrored 3 is no digit
    assert unsuited("hogv", "cifar10").startswith("shifted")  # rows cross the stacked planes
    assert unsuited("hogm", "cifar10") is None and unsuited("hogv", "mnist-5k") is None
    assert suited_methods(["svm", "hogprod3m", "hogprodv"], "digits") == ["svm", "hogprodv"]
    assert unsuited("hogm", "no-such-data") is None  # loading it names the problem
    with pytest.raises(ValueError, match="does not suit cifar10"):
        curve_cells(["svm", "hogprodv"], [20], [0], "cifar10")
    assert left_out_note(["svm", "hogv"], "mnist") is None
    assert left_out_note(["hogprod3m", "hogm"], "mnist").count("mirrored digit") == 1
    assert main(["curve", "--methods", "svm,hogm", "--out", str(tmp_path / "c.json")]) == 2
    said = capsys.readouterr().err
    assert "'hogm'" in said and "does not suit mnist-5k" in said and "Traceback" not in said
    assert not (tmp_path / "c.json").exists()
