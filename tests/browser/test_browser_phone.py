"""A student's phone: the shared link of a class's run opened at 390×844 (stop 58's walk).

Every page of :data:`explorer.app.PAGES` must fit the phone's width (nothing to scroll
sideways), break no caption word across lines ("horizont" above "al (−1)", "α=0.40" above
"8") and keep its Plotly text inside its figure; the Train page is checked again at the
end of a run, where its support vectors, pinned images and comparison are drawn.  A tap on
the SVM playground's plane adds a point, as a click does (explorer/touch_taps.py).
Screenshots go to ``test-artifacts/phone-<page>.png``.
"""

from __future__ import annotations

import os
import re

import pytest

from explorer.app import PAGES
from tests._browser import ARTIFACTS, CHROMIUM, settle, url_path
from tests._layout import broken_words, figure_text_outside, overlapping_figure_text

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM), reason="needs Debian's Chromium: apt-get install -y chromium"
    ),
]

PHONE = {"width": 390, "height": 844}
# The page's width and its scroll width: wider means the phone scrolls sideways.
_SIDEWAYS = "() => [document.documentElement.clientWidth, document.documentElement.scrollWidth]"


def _phone(browser):
    context = browser.new_context(
        viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=2
    )
    page = context.new_page()
    page.set_default_timeout(60_000)
    return context, page


def _problems(page) -> list[str]:
    found = [
        f"exception: {t[:80]}"
        for t in page.locator('[data-testid="stException"]').all_inner_texts()
    ]
    width, scrolled = page.evaluate(_SIDEWAYS)
    if scrolled > width:
        found.append(f"{scrolled} px wide on a {width} px screen")
    found += [f"word broken: {w}" for w in broken_words(page)]
    found += [f"past its figure: {t}" for t in figure_text_outside(page)]
    # The Filter lab's four "dT/df, filter 1 (× 10⁻³)" titles ran into each other.
    found += [f"overlapping: {t}" for t in overlapping_figure_text(page)]
    return found


@pytest.mark.timeout(600)
def test_every_page_fits_a_phone(server, browser):
    context, page = _phone(browser)
    ARTIFACTS.mkdir(exist_ok=True)
    problems: dict[str, list[str]] = {}
    for script, title, _ in PAGES:
        page.goto(f"{server}/{url_path(script)}?pace=live")
        settle(page)  # its title: an h1 (the Lesson's is the step's heading)
        page.screenshot(path=str(ARTIFACTS / f"phone-{url_path(script) or 'train'}.png"))
        if found := _problems(page):
            problems[title] = found
    context.close()
    assert not problems, f"pages that do not fit a 390 px phone: {problems}"


@pytest.mark.timeout(300)
def test_a_finished_run_fits_a_phone(server, browser):
    context, page = _phone(browser)
    page.goto(f"{server}/?pace=live&dataset=shapes&class_a=horizontal&class_b=vertical")
    page.get_by_text("Example training images").wait_for()
    settle(page)
    before = _problems(page)
    page.get_by_role("button", name="▶ Start").click()
    page.get_by_text("Comparison on the same split").wait_for(timeout=240_000)
    page.locator('[data-testid="stMainBlockContainer"] h2').filter(
        has_text=re.compile("% test")
    ).first.wait_for()
    settle(page)
    after = _problems(page)
    page.screenshot(path=str(ARTIFACTS / "phone-train-finished.png"))
    context.close()
    assert not before, f"the Train page before Start on a 390 px phone: {before}"
    assert not after, f"a finished run on a 390 px phone: {after}"


@pytest.mark.timeout(300)
def test_a_tap_on_the_playgrounds_plane_adds_a_point(server, browser):
    """Streamlit draws a selectable figure in Plotly's pan mode, where a tap selected
    nothing: on a phone or a classroom's touch screen the plane ignored every tap."""
    context, page = _phone(browser)
    page.goto(f"{server}/playground")
    page.get_by_text(re.compile(r"of 100$")).wait_for()  # support vectors of 100 points
    settle(page)
    plane = page.locator(".js-plotly-plot .nsewdrag").first
    plane.scroll_into_view_if_needed()
    box = plane.bounding_box()
    # The top-left corner: no point of the default data there, so the tap adds one.
    page.touchscreen.tap(box["x"] + 0.15 * box["width"], box["y"] + 0.15 * box["height"])
    page.get_by_text(re.compile(r"of 101$")).wait_for(timeout=30_000)
    context.close()
