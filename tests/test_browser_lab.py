"""The Filter lab in a real browser: draw a digit on the canvas and see a prediction appear.

`streamlit run app.py` on a free port, driven by Playwright in Debian's Chromium (the
pattern of tests/test_browser.py, with its own server so the two files run independently).
"""

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM), reason="needs Debian's Chromium: apt-get install -y chromium"
    ),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = _free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / "streamlit-lab.log", "w")  # closed in the finally below
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.headless",
            "true",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.3)
        else:
            raise RuntimeError("streamlit did not become healthy in 60 s")
        yield url
    finally:
        os.killpg(proc.pid, 15)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
        log.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"],
        )
        yield b
        b.close()


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
    page.goto(server)
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
    page.wait_for_timeout(1000)
    section = page.get_by_text("Your own digit")
    section.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "filter-lab-digit.png"))
    page.set_viewport_size({"width": 1400, "height": 4200})
    page.wait_for_timeout(800)
    page.screenshot(path=str(ARTIFACTS / "filter-lab.png"))
    page.close()
