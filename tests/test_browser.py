"""A real browser: `streamlit run app.py` driven by Playwright in Debian's Chromium."""

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
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / "streamlit.log", "w")  # closed in the finally below
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
        env=env,
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
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-quic",
                "--no-first-run",
                "--disable-sync",
                "--disable-dev-shm-usage",
            ],
        )
        yield b
        b.close()


_GROWN = """() => [...document.querySelectorAll('.js-plotly-plot')].some(p =>
    p.layout && p.layout.title && String(p.layout.title.text).includes('Objective')
    && p.data && p.data.length && p.data[0].x && p.data[0].x.length >= N)"""


def _objective_points(page) -> int:
    """Markers drawn in the objective chart's first trace."""
    return page.evaluate(
        """() => {
            const plots = [...document.querySelectorAll('.js-plotly-plot')];
            for (const p of plots) {
                const t = p.layout && p.layout.title && p.layout.title.text;
                const ok = t && String(t).includes('Objective') && p.data.length;
                if (ok) return p.data[0].x.length;
            }
            return 0;
        }"""
    )


def _shot(page, name: str) -> None:
    """A tall screenshot (Streamlit scrolls inside its own container, not the page)."""
    page.set_viewport_size({"width": 1400, "height": 3600})
    page.wait_for_timeout(500)
    page.screenshot(path=str(ARTIFACTS / name))
    page.set_viewport_size({"width": 1400, "height": 1000})


def test_start_watch_stop_reload(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(60_000)

    # The default preset: Start, the objective chart gets its points, the table appears.
    page.goto(server)
    page.get_by_text("Example training images").wait_for()
    page.wait_for_timeout(3000)  # a teacher reads the page; the spare workers warm up
    started = time.monotonic()
    page.get_by_role("button", name="▶ Start").click()
    page.wait_for_function(_GROWN.replace("N", "1"))
    first_point = time.monotonic() - started
    page.get_by_text("Comparison on the same split").wait_for(timeout=120_000)
    page.wait_for_function(_GROWN.replace("N", "15"))  # one point per iteration
    finished = time.monotonic() - started
    (ARTIFACTS / "browser-timings.txt").write_text(
        f"start to first live point: {first_point:.2f} s\n"
        f"start to comparison table: {finished:.2f} s\n"
    )
    print(f"start -> first point {first_point:.2f} s, -> results {finished:.2f} s")
    _shot(page, "finished-run.png")
    finished_url = page.url
    assert "run=" in finished_url and "jobs=" in finished_url

    # A second, long run: the live chart grows, then Stop stops it.
    page.goto(f"{server}/?n_iter=400&n_train=0&baselines=-")
    page.get_by_role("button", name="▶ Start").click()
    page.wait_for_function(_GROWN.replace("N", "1"))
    seen = _objective_points(page)
    page.wait_for_function(_GROWN.replace("N", str(seen + 2)))  # it grows
    page.get_by_role("button", name="■ Stop").click()
    page.get_by_text("stopped").first.wait_for()
    page.wait_for_timeout(1500)  # the rerun after Stop redraws the chart once more
    stopped_at = _objective_points(page)
    page.wait_for_timeout(2500)
    assert _objective_points(page) == stopped_at < 400, "no points after Stop"
    _shot(page, "stopped-run.png")

    # Reload the first run's link: the finished run is still shown.
    page.goto(finished_url)
    page.get_by_text("Comparison on the same split").wait_for()
    page.wait_for_function(_GROWN.replace("N", "15"))  # plotly draws after the text
    _shot(page, "reloaded-run.png")
    page.close()
