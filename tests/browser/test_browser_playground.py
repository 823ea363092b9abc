"""The SVM playground in a real Chromium: place six points by clicking, see the boundary
appear, remove a point with a click, Step through SMO five times, then Play to the end.

The page runs on its own (``streamlit run pages/playground.py``) on a free loopback port,
so the test does not depend on the app's navigation listing it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.request
from urllib.parse import parse_qs, urlparse

import pytest

from tests._browser import ARTIFACTS, CHROMIUM, ROOT, free_port

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM), reason="needs Debian's Chromium: apt-get install -y chromium"
    ),
]

PLANE = '[data-testid="stPlotlyChart"] .nsewdrag'
POSITIVE = [(1.0, 1.0), (1.5, -0.5), (2.0, 0.5)]
NEGATIVE = [(-1.0, -1.0), (-1.5, 0.5), (-2.0, -0.5)]


@pytest.fixture(scope="module")
def page_url():
    ARTIFACTS.mkdir(exist_ok=True)
    port = free_port()
    with open(ARTIFACTS / "streamlit-playground.log", "w") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                "pages/playground.py",
                "--server.headless",
                "true",
                "--server.port",
                str(port),
                "--server.address",
                "127.0.0.1",
            ],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.time() + 60
            while time.time() < deadline:
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2):
                        break
                except OSError:
                    time.sleep(0.3)
            else:
                raise RuntimeError("streamlit did not become healthy in 60 s")
            yield url
        finally:
            os.killpg(proc.pid, 15)
            proc.wait(10)


def _placed(page) -> int:
    query = parse_qs(urlparse(page.url).query)
    return sum(
        len(query.get(k, [""])[0].split("_")) // 2
        for k in ("pg_pos", "pg_neg")
        if query.get(k, [""])[0]
    )


def _wait_for_count(page, n: int) -> None:
    deadline = time.time() + 30
    while _placed(page) != n:
        assert time.time() < deadline, f"expected {n} placed points, URL {page.url}"
        page.wait_for_timeout(100)
    page.wait_for_selector(PLANE)
    page.wait_for_timeout(300)  # the redrawn figure settles


def _click_at(page, x: float, y: float) -> None:
    """Click the plane at data coordinates (x, y) (the axes span -3 … 3)."""
    box = page.locator(PLANE).first.bounding_box()
    px = box["x"] + (x + 3) / 6 * box["width"]
    py = box["y"] + (3 - y) / 6 * box["height"]
    page.mouse.move(px, py)
    page.wait_for_timeout(150)
    page.mouse.click(px, py)


def _bold_step(page) -> str:
    return page.locator("strong").filter(has_text=re.compile(r"^Step \d+ of")).inner_text()


@pytest.mark.timeout(300)
def test_place_points_see_the_boundary_and_step(page_url, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{page_url}/?pg_data=placed&pg_kernel=linear")
    page.wait_for_selector(PLANE, timeout=60_000)
    assert page.locator(".contourlevel path").count() == 0  # nothing to separate yet
    count = 0
    for label, spots in (("+1", POSITIVE), ("−1", NEGATIVE)):
        page.get_by_text(re.compile(f"^{re.escape(label)} \\(")).click()
        page.wait_for_timeout(500)
        for x, y in spots:
            _click_at(page, x, y)
            count += 1
            _wait_for_count(page, count)
    query = parse_qs(urlparse(page.url).query)
    assert len(query["pg_pos"][0].split("_")) == 6 and len(query["pg_neg"][0].split("_")) == 6
    # the boundary and both margins are drawn; the six points are all classified right
    page.wait_for_function("document.querySelectorAll('.contourlevel path').length >= 3")
    assert "100.0 %" in page.locator('[data-testid="stMetric"]').first.inner_text()
    page.screenshot(path=str(ARTIFACTS / "playground-placed.png"))

    _click_at(page, 0.0, 2.5)  # a seventh point, then a click on it removes it
    _wait_for_count(page, 7)
    _click_at(page, 0.0, 2.5)
    _wait_for_count(page, 6)

    page.get_by_role("radio", name="Watch SMO solve it").click()
    page.get_by_text(re.compile(r"^Step 0 of")).wait_for(timeout=30_000)
    total = int(re.search(r"of (\d+)", _bold_step(page)).group(1))
    assert total >= 5, f"this layout needs {total} SMO steps"
    for k in range(1, 6):
        page.get_by_role("button", name="Step", exact=True).click()
        page.get_by_text(re.compile(f"^Step {k} of {total}")).wait_for(timeout=30_000)
    assert re.search(r"updated α\d+ and α\d+", _bold_step(page))
    page.get_by_role("button", name="Play", exact=True).click()  # plays to the end, stops
    page.get_by_text(re.compile(f"^Step {total} of {total}")).wait_for(timeout=60_000)
    page.get_by_role("button", name="Play", exact=True).wait_for(timeout=30_000)
    assert page.get_by_role("button", name="Step", exact=True).is_disabled()
    page.screenshot(path=str(ARTIFACTS / "playground-step5.png"))
    page.close()
