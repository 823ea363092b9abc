"""The explorer through Streamlit's AppTest (no browser): start, playback, results, errors.

``run_every`` never fires in AppTest, so a test loops ``at.run()``; each run of the page
is one tick of the playback (``pace=live`` shows every recorded step at once).
"""

import json
import re
import time

import pytest
from streamlit.testing.v1 import AppTest

from csvm.runs.presets import load_presets
from tests._apptest import (
    ROOT,
    chart_points,
    open_app,
    preset_box,
    query,
    titled,
    wait_for_results,
)

SMALL_RUN = {
    "n_iter": "3",
    "n_train": "200",
    "cnn_epochs": "1",
    "cnn_hidden": "16",
    "pace": "live",
}


def _markup(at, title: str) -> list[str]:
    """The page's HTML image grids titled ``title``."""
    return [m.value for m in at.markdown if f">{title}</div>" in m.value]


def _headline(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("## "))


def test_train_page_opens_with_real_images_and_no_error():
    at = open_app()
    assert not at.exception
    assert not at.error
    assert at.title[0].value == "CSVM Explorer"
    (grid,) = _markup(at, "Example training images")
    assert grid.count("<img") == 6  # three of each class, as HTML: no Plotly before Start
    assert not at.get("plotly_chart")


def test_small_run_shows_every_model_with_intervals_and_significance():
    at = open_app(SMALL_RUN)
    at.button(key="start").click().run()
    assert not at.exception
    at = wait_for_results(at)
    table = at.dataframe[0].value
    assert list(table["model"]) == ["K-CSVM", "plain SVM", "small CNN"]
    assert table["test accuracy"].notna().all()
    assert table["95 % interval"].str.contains("–").all()
    assert chart_points(at, "Objective") == [3]  # one point per step
    assert _headline(at).startswith("## K-CSVM: ") and "plain SVM" in _headline(at)
    mcnemar = [
        m.value
        for m in at.markdown
        # The ablation's verdict (bold, under the headline) compares filters, not models.
        if "significant" in m.value and not m.value.startswith(("#", "**Learned filter"))
    ]
    assert len(mcnemar) == 3, "a McNemar line per pair of models"
    assert at.query_params["run"], "the run is in the URL so a reload reattaches"
    # The change's scale in plain decimals or a power of ten: "±8e-3" wrapped at its hyphen.
    (scale,) = [m.value for m in at.markdown if m.value.startswith("**Last change**")]
    assert "full colour ±" in scale and "e-" not in scale
    # The confusion matrices have no Plotly toolbar (on a phone it covered their titles).
    confusion = [
        c
        for c in at.get("plotly_chart")
        if "test confusion" in json.loads(c.proto.spec)["layout"]["title"]["text"]
    ]
    assert len(confusion) == 3
    assert all(json.loads(c.proto.config)["displayModeBar"] is False for c in confusion)


def test_paced_playback_shows_one_more_step_per_tick():
    at = open_app(SMALL_RUN | {"pace": "1 s per step", "n_iter": "5", "baselines": "-"})
    at.button(key="start").click().run()
    ticks = [(time.monotonic(), 0)]  # (when, steps shown)
    for _ in range(40):
        at.run()
        ticks.append((time.monotonic(), max(chart_points(at, "Objective"), default=0)))
        if ticks[-1][1] == 5:
            break
        time.sleep(0.3)
    assert ticks[-1][1] == 5, ticks
    # Paced: a tick adds the steps its time earned at 1 s a step, never more. (On a
    # loaded machine a page run takes over a second and a tick then adds two: the page
    # keeps the pace rather than falling behind it; what must never happen is a jump
    # ahead of the pace, such as every recorded step at once.)
    for (t0, shown0), (t1, shown1) in zip(ticks, ticks[1:]):
        assert shown1 - shown0 <= 1 + (t1 - t0), ticks


def test_invalid_setting_shows_error_and_starts_nothing():
    at = open_app({"dataset": "digits", "filter_size": "9"})
    assert any("larger than the image" in e.value for e in at.error)
    assert at.button(key="start").disabled
    at.run()
    assert "current_run" not in at.session_state


def test_training_size_beyond_the_pair_is_refused():
    at = open_app({"n_train": "5000"})
    assert any("Only 700 training images" in e.value for e in at.error)
    assert at.button(key="start").disabled


