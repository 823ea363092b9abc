"""Waiting for a pool job's state in tests (no time is asserted: a job that never gets
there fails by the AssertionError)."""

import time


def wait_for(pool, job_id, states, timeout=60.0, viewer=None):
    """The job's view once its state is one of ``states``."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        view = pool.poll(job_id, viewer=viewer)
        if view.state in states:
            return view
        time.sleep(0.05)
    raise AssertionError(f"job stayed {view.state}, expected {states}")
