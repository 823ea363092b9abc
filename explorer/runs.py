"""This session's Train runs: start one (its jobs in the pool, all or none), stop it, find
it again after a reload or from a shared link, and read its jobs.

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
from csvm.runs.targets import run_model, step_events
from csvm.runs.tuned import run_tuned_model
from explorer.dask_jobs import on_cluster
from explorer.owner_cookie import owner
from explorer.playback import playback
from explorer.pool import FINAL_STATES, get_pool
from explorer.run_registry import owner_shown
from explorer.shared_work import split_share
from explorer.state import Run

__all__ = [
    "is_running",
    "outcomes",
    "owns",
    "parse_jobs_param",
    "poll_run",
    "reattach",
    "runs",
    "start_run",
    "stop_current_run",
    "submit_run",
]


def runs() -> dict[str, Run]:
    """This browser session's runs, newest last."""
    return st.session_state.setdefault("runs", {})


def submit_run(config: RunConfig, paused: bool = False) -> str | None:
    """Queue the CSVM and the chosen baselines as jobs; returns the run id.

    A tab has one active Train run: its previous run is stopped first, as its Stop button
    stops it (:func:`stop_current_run`: it keeps its best state).  Another tab of the same
    browser keeps its run; both count against the cap.  When the server's cap on a
    browser's jobs is reached, says so and returns None.
    """
    pool = get_pool()
    me = owner()
    stop_current_run()
    models = ["csvm", *config.baselines]
    mine = pool.stats()["owners"].get(me, {})
    active = mine.get("queued", 0) + mine.get("running", 0)
    if active + len(models) > pool.settings.max_active_per_owner:
        st.error(
            f"This browser already has {active} jobs queued or running (sweeps, lab "
            f"landscapes) and the server allows {pool.settings.max_active_per_owner}: wait "
            "for them to finish or stop one, then press Start again.",
            icon=":material/block:",
        )
        return None
    targets = {}
    for model in models:
        kwargs = {"config": config.to_dict(), "model": model}
        target = run_model
        if model in ("svm", "cnn") and config.tune_baselines:
            target = run_tuned_model  # tuned on the validation split
        elif model != "svm":
            kwargs["paused"] = paused
        targets[model] = (target, kwargs)
    try:
        # On the cluster when CSVM_DASK_SCHEDULER names one; a class's identical jobs (one
        # preset, one split) are computed once, each student watching its own jobs.
        run = start_run(config, on_cluster(targets), share=split_share(config))
    except QuotaExceeded as exc:
        st.error(str(exc), icon=":material/block:")
        return None
    from explorer.class_board import record_run  # the run store's adapter imports this module

    record_run(run)  # checkpointed while it trains, stored whole when it ends
    return run.id


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


def reattach(run_id: str, jobs: str) -> str | None:
    """After a reload or from a shared link, find a run's jobs in the pool again, else
    the run in the run store (:func:`explorer.run_store.restore`).

    The run is drawn from the settings its jobs were started with, never from the link's
    other parameters (those stay the viewer's settings for a next run).  It is this
    browser's own (it can stop it) only if the pool says so; otherwise it is a read-only
    shared view.  Returns None on success, else what went wrong, in words.
    """
    if run_id in runs():
        st.session_state["current_run"] = run_id
        return None
    pool = get_pool()
    pairs = parse_jobs_param(jobs)
    views = {m: pool.get(j) for m, j in pairs.items()}
    if len(run_id) > 16 or "csvm" not in views or any(v is None for v in views.values()):
        from explorer.run_store import restore  # it imports this module

        return restore(run_id)  # the run store has every run that ended, or was cut off
    config = _job_config(views["csvm"], run_id)
    # A link edited to mix jobs of other runs: keep only this run's own jobs.
    foreign = sorted(m for m, v in views.items() if v.meta.get("run") != run_id)
    if config is None or "csvm" in foreign:
        return "This link does not name a run of this server. Press Start to train one."
    pairs = {m: j for m, j in pairs.items() if m not in foreign}
    owners = {views[m].owner for m in pairs}
    runs()[run_id] = Run(
        id=run_id,
        config=config,
        jobs=pairs,
        owner=owners.pop() if len(owners) == 1 else None,
        created=time.time(),
    )
    st.session_state["current_run"] = run_id
    # A viewer joining a run (a shared link, a reload) starts at the step its owner's page
    # shows (every recorded step once the owner is gone), then follows at the pace:
    # replaying from step 0 kept a second browser 8-9 s behind at load 8
    # (bench/bench_controls.py), and the worker's last step would give the ending away.
    recorded = len(step_events(views["csvm"].events, every_sub_problem=config.multiclass))
    shown = owner_shown(run_id)
    play = playback(runs()[run_id])
    play.cursor = play.target = recorded if shown is None else min(shown, recorded)
    if foreign:
        return (
            f"This link also named jobs of another run ({', '.join(foreign)}); they are left "
            "out and the run is shown read-only as far as they go."
        )
    return None


def _job_config(view, run_id: str) -> RunConfig | None:
    """The settings a Train job was started with (None: not a Train job of ``run_id``)."""
    meta = view.meta
    if meta.get("run") != run_id or not isinstance(meta.get("config"), dict):
        return None
    try:
        return RunConfig(**meta["config"])
    except (TypeError, ValueError):
        return None


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
