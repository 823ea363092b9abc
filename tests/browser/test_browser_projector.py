"""Projector mode in a real browser: one choice for the whole session, and type a class can
read from the back of the room (issue 33).

One server and one Chromium open every page of :data:`explorer.app.PAGES` (so a page added
there is checked too) with ``?projector=1`` at 1280×720 and 1920×1080: the toggle must be on
and near the top of the sidebar, stay on (and in the URL) after two clicks on the sidebar's
page links and a reload, and every visible text of the main area must be at least
:data:`MIN_PX` on screen, and each page's main figure (its first chart, grid, picture or
SVG figure) must end above the screen's bottom edge.  Screenshots go to
``test-artifacts/projector-<page>-<size>.png``.
"""

from __future__ import annotations

import os
import re

import pytest

from explorer.app import PAGES
from tests._browser import ARTIFACTS, CHROMIUM, playwright_api, settle, url_path
from tests._layout import (
    broken_words,
    figure_text_outside,
    narrow_table_cells,
    overlapping_figure_text,
    truncated_labels,
)

expect = playwright_api().expect

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM), reason="needs Debian's Chromium: apt-get install -y chromium"
    ),
]

#: The smallest type a class can read on a projected 1280×720 screen (issue 33).
MIN_PX = 18
#: The toggle must sit within this many pixels of the sidebar's top (it used to be at
#: 1056-1440 px, below the whole form of settings).
TOP_PX = 200
_TOGGLE = '[data-testid="stSidebar"] [data-testid="stCheckbox"]:has-text("Projector mode")'

# Every visible text of the main area smaller than ``min`` on screen: the parent element
# of each non-blank text node (an SVG text's size times its scale on the page), and the
# value of every input.  Not text a class reads, so left out:
# - <style>/<script> bodies (the app's style sheets are markdown and HTML elements);
# - elements with no box (display:none: the hidden style container, closed expanders'
#   bodies, tooltips not shown) or invisible (visibility:hidden, opacity 0: Plotly's
#   hover layers, the modebar until hovered);
# - icons: Material Symbols ligatures ("keyboard_arrow_right" is an arrow on screen);
# - KaTeX's MathML copy of a formula, for screen readers (the formula shown is checked);
# - zero-width spaces KaTeX puts between its boxes.
_SMALL_TEXT = """(min) => {
  const root = document.querySelector('[data-testid="stMain"]');
  const out = [];
  const visible = (el) => {
    if (!el.getClientRects().length) return false;
    for (let e = el; e && e !== root; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (cs.visibility === 'hidden' || cs.opacity === '0') return false;
    }
    const r = el.getBoundingClientRect();
    return r.width > 1 && r.height > 1;
  };
  const onScreen = (el) => {
    let size = parseFloat(getComputedStyle(el).fontSize);
    if (el instanceof SVGElement && el.getScreenCTM()) {
      const m = el.getScreenCTM();
      size *= Math.hypot(m.a, m.b);
    }
    return size * (parseFloat(getComputedStyle(el).zoom) || 1);
  };
  const seen = new Set();
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement;
    const text = walker.currentNode.textContent.trim();
    if (!text.replace(/\u200b/g, '') || !el || seen.has(el)) continue;
    if (el.closest('style, script, .katex-mathml')) continue;
    if (getComputedStyle(el).fontFamily.includes('Material Symbols')) continue;
    seen.add(el);
    if (!visible(el)) continue;
    const size = onScreen(el);
    if (size < min - 0.05) out.push(`${text.slice(0, 40)} (${el.tagName.toLowerCase()}, `
      + `${size.toFixed(1)} px)`);
  }
  for (const el of root.querySelectorAll('input, textarea')) {
    if (!el.value || !visible(el) || el.type === 'hidden') continue;
    const size = onScreen(el);
    if (size < min - 0.05) out.push(`input value ${el.value.slice(0, 40)} (${size.toFixed(1)} px)`);
  }
  return out;
}"""

# Glide's data grid (st.dataframe) draws its cells on a canvas, which has no text to read:
# its cells are drawn at 14 CSS px (Streamlit's theme) times any zoom, so projector mode
# must show tables as HTML (explorer.display.table).
_GRID_PX = """() => [...document.querySelectorAll(
    '[data-testid="stMain"] [data-testid="stDataFrame"]')]
  .filter(e => e.getClientRects().length)
  .map(e => 14 * (parseFloat(getComputedStyle(e).zoom) || 1))"""


def small_text(page, min_px: float = MIN_PX) -> list[str]:
    """Every visible text of the main area (and every table's cells) smaller than
    ``min_px`` on screen, as "text (tag, size)"."""
    found = page.evaluate(_SMALL_TEXT, min_px)
    found += [f"a table's cells ({px:.1f} px)" for px in page.evaluate(_GRID_PX) if px < min_px]
    return found


