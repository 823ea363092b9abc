"""The explorer through Streamlit's AppTest (no browser): start, poll, results, errors."""

import json
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
SMALL_RUN = {"n_iter": "3", "n_train": "200", "cnn_epochs": "1", "cnn_hidden": "16"}


def _app(query=None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return at.run()


def _wait_for_results(at, seconds=90):
    deadline = time.time() + seconds
    while time.time() < deadline:
        at.run()
        if at.dataframe and not any(at.dataframe[0].value["status"].isin(["running", "queued"])):
            return at
        time.sleep(0.5)
    raise AssertionError("the run did not finish in time")


def test_train_page_opens_with_real_images_and_no_error():
    at = _app()
    assert not at.exception
    assert not at.error
    assert at.title[0].value == "CSVM Explorer"
    assert at.get("plotly_chart"), "example images are on the screen at once"


def test_small_run_gives_one_point_per_iteration_and_a_row_per_model():
    at = _app(SMALL_RUN)
    at.button(key="start").click().run()
    assert not at.exception
    at = _wait_for_results(at)
    table = at.dataframe[0].value
    assert list(table["model"]) == ["K-CSVM", "plain SVM", "small CNN"]
    assert table["test accuracy"].notna().all()
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    objective = [
        s for s in specs if s["layout"].get("title", {}).get("text", "").startswith("Objective")
    ]
    assert objective, "the objective chart is shown"
    assert len(objective[0]["data"][0]["x"]) == 3  # one point per iteration
    assert at.query_params["run"], "the run is in the URL so a reload reattaches"


def test_invalid_setting_shows_error_and_starts_nothing():
    at = _app({"dataset": "digits", "filter_size": "9"})
    assert any("larger than the image" in e.value for e in at.error)
    assert at.button(key="start").disabled  # nothing can start
    at.run()
    assert "current_run" not in at.session_state
    assert not at.get("plotly_chart") or all(
        "Objective" not in json.loads(c.proto.spec)["layout"].get("title", {}).get("text", "")
        for c in at.get("plotly_chart")
    )


def test_training_size_beyond_the_pair_is_refused():
    at = _app({"n_train": "5000"})
    assert any("Only 700 training images" in e.value for e in at.error)
    assert at.button(key="start").disabled


def test_reload_reattaches_to_a_finished_run():
    at = _app(SMALL_RUN | {"baselines": "-"})
    at.button(key="start").click().run()
    at = _wait_for_results(at)
    query = {k: at.query_params[k] for k in at.query_params}
    again = _app(query)  # a new session with the same URL
    assert again.dataframe and list(again.dataframe[0].value["model"]) == ["K-CSVM"]


def test_divergence_names_a_safer_eta_and_reruns_with_one_click():
    at = _app({"eta": "1000", "n_iter": "10", "baselines": "-"})
    at.button(key="start").click().run()
    at = _wait_for_results(at)
    assert list(at.dataframe[0].value["status"]) == ["diverged"]
    assert any("diverged" in w.value and "eta=100" in w.value for w in at.warning)
    first_run = at.query_params["run"]
    at.button(key="rerun_csvm").click().run()
    assert not at.exception
    assert at.session_state["cfg_eta"] == 100.0
    assert at.query_params["eta"] == "100.0" and at.query_params["run"] != first_run


@pytest.mark.parametrize("page", ["pages/about.py", "pages/compare.py"])
def test_other_pages_render(page):
    at = AppTest.from_file(str(ROOT / page), default_timeout=30).run()
    assert not at.exception
    assert at.title


def test_figures_downsample_flag_rises_and_centre_filters_on_zero():
    import numpy as np

    from csvm import figures

    long = [{"model": "kcsvm", "iteration": i, "objective": 1 / (i + 1)} for i in range(5000)]
    fig = figures.objective_figure(long)
    assert len(fig.data[0].x) <= 1000 and fig.layout.uirevision
    halves = [
        {"model": "lcsvm", "iteration": i // 2, "step": s, "objective": o}
        for i, (s, o) in enumerate([("svm", 3.0), ("filter", 2.0), ("svm", 2.5), ("filter", 1.0)])
    ]
    fig = figures.objective_figure(halves)
    assert list(fig.data[0].text) == ["SVM step", "filter step"] * 2
    assert list(fig.data[0].x) == [0, 0.5, 1, 1.5]
    assert fig.data[1].name == "rise (flagged)" and list(fig.data[1].y) == [2.5]
    f = np.random.default_rng(0).normal(size=(1, 5, 5))
    heat = figures.filter_figure(f, np.zeros((1, 5, 5)))
    assert heat.data[0].zmid == 0 and heat.data[0].zmin == -heat.data[0].zmax
    assert heat.data[1].zmid == 0  # the change since the previous filter


def test_compare_page_lists_the_sessions_runs():
    at = _app(SMALL_RUN | {"baselines": "svm"})
    at.button(key="start").click().run()
    at = _wait_for_results(at)
    at.switch_page("pages/compare.py").run()
    assert not at.exception
    table = at.dataframe[0].value
    assert list(table["model"]) == ["K-CSVM", "plain SVM"]
    titles = [
        json.loads(c.proto.spec)["layout"].get("title", {}).get("text", "")
        for c in at.get("plotly_chart")
    ]
    assert any("all runs" in t for t in titles)
