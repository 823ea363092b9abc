"""The teaching-set preset on the Train page: the shapes beside the filter, the similarity
per step, and the note that says when λ changes nothing."""

from __future__ import annotations

from csvm.runs.config import RunConfig, parse
from csvm.runs.presets import load_presets
from csvm.runs.query import to_query
from explorer.train_view import idle_regulariser_note
from tests._apptest import chart_points, open_app, wait_for_results


def _teaching_query(**changes) -> dict[str, str]:
    preset = next(p for p in load_presets() if p["config"]["dataset"] == "shapes")
    config, problems = parse(preset["config"])
    assert problems == []
    return to_query(config.replace(**changes)) | {"pace": "live"}


def test_a_run_on_the_teaching_set_shows_the_shapes_and_how_close_the_filter_is():
    at = open_app(_teaching_query(n_iter=4, baselines=()))
    at.button(key="start").click().run()
    at = wait_for_results(at)
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "What the filter should find" in text
    assert "Similarity to the nearest shape now" in text
    assert 'class="csvm-shapes"' in text and "horizontal" in text and "vertical" in text
    assert chart_points(at, "How close the filter is to a shape") == [4]


def test_digits_show_no_shapes():
    at = open_app({"n_iter": "2", "baselines": "-", "pace": "live"})
    at.button(key="start").click().run()
    at = wait_for_results(at)
    assert not any("What the filter should find" in m.value for m in at.markdown)


def _steps(terms):
    return [{"iteration": i, "objective": 1.0, "regulariser": t} for i, t in enumerate(terms)]


def test_the_lambda_note_appears_only_when_the_regulariser_never_acted():
    config = RunConfig()  # DFO₂
    assert "λ has had no effect" in idle_regulariser_note(config, _steps([0.0, 0.0, 0.0]))
    assert idle_regulariser_note(config, _steps([0.0, 0.2, 0.0])) is None
    assert idle_regulariser_note(config, _steps([0.0])) is None  # too early to say
    l2 = config.replace(regulariser="l2sq")
    assert idle_regulariser_note(l2, _steps([0.0, 0.0])) is None
