"""Train page: choose a pair and hyperparameters, start a run, watch the filter learn.

The worker trains at full speed and records every step; the page plays the recorded
steps at the chosen pace (docs/app.md), so a run that takes 1.5 s can still be watched
step by step.  Pause also pauses the worker (it waits for the next command and holds no
CPU); Step shows exactly one more step, asking the worker for it when the page has
caught up.
"""

from __future__ import annotations

import time

import numpy as np
import streamlit as st

from csvm.runs.config import MODEL_LABELS, RunConfig
from csvm.runs.cost import estimate_multiclass_seconds, estimate_seconds, format_duration
from csvm.runs.fields import title
from csvm.runs.values import show
from explorer.app import ensure_app, url_extra
from explorer.class_board_view import display_name_box
from explorer.dask_jobs import show_cluster_note
from explorer.datasets import available_datasets, data_for, presets
from explorer.display import playing
from explorer.live import live_jobs
from explorer.own_data import own_images_box
from explorer.owner_cookie import heartbeat, owner
from explorer.playback import pace_seconds, playback
from explorer.pool import FINAL_STATES, get_pool
from explorer.reload import reload_run
from explorer.run_registry import follow_owner, publish_owner_view
from explorer.runs import is_running, owns, poll_run, runs
from explorer.settings import (
    FORM_ERRORS_KEY,
    current_config,
    md_escape,
    render_settings,
    set_config,
    show_problems,
    sync_url,
)
from explorer.state import Run
from explorer.train_runs import reattach, submit_run
from explorer.train_view import live_panel, results_panel, steps_of, welcome

ensure_app()  # a page's own URL on a fresh server: run it inside the app

_STOP_GRACE = 1.0  # seconds a run may take to stop by itself before it is killed
# Seconds the Stop click's rerun waits for the run to end, to draw "stopped" directly;
# a run that takes longer shows "stopping at step k" at once (within a second of the click
# on a loaded server: a whole-grace wait made the click take over a second to show).
_STOP_DRAW_WAIT = 0.3


# -- sidebar --------------------------------------------------------------------------------
#: The preset box's entry for settings that match no preset.
CUSTOM = "Custom settings"


def _apply_preset(key: str) -> None:
    if st.session_state[key] == CUSTOM:
        return
    chosen = next(p for p in presets() if p["name"] == st.session_state[key])
    set_config(chosen["run_config"])


def _matching_preset(offered: list[dict], config: RunConfig) -> str:
    """The preset whose settings are ``config``, or :data:`CUSTOM`."""
    return next((p["name"] for p in offered if p["run_config"] == config), CUSTOM)


def sidebar() -> RunConfig:
    """Presets and every run setting; returns the RunConfig (pace and projector mode
    are the app's, drawn on every page: explorer/app.py).

    The preset box always names what will be trained: the preset whose settings these
    are, or "Custom settings" once any is edited (the box's own state is lost on another
    page, where it used to fall back to the first preset while the settings stayed).
    It is drawn into its place above the settings once they are read, so an edit renames
    it in the same run: a rerun to rename it swallowed a Start pressed with the edit (a
    number typed, then Start clicked: the click's run was replaced, and nothing started).
    """
    sb = st.sidebar
    offered = [p for p in presets() if p.get("requires") in (None, *available_datasets())]
    # One slot, whatever it holds: an edit that leaves the preset empties its caption, and
    # the boxes below keep their places (the browser matches a box by its place: one that
    # moved was drawn anew, folded, under the hand of the user editing in it).
    preset_slot = sb.container()
    # Under the presets: above them it pushed the preset box to the fold at 1280×720,
    # where a click on it opened no list (the presets' browser test).
    display_name_box()  # the name the Class board shows with this browser's runs
    config = render_settings(available_datasets())
    own_images_box()
    _reload_box()
    with preset_slot:
        _preset_box(offered, config)
    return config


def _preset_box(offered: list[dict], config: RunConfig) -> None:
    """The preset box, naming the preset whose settings ``config`` is, and its caption.

    The box is a new widget whenever the name it shows changes (its key holds the name's
    place in the list). With one key, an edit that renamed it "Custom settings" could meet
    a click sent while the browser still showed the preset's name: Streamlit took the old
    name for a choice, and the preset came back over the edit (2 of 34 tries of "type a
    number, click Start"). A browser's value for an earlier box is now simply dropped.
    """
    shown = _matching_preset(offered, config)
    names = [p["name"] for p in offered] + ([CUSTOM] if shown == CUSTOM else [])
    key = f"preset_{names.index(shown)}"
    st.session_state[key] = shown
    st.selectbox(
        "Preset",
        names,
        key=key,
        on_change=_apply_preset,
        args=(key,),
        help="Ready-made settings: a classroom demo and the thesis's setups.",
    )
    about = st.container()
    if shown != CUSTOM:
        chosen = next(p for p in offered if p["name"] == shown)
        about.caption(chosen["description"])
        if chosen.get("measured"):  # the numbers behind the words, for who asks
            with about.expander("How this was measured"):
                st.markdown(md_escape(chosen["measured"]))


