"""The Filter lab in a real browser: draw a digit on the canvas and see a prediction appear.

`streamlit run app.py` on a free port, driven by Playwright in Debian's Chromium (the server
and browser fixtures are in conftest.py; module-scoped, so this file has its own server).
"""

import os
import re

import pytest

from tests._browser import ARTIFACTS, CHROMIUM, playwright_api

expect = playwright_api().expect

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM), reason="needs Debian's Chromium: apt-get install -y chromium"
    ),
]


def _stroke(page, box, points) -> None:
    """Press, drag through ``points`` (fractions of the canvas) and release."""
    xy = [(box["x"] + fx * box["width"], box["y"] + fy * box["height"]) for fx, fy in points]
    page.mouse.move(*xy[0])
    page.mouse.down()
    for a, b in zip(xy, xy[1:]):
        for k in range(1, 9):  # small moves: the brush records a smooth path
            page.mouse.move(a[0] + (b[0] - a[0]) * k / 8, a[1] + (b[1] - a[1]) * k / 8)
    page.mouse.up()


def test_draw_a_digit_and_see_a_prediction(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(60_000)
    page.goto(f"{server}/?dataset=mnist-5k")  # the digits (the app opens on the shapes)
    page.get_by_role("link", name="Filter lab").click()  # the entry in the navigation
    page.get_by_text("Your own digit").wait_for()
    assert page.get_by_text("Predicted class").count() == 0  # nothing drawn yet
    canvas = page.locator("canvas.upper-canvas")
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    # A "3": two bowls open to the left.
    _stroke(
        page,
        box,
        [(0.3, 0.2), (0.5, 0.12), (0.68, 0.22), (0.6, 0.42), (0.45, 0.48), (0.62, 0.55),
         (0.7, 0.72), (0.55, 0.86), (0.3, 0.8)],
    )  # fmt: skip
    page.get_by_text("Predicted class").wait_for()
    predicted = page.locator('[data-testid="stMetric"]', has_text="Predicted class")
    value = predicted.locator('[data-testid="stMetricValue"]').inner_text()
    assert value in {"3", "5"}
    page.get_by_text("your digit, MNIST-style").wait_for()  # its feature map is drawn
    # Titled as the user's digit (the lab's training images above keep "Pinned images").
    assert page.get_by_text("Your digit before (top)").count() == 1
    page.wait_for_timeout(1000)
    section = page.get_by_text("Your own digit")
    section.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "filter-lab-digit.png"))
    page.set_viewport_size({"width": 1400, "height": 4200})
    page.wait_for_timeout(800)
    page.screenshot(path=str(ARTIFACTS / "filter-lab.png"))
    page.close()


def test_the_filter_editor_shows_every_column_at_1280(server, browser):
    """Each 5×5 grid shows all its columns, one grid to a tab: stacked, four grids pushed
    the filter's picture 1,900 px down a projector's page."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.set_default_timeout(60_000)
    page.goto(f"{server}/filter_lab?n_filters=2&filter_size=5")
    tabs = page.get_by_role("tab", name=re.compile(r"^Filter \d$"))
    tabs.first.wait_for()
    assert tabs.all_inner_texts() == ["Filter 1", "Filter 2"]
    for k, tab in enumerate(tabs.all()):
        tab.click()
        # The tab's grid drawn (its canvas comes a moment after the tab on a busy machine).
        page.wait_for_function(_VISIBLE_GRID_DRAWN)
        page.wait_for_timeout(500)
        # The grid's scroller: wider content than box means a horizontal scroll bar.
        hidden = page.evaluate(
            """() => [...document.querySelectorAll('[data-testid="stDataFrame"] .dvn-scroller')]
                .filter(e => e.getClientRects().length && e.scrollWidth > e.clientWidth + 1)
                .length"""
        )
        page.screenshot(path=str(ARTIFACTS / f"filter-lab-editor-1280x720-{k + 1}.png"))
        assert hidden == 0
    # The filter's picture is on the first screen, beside the grid.
    picture = page.get_by_text(re.compile("^Filter: ")).first
    assert picture.bounding_box()["y"] < 720
    page.close()


_VISIBLE_GRID_DRAWN = """() => {
  const shown = [...document.querySelectorAll('[data-testid="stDataFrame"]')]
    .filter(e => e.getClientRects().length);
  return shown.length >= 1 && shown.every(e => e.querySelector('canvas')
    && e.querySelector('.dvn-scroller'));
}"""


def _overlap(a: dict, b: dict) -> bool:
    """Whether two bounding boxes share any area."""
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )


def test_the_canvas_toolbar_leaves_the_upload_tab_free(server, browser):
    """Issue 33: the canvas's toolbar (shown above the canvas on hover) covered the
    "Upload a PNG or JPEG" tab."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.set_default_timeout(60_000)
    page.goto(f"{server}/filter_lab")
    canvas = page.locator("canvas.upper-canvas")
    canvas.wait_for()
    canvas.scroll_into_view_if_needed()
    canvas.hover()
    toolbar = page.locator(".dc-toolbar-card")
    # The component draws in a shadow root: Playwright's locators reach into it.
    expect(page.locator(".dc-toolbar")).to_have_css("opacity", "1")
    page.wait_for_timeout(400)  # the toolbar slides up in 0.2 s
    bar = toolbar.bounding_box()
    tabs = [
        page.get_by_role("tab", name=n).bounding_box() for n in ("Draw", "Upload a PNG or JPEG")
    ]
    page.screenshot(path=str(ARTIFACTS / "filter-lab-canvas-toolbar-1280x720.png"))
    assert bar is not None and bar["height"] > 0
    assert not any(_overlap(bar, tab) for tab in tabs), (bar, tabs)
    page.close()