# A page's main figure: its first Plotly chart, grid (a canvas), picture or SVG figure.
_FIRST_FIGURE = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  for (const el of main.querySelectorAll('.js-plotly-plot, canvas, img, svg.csvm-figure')) {
    const box = el.getBoundingClientRect();
    if (box.width >= 60 && box.height >= 60) return [box.top, box.bottom];
  }
  return null;
}"""


def figure_below_fold(page, height: int) -> str | None:
    """Where the page's main figure ends below the screen's bottom edge, or None."""
    # A data grid is a grey placeholder until its script has loaded (seconds on a loaded
    # machine): the Filter lab's weights were measured as absent once, and a later
    # figure taken for the main one.  Only shown grids: one in a tab not chosen is not drawn.
    page.wait_for_function(
        """() => [...document.querySelectorAll(
                   '[data-testid="stMain"] [data-testid="stDataFrame"]')]
                 .filter(grid => grid.getClientRects().length)
                 .every(grid => grid.querySelector('canvas'))""",
        timeout=60_000,
    )
    box = page.evaluate(_FIRST_FIGURE)
    if box is None or box[1] <= height + 1:
        return None
    return f"its first figure spans y {box[0]:.0f}-{box[1]:.0f} px of a {height} px screen"


def toggle_state(page) -> tuple[bool, float]:
    """Whether the projector toggle is on, and its top edge below the sidebar's top."""
    toggle = page.locator(_TOGGLE).first
    toggle.wait_for()
    on = toggle.locator("input").is_checked()
    top = toggle.bounding_box()["y"] - page.locator('[data-testid="stSidebar"]').bounding_box()["y"]
    return on, top


def _expect_projector_kept(page, where: str) -> None:
    """The toggle on, near the sidebar's top, and projector mode and the pace in the URL."""
    expect(page).to_have_url(re.compile(r"[?&]projector=1(&|$)"))
    expect(page).to_have_url(re.compile(r"[?&]pace=live(&|$)"))
    on, top = toggle_state(page)
    assert on, f"projector mode off on {where}"
    assert top <= TOP_PX, f"the projector toggle {top:.0f} px below the sidebar's top on {where}"


@pytest.mark.timeout(900)
@pytest.mark.parametrize(("width", "height"), [(1280, 720), (1920, 1080)])
def test_projector_mode_is_kept_and_every_text_is_large(server, browser, width, height):
    page = browser.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(60_000)
    ARTIFACTS.mkdir(exist_ok=True)
    small: dict[str, list[str]] = {}
    cut: dict[str, list[str]] = {}
    folded: dict[str, str] = {}  # the main figure seen whole without scrolling
    for script, title, _ in PAGES:
        page.goto(f"{server}/{url_path(script)}?projector=1&pace=live")
        settle(page)
        _expect_projector_kept(page, title)
        # The projector's type is a style the page run adds: on a loaded machine the About
        # page's text was measured once before it arrived (every text at 16 px). Wait for
        # it; a page that never adds it still fails here.
        page.wait_for_function(
            "() => [...document.querySelectorAll('style')]"
            ".some(s => s.textContent.includes(':is(h2,h3){font-size:2.2rem!important}'))",
            timeout=60_000,
        )
        page.wait_for_timeout(300)
        name = url_path(script) or "train"
        page.screenshot(path=str(ARTIFACTS / f"projector-{name}-{width}x{height}.png"))
        if found := small_text(page):
            small[title] = found
        # Table cells whose text stopped at 400 px (the About page's glossary, once), caption
        # words broken across lines ("horizont" above "al (−1)" on a phone).
        if (
            found := truncated_labels(page)
            + overlapping_figure_text(page)
            + figure_text_outside(page)
            + narrow_table_cells(page)
            + broken_words(page)
        ):
            cut[title] = found
        if below := figure_below_fold(page, height):
            folded[title] = below
    # One choice for the whole session: through the sidebar's links and a reload.
    for title in ("Train", "Compare runs"):
        page.locator('[data-testid="stSidebar"] a', has_text=title).first.click()
        page.locator('[data-testid="stMainBlockContainer"] h1').first.wait_for()
        settle(page)
        _expect_projector_kept(page, f"{title}, opened by its link")
    page.reload()
    settle(page)
    _expect_projector_kept(page, "Compare runs, reloaded")
    page.close()
    assert not small, f"text under {MIN_PX} px in projector mode: {small}"
    assert not cut, f"labels cut off or figure text overlapping in projector mode: {cut}"
    assert not folded, f"a page's main figure under the fold in projector mode: {folded}"


@pytest.mark.timeout(300)
def test_a_paused_runs_buttons_are_whole_on_a_projected_1280_screen(server, browser):
    """Pause becomes Resume, a longer label: at a projector's type size and 1280 px it
    was cut to "Resu…" (stop 43's walk)."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.set_default_timeout(60_000)
    page.goto(f"{server}/?projector=1&dataset=shapes&class_a=horizontal&class_b=vertical")
    page.get_by_role("button", name="▶ Start").click()
    page.get_by_role("button", name="Pause").click()
    page.get_by_role("button", name="Resume").wait_for()
    settle(page)
    cut = truncated_labels(page)
    page.close()
    assert not cut, f"labels cut off on a paused run in projector mode: {cut}"


@pytest.mark.timeout(300)
def test_the_playgrounds_smo_view_is_whole_on_a_projected_1280_screen(server, browser):
    """Watch SMO solve it draws two charts in a narrow column: at a projector's type size
    its title "dual objective W(α) (SMO raises it)" ran past the figure's edge (stop 57)."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.set_default_timeout(60_000)
    page.goto(f"{server}/playground?projector=1")
    page.get_by_role("radio", name="Watch SMO solve it").click()
    page.get_by_text(re.compile(r"^Step 0 of")).wait_for()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.js-plotly-plot svg text')]"
        ".some(t => t.textContent.includes('SMO raises it'))"
    )
    settle(page)
    cut = figure_text_outside(page) + truncated_labels(page) + overlapping_figure_text(page)
    page.screenshot(path=str(ARTIFACTS / "projector-playground-smo-1280x720.png"))
    page.close()
    assert not cut, f"cut off or overlapping in the SMO view in projector mode: {cut}"