def _reload_box() -> None:
    """Upload a run's export zip to see the run again (settings, results, history, filters)."""
    with st.sidebar.expander("Reload a run", icon=":material/upload_file:"):
        st.file_uploader(
            "The zip a run's Download gave",
            type=["zip"],
            key="reload_file",
            help="Shows that run again here as soon as it is uploaded: its settings, "
            "results, steps and filters (its filters then also appear in the Filter lab).",
            on_change=_reload,  # at once: the button below sat under a 720 px fold
        )
        st.button(
            "Show it again",
            key="reload_go",
            on_click=_reload,
            disabled=st.session_state.get("reload_file") is None,
        )
        problem = st.session_state.get("reload_problem")
        if problem:
            st.error(md_escape(problem))
        for note in st.session_state.get("reload_notes", []):
            st.warning(md_escape(note))


def _reload() -> None:
    """The button's callback: before the settings' widgets are drawn, so they can change."""
    upload = st.session_state.get("reload_file")
    if upload is None:
        return
    problem, unread = reload_run(upload.getvalue())
    st.session_state["reload_problem"] = problem
    st.session_state["reload_notes"] = unread  # settings that kept their defaults


# -- controls -------------------------------------------------------------------------------
def _send(run: Run, command: str) -> None:
    pool = get_pool()
    for model, job in run.jobs.items():
        if model in ("csvm", "cnn"):  # the others train in one go and take no commands
            view = pool.get(job)
            if view is not None and view.state == "running":
                pool.send(job, {"cmd": command}, owner())


def controls(config: RunConfig, run: Run | None, views: dict, errors: list[str]):
    """Start, Stop, Pause/Resume and Step; a shared view gets none of the run's buttons.

    Returns the row's last cell, for the training-time estimate, or None where the row
    says that the run is someone else's.
    """
    running = is_running(views)
    mine = run is not None and owns(run)
    play = playback(run) if mine else None
    # A finished run still playing back can be stopped (the playback jumps to its end) and
    # stepped; once everything is shown there is nothing left to stop, pause or step.
    active = mine and (running or play.behind(len(steps_of(views, run))))
    # A paused run's next press is Resume, so Resume is the coloured button then, not Start
    # (which would begin a new run).
    resume_next = active and play.paused
    # Pause's column is wider: "Resume" and its icon fit at a projector's type size.  The
    # key lets a narrow row put its last cell on a line of its own (explorer/app.py).
    c1, c2, c3, c4, c5 = st.container(key="run_controls").columns(
        [1, 1, 1.3, 1, 2.3], vertical_alignment="center"
    )
    if c1.button(
        "▶ Start",
        type="secondary" if resume_next else "primary",
        disabled=bool(errors),
        key="start",
        width="stretch",
    ):
        if running and mine:
            st.session_state["confirm_replace"] = True
        else:
            _start(config)
    if run is None:
        return c5
    if not mine:
        c5.info(
            "Shared view: this run belongs to another session (read only).",
            icon=":material/visibility:",
        )
        return None
    _stop_button(c2, run, active, running)
    label, icon = (
        ("Resume", ":material/play_arrow:") if play.paused else ("Pause", ":material/pause:")
    )
    # Pause and Step act in the click's callback, before the script runs: the page then
    # draws the paused state in that one run (a second, forced rerun made Pause take
    # seconds to show on a loaded server).
    c3.button(
        label,
        key="pause",
        type="primary" if resume_next else "secondary",
        icon=icon,
        disabled=not active,
        width="stretch",
        on_click=_toggle_pause,
        args=(run,),
    )
    label, what = _step_label(run) if active else ("Step", "The run has ended.")
    c4.button(
        label,
        key="step",
        icon=":material/skip_next:",
        disabled=not active,
        width="stretch",
        help=what,
        on_click=_step_once,
        args=(run,),
    )
    if st.session_state.get("confirm_replace"):
        _confirm_replace(config)
    return c5


