"""The Lesson page in a real Chromium at 1280×720 in projector mode: a link to step 3
(``?lesson=3``) opens step 3, Back and Next keep the address bar in step, and the step's
button lands on Train with its preset, still in projector mode."""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit

import pytest

from explorer.lesson import SHAPES_PRESET, STEPS
from tests._browser import ARTIFACTS, CHROMIUM

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM), reason="needs Debian's Chromium: apt-get install -y chromium"
    ),
]


def _heading(page):
    return page.locator('[data-testid="stMainBlockContainer"] h1').first


def test_lesson_steps_follow_the_url_and_open_train_with_the_preset(server, browser):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.set_default_timeout(60_000)
    page.goto(f"{server}/lesson?lesson=3&projector=1")
    heading = _heading(page)
    heading.wait_for()
    assert heading.inner_text().startswith(f"Step 3 of {len(STEPS)}")
    # The step's text, its question and its buttons fit a 720 px screen without scrolling,
    # in projector mode too.
    next_box = page.get_by_role("button", name="Next").bounding_box()
    assert next_box["y"] + next_box["height"] <= 720
    page.get_by_role("button", name="Next").click()
    expect(heading).to_have_text(re.compile(r"^Step 4 of"))
    page.wait_for_url(re.compile(r"[?&]lesson=4"))
    page.get_by_role("button", name="Back").click()
    expect(heading).to_have_text(re.compile(r"^Step 3 of"))
    page.wait_for_url(re.compile(r"[?&]lesson=3"))
    page.screenshot(path=str(ARTIFACTS / "lesson-step3-1280.png"))
    page.get_by_role("button", name=re.compile(r"^.?Open Train")).click()
    # Train is the app's default page: its address is the bare "/".
    page.wait_for_url(lambda url: urlsplit(url).path == "/")
    expect(page.get_by_role("combobox", name="Preset")).to_have_value(SHAPES_PRESET)
    # The page a step opens keeps projector mode (a page switch clears the address).
    expect(page.get_by_role("switch", name="Projector mode")).to_be_checked()
    page.screenshot(path=str(ARTIFACTS / "lesson-step3-train-1280.png"))
    # The step rides along in Train's link: a reload there, then the Lesson, is step 3
    # again (it was step 1).
    page.wait_for_url(re.compile(r"[?&]lesson=3"))
    page.reload()
    expect(page.get_by_role("combobox", name="Preset")).to_have_value(SHAPES_PRESET)
    page.locator('[data-testid="stSidebar"] a', has_text="Lesson").first.click()
    expect(heading).to_have_text(re.compile(r"^Step 3 of"))
    page.close()