def test_reload_reattaches_to_a_finished_run():
    at = open_app(SMALL_RUN | {"baselines": "-"})
    at.button(key="start").click().run()
    at = wait_for_results(at)
    url = {k: query(at, k) for k in at.query_params}
    again = wait_for_results(open_app(url))  # a new session with the same URL
    assert list(again.dataframe[0].value["model"]) == ["K-CSVM"]


def test_a_reload_keeps_the_browser_as_owner():
    """Streamlit re-masks its XSRF cookie on every response: the owner must not change."""
    try:  # Streamlit's own Starlette server writes the cookie ...
        from streamlit.web.server.starlette.starlette_app_utils import (
            generate_xsrf_token_string,
        )
    except ImportError:  # ... older Streamlit left it to Tornado, in the same format
        import os

        from tornado.util import _websocket_mask

        def generate_xsrf_token_string(token, timestamp):
            mask = os.urandom(4)
            return f"2|{mask.hex()}|{_websocket_mask(mask, token).hex()}|{timestamp}"

    from explorer.owner_cookie import xsrf_token

    token = bytes(range(16))
    cookies = {generate_xsrf_token_string(token, 1_700_000_000) for _ in range(20)}
    assert len(cookies) > 1, "the masks differ"
    assert {xsrf_token(c) for c in cookies} == {token.hex()}
    other = generate_xsrf_token_string(bytes(16), 1_700_000_000)
    assert xsrf_token(other) != token.hex()
    assert xsrf_token("not-a-v2-token") == "not-a-v2-token"


def test_divergence_is_in_the_headline_with_a_log_plot_and_a_one_click_rerun():
    # The thesis's constant-step recipe (the default's relative steps never blow up).
    thesis = {
        "kernel": "poly",
        "gamma": "1",
        "regulariser": "dfo1",
        "lam": "0.01",
        "step": "constant",
        "n_filters": "1",
    }
    at = open_app(thesis | {"eta": "1000", "n_iter": "10", "baselines": "-", "pace": "live"})
    at.button(key="start").click().run()
    at = wait_for_results(at)
    assert list(at.dataframe[0].value["status"]) == ["diverged"]
    assert "diverged at step" in _headline(at) and "try η = " in _headline(at)
    said = " ".join(m.value for m in at.markdown)
    assert "**Last change**: none, the run ended before its filter changed" in said
    assert "none recorded yet" not in said
    blowup = titled(at, "Blow-up")
    assert blowup and blowup[0]["layout"]["yaxis"]["type"] == "log"
    assert len(blowup[0]["data"][0]["y"]) >= 2
    first_run = query(at, "run")
    at.button(key="rerun_csvm").click().run()
    assert not at.exception
    suggested = float(query(at, "eta"))
    assert 0 < suggested < 1000 and query(at, "run") != first_run
    # The hint works the first time: the rerun at the suggested η does not diverge.
    at = wait_for_results(at)
    assert list(at.dataframe[0].value["status"]) != ["diverged"]


def test_changing_a_setting_marks_the_results_stale():
    at = open_app(SMALL_RUN | {"baselines": "-"})
    at.button(key="start").click().run()
    at = wait_for_results(at)
    assert not any("previous settings" in i.value for i in at.info)
    if not _block_keys(at):
        pytest.skip("this Streamlit's AppTest does not expose container keys")
    assert "results" in _block_keys(at) and "stale_results" not in _block_keys(at)
    at.number_input(key="w_n_iter").set_value(4).run()
    assert any("previous settings" in i.value for i in at.info)
    # The old results sit in the containers the page's style greys (explorer.app._STYLE).
    assert {"stale", "stale_results"} <= _block_keys(at)


def _block_keys(at) -> set[str]:
    """The keys of the page's keyed containers (their ids end in "-<key>")."""
    keys, todo = set(), [at._tree]
    while todo:
        node = todo.pop()
        proto_id = getattr(getattr(node, "proto", None), "id", "")
        if type(node).__name__ == "Block" and proto_id:
            keys.add(proto_id.rsplit("-", 1)[-1])
        children = getattr(node, "children", None)
        todo += list(children.values()) if isinstance(children, dict) else []
    return keys


def test_projector_mode_enlarges_the_figures():
    normal = open_app()
    big = open_app({"projector": "1"})

    def size(at):
        (grid,) = _markup(at, "Example training images")
        return int(re.search(r"height:(\d+)px", grid).group(1))

    assert size(big) > size(normal)


@pytest.mark.parametrize("page", ["pages/about.py", "pages/compare.py"])
def test_other_pages_render(page):
    at = AppTest.from_file(str(ROOT / page), default_timeout=30).run()
    assert not at.exception
    assert at.title


