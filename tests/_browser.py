"""What the real-browser tests and bench/bench_app.py share: where Chromium is, a
``streamlit run app.py`` server on a free port, and Chromium's launch flags."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"

#: Flags for a headless Chromium in a container: no sandbox (root), no GPU, nothing that
#: phones home or updates while a test is timed.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-quic",
    "--no-first-run",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


#: Streamlit's "Running…" indicator, there while a script run is in progress.
RUNNING = '[data-testid="stStatusWidget"]'


def url_path(script: str) -> str:
    """The page's URL path as ``st.Page`` derives it (the default page is at ``/``)."""
    from explorer.app import DEFAULT_PAGE  # the app only for the browser tests that ask

    return "" if script == DEFAULT_PAGE else Path(script).stem


def settle(page) -> None:
    """Wait until the page's script run has ended and its figures are drawn."""
    # Its title (h1), or a run's headline (h2: a projected run leaves the title out).
    page.locator('[data-testid="stMainBlockContainer"] :is(h1, h2)').first.wait_for()
    page.wait_for_timeout(1000)
    page.locator(RUNNING).wait_for(state="detached", timeout=120_000)
    page.wait_for_timeout(1000)


#: The Train page's objective chart (SVG: csvm.figures.chart_svg).
#: The objective chart: inline SVG, or its image while a run plays (csvm.figures.svg_image).
OBJECTIVE_CHART = ":is(svg.csvm-chart, img.csvm-chart-image)[data-title^='Objective']"


def objective_points_at_least(points: int) -> str:
    """A page predicate (for ``wait_for_function``): the objective chart shows at least
    ``points`` points."""
    return (
        f'() => [...document.querySelectorAll("{OBJECTIVE_CHART}")]'
        f".some(s => Number(s.dataset.points) >= {points})"
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def streamlit_server(
    log: IO[Any] | int = subprocess.DEVNULL,
    env: Mapping[str, str] | None = None,
    pid: list[int] | None = None,
    launcher: Path | None = None,
) -> Iterator[str]:
    """``streamlit run app.py`` on a free local port; yields its URL once it is healthy and
    kills the server's whole process group (its pool workers included) afterwards.  The
    server's process id is appended to ``pid`` when a list is given; ``launcher``, a script
    that stands for ``python -m streamlit`` (tests/_interrupting_server.py)."""
    port = free_port()
    streamlit = [str(launcher)] if launcher is not None else ["-m", "streamlit"]
    proc = subprocess.Popen(
        [
            sys.executable,
            *streamlit,
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
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    if pid is not None:
        pid.append(proc.pid)
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


def playwright_api():
    """``playwright.sync_api``, or a skip of the calling test module that says why."""
    import pytest

    return pytest.importorskip(
        "playwright.sync_api",
        reason="the browser tests need Playwright: pip install -r requirements-dev.txt",
    )
