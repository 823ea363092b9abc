"""Waiting for a pool job's state in tests (no time is asserted: a job that never gets
there fails by the AssertionError)."""

import time


def wait_for(pool, job_id, states, timeout=60.0, viewer=None, keep_alive=()):
    """The job's view once its state is one of ``states``.

    The owners named in ``keep_alive`` heartbeat while it waits, as their open tabs would:
    a short lease must not run out only because a loaded machine is slow to run the job.
    """
    deadline = time.time() + timeout
    while time.time() < deadline:
        for owner in keep_alive:
            pool.heartbeat(owner)
        view = pool.poll(job_id, viewer=viewer)
        if view.state in states:
            return view
        time.sleep(0.05)
    raise AssertionError(f"job stayed {view.state}, expected {states}")
