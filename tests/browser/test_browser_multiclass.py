"""A multi-class run in Chromium: a click on a filter of the grid focuses its sub-problem."""

import re

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# The pixel centre of sub-problem K's filter in the grid (its invisible click marker).
_CELL = """k => {
    const gd = [...document.querySelectorAll('.js-plotly-plot')].find(
        p => p.layout && String(p.layout.title.text).includes('click one to focus'));
    const trace = gd._fullData.find(t => t.name === 'focus');
    const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
    const box = gd.getBoundingClientRect();
    return [box.left + xa._offset + xa.d2p(trace.x[k]),
            box.top + ya._offset + ya.d2p(trace.y[k])];
}"""


# Whether the objective chart (SVG, csvm.figures.chart_svg; an image of it while a run plays)
# titled TITLE is on the page.
_TITLED = """title => [...document.querySelectorAll('svg.csvm-chart, img.csvm-chart-image')].some(
    s => (s.dataset.title || '').includes(title))"""


def test_clicking_a_filter_focuses_its_sub_problem(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(120_000)
    page.goto(f"{server}/?classes=0,1,2&n_filters=1&n_train=150&n_iter=3&pace=live")
    page.get_by_role("button", name="▶ Start").click()
    page.get_by_text(re.compile(r"K-CSVM: [\d.]+\s% test")).first.wait_for()
    from playwright.sync_api import Error as PlaywrightError

    for _ in range(10):  # the grid's title is redrawn while the run's last ticks arrive
        try:
            page.get_by_text("click one to focus it").first.scroll_into_view_if_needed()
            break
        except PlaywrightError:
            page.wait_for_timeout(500)
    page.wait_for_timeout(1000)
    # Before any click the focus follows the sub-problem trained last: 1 vs 2.
    page.wait_for_function(_TITLED, arg="Objective of 1 vs 2")
    # The grid fills its plot area across or down (no band of empty space around it).
    fill = page.evaluate(
        """() => {
            const p = document.querySelector('[class*="st-key-grid_"] .js-plotly-plot');
            const L = p._fullLayout, m = L.margin;
            return Math.max(L.xaxis._length / (L.width - m.l - m.r),
                            L.yaxis._length / (L.height - m.t - m.b));
        }"""
    )
    assert fill >= 0.9, f"the grid uses {fill:.0%} of its plot"
    for k, pair in ((0, "0 vs 1"), (1, "0 vs 2")):
        x, y = page.evaluate(_CELL, k)
        page.mouse.click(x, y)
        page.wait_for_function(_TITLED, arg=f"Objective of {pair}", timeout=30_000)
    page.close()
