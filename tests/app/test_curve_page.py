"""The "When does the filter pay?" page: saved curves drawn from their files, a live curve
run one job per cell, bad input named."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from csvm.analysis import curves
from csvm.analysis.curves import load_curve, run_curve, summarise_curve

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "curve.py")


@pytest.fixture(scope="module")
def cells():
    return run_curve("mnist-5k", ("3", "5"), ["svm", "kcsvm"], [20], [0, 1])


@pytest.fixture
def runs_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "runs"
    folder.mkdir()
    monkeypatch.setattr(curves, "RUNS_DIR", folder)
    return folder


def _save(folder: Path, cells, name="curve_test.json") -> dict:
    record = {
        "kind": "curve",
        "command": "python -m csvm curve --sizes 20 --seeds 2 --methods svm,kcsvm",
        "dataset": "mnist-5k",
        "pair": ["3", "5"],
        "rows": summarise_curve(cells),
        "cells": cells,
    }
    (folder / name).write_text(json.dumps(record))
    return record


def test_a_saved_curve_is_drawn_from_its_file(runs_dir, cells):
    record = _save(runs_dir, cells)
    (runs_dir / "curve_broken.json").write_text("{not json")
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    figures = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert [f["layout"]["title"]["text"] for f in figures] == [
        "mnist-5k: 3 v 5<br><sup>learned: one layer</sup>"
    ]
    table = at.dataframe[0].value
    svm = record["rows"][[r["method"] for r in record["rows"]].index("svm")]
    row = table[table["method"] == svm["label"]].iloc[0]
    assert row["test accuracy"] == round(100 * svm["accuracy"], 2)
    assert row["McNemar p"] == "reference"
    low, high = (100 * v for v in svm["interval"])
    assert row["95 % interval"] == f"{low:.2f}–{high:.2f}\u00a0%"  # as the Train page writes it
    assert [c.value for c in at.code] == [record["command"]]  # folded away, see below
    assert [e.label for e in at.expander if e.label == "How this was measured"]
    assert any("curve_broken.json cannot be read" in e.value.replace("\\", "") for e in at.error)
    assert any("cells; estimated cost" in c.value for c in at.caption)


def test_a_saved_curve_says_where_the_learned_filter_pays_against_hog(runs_dir, cells):
    hog = [{**c, "method": "hog"} for c in cells if c["method"] == "svm"]
    cifar = [{**c, "method": "hoglearn3"} for c in cells if c["method"] == "kcsvm"]
    _save(runs_dir, cells + hog + cifar)
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    text = " ".join(m.value.replace("\\", "") for m in at.markdown)
    assert "Where the learned filter pays against HOG" in text
    assert "K-CSVM, one layer (2 filters 5×5) against HOG + RBF SVM, by training images" in text
    assert "learned HOG-like stack (3×3, CIFAR-10's setting) against HOG + RBF SVM" in text


def test_two_saved_curves_of_one_pair_have_titles_that_tell_them_apart(runs_dir, cells):
    # The Learning curves page holds three curves of airplane v automobile: a class must
    # see from each figure's title what it learns.
    _save(runs_dir, cells)
    colour = [{**c, "method": "hogcolour"} for c in cells if c["method"] == "kcsvm"]
    svm = [c for c in cells if c["method"] == "svm"]
    _save(runs_dir, svm + colour, name="curve_test_colour.json")
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert sorted(titles) == [
        "mnist-5k: 3 v 5<br><sup>learned: a HOG-like stack on colour</sup>",
        "mnist-5k: 3 v 5<br><sup>learned: one layer</sup>",
    ]


def test_the_digits_curves_come_before_cifar10s(runs_dir, cells):
    """The Lesson's step 5 opens this page after a class trained MNIST 3 v 5: the digits'
    curves come first, though CIFAR-10's file names sort before them."""
    _save(runs_dir, cells, name="curve_z_digits.json")
    cifar = _save(runs_dir, cells, name="curve_a_cifar10.json")
    cifar["dataset"] = "cifar10"
    (runs_dir / "curve_a_cifar10.json").write_text(json.dumps(cifar))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert [t.split(":")[0] for t in titles] == ["mnist-5k", "CIFAR-10"]


def test_a_saved_curve_draws_the_recommended_models_line_and_rows(runs_dir, cells):
    recommended = [
        {**c, "method": "recommended", "params": {"estimator": "HOG + RBF SVM, C 10"}}
        for c in cells
        if c["method"] == "kcsvm"
    ]
    _save(runs_dir, cells + recommended)
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    (figure,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    lines = {t["name"]: t for t in figure["data"]}
    assert lines["recommended model (HOG + RBF SVM, fixed C)"]["line"]["dash"] == "dash"
    table = at.dataframe[0].value
    row = table[table["method"] == "recommended model (HOG + RBF SVM, fixed C)"].iloc[0]
    kcsvm = table[table["method"] == "K-CSVM, one layer (2 filters 5×5)"].iloc[0]
    assert row["test accuracy"] == kcsvm["test accuracy"]  # the same bits, as saved
    assert row["McNemar p"] != "reference"  # set against the tuned plain SVM


def test_bad_sizes_are_named_and_hold_start(runs_dir):
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.text_input(key="cv_sizes").set_value("20,abc").run()
    assert any("Training images '20,abc'" in e.value.replace("\\", "") for e in at.error)
    assert at.button(key="cv_start").disabled


def test_a_live_curve_runs_more_cells_than_a_browser_may_queue(runs_dir):
    # 10 cells, and a browser may have 8 jobs queued or running: they go in as others end.
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.multiselect(key="cv_methods").set_value(["svm"]).run()
    at.text_input(key="cv_sizes").set_value("20,30,40,50,60").run()
    at.number_input(key="cv_seeds").set_value(2).run()
    assert at.button(key="cv_stop").disabled  # nothing to stop yet
    at.button(key="cv_start").click().run()
    assert not at.button(key="cv_stop").disabled  # the run that starts it offers Stop
    deadline = time.time() + 180
    while time.time() < deadline and not any(
        "10 of 10" in str(p.proto) for p in at.get("progress")
    ):
        time.sleep(0.5)
        at.run()
    assert not at.exception
    table = at.dataframe[-1].value
    assert list(table["training images"]) == [20, 30, 40, 50, 60]
    at.run()  # the cells are all in: nothing left to stop
    assert at.button(key="cv_stop").disabled


def test_load_curve_refuses_what_is_not_a_curve(tmp_path):
    path = tmp_path / "curve_x.json"
    path.write_text(json.dumps({"kind": "table", "rows": []}))
    with pytest.raises(curves.CurveFileError, match="lacks"):
        load_curve(path)


def test_only_methods_that_suit_the_pairs_images_are_offered(runs_dir):
    # digits: a mirrored support vector is no digit, so the mirrored methods are not offered
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params.update(dataset="mnist-5k", class_a="3", class_b="5")
    at.session_state["cv_methods"] = ["svm", "hogm"]  # chosen on CIFAR-10 before
    at.run()
    assert not at.exception
    picker = at.multiselect(key="cv_methods")
    mirrored, shifted = curves.METHODS["hogm"][0], curves.METHODS["hogv"][0]
    assert mirrored not in picker.options and shifted in picker.options
    assert picker.value == ["svm"]
    said = " ".join(c.value for c in at.caption)
    assert "Not offered on these images: mirrored support vectors: a mirrored digit" in said
