"""The worker's messages read into a job's record (the parent's side of the protocol).

A worker sends pickled ``(kind, payload)`` pairs: ``"event"`` (one event for the page),
``"phase"`` (how far it got: importing, running, with its CPU time at the start),
``"done"`` (the result) and ``"error"`` (message, traceback, type and info).
"""

from __future__ import annotations

import pickle

from csvm.jobs.records import JobRecord

__all__ = ["read_messages"]


def read_messages(job: JobRecord, limit: int | None = None) -> str | None:
    """Read up to ``limit`` messages of a running job's worker into its record.

    Returns
    -------
    str or None
        "done" or "error" when a message ended the job (the record holds its result or
        error; the caller makes it final and reads no further), None otherwise.
    """
    for raw in job.worker.read(limit):
        try:
            kind, payload = pickle.loads(raw)
        except Exception as exc:  # noqa: BLE001 - e.g. a class that does not import here
            job.error = f"a message from the worker could not be read: {exc!r}"
            job.error_type = type(exc).__name__
            return "error"
        if kind == "event":
            job.store.add(payload)
        elif kind == "phase":
            job.worker.phase = payload["phase"]
            if payload["phase"] == "running":
                job.worker.cpu_base = payload["cpu"]
        elif kind == "done":
            job.result = payload
            job.result_bytes = len(raw)
            return "done"
        else:
            job.error = payload["message"]
            if payload["traceback"]:
                job.error += "\n\n" + payload["traceback"]
            job.error_type = payload["type"]
            job.error_info = payload["info"]
            job.limit_hit = payload["type"] == "TimeLimit"
            job.result_bytes = len(raw)
            return "error"
    return None
