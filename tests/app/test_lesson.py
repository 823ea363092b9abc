"""The Lesson page in AppTest: the step comes from the URL and goes back into it, Next,
Back and the jump move it, a bad step is named gently, and each step's button opens the
right page with the right settings."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from csvm.runs.presets import load_presets
from explorer.app import PAGES
from explorer.lesson import DIGITS_PRESET, SHAPES_PRESET, STEPS, preset_names
from explorer.lesson_view import JUMP_KEY
from tests._apptest import ROOT, open_app, preset_box, query, specs

PAGE = str(ROOT / "pages" / "lesson.py")


def _open(step: str | None = None) -> AppTest:
    """The Lesson page on its own (fast: no Train page first)."""
    at = AppTest.from_file(PAGE, default_timeout=60)
    if step is not None:
        at.query_params["lesson"] = step
    return at.run()


def _heading(at: AppTest) -> str:
    (heading,) = [h.value for h in at.title]
    return heading


@pytest.mark.parametrize("step", range(1, len(STEPS) + 1))
def test_the_step_comes_from_the_url(step):
    at = _open(str(step))
    assert not at.exception
    assert _heading(at).startswith(f"Step {step} of {len(STEPS)}: {STEPS[step - 1].title}")
    assert query(at, "lesson") == str(step)
    assert at.segmented_control(key=JUMP_KEY).value == step
    assert not at.info  # a valid step needs no message


def test_no_step_in_the_url_opens_step_one_and_writes_it():
    at = _open()
    assert _heading(at).startswith("Step 1 of")
    assert query(at, "lesson") == "1"


def test_next_and_back_change_the_step_and_the_url():
    at = _open("3")
    at.button(key="lesson_next").click().run()
    assert _heading(at).startswith("Step 4 of") and query(at, "lesson") == "4"
    at.button(key="lesson_back").click().run()
    at.button(key="lesson_back").click().run()
    assert _heading(at).startswith("Step 2 of") and query(at, "lesson") == "2"
    assert at.segmented_control(key=JUMP_KEY).value == 2


def test_back_is_off_on_the_first_step_and_next_on_the_last():
    first, last = _open("1"), _open(str(len(STEPS)))
    assert first.button(key="lesson_back").disabled and not first.button(key="lesson_next").disabled
    assert last.button(key="lesson_next").disabled and not last.button(key="lesson_back").disabled


def test_the_teacher_jumps_to_any_step():
    at = _open("1")
    at.segmented_control(key=JUMP_KEY).set_value(5).run()
    assert _heading(at).startswith("Step 5 of") and query(at, "lesson") == "5"
    # Clicking the chosen step again (which deselects it) stays on the step.
    at.segmented_control(key=JUMP_KEY).set_value(None).run()
    assert _heading(at).startswith("Step 5 of") and query(at, "lesson") == "5"


@pytest.mark.parametrize("bad", ["0", "7", "-2", "two", "3.5", "**bold** <b>x</b>" * 4])
def test_a_step_that_does_not_exist_opens_step_one_gently(bad):
    at = _open(bad)
    assert not at.exception and not at.error
    assert _heading(at).startswith("Step 1 of")
    assert query(at, "lesson") == "1"
    (message,) = [i.value for i in at.info]
    assert "starting at step 1" in message
    assert "<b>" not in message  # quoted escaped, cut to a few characters


def test_each_step_says_little_and_asks_one_question():
    for step in STEPS:
        assert 1 <= len(step.notice) <= 3
        assert step.question.endswith("?") and step.question.count("?") == 1
        assert step.answer and step.link.title
    at = _open("4")
    texts = [m.value for m in at.markdown]
    assert any(t.startswith("**Question for the class:**") for t in texts)
    assert [e.label for e in at.expander] == ["Answer"]


def test_every_page_a_step_opens_is_in_the_app():
    scripts = {path for path, _, _ in PAGES}
    for step in STEPS:
        for link in (step.link, *step.more):
            assert link.page in scripts
            assert (ROOT / link.page).is_file()
    titles = {path: title for path, title, _ in PAGES}
    assert all(titles[s.link.page] == s.link.title for s in STEPS)


def test_the_lesson_is_the_first_page_but_train_stays_the_default():
    from explorer.app import DEFAULT_PAGE

    assert PAGES[0][:2] == ("pages/lesson.py", "Lesson")
    assert DEFAULT_PAGE == "pages/train.py"


def test_the_digits_preset_exists():
    assert DIGITS_PRESET in preset_names()
    assert DIGITS_PRESET in {p["name"] for p in load_presets()}


def test_the_teaching_set_preset_exists():
    """Added with the teaching image set; looked up by its name (never by position)."""
    assert SHAPES_PRESET in preset_names()
    assert SHAPES_PRESET in {p["name"] for p in load_presets()}


def _lesson_in_app(step: int, query_params: dict[str, str] | None = None) -> AppTest:
    """The whole app (it opens on Train), then the Lesson page at ``step``."""
    at = open_app({**(query_params or {}), "lesson": str(step)})
    at.switch_page("pages/lesson.py").run()
    assert not at.exception
    assert _heading(at).startswith(f"Step {step} of")
    assert query(at, "lesson") == str(step)  # the app's URL writer keeps the step
    return at


def test_opening_a_playground_step_sets_its_settings():
    at = _lesson_in_app(2)
    at.button(key="lesson_open").click().run()
    assert not at.exception
    assert [t.value for t in at.title] == ["SVM playground"]
    assert at.selectbox(key="pg_w_data").value == "circles"
    assert at.radio(key="pg_w_kernel").value == "poly"
    (lift,) = specs(at)
    assert lift["layout"]["title"]["text"].startswith("φ(x)")  # the lift view
    assert query(at, "pg_data") == "circles" and query(at, "pg_view") == "lift"
    # Back to the lesson, on to step 1: the playground now shows two blobs, a straight line.
    at.switch_page("pages/lesson.py").run()
    at.button(key="lesson_back").click().run()
    at.button(key="lesson_open").click().run()
    assert at.selectbox(key="pg_w_data").value == "blobs"
    assert at.radio(key="pg_w_kernel").value == "linear"
    assert at.slider(key="pg_w_overlap").value == STEPS[0].playground.overlap
    assert [m.label for m in at.metric][:2] == ["Train accuracy", "Support vectors"]


def test_opening_the_digits_step_shows_its_preset_on_train():
    # Settings that match no preset first: the step must replace them.  "step" is the
    # Train page's step rule, not the lesson's step: both live in one URL.
    at = _lesson_in_app(4, {"n_train": "120", "step": "armijo"})
    assert query(at, "step") == "armijo" and not at.warning
    at.button(key="lesson_open").click().run()
    assert not at.exception
    assert preset_box(at).value == DIGITS_PRESET
    assert at.number_input(key="w_n_train").value == 50
    # The step rides along in the opened page's URL: a reload there (a new session) and
    # then the Lesson find step 4 again, where it went back to step 1.
    assert query(at, "lesson") == "4"
    assert "step" not in at.query_params  # the preset's step rule is the default
    fresh = open_app({key: query(at, key) for key in at.query_params})
    fresh.switch_page("pages/lesson.py").run()
    assert _heading(fresh).startswith("Step 4 of")


def test_opening_the_shapes_step_shows_its_preset_on_train():
    at = _lesson_in_app(3)
    at.button(key="lesson_open").click().run()
    assert not at.exception
    assert preset_box(at).value == SHAPES_PRESET


def test_a_preset_missing_on_this_server_still_opens_the_page(monkeypatch):
    from dataclasses import replace

    from explorer import lesson_view

    steps = list(STEPS)
    steps[2] = replace(steps[2], preset="No such preset")
    monkeypatch.setattr(lesson_view, "STEPS", tuple(steps))
    at = _open("3")
    assert not at.exception
    assert at.button(key="lesson_open").label == "Open Train"
    assert any("not on this server yet" in c.value for c in at.caption)


def test_a_preset_is_found_by_its_former_name_too():
    from explorer.lesson import FORMER_NAMES, find_preset

    for name, former in FORMER_NAMES.items():
        assert find_preset([{"name": former[0]}], name) == {"name": former[0]}
        assert find_preset([{"name": name}, {"name": former[0]}], name) == {"name": name}
    assert find_preset([{"name": "something else"}], DIGITS_PRESET) is None
