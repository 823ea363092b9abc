"""Start a Train run and open one from a link: the session's runs (:mod:`explorer.runs`)
joined to the run store.

A run started here is recorded in the run store as it trains; a link whose jobs the pool
no longer has is opened from the store.  Kept apart from :mod:`explorer.runs` because the
run store builds on that module: with these two here, neither imports the other.
"""

from __future__ import annotations

import time

import streamlit as st

from csvm.jobs import QuotaExceeded
from csvm.runs.config import RunConfig
from csvm.runs.targets import run_model, step_events
from csvm.runs.tuned import run_tuned_model
from explorer.class_board import record_run
from explorer.dask_jobs import on_cluster
from explorer.owner_cookie import owner
from explorer.playback import playback
from explorer.pool import get_pool
from explorer.run_registry import owner_shown
from explorer.run_store import restore
from explorer.runs import parse_jobs_param, runs, start_run, stop_current_run
from explorer.shared_work import split_share
from explorer.state import Run

__all__ = ["reattach", "submit_run"]


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
    record_run(run)  # checkpointed while it trains, stored whole when it ends
    return run.id


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
