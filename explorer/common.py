"""Streamlit glue shared by the pages: the worker pool, the session's runs, cached data."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from csvm import figures
from csvm.figures.image_html import image_grid_html
from csvm.figures.svg_image import svg_as_image
from csvm.jobs import JobPool, PoolSettings, QuotaExceeded
from csvm.runs.config import SPECS, RunConfig, parse
from csvm.runs.presets import load_presets
from csvm.runs.targets import load_data, run_model, step_events
from csvm.runs.tuned import run_tuned_model
from explorer.dask_jobs import on_cluster
from explorer.owner_cookie import browser_key, client_address, xsrf_token  # noqa: F401
from explorer.playground import carry_params
from explorer.run_registry import owner_shown
from explorer.state import Playback, Run

_POOL: JobPool | None = None
_POOL_LOCK = threading.Lock()


FINAL_STATES = {"done", "error", "stopped"}


def projector_mode() -> bool:
    """Whether this session shows the app for a projector (larger type and figures)."""
    return bool(st.session_state.get("projector"))


def projected(fig: go.Figure) -> go.Figure:
    """``fig`` with the projector's larger type when projector mode is on (changed in
    place): for pages that draw a figure in a column or with options of their own."""
    return figures.for_projector(fig) if projector_mode() else fig


def chart(fig, key: str, **options) -> None:
    """A Plotly figure at full width, enlarged in projector mode; ``options`` go to
    ``st.plotly_chart`` (``on_select``, ``selection_mode``)."""
    st.plotly_chart(projected(fig), key=key, width="stretch", **options)


def table(data: Any, **options: Any) -> None:
    """A table: ``st.dataframe`` (sorting, scrolling; ``options`` go to it), or in projector
    mode ``st.table``, whose HTML the projector's style sets at 18 px or more.

    The data grid draws its cells on a canvas at 14 px that no style sheet reaches, and
    CSS zoom left the canvas wider than its column.  The number formats of
    ``column_config`` ("%.2f %%") are kept in the projector's table.
    """
    if not projector_mode():
        st.dataframe(data, **options)
        return
    frame = pd.DataFrame(data)
    formats = {
        name: column["type_config"]["format"]
        for name, column in (options.get("column_config") or {}).items()
        if name in frame.columns
        and isinstance(column, dict)
        and (column.get("type_config") or {}).get("format")
    }
    styler = frame.style.format(
        {name: (lambda v, f=f: "" if pd.isna(v) else f % v) for name, f in formats.items()}
    )
    st.table(styler.hide(axis="index") if options.get("hide_index") else styler)


#: Whether the figures drawn now change at the next tick (see :func:`playing`).
_PLAYING: contextvars.ContextVar[bool] = contextvars.ContextVar("csvm_playing", default=False)


@contextlib.contextmanager
def playing(moving: bool) -> Iterator[None]:
    """Within the block, :func:`markup_figure` draws SVG figures as images when ``moving``
    (a run playing: :mod:`csvm.figures.svg_image` says why), inline SVG otherwise."""
    token = _PLAYING.set(moving)
    try:
        yield
    finally:
        _PLAYING.reset(token)


def markup_figure(markup: str, name: str) -> None:
    """A figure drawn as SVG or HTML markup by :mod:`csvm.figures` (no Plotly: nothing to
    build per tick but a string, and nothing for a new browser to load first), in a
    container keyed ``figure_<name>`` (for the layout checks and the browser tests)."""
    with st.container(key=f"figure_{name}"):
        svg_figure(markup)


def svg_figure(markup: str) -> None:
    """SVG (or HTML) markup from :mod:`csvm.figures`: an image of it while a run plays
    (:func:`playing`), inline otherwise."""
    st.markdown(svg_as_image(markup) if _PLAYING.get() else markup, unsafe_allow_html=True)


def image_grid(images, captions, title: str, cols: int = 8) -> None:
    """A titled grid of grey images as HTML (:mod:`csvm.figures.image_html`: no Plotly, so
    a new visitor's first page does not wait for Plotly's script), larger in projector mode."""
    markup = image_grid_html(images, captions, title, cols=cols, large=projector_mode())
    st.markdown(markup, unsafe_allow_html=True)


def shutdown_pool() -> None:
    """End the server's pool: every worker, suspended ones too (the server is stopping).

    ``app.py`` calls it as the server shuts down: uvicorn ends the process by raising the
    SIGTERM it caught again, so ``atexit`` never runs, and three workers frozen for a
    fair share, the fork server and the resource tracker were left behind.
    """
    with _POOL_LOCK:
        pool = _POOL
    if pool is not None:
        pool.shutdown()


def get_pool() -> JobPool:
    """One pool of worker processes for the whole server (limits: ``PoolSettings``, read
    from ``CSVM_*`` environment variables; see the README's classroom section).

    Held in this module, not in ``st.cache_resource``: any browser can send Streamlit's
    ``clear_cache`` message (two bytes over the websocket, no login), which empties every
    ``st.cache_resource``; a pool kept there was rebuilt, every student's runs were lost
    and the old pool's workers lived on.  Nothing a browser sends reaches this one.

    Idle workers import the library and load the default dataset in advance
    (:mod:`explorer.worker_preload`), so a run starts streaming about a second after Start.
    """
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = JobPool(
                settings=PoolSettings.from_env(),
                preload=("numpy", "sklearn.svm", "csvm.runs.targets", "explorer.worker_preload"),
            )
        return _POOL


def owner() -> str:
    """Who owns the runs this page starts: the browser (so a reload keeps control of its
    run, while a shared link opened in another browser is a read-only view), or the
    session when no browser cookie is available.  The pool learns the browser's network
    address with it (:func:`client_address`)."""
    if "owner" not in st.session_state:
        key = browser_key()
        st.session_state["owner"] = (
            hashlib.sha256(key.encode()).hexdigest()[:32] if key else uuid.uuid4().hex
        )
        get_pool().note_address(st.session_state["owner"], client_address())
    return st.session_state["owner"]


def heartbeat() -> None:
    """Tell the pool this session is alive: renews the leases of all its jobs, whichever
    page it is on, and keeps its finished runs from being forgotten."""
    pool, me = get_pool(), owner()
    pool.note_address(me, client_address())  # after a long silence the pool forgot it
    pool.heartbeat(me)


@st.cache_data(ttl=60)
def dataset_table() -> list[dict[str, Any]]:
    """Every dataset with its availability (re-checked each minute: a fetch may land)."""
    from csvm.data import list_datasets

    return list_datasets()


def available_datasets() -> dict[str, dict[str, Any]]:
    """The datasets on this machine, by name, and this session's own images if any.

    Also tells :mod:`explorer.own_data` which uploads this session uses (its own images,
    found again after a reload, and its runs' datasets), so they are kept while it lives.
    """
    from explorer.own_data import adopt, hold, start_sweeper

    found = {d["name"]: d for d in dataset_table() if d["available"]}
    start_sweeper()
    own = adopt()
    hold([own, *(run.config.dataset for run in runs().values())])
    if own:
        from csvm.data.own_images import touch_own
        from csvm.data.registry import spec
        from csvm.exceptions import DatasetError

        try:
            entry = spec(own)
        except DatasetError:  # removed (an idle sweep, a server restart): forget it
            st.session_state.pop("own_dataset", None)
            return found
        touch_own(own)
        found[own] = {
            "name": own,
            "description": entry.description,
            "image_shape": entry.image_shape,
            "classes": list(entry.classes),
            "available": True,
            "location": "uploaded",
            "fetch_command": "",
        }
    return found


@st.cache_data
def presets() -> list[dict[str, Any]]:
    """The presets of ``csvm/runs/presets.json``, each with its parsed ``run_config``.

    A preset whose settings do not parse is a bug of the repository (a test checks them
    all); it is left out rather than shown broken.
    """
    out = []
    for preset in load_presets():
        config, problems = parse(preset["config"], source=f"the preset {preset['name']!r}")
        if not problems:
            out.append({**preset, "run_config": config})
    return out


@st.cache_data(max_entries=8, show_spinner="Loading images…")
def cached_data(config: RunConfig):
    """The pair a run uses (the same call its worker makes, so indices agree)."""
    return load_data(config)


def data_for(config: RunConfig):
    """The cached pair a run configuration uses; only the data settings key the cache."""
    key = RunConfig(
        dataset=config.dataset,
        class_a=config.class_a,
        class_b=config.class_b,
        classes=config.classes,
        protocol=config.protocol,
        n_train=config.n_train,
        seed=config.seed,
    )
    return cached_data(key)


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
        run = start_run(config, on_cluster(targets))  # CSVM_DASK_SCHEDULER: on the cluster
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
    **meta: Any,
) -> Run:
    """Submit a Train run's jobs (model -> (target, kwargs)), all or none, and make it this
    session's current run.  Each job's ``meta`` names the run and its settings (what a
    shared link is drawn from).  ``run_id``: a stored run shown again keeps its id (default:
    a new one).  Raises QuotaExceeded (after cancelling the jobs already submitted) when
    the server's cap is reached."""
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


def result_columns() -> dict[str, Any]:
    """How the pages format accuracy and time columns of a results table."""
    return {
        "train accuracy": st.column_config.NumberColumn(format="%.2f %%"),
        "test accuracy": st.column_config.NumberColumn(format="%.2f %%"),
        "seconds": st.column_config.NumberColumn(format="%.2f s"),
    }


#: Seconds between shown steps; "live" shows each step as soon as it arrives.
PACES = {"live": 0.0, "½ s per step": 0.5, "1 s per step": 1.0, "2 s per step": 2.0}
DEFAULT_PACE = "1 s per step"


def pace_seconds() -> float:
    """The chosen pace: seconds between shown steps (0: live)."""
    return PACES[st.session_state.get("pace", DEFAULT_PACE)]


def playback(run: Run) -> Playback:
    """The replay state of a run in this session (kept as ``play_<run id>``)."""
    return st.session_state.setdefault(f"play_{run.id}", Playback())


def restore_view_from_url() -> None:
    """Pace and projector mode from the URL, on a session's first run (before the URL is
    rewritten)."""
    if "pace" not in st.session_state:
        pace = st.query_params.get("pace", DEFAULT_PACE)
        st.session_state["pace"] = pace if pace in PACES else DEFAULT_PACE
    if "projector" not in st.session_state:
        st.session_state["projector"] = st.query_params.get("projector") in ("1", "true")


def url_extra() -> dict[str, str]:
    """What the URL holds besides the settings: the current run and the view options."""
    extra = {}
    run = runs().get(st.session_state.get("current_run", ""))
    if run is not None:
        extra.update(run=run.id, jobs=run.jobs_param())
    else:
        for key in ("run", "jobs"):  # a link not yet reattached keeps its run
            if key in st.query_params:
                extra[key] = st.query_params[key][:200]
    pace = st.session_state.get("pace")
    if pace and pace != DEFAULT_PACE:
        extra["pace"] = pace
    if st.session_state.get("projector"):
        extra["projector"] = "1"
    # The SVM playground's own settings and points (pg_*, bounded by the playground).
    extra.update(carry_params(st.query_params.to_dict()))
    # The Lesson page's step (that page checks the value; a few characters are kept).
    if "lesson" in st.query_params:
        extra["lesson"] = st.query_params["lesson"][:24]
    return extra