def _stop_button(where, run: Run, active: bool, running: bool) -> None:
    """Stop; once training is over and its steps still play back, End, which says so (a
    teacher who paused at step 7 and pressed "Stop" was shown the final result).

    The stop command goes out from the click's callback, which Streamlit runs before the
    rerun builds the sidebar: the worker stops while the page is being drawn.
    """
    ended = active and not running
    if where.button(
        "End" if ended else "■ Stop",
        # An icon, not a "⏭" glyph: Chromium drew that as an empty box in its fonts.
        icon=":material/fast_forward:" if ended else None,
        disabled=not active,
        key="stop",
        width="stretch",
        help=(
            "Training has finished: show its last step and the results now."
            if ended
            else "Stop training after its current step; the best filter so far is kept."
        ),
        on_click=_request_stop,
        args=(run,),
    ):
        _wait_for_end(run, _STOP_DRAW_WAIT)  # a quick stop is drawn as stopped at once


def _confirm_replace(config: RunConfig) -> None:
    """Start pressed while this session's run trains: stop it and start, or keep it."""
    st.warning("Your run is still training. Stop it and start a new one?")
    yes, no = st.columns(2)
    if yes.button("Stop it and start", key="confirm_yes", type="primary"):
        st.session_state.pop("confirm_replace")
        _start(config)
    if no.button("Keep it", key="confirm_no"):
        st.session_state.pop("confirm_replace")
        st.rerun()


def _toggle_pause(run: Run) -> None:
    play = playback(run)
    play.toggle()
    _send(run, "pause" if play.paused else "resume")


def _step_once(run: Run) -> None:
    play = playback(run)
    if not play.paused:
        _send(run, "pause")
    if play.step(len(steps_of(poll_run(run), run))):  # not recorded yet: ask the worker
        _send(run, "step")


def _request_stop(run: Run) -> None:
    _send(run, "stop")
    # A stopped run shows its last step at once, not at the pace.
    playback(run).stop(time.monotonic())


def _wait_for_end(run: Run, seconds: float) -> None:
    """Wait (briefly) for a run asked to stop, so the next draw already says "stopped"."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and is_running(poll_run(run)):
        time.sleep(0.05)


def _start(config: RunConfig) -> None:
    if submit_run(config) is not None:
        st.rerun()


def _step_label(run: Run) -> tuple[str, str]:
    """The Step button's short label (it must fit its column on a projector) and what
    one step does, for its tooltip."""
    if run.config.multiclass:  # sub-problems train one after the other
        return "Step", "One step of the sub-problem training now."
    if run.config.model != "lcsvm":
        return "Step", "One SVM solve, then one gradient step on the filter."
    # Half-steps alternate: the first solves for w with the filter fixed.
    if playback(run).shown() % 2 == 0:
        return "Step: w", "Solve for the SVM's weights w with the filter fixed."
    return "Step: f", "Solve for the filter f with the SVM's weights fixed."


# -- results --------------------------------------------------------------------------------
def divergence_help(run: Run, views: dict) -> None:
    """A button that reruns a diverged model with the safer step it suggests."""
    if not owns(run):
        return
    for model, view in views.items():
        result = view.result if view is not None else None
        d = result.get("diverged") if result else None
        if d and d.get("suggested_eta"):
            name = "cnn_lr" if model == "cnn" else "eta"
            value = float(d["suggested_eta"])
            if st.button(
                f"Rerun with {'the CNN learning rate' if model == 'cnn' else 'η'} = {value:g}",
                key=f"rerun_{model}",
                type="primary",
            ):
                set_config(run.config.replace(**{name: value}))
                _start(current_config())
    for model, view in views.items():
        if view is not None and view.state == "error":
            message = view.error.strip().split("\n\n")[0] or view.error_type
            label = MODEL_LABELS[run.config.model if model == "csvm" else model]
            st.error(
                f"**{label} failed** ({md_escape(view.error_type or 'error')}): "
                f"{md_escape(message)}"
            )


# -- page -----------------------------------------------------------------------------------
def _first_visit() -> None:
    """A shared link or a reload: reattach to the run it names."""
    if st.session_state.get("_reattached"):
        return
    st.session_state["_reattached"] = True
    query = st.query_params.to_dict()
    if "run" in query and "jobs" in query:
        problem = reattach(query["run"][:16], query["jobs"][:200])
        if problem:
            st.session_state["_reattach_problem"] = (query["run"][:16], problem)
        run = runs().get(query["run"][:16])
        if run is not None:  # a paused run stays paused at its step after a reload
            follow_owner(run, playback(run), owner_page=owns(run))


def _reattach_problem() -> None:
    """What went wrong with the link's run, said while the link still names it."""
    run_id, problem = st.session_state.get("_reattach_problem", ("", ""))
    if problem and st.query_params.get("run", "")[:16] == run_id:
        st.warning(problem, icon=":material/link_off:")


