"""Every preset's end state in a real browser, and the sidebar at narrow widths.

Each preset of ``csvm/runs/presets.json`` is picked, started at the fastest pace ("live") and
waited for; its end state is saved at 1280×720 and 1920×1080 in ``test-artifacts/``
(``preset-<name>-<size>.png``).  The headline must be on screen without scrolling at
1280×720 and no exception box may show.  Presets whose data are not on this machine are
skipped (the thesis's need ``shared/data`` next to the repository).
"""

from __future__ import annotations

import os
import re
import time

import pytest

from csvm.runs.presets import load_presets
from tests._browser import ARTIFACTS, CHROMIUM, ROOT, playwright_api
from tests._layout import (
    broken_words,
    figure_text_outside,
    filter_view,
    overlapping_figure_text,
    truncated_labels,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM), reason="needs Debian's Chromium: apt-get install -y chromium"
    ),
]

SHARED_DATA = ROOT.parent / "shared" / "data"
PRESETS = load_presets()
#: The files a preset's "requires" names, as the app looks for them under the data dir.
_NEEDS = {"mnist": "mnist/train-images-idx3-ubyte.gz", "cifar10": "cifar10"}
#: The end state's headline: "…: 97.5 % test, 15 steps, …" or "… (best filter: 90.0 % test)".
_FINISHED = re.compile(r"% test")
#: Presets whose run (with tuned baselines) takes about 3 min on two quiet cores and over
#: ten while other suites run: included only with CSVM_SLOW_PRESETS=1 (30-minute limit).
_SLOW = {"cifar10"}
_INCLUDE_SLOW = os.environ.get("CSVM_SLOW_PRESETS") == "1"


@pytest.fixture(scope="module", autouse=True)
def _shared_data_dir():
    """Point the module's server (started after this) at the shared data when present,
    so that the thesis presets are offered."""
    with pytest.MonkeyPatch.context() as mp:
        if SHARED_DATA.is_dir():
            mp.setenv("CSVM_DATA_DIR", str(SHARED_DATA))
        yield


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40]


def _headline(page):
    return page.locator('[data-testid="stMainBlockContainer"] h2').filter(has_text=_FINISHED)


@pytest.mark.timeout(1800)
def _opens_on(preset: dict) -> bool:
    """Whether the page opens with this preset's settings (the app's default preset)."""
    from csvm.runs.config import parse
    from explorer.settings import app_default

    config, problems = parse(preset["config"])
    return not problems and config == app_default()


def _choose_preset(page, name: str, tries: int = 3) -> None:
    """Pick ``name`` in the sidebar's preset box.  The page may still be drawing its first
    run when the box opens, and a redraw can close the list before the option is clicked
    (CI once waited a minute for "Too-large step (diverges)"): open it again then."""
    box = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first
    option = page.get_by_role("option", name=name)
    for attempt in range(tries):
        box.click()
        page.keyboard.type(name)  # filters the list to this preset
        try:
            option.click(timeout=15_000)
            return
        except Exception:  # Playwright's TimeoutError: the list closed; open it again
            if attempt == tries - 1:
                raise
            page.keyboard.press("Escape")


