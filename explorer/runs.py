"""This session's Train runs: start one (its jobs in the pool, all or none), stop it, and
read its jobs.  Submitting a Train run and opening one from a link, which join these to the
run store, are :mod:`explorer.train_runs`.

A run's own state is :class:`explorer.state.Run`, kept in ``st.session_state``; its replay
is :func:`explorer.playback.playback`.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import streamlit as st

from csvm.jobs import QuotaExceeded
from csvm.runs.config import SPECS, RunConfig
from explorer.owner_cookie import owner
from explorer.pool import FINAL_STATES, get_pool
from explorer.state import Run

__all__ = [
    "is_running",
    "outcomes",
    "owns",
    "parse_jobs_param",
    "poll_run",
    "runs",
    "start_run",
    "stop_current_run",
]


def runs() -> dict[str, Run]:
    """This browser session's runs, newest last."""
    return st.session_state.setdefault("runs", {})


#: The jobs that take Pause, Step and Stop; the others train in one go and end by themselves.
_STOPPABLE = ("csvm", "cnn")


def stop_current_run() -> None:
    """Stop this tab's current Train run as its Stop button does, before another starts.

    The CSVM and the CNN are asked to stop after their step, so they end with their best
    state and results ("stopped at step k" with a result); queued jobs leave the queue;
    a baseline that trains in one go finishes.  Only this tab's own run: killing every
    Train job of the browser stopped the run of its other tab, which then read "stopped
    at step 103, no result" without anyone asking (issue 37).
    """
    run = runs().get(st.session_state.get("current_run", ""))
    if run is None or not owns(run):
        return
    pool, me = get_pool(), owner()
    for model, job in run.jobs.items():
        view = pool.get(job)
        if view is None or view.state in FINAL_STATES:
            continue
        if view.state == "queued":
            pool.cancel(job, me)
        elif model in _STOPPABLE:
            pool.send(job, {"cmd": "stop"}, me)


def start_run(
    config: RunConfig,
    targets: dict[str, tuple[Any, dict]],
    run_id: str | None = None,
    *,
    share: str | None = None,
    **meta: Any,
) -> Run:
    """Submit a Train run's jobs (model -> (target, kwargs)), all or none, and make it this
    session's current run.  Each job's ``meta`` names the run and its settings (what a
    shared link is drawn from).  ``run_id``: a stored run shown again keeps its id (default:
    a new one).  ``share``: the jobs are deterministic given it (the data split's digest,
    :func:`explorer.shared_work.split_share`), so identical jobs are computed once
    (:mod:`csvm.jobs.shared`).  Raises QuotaExceeded (after cancelling the jobs already
    submitted) when the server's cap is reached."""
    pool, me = get_pool(), owner()
    run_id = run_id or uuid.uuid4().hex[:8]
    jobs: dict[str, str] = {}
    try:
        for model, (target, kwargs) in targets.items():
            jobs[model] = pool.submit(
                target,
                kwargs,
                name=f"{run_id}:{model}",
                group="train",
                owner=me,
                meta={"run": run_id, "config": config.to_dict(), **meta},
                share=share,
            )
    except QuotaExceeded:
        for job in jobs.values():
            pool.cancel(job, me)
        raise
    run = Run(id=run_id, config=config, jobs=jobs, owner=me, created=time.time())
    runs()[run_id] = run
    st.session_state["current_run"] = run_id
    return run


#: The jobs a Train run may hold: the CSVM, the baselines and the comparison models.
_RUN_MODELS = ("csvm", *SPECS["baselines"].choices)


def parse_jobs_param(jobs: str) -> dict[str, str]:
    """``"csvm:ID,svm:ID"`` as ``{model: job id}``; unknown models and empty ids dropped."""
    pairs = {}
    for item in jobs[:200].split(","):
        model, _, job = item.partition(":")
        if model in _RUN_MODELS and job and len(job) <= 32:
            pairs[model] = job
    return pairs


def owns(run: Run) -> bool:
    """Whether this session started the run (only then can it stop or step it)."""
    return run.owned_by(owner())


def poll_run(run: Run) -> dict[str, Any]:
    """Current views of a run's jobs (draining their new events; None: forgotten)."""
    pool = get_pool()
    return {m: pool.poll(j) for m, j in run.jobs.items()}


def outcomes(views: dict[str, Any]) -> dict[str, dict[str, Any] | None]:
    """A run's job views in the terms of :func:`csvm.runs.targets.result_rows`."""
    return {
        m: None
        if v is None
        else {
            "state": v.state,
            "result": v.result,
            "events": v.events,
            "error_type": v.error_type,
            "error": v.error.strip().splitlines()[-1][:300] if v.error.strip() else "",
            "suspended_seconds": v.suspended_seconds,
        }
        for m, v in views.items()
    }


def is_running(views: dict[str, Any]) -> bool:
    """Whether any job of a run is still queued or running."""
    return any(v is not None and v.state not in FINAL_STATES for v in views.values())