def test_compare_without_runs_links_to_train_and_the_class_board():
    """A new session's Compare page says where runs come from and links to both places
    (the class's runs are opened here from the Class board)."""
    at = open_app({})
    at.switch_page("pages/compare.py").run()
    assert not at.exception
    assert "Class board" in at.info[0].value
    links = {e.proto.label: e.proto.page for e in at.main.get("page_link")}
    assert links == {"Train": "", "Class board": "class_board"}


def test_about_page_says_what_the_learned_filter_buys():
    at = AppTest.from_file(str(ROOT / "pages/about.py"), default_timeout=30).run()
    headers = [h.value for h in at.header]
    assert "What the learned filter buys, measured" in headers
    assert "Why a CSVM can lose" in headers


def test_settings_survive_a_visit_to_other_pages():
    at = open_app({"n_iter": "7", "seed": "42"})
    at.number_input(key="w_eta").set_value(0.05).run()
    for page in ("pages/about.py", "pages/sweep.py", "pages/train.py"):
        at.switch_page(page).run()
        assert not at.exception
    assert at.number_input(key="w_n_iter").value == 7
    assert at.number_input(key="w_eta").value == 0.05
    assert not at.button(key="start").disabled
    assert query(at, "n_iter") == "7" and query(at, "eta") == "0.05"


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


def test_the_recommended_comparison_gets_its_row_named_by_what_it_chose_and_why():
    at = open_app(SMALL_RUN | {"baselines": "hog,recommended"})
    at.button(key="start").click().run()
    at = wait_for_results(at)
    assert not at.exception
    table = at.dataframe[0].value
    # 200 images: csvm.recommended is HOG + RBF SVM with C 10 (C 1 above 200 images)
    models = ["K-CSVM", "HOG + SVM", "recommended model: HOG + RBF SVM, C 10"]
    assert list(table["model"]) == models
    assert table["test accuracy"].notna().all()
    assert table["95 % interval"].str.contains("–").all()
    captions = [c.value.replace("\\", "") for c in at.caption]
    (note,) = [c for c in captions if c.startswith("Recommended model: csvm.recommended")]
    assert "chose HOG + RBF SVM, C 10 for 200 training images" in note
    assert "most accurate method at every measured size of the learning curves" in note
    mcnemar = [
        m.value
        for m in at.markdown
        if "recommended model" in m.value and "p" in m.value and not m.value.startswith("## ")
    ]
    assert len(mcnemar) == 2, "a McNemar line against the K-CSVM and against HOG + SVM"
    # It beat the K-CSVM here, so the headline names it too.
    (head,) = [m.value for m in at.markdown if m.value.startswith("## K-CSVM")]
    assert "recommended model" in head


@pytest.mark.parametrize("projector", [False, True])
def test_the_cnn_loss_is_drawn_at_the_objectives_width(projector):
    # Whole-width, the CNN's chart scaled its lettering half again as large as the
    # objective's beside it; on a projector both are whole-width, one under the other.
    at = open_app(SMALL_RUN | ({"projector": "1"} if projector else {}))
    at.button(key="start").click().run()
    at = wait_for_results(at)

    def in_columns(title: str) -> bool:
        return any(
            f'data-title="{title}"' in m.value for column in at.columns for m in column.markdown
        )

    assert chart_points(at, "Small CNN: loss per epoch")
    assert in_columns("Small CNN: loss per epoch") is not projector
    assert in_columns("Objective per step") is not projector


def test_compare_page_lists_the_sessions_runs():
    at = open_app(SMALL_RUN | {"baselines": "svm"})
    at.button(key="start").click().run()
    at = wait_for_results(at)
    at.switch_page("pages/compare.py").run()
    assert not at.exception
    table = at.dataframe[0].value
    assert list(table["model"]) == ["K-CSVM", "plain SVM"]
    # Runs named in words, not by hex ids.
    assert set(table["run"]) == {"K-CSVM RBF γ 0.02, 2 filters, 200 images, 3 v 5"}
    assert titled(at, "Objective per step")
    # The pinned run's filters: its name as text above them (it wraps in its column),
    # not as their figure's title (a long one ran into the next column's).
    from explorer.settings import md_escape

    name = "K-CSVM RBF γ 0.02, 2 filters, 200 images, 3 v 5"
    assert f"**{md_escape(name)}**" in [m.value for m in at.markdown]
    assert not titled(at, name)


