"""A first run cut short keeps the settings the browser shows: a click that lands while the
Train page's first run is drawing the settings (a name typed at once, on a loaded server)
stopped that run after a box registered its value but before the box reached the browser.
The next run drew the box without its value, the browser showed its first option (kernel
"poly", dataset "Shapes"), and Start trained that (seen twice in the restart tests).
Likewise a preset picked and Start pressed at once: the boxes the cut run never sent kept
their old values in the browser, which sent them back with the click, and the run took
half its settings from the preset and half from before.

The server is rigged (tests/_interrupting_server.py) so that the cut lands on one box
every time, instead of once in many runs."""

from __future__ import annotations

import os
import re
from contextlib import contextmanager

import pytest

from tests._browser import ARTIFACTS, CHROMIUM, ROOT, playwright_api, streamlit_server

expect = playwright_api().expect

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM), reason="needs Debian's Chromium: apt-get install -y chromium"
    ),
]
_LAUNCHER = ROOT / "tests" / "_interrupting_server.py"
_QUERY = "n_iter=2&n_train=200&baselines=svm&pace=live"


def _checked_radios(page) -> list[str]:
    return page.evaluate(
        """() => [...document.querySelectorAll('[data-testid=stSidebar] label')]
        .filter(l => l.querySelector('input[type=radio]:checked')).map(l => l.innerText)"""
    )


@contextmanager
def _rigged_page(browser, name: str, env: dict[str, str]):
    """A page on ``_QUERY`` of a rigged server (tests/_interrupting_server.py), and the
    path of the server's log (it says whether the trap fired)."""
    log_path = ARTIFACTS / f"streamlit-interrupted-{name}.log"
    ARTIFACTS.mkdir(exist_ok=True)
    with (
        open(log_path, "w") as log,
        streamlit_server(log, env=env, launcher=_LAUNCHER) as url,
    ):
        page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        page.set_default_timeout(120_000)
        page.goto(f"{url}/?{_QUERY}")
        yield page, log_path


@pytest.mark.parametrize("key", ["w_kernel", "w_dataset"])
def test_a_box_cut_off_in_the_first_run_still_shows_its_value(browser, key):
    with _rigged_page(browser, key, {"CSVM_TEST_INTERRUPT_KEY": key}) as (page, log_path):
        box = page.get_by_role("textbox", name="Your name on the Class board")
        box.fill("Ada")
        box.press("Enter")  # the rerun the rigged box waits for
        page.get_by_text("Example training images").wait_for()
        page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached", timeout=60_000)
        page.wait_for_timeout(500)
        shot = ARTIFACTS / f"interrupted-first-run-{key}.png"
        page.screenshot(path=str(shot))
        assert f"rigged {key}" in log_path.read_text(), "the trap did not fire: see the log"
        assert "rbf" in _checked_radios(page)
        assert page.get_by_role("combobox", name="Dataset").input_value() == "mnist-5k"
        page.get_by_role("button", name="▶ Start").click()
        page.wait_for_url(re.compile(r"[?&]run=\w+"))
        # The run trains what the link asked for: the library's defaults but for the four.
        assert "kernel=" not in page.url and "dataset=" not in page.url
        assert page.locator('[data-testid="stException"]').count() == 0


def test_start_pressed_while_a_preset_is_drawn_trains_the_preset(browser):
    """The run that draws the preset's settings is cut at the model box by the Start
    click; the click's run trains the preset, not the boxes' old values."""
    preset = "Linear model (L-CSVM)"
    env = {"CSVM_TEST_INTERRUPT_KEY": "w_model", "CSVM_TEST_INTERRUPT_PUSHED": "lcsvm"}
    with _rigged_page(browser, "preset", env) as (page, log_path):
        page.get_by_text("Example training images").wait_for()
        page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached", timeout=60_000)
        page.get_by_role("combobox", name="Preset").click()
        page.get_by_role("option", name=preset).click()
        page.wait_for_timeout(300)  # the preset's run is now held at the model box
        page.get_by_role("button", name="▶ Start").click()
        page.wait_for_url(re.compile(r"[?&]run=\w+"))
        page.screenshot(path=str(ARTIFACTS / "interrupted-preset.png"))
        assert "rigged w_model" in log_path.read_text(), "the trap did not fire: see the log"
        query = page.url.split("?", 1)[1]
        for part in ("n_train=600", "model=lcsvm", "n_iter=8", "lam_w=0.01"):
            assert part in query.split("&"), (part, query)
        assert "baselines=svm" not in query  # the link's own settings are gone
        assert page.get_by_role("combobox", name="Preset").input_value() == preset
        assert page.locator('[data-testid="stException"]').count() == 0


def test_start_clicked_straight_after_typing_a_number_trains_the_typed_number(server, browser):
    """The Train page renamed its preset box by a rerun after an edit, and that rerun
    swallowed the Start click that committed the edit: nothing started (4 of 4 tries).
    Clicking Start is also how most people leave a box, so it is done here without Enter."""
    page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    page.set_default_timeout(120_000)
    for n_iter in (7, 9):
        page.goto(f"{server}/")  # the Classroom preset (40 iterations)
        page.get_by_text("Example training images").wait_for()
        page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached", timeout=60_000)
        page.get_by_role("spinbutton", name=re.compile("^Iterations")).fill(str(n_iter))
        page.get_by_role("button", name="▶ Start").click()
        page.wait_for_url(re.compile(r"[?&]run=\w+"))
        assert f"n_iter={n_iter}" in page.url.split("?", 1)[1].split("&")
        # The box is drawn after the settings: the URL can change before it is redrawn.
        expect(page.get_by_role("combobox", name="Preset")).to_have_value(
            "Custom settings", timeout=60_000
        )
    assert page.locator('[data-testid="stException"]').count() == 0