def _errors(config: RunConfig):
    info = available_datasets()[config.dataset]
    errors = config.problems(tuple(info["image_shape"]), classes=info["classes"])
    errors += st.session_state.get(FORM_ERRORS_KEY, [])  # e.g. fewer than 3 classes ticked
    data = None
    if not errors:
        try:
            data = data_for(config)
        except Exception as exc:  # noqa: BLE001 - any loading problem is shown, not raised
            errors.append(str(exc))
    if data is not None:
        errors += config.problems(data.image_shape, n_available=len(data.y_train))
    return errors, data


def _estimate(config: RunConfig, data) -> None:
    """How long the run will take (cost model measured in bench/bench_cost.py), and a
    clear word when it exceeds the server's limit per job."""
    if config.multiclass:
        seconds = estimate_multiclass_seconds(
            config.to_dict(),
            np.bincount(data.y_train),
            data.image_shape,
            n_test=len(data.y_test),
            multi_class=config.multi_class,
        )
    else:
        seconds = estimate_seconds(
            config.to_dict(), len(data.y_train), data.image_shape, n_test=len(data.y_test)
        )
    limit = get_pool().settings.max_job_seconds
    # format_duration already says "about" (or "under a second").
    text = f"Estimated training time: {format_duration(seconds)} on a free core."
    if limit and seconds > limit:
        st.warning(
            f"{text} This server stops a job after {format_duration(limit)} of CPU "
            "(CSVM_MAX_JOB_SECONDS): use fewer images, iterations or filters.",
            icon=":material/timer:",
        )
    else:
        st.caption(text)


def page() -> None:
    """The Train page: settings, controls, the live fragment, results."""
    config = sidebar()
    _first_visit()
    heartbeat()
    current = runs().get(st.session_state.get("current_run", ""))
    sync_url(url_extra())
    if current is None or not st.session_state.get("projector"):
        # On a projector the run's headline is the title: the app's name above it pushed
        # the filter half below the fold of a 1280×720 screen.
        st.title("CSVM Explorer")
    show_problems()
    _reattach_problem()
    errors, data = _errors(config)
    views = poll_run(current) if current is not None else {}
    aside = controls(config, current, views, errors)
    views = poll_run(current) if current is not None else {}  # after Stop, Pause or Step
    for message in errors:
        st.error(md_escape(message))
    if data is not None and not errors:
        with aside if aside is not None else st.container():
            _estimate(config, data)
    if current is None:
        welcome(data)
        return
    stale = current.config != config
    if stale and not owns(current):
        # A shared run is never drawn with the viewer's settings: say whose are whose.
        changed = "; ".join(
            f"{title(n)} {show(n, getattr(current.config, n))}"
            for n in current.config.differences(config)[:4]
        )
        st.info(
            f"A shared run, drawn with the settings it was trained with "
            f"({md_escape(changed)}). The sidebar's settings are yours, for your own next "
            "Start.",
            icon=":material/share:",
        )
        stale = False
    elif stale:
        st.info(
            "These are the results of the previous settings: press Start to train "
            "with the new ones.",
            icon=":material/history:",
        )
    show_cluster_note()  # its jobs stayed here: the Dask cluster was unreachable
    if _watch(current, stale):
        return
    with st.container(key="stale_results" if stale else "results"):
        divergence_help(current, views)
        results_panel(current, views)


def _watch(run: Run, stale: bool) -> bool:
    """The live panel, one step more per tick of the pace; True while the run trains or
    steps remain to be shown (the results wait until the playback has caught up)."""
    play = playback(run)

    def busy(views: dict) -> bool:
        return is_running(views) or play.behind(len(steps_of(views, run)))

    def draw(views: dict) -> None:
        steps = steps_of(views, run)
        failed = views.get("csvm")
        if failed is not None and failed.state == "error":
            play.jump = True  # a crash shows its last recorded step at once, named
        _enforce_stop(run)
        if not owns(run):  # a shared view pauses and resumes with the owner's page
            follow_owner(run, play, owner_page=False)
        shown = steps[: play.advance(len(steps), pace_seconds(), time.monotonic())]
        if owns(run):
            publish_owner_view(run, play, len(shown))
        # Figures that change at the next tick are images; still ones (paused, or the
        # run over and every step shown) inline SVG with their tooltips.
        moving = not play.paused and busy(views)
        with st.container(key="stale" if stale else "live"), playing(moving):
            live_panel(run, views, shown)

    every = min(pace_seconds() or 1.0, 1.0)
    return live_jobs(run.jobs, draw, busy=busy, every=every)


def _enforce_stop(run: Run) -> None:
    """A run asked to stop that has not within the grace period is killed."""
    if playback(run).stop_overdue(time.monotonic(), _STOP_GRACE):
        pool = get_pool()
        for job in run.jobs.values():
            view = pool.get(job)
            if view is not None and view.state not in FINAL_STATES:
                pool.cancel(job, owner())


page()
