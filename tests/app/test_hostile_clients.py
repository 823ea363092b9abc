"""A mischievous class against a real server, over Streamlit's websocket (issue 37 rows 2, 3,
8 and 9): a flood of reruns, many fresh cookies from one address, a second tab's Start, and
SIGTERM with suspended workers.  The clients are :mod:`tests._ws_client` (no browser); the
timings of the same attacks are bench/bench_flood.py's (docs/benchmarks.md), not asserted."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("websockets.sync.client")
st = pytest.importorskip("streamlit")
if not hasattr(st, "App"):  # the middleware, the lifespan and the owner cookie need st.App
    pytest.skip("Streamlit without st.App serves no middleware", allow_module_level=True)

from tests._browser import ARTIFACTS, ROOT  # noqa: E402
from tests._ws_client import StreamlitClient, http_get  # noqa: E402

pytestmark = pytest.mark.slow

#: The ports this module's servers may use.
PORTS = range(8664, 8671)
#: A small class server: one worker, quick fair-share slices, a tight rerun limit for
#: one address (the flood's), room for two runs (of three jobs) per address.
ENV = {
    "CSVM_MAX_WORKERS": "1",
    "CSVM_SPARE_WORKERS": "1",
    "CSVM_FAIR_SHARE_SECONDS": "0.5",
    "CSVM_PER_ADDRESS_JOBS": "6",
    "CSVM_MAX_JOB_SECONDS": "120",
    "CSVM_RERUNS_PER_ADDRESS": "3:6",
}
#: A run that outlasts every test here, shown live (no pace).
LONG = "n_iter=1000&n_train=400&pace=live"
_STEP = re.compile(r"K-CSVM: step (\d+) of")


def _free_port() -> int:
    for port in PORTS:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    pytest.skip(f"no free port in {PORTS.start}-{PORTS.stop - 1}")


@contextmanager
def _server(name: str, env: dict[str, str]):
    """``streamlit run app.py`` on one of this module's ports, in its own session; yields
    (url, process, log path) once healthy, and kills what is left of its session after."""
    port = _free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    log_path = ARTIFACTS / f"streamlit-{name}.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"]
            + ["--server.port", str(port), "--server.address", "127.0.0.1"],
            cwd=ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if http_get(url, "/_stcore/health", timeout=2)[0] == 200:
                    break
            except OSError:
                time.sleep(0.3)
        else:
            raise RuntimeError(f"streamlit did not become healthy; see {log_path}")
        yield url, proc, log_path
    finally:
        for pid, _ in _session_processes(proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        proc.wait(10)


def _session_processes(session: int) -> list[tuple[int, str]]:
    """(pid, state letter) of every process of a session (/proc; "T" is stopped)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == session:  # fields after the name: state, ppid, pgrp, session
            found.append((int(entry.name), fields[0]))
    return found


@pytest.fixture(scope="module")
def server():
    with _server("hostile_clients", ENV) as (url, proc, log_path):
        yield url, log_path, proc


def _step(text: str) -> int:
    steps = [int(s) for s in _STEP.findall(text)]
    return max(steps, default=0)


def _start(client: StreamlitClient):
    page = client.rerun()
    return client.press("Start", page)


# -- row 2: a flood of reruns -------------------------------------------------------------
def test_a_rerun_flood_is_held_to_the_limit_and_ends_on_the_last_value(server):
    url, log_path, _ = server
    flooders = [StreamlitClient(url, source="127.0.0.2", page="train").open() for _ in range(2)]
    try:
        widgets = [c.rerun().widget("number_input", "Iterations").widget_id for c in flooders]
        before = [c.started for c in flooders]
        started = time.monotonic()
        for i in range(150):  # 50 reruns a second from each tab for 3 s, values 20-36
            for client, widget in zip(flooders, widgets, strict=True):
                client.send(client.rerun_message({widget: 20 + i % 17}))
            time.sleep(0.02)
        for client, widget in zip(flooders, widgets, strict=True):
            client.send(client.rerun_message({widget: 37}))
        # Meanwhile another student's fresh page loads and the server answers its health.
        assert http_get(url, "/_stcore/health", source="127.0.0.3")[0] == 200
        with StreamlitClient(url, source="127.0.0.3", page="train").open() as other:
            assert other.rerun().finished
        # Each flooder's page ends on the last value it sent (held reruns were replaced).
        for client in flooders:
            deadline = time.monotonic() + 60
            while "n_iter=37" not in client.url_query:
                client.read_run(max(1.0, deadline - time.monotonic()))
        elapsed = time.monotonic() - started
    finally:
        for client in flooders:
            client.close()
    ran = sum(c.started - b for c, b in zip(flooders, before, strict=True))
    # The address's bucket (6 at once, 3 a second) bounds the reruns let through, not the
    # 302 sent; each new setting may add the page's own rerun (the preset box renames).
    assert ran <= 2 * (6 + 3 * elapsed) + 2, (ran, elapsed)
    log = log_path.read_text()
    assert "changed size during iteration" not in log and "Uncaught app execution" not in log