def test_compare_names_a_run_of_several_classes_by_them_and_its_drawn_sub_problem():
    at = open_app(SMALL_RUN | {"baselines": "svm"})
    at.button(key="start").click().run()
    at = wait_for_results(at)
    at.radio(key="w_classes__task").set_value("Several classes").run()
    at.button(key="start").click().run()
    at = wait_for_results(at)
    at.switch_page("pages/compare.py").run()
    assert not at.exception
    assert set(at.dataframe[0].value["run"]) == {"3 v 5", "classes 3, 5, 0"}
    # The objective and filters drawn for it are its first sub-problem's: the name says so.
    (overlay,) = titled(at, "Objective per step")
    assert {t["name"] for t in overlay["data"]} == {
        "3 v 5",
        "classes 3, 5, 0 · first sub-problem",
    }


def test_figures_have_clean_ticks():
    from csvm import figures

    epochs = [
        {"kind": "epoch", "epoch": i, "loss": 1 / (i + 1), "train_accuracy": 0.9} for i in range(3)
    ]
    loss = figures.loss_figure(epochs)
    assert loss.layout.xaxis.tickformat == "d" and loss.layout.xaxis.dtick == 1
    steps = [{"model": "kcsvm", "iteration": i, "objective": 10.0**-i} for i in range(4)]
    overlay = figures.objectives_overlay([("a", steps)], "all runs")
    assert overlay.layout.yaxis.type == "log"
    assert list(overlay.layout.yaxis.tickvals) == [1e-3, 1e-2, 1e-1, 1.0]  # decades only
    terms = figures.objective_figure(
        [{**e, "sum_alpha": 1.0, "margin_term": 0.5, "regulariser": 0.1} for e in steps]
    )
    assert terms.layout.yaxis2.tickvals  # round values (more in tests/test_figures.py)


def test_stop_ends_a_finished_runs_playback_and_step_is_off_after_the_end():
    at = open_app(SMALL_RUN | {"pace": "2 s per step", "n_iter": "6", "baselines": "-"})
    at.button(key="start").click().run()
    run = at.session_state["runs"][at.session_state["current_run"]]
    from explorer.pool import get_pool

    deadline = time.time() + 60
    while get_pool().get(run.jobs["csvm"]).state != "done" and time.time() < deadline:
        time.sleep(0.2)
    at.run()  # training is over, the playback is not (2 s a step)
    assert not at.button(key="stop").disabled, "Stop ends a playback still running"
    # Training is over: the button says it shows the end, not that it stops anything.
    assert at.button(key="stop").label == "End" and "finished" in at.button(key="stop").help
    assert not at.button(key="step").disabled
    at.button(key="stop").click().run()
    at = wait_for_results(at, seconds=10)
    assert at.button(key="stop").disabled and at.button(key="step").disabled
    assert at.button(key="pause").disabled


@pytest.mark.parametrize(
    "widget,value,label",
    [("w_n_iter", 100000, "Iterations"), ("w_n_train", 999999, ""), ("w_gamma", -5.0, "γ")],
)
def test_a_typed_value_out_of_range_is_named_and_holds_start(widget, value, label):
    at = open_app()
    at.number_input(key=widget).set_value(value).run()
    assert not at.exception
    named = [e.value for e in at.error if "out of range" in e.value or "Only" in e.value]
    assert named and label in named[0], [e.value for e in at.error]
    assert at.button(key="start").disabled


def test_the_preset_box_names_what_is_trained_across_pages_and_edits():
    at = open_app()  # a fresh visitor starts on the first preset, the Classroom one
    assert preset_box(at).value == load_presets()[0]["name"]
    preset_box(at).set_value("Linear model (L-CSVM)").run()
    assert at.session_state["run_config"].model == "lcsvm"
    at.switch_page("pages/about.py").run()
    at.switch_page("pages/train.py").run()
    assert preset_box(at).value == "Linear model (L-CSVM)"
    at.number_input(key="w_n_iter").set_value(7).run()
    assert preset_box(at).value == "Custom settings"
    assert at.session_state["run_config"].model == "lcsvm"


def test_why_a_csvm_can_lose_is_said_only_where_it_lost():
    """The caption stood under a Shapes run the K-CSVM won by 50 points."""
    from explorer.train_view import _csvm_behind

    def outs(csvm, svm):
        return {
            "csvm": {"result": {"test_accuracy": csvm}},
            "svm": {"result": {"test_accuracy": svm}},
            "cnn": None,  # no longer on the server
        }

    assert not _csvm_behind(outs(0.99, 0.50)) and not _csvm_behind(outs(0.9, 0.9))
    assert _csvm_behind(outs(0.90, 0.92))