@pytest.mark.parametrize("preset", PRESETS, ids=[_slug(p["name"]) for p in PRESETS])
def test_preset_end_state_fits_the_screen(server, browser, preset):
    need = preset.get("requires")
    if need and not (SHARED_DATA / _NEEDS[need]).exists():
        pytest.skip(f"preset {preset['name']!r} needs {need}, not in {SHARED_DATA}")
    if need in _SLOW and not _INCLUDE_SLOW:
        pytest.skip(f"preset {preset['name']!r} trains for 3-10 min: CSVM_SLOW_PRESETS=1")
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.set_default_timeout(60_000)
    page.goto(f"{server}/?pace=live")
    page.get_by_text("Example training images").wait_for()
    if not _opens_on(preset):
        _choose_preset(page, preset["name"])
        page.wait_for_timeout(1500)
    # The preset's own settings are in place (its caption, no "changed from the preset").
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert preset["description"][:40] in sidebar.inner_text()
    started = time.monotonic()
    page.get_by_role("button", name="▶ Start").click()
    _headline(page).first.wait_for(timeout=600_000)
    page.wait_for_timeout(2500)  # the results below the headline are drawn
    seconds = time.monotonic() - started

    assert page.locator('[data-testid="stException"]').count() == 0
    box = _headline(page).first.bounding_box()
    assert box is not None
    assert box["y"] >= 0 and box["y"] + box["height"] <= 720, f"headline at {box}"
    assert box["x"] >= 0 and box["x"] + box["width"] <= 1280, f"headline at {box}"
    name = _slug(preset["name"])
    page.screenshot(path=str(ARTIFACTS / f"preset-{name}-1280x720.png"))
    _fits(page, 720)
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.wait_for_timeout(1000)
    page.screenshot(path=str(ARTIFACTS / f"preset-{name}-1920x1080.png"))
    _fits(page, 1080)
    with open(ARTIFACTS / "browser-timings.txt", "a") as f:
        f.write(f"preset {preset['name']!r}: Start to end state at pace live {seconds:.1f} s\n")
    page.close()


def _fits(page, fold: int) -> None:
    """The filter above the fold with cells of 200 px or more (up to two planes), its
    numbers 14 px or larger, no label cut off, no figure text over other text or past
    its figure's edge, and no caption word broken across lines."""
    # The ablation's verdict (a K-CSVM on few images) adds a line above the filter.
    page.wait_for_function(
        "() => !document.body.innerText.includes('Comparing the learned filter')",
        timeout=180_000,
    )
    page.wait_for_timeout(500)
    view = filter_view(page)
    if view is not None:
        assert 0 <= view["top"] and view["bottom"] <= fold, f"filter at {view}"
        if len(view["cells"]) <= 2:
            assert min(view["cells"]) >= 200, f"filter cells of {view['cells']} px"
        assert all(size >= 14 for size in view["fonts"]), view["fonts"]
    assert truncated_labels(page) == []
    assert overlapping_figure_text(page) == []
    assert figure_text_outside(page) == []
    assert broken_words(page) == []


# The app's default (the shapes: four filters, too many for numbers in their cells) at
# one size, the digits (two filters, their values written in the cells) at the other.
@pytest.mark.parametrize(
    ("width", "height", "settings"),
    [(1280, 720, ""), (1920, 1080, "dataset=mnist-5k&")],
    ids=["1280x720-shapes", "1920x1080-digits"],
)
def test_projector_mode_is_larger_and_nothing_is_cut_off(server, browser, width, height, settings):
    page = browser.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(60_000)
    page.goto(f"{server}/?{settings}pace=live&projector=true")
    page.get_by_role("button", name="▶ Start").click()
    _headline(page).first.wait_for(timeout=300_000)
    page.wait_for_timeout(2500)
    page.screenshot(path=str(ARTIFACTS / f"projector-{width}x{height}.png"))
    _fits(page, height)
    size = page.evaluate(
        """() => parseFloat(getComputedStyle(document.querySelector(
            '[data-testid="stMetricValue"] p')).fontSize)"""
    )
    assert size >= 40  # 3rem: larger than the 2.25rem of the normal page
    numbers = filter_view(page)["fonts"]
    if settings:  # the digits' two filters: their values grow too
        assert numbers and min(numbers) > 14
    assert all(size > 14 for size in numbers)
    page.close()


@pytest.mark.parametrize(
    ("width", "height", "collapsed"), [(800, 600, True), (1024, 768, True), (1280, 720, False)]
)
def test_sidebar_collapses_below_1100_px(server, browser, width, height, collapsed):
    page = browser.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(60_000)
    page.goto(server)
    page.get_by_text("Example training images").wait_for()
    sidebar = page.locator('[data-testid="stSidebar"]')
    want = "true" if collapsed else "false"
    page.wait_for_function(
        f"""() => document.querySelector('[data-testid="stSidebar"]')
                 .getAttribute('data-collapsed') === '{want}'"""
    )
    page.wait_for_timeout(500)
    assert sidebar.get_attribute("data-collapsed") == want
    page.screenshot(path=str(ARTIFACTS / f"sidebar-{width}x{height}.png"))
    if not collapsed:
        # Shrinking the window below 1100 px collapses it too.
        page.set_viewport_size({"width": 1024, "height": 768})
        page.wait_for_function(
            """() => document.querySelector('[data-testid="stSidebar"]')
                     .getAttribute('data-collapsed') === 'true'"""
        )
    page.close()


