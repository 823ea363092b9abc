"""Multi-class runs in the explorer (AppTest): the filter grid, the k×k confusion, the
per-class accuracy, the most confused pairs, and the settings' URL round trip."""

import re

import numpy as np
import pytest

from tests._apptest import chart_points, open_app, plotly_array, query, titled, wait_for_results

MULTI_RUN = {
    "classes": "0,1,2",
    "n_filters": "1",
    "n_iter": "3",
    "n_train": "150",
    "cnn_epochs": "1",
    "cnn_hidden": "16",
    "pace": "live",
}


def _filters_drawn(spec: dict) -> int:
    """Filter cells on the grid's one heatmap: its 5 × 5 blocks of numbers (NaN between)."""
    (trace,) = [t for t in spec["data"] if t["type"] == "heatmap"]
    drawn = ~np.isnan(plotly_array(trace["customdata"]).astype(float))
    return int(drawn.sum()) // 25


def test_three_class_run_shows_three_filters_and_a_3x3_confusion():
    at = open_app(MULTI_RUN)
    assert not at.exception and not at.error
    at.button(key="start").click().run()
    at = wait_for_results(at)
    assert not at.exception
    table = at.dataframe[0].value
    assert list(table["model"]) == ["K-CSVM", "plain SVM", "small CNN"]
    assert table["test accuracy"].notna().all()
    grid = titled(at, "Filters of the 3 sub-problems")
    assert grid and _filters_drawn(grid[0]) == 3
    captions = [a["text"] for a in grid[0]["layout"]["annotations"]]
    assert any("0 vs 1 · 3/3" in c for c in captions)
    confusion = titled(at, "K-CSVM: test confusion (3×3)")
    z = plotly_array(confusion[0]["data"][0]["z"])
    assert z.shape == (3, 3) and z.sum() == 300  # every test image of the three classes
    assert len(titled(at, "plain SVM: test confusion (3×3)")) == 1
    per_class = titled(at, "Test accuracy per class")[0]
    assert [b["name"] for b in per_class["data"]] == ["K-CSVM", "plain SVM", "small CNN"]
    assert all(len(b["y"]) == 3 for b in per_class["data"])
    assert any(s.value == "Most confused pairs" for s in at.header)
    # Each pair's words are text above its filters (as a figure's title they ran past
    # their column), and the focus box no longer says a finished run is training.
    assert any(re.match(r"\*\*\d ↔ \d\\: \d+ mistakes", m.value) for m in at.markdown)
    focus = at.selectbox(key=f"focus_{query(at, 'run')}")
    assert focus.options[0] == "the last one trained"
    headline = next(m.value for m in at.markdown if m.value.startswith("## "))
    assert headline.startswith("## K-CSVM: ") and "9 steps" in headline


def test_one_vs_rest_shows_one_filter_per_class():
    at = open_app(MULTI_RUN | {"multi_class": "ovr", "baselines": "-"})
    at.button(key="start").click().run()
    at = wait_for_results(at)
    grid = titled(at, "Filters of the 3 sub-problems")
    assert grid and _filters_drawn(grid[0]) == 3
    captions = [a["text"] for a in grid[0]["layout"]["annotations"]]
    assert any("2 vs rest" in c for c in captions)


def test_focus_picks_the_sub_problem_whose_objective_is_drawn():
    at = open_app(MULTI_RUN | {"baselines": "-"})
    at.button(key="start").click().run()
    at = wait_for_results(at)
    at.selectbox(key=f"focus_{query(at, 'run')}").set_value(0).run()
    assert chart_points(at, "Objective of 0 vs 1") == [3]
    grid = titled(at, "Filters of the 3 sub-problems")[0]
    assert "▶ 0 vs 1" in grid["layout"]["annotations"][0]["text"]


def test_multiclass_settings_round_trip_through_the_url():
    at = open_app({"classes": "7,0,3", "multi_class": "ovr"})
    assert not at.exception and not at.error
    assert at.radio(key="w_classes__task").value == "Several classes"
    assert at.multiselect(key="w_classes").value == ["7", "0", "3"]
    assert query(at, "classes") == "7,0,3" and query(at, "multi_class") == "ovr"
    at.radio(key="w_classes__task").set_value("Two classes").run()
    assert "classes" not in at.query_params and "multi_class" in at.query_params
    assert not at.error


@pytest.mark.parametrize(
    "raw,reason",
    [
        ("3,3,5", "twice"),
        ("1", "names 1 class"),
        ("0,1,2,3,4,5,6,7,8,9,10", "11 classes"),
        ("0,1,12", "'12' is not a class of mnist-5k"),
    ],
)
def test_hostile_classes_link_is_named_and_the_pair_is_used(raw, reason):
    at = open_app({"classes": raw})
    assert not at.exception
    messages = [w.value.replace("\\", "") for w in at.warning]
    assert any("Classes" in m and reason in m for m in messages), messages
    assert at.radio(key="w_classes__task").value == "Two classes"
    assert not at.button(key="start").disabled


def test_fewer_than_three_ticked_classes_disable_start():
    at = open_app({"classes": "0,1,2"})
    at.multiselect(key="w_classes").unselect("2").run()
    assert any("at least 3 classes" in e.value for e in at.error)
    assert at.button(key="start").disabled
    at.checkbox(key="w_classes__all").check().run()
    assert not at.button(key="start").disabled and query(at, "classes") == "all"


def test_all_classes_hides_the_picker_and_unticking_brings_the_picks_back():
    at = open_app({"classes": "7,0,3"})
    at.checkbox(key="w_classes__all").check().run()
    assert not [m for m in at.multiselect if m.key == "w_classes"]  # no stale, greyed choice
    assert any("Training on all 10: 0, 1, 2" in c.value for c in at.caption)
    assert query(at, "classes") == "all"
    at.checkbox(key="w_classes__all").uncheck().run()
    assert at.multiselect(key="w_classes").value == ["7", "0", "3"]
    assert query(at, "classes") == "7,0,3" and not at.exception