# -- row 9: a second tab of the same browser ------------------------------------------------
def test_a_second_tabs_start_leaves_the_first_tabs_run_going(server):
    url, _, _ = server
    with StreamlitClient(url, source="127.0.0.4", page="train", query=LONG).open() as first:
        _start(first)
        page = first.watch(lambda text: _step(text) >= 1, timeout=120)
        link = first.url_query
        # The same browser (its cookies) in a second tab presses Start.
        second = StreamlitClient(url, source="127.0.0.4", page="train", query=LONG)
        second.cookies = dict(first.cookies)
        with second.open():
            started = _start(second)
            assert "already has" not in started.texts()  # within the cap: both run
            at_start = _step(first.tick().texts())
            page = first.watch(lambda text: _step(text) > at_start + 2, timeout=120)
        assert "stopped" not in page.texts() and "no result" not in page.texts()
        # The first tab starts again and confirms: its old run stops as Stop stops it,
        # keeping its best state, not "stopped at step k, no result".
        page = first.rerun()
        page = first.press("Start", page)
        first.press("Stop it and start", page)
    run = re.search(r"run=(\w+)", link).group(1)
    jobs = re.search(r"jobs=([^&]+)", link).group(1)
    with StreamlitClient(
        url, source="127.0.0.4", page="train", query=f"run={run}&jobs={jobs}"
    ) as old:
        text = old.watch(lambda t: re.search(r"stopped at step \d+", t) is not None, 120).texts()
    assert re.search(r"stopped at step \d+: [\d.]+\s% test with the best filter", text), text[-400:]


# -- row 3: fresh cookies from one address ---------------------------------------------------
def test_fresh_cookies_from_one_address_share_one_cap_and_a_newcomer_gets_a_worker(server):
    url, _, _ = server
    hostile, refused = [], 0
    try:
        for _ in range(4):  # a fresh cookie each: a new browser as far as cookies go
            client = StreamlitClient(url, source="127.0.0.5", page="train", query=LONG).open()
            hostile.append(client)
            refused += "your network address already have" in _start(client).texts()
        # Six jobs per address: two runs of three; the other two are refused by name.
        assert refused == 2
        # Another run than theirs (identical runs of several browsers are computed once).
        other = f"{LONG}&seed=7"
        with StreamlitClient(url, source="127.0.0.6", page="train", query=other) as student:
            text = _start(student).texts()
            assert "already has" not in text
            # Its first step comes (by suspending one of the hostile jobs), whatever the
            # hostile sessions hold.
            student.watch(lambda t: _step(t) >= 1, timeout=120)
    finally:
        for client in hostile:
            client.close()


# -- row 8: SIGTERM with suspended workers (last: it stops the module's server) ------------
def test_sigterm_with_suspended_jobs_leaves_no_process_behind(server):
    url, _, proc = server
    clients = []
    try:
        for i in range(3):  # three more browsers, each suspending a job before it
            # Each its own seed: identical runs of several browsers are computed once.
            query = f"{LONG}&seed={i + 1}"
            client = StreamlitClient(url, source=f"127.0.1.{i + 1}", page="train", query=query)
            clients.append(client.open())
            _start(client)
            time.sleep(0.6)  # past the fair-share slice of the job it will suspend
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            stopped = [p for p, state in _session_processes(proc.pid) if state == "T"]
            if len(stopped) >= 3:
                break
            time.sleep(0.2)
        assert len(stopped) >= 3, _session_processes(proc.pid)
    finally:
        for client in clients:
            client.close()
    os.kill(proc.pid, signal.SIGTERM)
    proc.wait(60)
    deadline = time.monotonic() + 30
    while _session_processes(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _session_processes(proc.pid) == [], "workers, fork server or tracker left behind"
