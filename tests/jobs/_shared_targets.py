"""Job targets for tests/jobs/test_shared.py (workers import them by module name)."""

import os
import time

import numpy as np

from csvm.runs.targets import RunControl


def stepper(emit, calls, n=5, pause=0.0, seed=0, paused=False):
    """A deterministic run of ``n`` steps that obeys Pause, Step and Stop as the Train
    jobs do (:class:`csvm.runs.targets.RunControl`); each call appends a line to the
    file ``calls``, so a test counts how often the target really ran."""
    with open(calls, "a") as fh:
        fh.write(f"{os.getpid()}\n")
    rng = np.random.default_rng(seed)
    control = RunControl(emit, paused=paused)
    values = []
    for step in range(n):
        value = float(rng.standard_normal())
        values.append(value)
        emit({"kind": "step", "step": step, "value": value, "filters": rng.random((2, 2))})
        time.sleep(pause)
        if not control.after_step():
            break
    return {"values": values, "status": "stopped" if control.stopped else "done"}


def calls(path) -> int:
    """How many times :func:`stepper` ran with this ``calls`` file."""
    try:
        with open(path) as fh:
            return len(fh.read().split())
    except FileNotFoundError:
        return 0
