"""``streamlit run app.py`` on a chosen port, for the tests that stop and restart a server
or run two at once on one run store (tests/app/test_restart.py, the Class board's browser
test).  tests/_browser.py picks a free port; a restart needs the same one again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from tests._browser import ARTIFACTS, ROOT


def start(port: int, env: Mapping[str, str], log_name: str) -> subprocess.Popen:
    """Start the server in a process group of its own (its pool workers join it) and wait
    until it answers on ``/_stcore/health``; its output goes to test-artifacts/."""
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / f"streamlit-{log_name}.log", "a")  # noqa: SIM115 - the server's
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1"],
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **env},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    log.close()  # the child holds its own copy
    deadline = time.time() + 90
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit on port {port} exited ({proc.returncode}); see its log")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                return proc
        except OSError:
            time.sleep(0.3)
    stop(proc, signal.SIGKILL)
    raise RuntimeError(f"streamlit on port {port} did not become healthy in 90 s")


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    """Send ``sig`` to the server's whole process group and wait for the server to end
    (SIGKILL after 15 s); the group is killed afterwards so no worker outlives it."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        return
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@contextmanager
def serving(port: int, env: Mapping[str, str], log_name: str) -> Iterator[str]:
    """A server for the block; yields its URL and stops it (SIGTERM) afterwards."""
    proc = start(port, env, log_name)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)
