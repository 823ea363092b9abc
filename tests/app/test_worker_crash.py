"""A CSVM worker killed with kill -9 while its CNN baseline still trains: the page names
the crash on its next tick and stops counting down, whatever else still runs."""

import os
import signal
import time

from explorer.pool import get_pool
from tests._apptest import open_app


def _wait(predicate, seconds=60.0):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


def _progress(at) -> str:
    return " ".join(p.proto.text for p in at.get("progress"))


def test_a_killed_csvm_worker_is_named_while_the_cnn_trains():
    at = open_app(
        {"n_iter": "400", "n_train": "300", "baselines": "cnn", "cnn_epochs": "200", "pace": "live"}
    )
    at.button(key="start").click().run()
    run = at.session_state["runs"][at.session_state["current_run"]]
    pool = get_pool()
    csvm, cnn = run.jobs["csvm"], run.jobs["cnn"]
    try:
        _wait(lambda: pool.get(csvm).state == "running" and pool.get(csvm).events)
        # The countdown needs a step: the first events (data, start) may come before one on
        # a loaded machine, so the page is asked again until it counts down.
        _wait(lambda: "s left" in _progress(at.run()))
        record = pool._jobs[csvm]
        work = record.source or record  # a Train job watches its (shared) work's worker
        os.kill(work.worker.process.pid, signal.SIGKILL)
        _wait(lambda: pool.get(csvm).state == "error")
        assert pool.get(cnn).state in ("queued", "running"), "the baseline still trains"
        at.run()
        assert not at.exception
        heading = next(m.value for m in at.markdown if m.value.startswith("## "))
        assert "failed at step" in heading and "SIGKILL" in heading, heading
        progress = _progress(at)
        assert "left" not in progress, progress
    finally:
        for job in run.jobs.values():
            pool.cancel(job, run.owner)
