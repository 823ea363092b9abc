"""Test-wide configuration, and the fixtures of the real-browser tests."""

import logging
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from tests._browser import ARTIFACTS, CHROMIUM, ROOT

# AppTest and cached helpers run Streamlit code outside a browser session, where Streamlit
# logs "missing ScriptRunContext! This warning can be ignored when running in bare mode."
# It is expected there, so that one logger is quietened; every other warning still shows.
logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(logging.ERROR)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(request):
    port = _free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    ARTIFACTS.mkdir(exist_ok=True)
    # One log per test module, so two modules' servers never share a file.
    log = open(ARTIFACTS / f"streamlit-{request.module.__name__}.log", "w")  # closed below
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