def test_no_label_is_cut_at_a_1024_px_projector_with_the_sidebar_open(server, browser):
    """At 1024 × 768 (a common classroom projector) the sidebar starts folded; opened, it
    left the Train page's row of Start, Stop, Pause and Step 560 px, and their labels
    read "▶ St…", "■ St…", "Res…", "S…". Paused, so all four are shown and enabled."""
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    page.set_default_timeout(60_000)
    page.goto(f"{server}/?projector=1")
    page.get_by_text("Example training images").wait_for()
    _open_sidebar(page)
    page.get_by_role("button", name="▶ Start").click()
    page.get_by_role("button", name=re.compile("Pause$")).click()
    page.get_by_role("button", name=re.compile("Resume$")).wait_for()
    page.wait_for_timeout(1000)
    page.screenshot(path=str(ARTIFACTS / "train-controls-1024x768-sidebar-open.png"))
    assert truncated_labels(page) == []
    for path in ("lesson", "sweep", "curve"):  # their wide buttons: Open …, ▶ Start sweep
        page.goto(f"{server}/{path}?projector=1")
        page.locator('[data-testid="stMain"] button').first.wait_for()
        page.wait_for_timeout(1500)
        _open_sidebar(page)
        assert truncated_labels(page) == [], path
    page.close()


def _open_sidebar(page) -> None:
    """Open the sidebar if it is folded, and wait until it is open."""
    page.wait_for_timeout(1000)  # the app folds it a moment after the page opens
    if page.locator('[data-testid="stSidebar"]').get_attribute("data-collapsed") == "true":
        page.locator('[data-testid="stExpandSidebarButton"]').first.click()
    page.wait_for_function(
        """() => document.querySelector('[data-testid="stSidebar"]')
                 .getAttribute('data-collapsed') === 'false'"""
    )
    page.wait_for_timeout(500)


def test_an_edit_that_leaves_the_preset_keeps_the_open_boxes_open(server, browser):
    """An edit makes the settings "Custom", and the preset's "How this was measured" box
    above the settings goes away; the boxes the user opened below it stay open (unkeyed,
    each was drawn anew, folded, under the user's hand)."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.set_default_timeout(60_000)
    page.goto(server)
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("How this was measured").wait_for()
    sidebar.get_by_text("Baselines", exact=True).click()
    # "Hidden units": the first preset tunes its baselines, so "CNN epochs" is hidden.
    epochs = page.get_by_role("spinbutton", name="Hidden units")
    epochs.wait_for()
    sidebar.get_by_text("Your own images").click()
    colour = sidebar.get_by_text("Keep colour")
    colour.wait_for()
    # A page still arriving on a loaded machine can show the box before its value.
    playwright_api().expect(epochs).to_have_value(re.compile(r"^\d+$"))
    epochs.fill(str(int(epochs.input_value()) + 1))
    epochs.press("Enter")
    sidebar.get_by_text("How this was measured").wait_for(state="detached")
    page.wait_for_timeout(1000)
    assert epochs.is_visible() and colour.is_visible()
    assert page.get_by_text("Choose two different classes").count() == 0  # settings intact
    # A typed value out of range writes its message above the two upload boxes: they
    # stay open too.
    epochs.fill("100000")
    epochs.press("Enter")
    sidebar.get_by_text("Hidden units = 100000").wait_for()
    page.wait_for_timeout(1000)
    assert epochs.is_visible() and colour.is_visible()
    # So does a refused display name, whose message sits above the settings.
    name = sidebar.get_by_role("textbox", name="Your name on the Class board")
    name.fill("a\u202eb")
    name.press("Enter")
    sidebar.get_by_text("printable characters only").wait_for()
    page.wait_for_timeout(1000)
    assert epochs.is_visible() and colour.is_visible()
    page.close()
