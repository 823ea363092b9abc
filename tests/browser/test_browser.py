"""A real browser: `streamlit run app.py` driven by Playwright in Debian's Chromium."""

import os
import re
import time

import pytest

from tests._browser import (
    ARTIFACTS,
    CHROMIUM,
    OBJECTIVE_CHART,
    objective_points_at_least,
    playwright_api,
)

expect = playwright_api().expect

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM), reason="needs Debian's Chromium: apt-get install -y chromium"
    ),
]


def _shot(page, name: str, tall: bool = True) -> None:
    """A screenshot; tall ones show the whole page (Streamlit scrolls inside its own
    container, not the page)."""
    size = page.viewport_size
    if tall:
        page.set_viewport_size({"width": size["width"], "height": 3600})
        page.wait_for_timeout(500)
    page.screenshot(path=str(ARTIFACTS / name))
    page.set_viewport_size(size)


def _until(check, seconds: float) -> None:
    """Wait until ``check()`` is true (no time is asserted: never true fails the test)."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds} s")
        time.sleep(0.1)


def _step_counter(page) -> int:
    """The "step k of n" the progress bar shows (-1 when there is none)."""
    text = page.evaluate(
        """() => [...document.querySelectorAll('[data-testid="stProgress"]')]
               .map(e => e.innerText).join(' ')"""
    )
    m = re.search(r"step (\d+) of", text)
    return int(m.group(1)) if m else -1


def _wait_for_resume(page, seconds: float = 60.0) -> None:
    """Wait for Pause to become Resume; if it never does, say what the page showed (CI
    once saw Resume never come, and the plain timeout told nothing more)."""
    try:
        page.get_by_role("button", name=re.compile("Resume$")).wait_for(timeout=seconds * 1000)
    except Exception as error:  # Playwright's TimeoutError: describe the page instead
        buttons = page.evaluate(
            "() => [...document.querySelectorAll('button')]"
            ".map(b => b.innerText.trim() + (b.disabled ? ' (disabled)' : '')).filter(t => t)"
        )
        _shot(page, "pause-never-resumed.png", tall=False)
        raise AssertionError(
            f"Resume did not appear within {seconds:.0f} s of Pause: step counter "
            f"{_step_counter(page)}, buttons {buttons}"
        ) from error


def _objective_signature(page) -> str:
    """The objective line as drawn (its points, or the picture of it while the run plays),
    to tell frames apart."""
    return page.evaluate(
        f'() => {{ const s = document.querySelector("{OBJECTIVE_CHART}");'
        " if (s && s.tagName === 'IMG') return s.getAttribute('src');"
        " return s ? [...s.querySelectorAll('g.series polyline, circle.point')]"
        ".map(e => e.getAttribute('points') || e.getAttribute('cy')).join(';') : ''; }"
    )


def _set_number(page, label: str, value: str) -> None:
    box = page.get_by_label(label, exact=True)
    # While a rerun redraws the sidebar (an edit turns the preset into "Custom settings"
    # and its caption goes), the old box can stand beside the new one for a moment.
    # expect's own 5 s, not the page's 60 s: the sidebar's boxes came later than that
    # after the main area's images at load 15-20.
    expect(box).to_have_count(1, timeout=60_000)
    box.fill(value)
    box.press("Enter")
    page.wait_for_timeout(800)


def test_a_page_url_on_a_fresh_server_opens_inside_the_app(server, browser):
    """The first request of a fresh server is for /sweep (a reload on that page): it must
    open inside the app, not as a lone script of the pages/ folder."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.set_default_timeout(60_000)
    page.goto(f"{server}/sweep")
    page.get_by_text("Sweep two settings").wait_for()
    # The app's own page links (explorer.app) may land a moment after the page's title;
    # tests/browser/test_browser_navigation.py checks every frame from the first paint.
    page.locator('[data-testid="stSidebar"] a', has_text="Filter lab").wait_for()
    sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
    assert "Filter lab" in sidebar and "worker preload" not in sidebar and "common" not in sidebar
    _shot(page, "sweep-direct-url.png", tall=False)
    page.close()


