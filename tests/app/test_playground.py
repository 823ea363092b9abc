"""The SVM playground page in AppTest: every data set draws, C moves the support vectors,
Step is exactly one SMO pair, the URL keeps the settings and hostile values are named."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from explorer import playground as pg
from tests._apptest import ROOT, query, specs

PAGE = str(ROOT / "pages" / "playground.py")


def _open(params: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    for key, value in (params or {}).items():
        at.query_params[key] = value
    return at.run()


def _metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def _n_sv(at: AppTest) -> int:
    return int(_metric(at, "Support vectors").split(" of ")[0])


def _bold(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("**Step"))


@pytest.mark.parametrize("data", [d for d in pg.DATASETS if d != "placed"])
def test_each_dataset_draws(data):
    at = _open({"pg_data": data, "pg_kernel": "rbf", "pg_n": "60"})
    assert not at.exception
    (fig,) = specs(at)
    names = {t.get("name") for t in fig["data"]}
    assert {"class +1", "class −1", "boundary f = 0", "margins f = ±1"} <= names
    assert _n_sv(at) > 0
    assert _metric(at, "Train accuracy").endswith("%")


def test_placed_points_from_the_url():
    at = _open({"pg_data": "placed", "pg_pos": "1_1_1.5_0", "pg_neg": "-1_-1"})
    assert not at.exception
    assert _metric(at, "Support vectors").endswith("of 3")
    assert _metric(at, "Train accuracy") == "100.0 %"


def test_one_class_asks_for_the_other():
    at = _open({"pg_data": "placed", "pg_pos": "1_1"})
    assert not at.exception
    assert any("each class" in i.value for i in at.info)


def test_changing_C_changes_the_support_vectors_and_the_url():
    # Blobs a hard margin can separate (at 0.5 they overlap: no hard-margin solution).
    at = _open({"pg_data": "blobs", "pg_overlap": "0.2"})
    before = _n_sv(at)
    at.select_slider(key="pg_w_C").set_value(0.01).run()
    assert _n_sv(at) > before  # a softer margin is wider: more points inside it
    assert query(at, "pg_C") == "0.01"
    at.toggle(key="pg_w_hard").set_value(True).run()
    assert query(at, "pg_hard") == "1"
    assert _n_sv(at) < before


def test_step_advances_exactly_one_pair():
    at = _open({"pg_view": "smo", "pg_data": "moons", "pg_kernel": "rbf", "pg_n": "40"})
    assert not at.exception
    assert _bold(at).startswith("**Step 0 of ")
    step = next(b for b in at.button if b.label == "Step")
    for expected in (1, 2, 3):
        step.click().run()
        assert _bold(at).startswith(f"**Step {expected} of ")
        step = next(b for b in at.button if b.label == "Step")
    pair = next(t for t in specs(at)[0]["data"] if t.get("name") == "the pair SMO updates")
    assert len(pair["x"]) == 2
    playback = at.session_state["pg_playback"]
    assert playback.position == 3 and not playback.playing
    next(b for b in at.button if b.label == "Start over").click().run()
    assert _bold(at).startswith("**Step 0 of ")


def test_hostile_url_values_are_named_and_replaced():
    at = _open(
        {
            "pg_kernel": "[click](http://evil.example)",
            "pg_C": "1e999",
            "pg_n": "**9**",
            "pg_data": "placed",
            "pg_pos": "1_1_<b>x</b>_2",
            "pg_neg": "-1_-1",
        }
    )
    assert not at.exception
    warnings = [w.value for w in at.warning]
    assert any(w.startswith("pg\\_kernel") for w in warnings)
    assert any("pg\\_C" in w for w in warnings)
    assert any("pg\\_n" in w for w in warnings)
    assert any("pg\\_pos" in w for w in warnings)
    assert not any("](http" in w or "<b>" in w for w in warnings)  # escaped, never markup
    assert at.radio(key="pg_w_kernel").value == "linear"


def test_lift_view_and_the_bridge_to_train():
    at = _open({"pg_view": "lift", "pg_data": "circles", "pg_noise": "0"})
    assert not at.exception
    (fig,) = specs(at)
    assert {t["type"] for t in fig["data"]} >= {"scatter3d", "surface"}
    assert "100 %" in fig["layout"]["title"]["text"]  # circles: a plane separates them all
    assert any(b.label == "Now learn the features: the filter" for b in at.button)


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("1_1_x_2", "pg_pos: 'x' is not a number; left out."),
        ("1_1_x_y_2_2", "pg_pos: 2 values such as 'x' are not numbers; left out."),
    ],
)
def test_a_links_bad_coordinates_are_counted_in_plain_words(raw, says):
    _, problems = pg.decode_points({"pg_pos": raw})
    assert says in [p.message for p in problems]


def test_a_hard_margin_on_points_it_cannot_separate_shows_no_solution():
    """Where SMO gave up, the metrics read like a solution: a "margin" wider than C = 10's,
    points "inside" a margin there is none of."""
    at = _open({"pg_data": "blobs", "pg_overlap": "1.0", "pg_hard": "1"})
    assert not at.exception
    (error,) = [e.value for e in at.error]
    assert error.startswith("No hard-margin solution") and "choose a C" in error
    assert not at.metric
    soft = _open({"pg_data": "blobs", "pg_overlap": "1.0"})
    assert not soft.error and "Margin width 2/‖w‖" in [m.label for m in soft.metric]
