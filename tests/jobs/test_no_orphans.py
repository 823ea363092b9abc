"""A server that dies without shutting its pool down (SIGKILL, the OOM killer) leaves no
process behind: not the running or waiting workers, not one frozen for a fair share
(SIGSTOP), not the fork server or the resource tracker (issue 37, row 8; SIGTERM of the
real server is tests/app/test_hostile_clients.py's)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc (Linux)")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# A pool with one worker: one sleeper runs, a second browser's suspends it (a fair share),
# a spare waits; then the script says so and waits to be killed.
_SCRIPT = textwrap.dedent(
    """
    import time
    import _job_targets as t
    from csvm.jobs import JobPool, PoolSettings

    settings = PoolSettings(max_workers=1, fair_share_seconds=0.2, spares=1, tick_seconds=0.05)
    pool = JobPool(settings=settings, preload=("numpy",))
    first = pool.submit(t.sleeper, {"seconds": 120}, owner="a")
    while not pool.get(first).events:
        time.sleep(0.05)
    pool.submit(t.sleeper, {"seconds": 120}, owner="b")
    while pool.stats()["suspended"] < 1:
        time.sleep(0.05)
    print("ready", flush=True)
    time.sleep(600)
    """
)


def _session(session: int) -> list[tuple[int, str]]:
    """(pid, state) of the processes of a session ("T": stopped)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[3]) == session:
                found.append((int(entry.name), fields[0]))
    return found


def test_a_killed_pool_owner_leaves_no_worker_fork_server_or_tracker():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)])}
    proc = subprocess.Popen(
        [sys.executable, "-c", _SCRIPT],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        # SIGSTOP has been sent; on a loaded machine the worker shows "T" once the kernel
        # has scheduled it (it read "R" right after, once, in CI).
        deadline = time.monotonic() + 30
        while "T" not in (states := [state for _, state in _session(proc.pid)]):
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert "T" in states, states  # a frozen worker, among others
        assert len(states) >= 5, states  # the owner, tracker, fork server, two workers
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 30
        while _session(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _session(proc.pid) == [], "processes left behind"
    finally:
        for pid, _ in _session(proc.pid):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