def test_settings_survive_navigation_and_reload(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(60_000)
    page.goto(f"{server}/?dataset=mnist-5k")  # the digits (the app opens on the shapes)
    page.get_by_text("Example training images").wait_for()
    _set_number(page, "Iterations", "7")
    _set_number(page, "Seed", "42")
    _set_number(page, "Training images", "400")
    for name in ("About", "Sweep", "Train"):
        page.get_by_role("link", name=name).first.click()
        page.wait_for_timeout(1500)
    page.get_by_text("Example training images").wait_for()
    # The example images (HTML) can be on screen before the sidebar's number inputs, which
    # Streamlit's frontend draws empty ("0") for a frame: wait for the value, not the first
    # frame (a lost setting stays wrong and still fails).
    expect(page.get_by_label("Iterations", exact=True)).to_have_value("7")
    expect(page.get_by_label("Seed", exact=True)).to_have_value("42")
    expect(page.get_by_label("Training images", exact=True)).to_have_value("400")
    assert page.get_by_role("button", name="▶ Start").is_enabled()
    assert all(f"{k}={v}" in page.url for k, v in (("n_iter", 7), ("seed", 42), ("n_train", 400)))
    page.reload()
    page.get_by_text("Example training images").wait_for()
    expect(page.get_by_label("Iterations", exact=True)).to_have_value("7", timeout=5000)
    _shot(page, "settings-after-navigation.png", tall=False)
    page.close()


def test_paced_run_pause_step_resume_and_shared_view(server, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.set_default_timeout(60_000)
    # 90 steps at the default pace (1 s a step): time to open two more browsers, reload
    # and pause, even when a loaded machine slows the browsers (30 steps ran out once at
    # load 4, 45 at load 15-20 under xdist: the run had ended, Pause was disabled).
    page.goto(f"{server}/?n_iter=90")
    page.get_by_text("Example training images").wait_for()
    page.wait_for_timeout(2000)  # the spare workers warm up while a teacher talks
    started = time.monotonic()
    page.get_by_role("button", name="▶ Start").click()
    page.wait_for_function(objective_points_at_least(1))
    first_frame = time.monotonic() - started
    frames = set()
    for _ in range(12):
        frames.add(_objective_signature(page))
        page.wait_for_timeout(500)
    assert len(frames) >= 5, f"only {len(frames)} different frames of the objective"

    # Another browser opens the shared link: it sees the run, read only.
    other = browser.new_context().new_page()
    other.goto(page.url)
    other.get_by_text("Shared view").wait_for()
    assert other.get_by_role("button", name="■ Stop").count() == 0
    # The filter, what a class watches, is SVG: drawn with the page's first elements, not
    # after a fresh browser has loaded Plotly's 4.6 MB script.
    # While the run plays it is a picture of the SVG (csvm.figures.svg_image): one element.
    filters = other.locator(".st-key-filter_view :is(svg.csvm-weight, img.csvm-weight-image)")
    filters.first.wait_for()
    if other.locator(".st-key-filter_view svg.csvm-weight").count():
        assert other.locator(".st-key-filter_view svg.csvm-weight g.plane").count() == 2
    else:
        assert "2 planes of 5 × 5" in (filters.first.get_attribute("alt") or "")
    # A student who copied every cookie the owner's page scripts can read (Streamlit's
    # XSRF cookie among them) still gets the read-only view: ownership rests on an
    # HttpOnly cookie that scripts never see.
    readable = page.evaluate("document.cookie")
    assert "csvm_owner" not in readable and "_streamlit_xsrf" in readable
    forged = browser.new_context()
    forged.add_cookies(
        [
            {"name": k, "value": v, "url": server}
            for k, v in (c.split("=", 1) for c in readable.split("; "))
        ]
    )
    thief = forged.new_page()
    thief.goto(page.url)
    thief.get_by_text("Shared view").wait_for()
    assert thief.get_by_role("button", name="■ Stop").count() == 0
    assert thief.get_by_role("button", name=re.compile("Pause$")).count() == 0
    forged.close()
    # The owner reloads: still the owner (Streamlit re-masks its cookie on every response).
    page.reload()
    page.get_by_role("button", name=re.compile("Pause$")).wait_for()
    assert page.get_by_text("Shared view").count() == 0

    before_pause = _step_counter(page)
    assert before_pause < 89, f"the run reached step {before_pause} of 90 before Pause"
    page.get_by_role("button", name=re.compile("Pause$")).click()
    _wait_for_resume(page)  # the rerun is drawn
    page.wait_for_timeout(1500)
    held = _step_counter(page)
    page.wait_for_timeout(3000)
    assert _step_counter(page) == held, "the step counter moved while paused"
    page.locator(".st-key-step button").first.click()
    page.wait_for_timeout(2500)
    assert _step_counter(page) == held + 1
    _shot(page, "paused-1280x720.png", tall=False)
    page.get_by_role("button", name=re.compile("Resume$")).click()
    page.get_by_text("Comparison on the same split").wait_for(timeout=240_000)
    total = time.monotonic() - started
    _shot(page, "classroom-end-1280x720.png", tall=False)
    page.set_viewport_size({"width": 1920, "height": 1080})
    _shot(page, "classroom-end-1920x1080.png", tall=False)
    (ARTIFACTS / "browser-timings.txt").write_text(
        f"start to first frame: {first_frame:.2f} s\nstart to results (paced, with a "
        f"pause and a step): {total:.2f} s\n"
    )
    other.close()
    page.close()


def test_lcsvm_steps_alternate_and_stop_is_quick(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(60_000)
    page.goto(f"{server}/?model=lcsvm&n_iter=4&baselines=-")
    page.get_by_role("button", name="▶ Start").click()
    page.wait_for_function(objective_points_at_least(1))
    page.get_by_role("button", name=re.compile("Pause$")).click()
    page.wait_for_timeout(1000)
    labels = []
    for _ in range(3):
        button = page.get_by_role("button", name=re.compile("Step: [wf]"))
        labels.append(button.inner_text())
        button.click()
        # The next half-step's label, once the page has drawn the step (a fixed 1.5 s
        # read the old label again under CI's load); a click that is lost never gets it.
        _until(lambda: button.inner_text() != labels[-1], seconds=60)
    assert {"Step: w" in label for label in labels} == {True, False}
    assert labels[0] != labels[1] != labels[2]

    page.goto(f"{server}/?n_iter=400&n_train=none&baselines=-&pace=live")
    page.get_by_role("button", name="▶ Start").click()
    page.wait_for_function(objective_points_at_least(2))
    clicked = time.monotonic()
    page.get_by_role("button", name="■ Stop").click()
    page.get_by_text(re.compile("stopped at step")).first.wait_for()
    latency = time.monotonic() - clicked
    with open(ARTIFACTS / "browser-timings.txt", "a") as f:
        f.write(f"Stop to 'stopped' shown: {latency:.2f} s\n")
    _shot(page, "stopped-run.png")
    page.close()
