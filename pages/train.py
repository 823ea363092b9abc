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
import pandas as pd
import streamlit as st

from csvm import figures
from csvm.runs.ablation import run_ablation
from csvm.runs.config import MODEL_LABELS, RunConfig
from csvm.runs.cost import estimate_multiclass_seconds, estimate_seconds, format_duration
from csvm.runs.persistence import export_run
from csvm.runs.summary import comparisons, headline
from csvm.runs.targets import pinned_indices, progress, result_rows, step_events, steps_total
from explorer import train_multiclass
from explorer.app import ensure_app
from explorer.common import (
    DEFAULT_PACE,
    PACES,
    available_datasets,
    chart,
    data_for,
    get_pool,
    heartbeat,
    is_running,
    outcomes,
    owner,
    owns,
    poll_run,
    presets,
    reattach,
    restore_view_from_url,
    result_columns,
    runs,
    submit_run,
    url_extra,
)
from explorer.settings import (
    FORM_ERRORS_KEY,
    current_config,
    md_escape,
    render_settings,
    set_config,
    show_problems,
    sync_url,
)

ensure_app()  # a page's own URL on a fresh server: run it inside the app

_STOP_GRACE = 1.0  # seconds a run may take to stop by itself before it is killed


# -- sidebar --------------------------------------------------------------------------------
def _apply_preset() -> None:
    chosen = next(p for p in presets() if p["name"] == st.session_state["preset"])
    set_config(chosen["run_config"])


def _view_settings() -> None:
    """Pace and projector mode: how the page shows a run (kept in the URL too)."""
    restore_view_from_url()
    sb = st.sidebar
    sb.select_slider(
        "Pace",
        list(PACES),
        key="pace",
        help="How fast the page plays the recorded steps. The worker trains at full "
        "speed; the page shows one step per tick so a class can follow.",
    )
    sb.toggle("Projector mode", key="projector", help="Larger type and figures for a class.")


def sidebar() -> RunConfig:
    """Presets, view settings and every run setting; returns the RunConfig."""
    sb = st.sidebar
    offered = [p for p in presets() if p.get("requires") in (None, *available_datasets())]
    names = [p["name"] for p in offered]
    if st.session_state.get("preset") not in names:
        st.session_state["preset"] = names[0]
    sb.selectbox(
        "Preset",
        names,
        key="preset",
        on_change=_apply_preset,
        help="Ready-made settings: a classroom demo and the thesis's setups.",
    )
    chosen = next(p for p in offered if p["name"] == st.session_state["preset"])
    sb.caption(chosen["description"])
    _view_settings()
    config = render_settings(available_datasets())
    if config != chosen["run_config"]:
        sb.caption("Settings changed from the preset.")
    return config


# -- controls -------------------------------------------------------------------------------
def _send(run: dict, command: str) -> None:
    pool = get_pool()
    for model, job in run["jobs"].items():
        if model != "svm":
            view = pool.get(job)
            if view is not None and view.state == "running":
                pool.send(job, {"cmd": command}, owner())


def _playback(run: dict) -> dict:
    return st.session_state.setdefault(
        f"play_{run['id']}", {"cursor": 0, "paused": False, "target": 0, "stop_at": None}
    )


def controls(config: RunConfig, run: dict | None, views: dict, errors: list[str]) -> None:
    """Start, Stop, Pause/Resume and Step; a shared view gets none of the run's buttons."""
    running = is_running(views)
    mine = run is not None and owns(run)
    c1, c2, c3, c4, c5 = st.columns([1, 1, 1, 1.6, 2.4])
    if c1.button("▶ Start", type="primary", disabled=bool(errors), key="start", width="stretch"):
        if running and mine:
            st.session_state["confirm_replace"] = True
        else:
            _start(config)
    if run is None:
        return
    if not mine:
        c5.info(
            "Shared view: this run belongs to another session (read only).",
            icon=":material/visibility:",
        )
        return
    play = _playback(run)
    # The stop command goes out from the click's callback, which Streamlit runs before the
    # rerun builds the sidebar: the worker stops while the page is being drawn.
    if c2.button(
        "■ Stop",
        disabled=not running,
        key="stop",
        width="stretch",
        on_click=_request_stop,
        args=(run,),
    ):
        _wait_for_end(run, _STOP_GRACE)  # the page below then draws the stopped run at once
    label, icon = (
        ("Resume", ":material/play_arrow:") if play["paused"] else ("Pause", ":material/pause:")
    )
    if c3.button(
        label,
        key="pause",
        icon=icon,
        disabled=not running and not _behind(run, views),
        width="stretch",
    ):
        play["paused"] = not play["paused"]
        play["target"] = play["cursor"]
        _send(run, "pause" if play["paused"] else "resume")
        st.rerun()  # the buttons sit outside the live fragment: redraw them
    if c4.button(_step_label(run, views), key="step", icon=":material/skip_next:", width="stretch"):
        if not play["paused"]:
            play["paused"] = True
            play["target"] = play["cursor"]
            _send(run, "pause")
        play["target"] += 1
        if play["target"] > len(_steps(views, run)):
            _send(run, "step")
        st.rerun()
    if st.session_state.get("confirm_replace"):
        st.warning("Your run is still training. Stop it and start a new one?")
        yes, no = st.columns(2)
        if yes.button("Stop it and start", key="confirm_yes", type="primary"):
            st.session_state.pop("confirm_replace")
            _start(config)
        if no.button("Keep it", key="confirm_no"):
            st.session_state.pop("confirm_replace")
            st.rerun()


def _request_stop(run: dict) -> None:
    _send(run, "stop")
    play = _playback(run)
    play["stop_at"] = time.monotonic()
    play["paused"] = False
    play["jump"] = True  # a stopped run shows its last step at once, not at the pace


def _wait_for_end(run: dict, seconds: float) -> None:
    """Wait (briefly) for a run asked to stop, so the next draw already says "stopped"."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and is_running(poll_run(run)):
        time.sleep(0.05)


def _start(config: RunConfig) -> None:
    if submit_run(config) is not None:
        st.rerun()


def _steps(views: dict, run: dict) -> list:
    """The CSVM's recorded steps: a multi-class run's of every sub-problem, in order."""
    view = views.get("csvm")
    if view is None:
        return []
    return step_events(view.events, every_sub_problem=run["config"].multiclass)


def _behind(run: dict, views: dict) -> bool:
    return _playback(run)["cursor"] < len(_steps(views, run))


def _step_label(run: dict, views: dict) -> str:
    if run["config"].multiclass:  # sub-problems train one after the other
        return "Step: one step of the sub-problem training now"
    if run["config"].model != "lcsvm":
        return "Step: SVM solve + filter update"
    play = _playback(run)
    # While paused the page is about to show ``target`` steps (the cursor catches up in the
    # live fragment, drawn after these buttons).
    shown = play["target"] if play["paused"] else play["cursor"]
    # Half-steps alternate: the first solves for w with the filter fixed.
    return "Step: solve for w" if shown % 2 == 0 else "Step: solve for the filter"


def _advance(run: dict, n_steps: int, finished: bool) -> int:
    """Move the shown step on by the pace; returns the number of steps to show."""
    play = _playback(run)
    if play.get("jump"):
        play["cursor"] = n_steps
    elif play["paused"]:
        play["cursor"] = min(play["target"], n_steps)
    elif PACES[st.session_state.get("pace", DEFAULT_PACE)] == 0.0:
        play["cursor"] = n_steps
    else:
        play["cursor"] = min(play["cursor"] + 1, n_steps)
    return play["cursor"]


# -- live view ------------------------------------------------------------------------------
def _status_line(model: str, view) -> str:
    label = "CSVM" if model == "csvm" else MODEL_LABELS[model]
    if view is None:
        return f"**{label}**: no longer on the server"
    phase = getattr(view, "phase", None) or view.state
    if view.state == "done" and view.result is not None:
        phase = view.result.get("status", "done")
    return f"**{label}**: {md_escape(phase)}"


def _class_labels(data) -> list[str]:
    if len(data.class_names) > 2 or getattr(data, "classes", None) is None:
        return [str(c) for c in data.class_names]  # several classes: labels 0..k-1
    return [f"{data.class_names[0]} (−1)", f"{data.class_names[1]} (+1)"]


def live_panel(run: dict, views: dict, shown: list) -> None:
    """The headline, progress and the live figures of the steps shown so far."""
    config: RunConfig = run["config"]
    finished = not is_running(views) and len(shown) >= len(_steps(views, run))
    data = data_for(config)
    paused = _playback(run)["paused"]
    st.markdown(
        headline(
            config,
            outcomes(views),
            shown,
            finished,
            data.y_test,
            paused=paused,
            total=steps_total(config),
        )
    )
    if config.multiclass:
        st.caption(md_escape(train_multiclass.describe(config, data.class_names)))
    st.caption(" · ".join(_status_line(m, v) for m, v in views.items()))
    csvm_view = views.get("csvm")
    fraction, text = progress(config, shown, running=is_running(views))
    if not is_running(views) and not finished:
        text += f" · training done, playing back at {st.session_state.get('pace')}"
    st.progress(fraction, text=("Paused · " if paused else "") + text)
    if not shown:
        return
    if config.multiclass:
        train_multiclass.live_panel(run, shown, _class_labels(data))
        _baselines_view(run, views)
        return
    last = shown[-1]
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("objective", f"{last['objective']:.4g}")
    c2.metric("train accuracy", f"{100 * last.get('train_accuracy', 0):.1f} %")
    c3.metric("support vectors", last.get("n_support", "–"))
    c4.metric("filter norm", f"{last.get('filter_norm', 0):.3g}")
    left, right = st.columns([3, 2])
    with left:
        chart(figures.objective_figure(shown, "Objective per step"), f"objective_{run['id']}")
        divergence = _divergence_event(csvm_view)
        if divergence is not None and finished:
            chart(figures.divergence_figure(shown, divergence), f"blowup_{run['id']}")
        else:
            chart(
                figures.progress_figure(shown, "Train accuracy and filter norm"),
                f"progress_{run['id']}",
            )
    with right:
        _filters_view(run, shown)
    _examples_view(run, shown)
    _baselines_view(run, views)


def _divergence_event(view):
    if view is None:
        return None
    return next((e for e in reversed(view.events) if e.get("kind") == "divergence"), None)


def _filters_view(run: dict, shown: list) -> None:
    # Long runs keep arrays on a thinned subset of steps (the pool's compaction): show
    # the latest step that has them, and the change since the one before.
    with_filters = [e for e in shown if e.get("filters") is not None]
    if not with_filters:
        return
    last = with_filters[-1]
    previous = next(
        (
            e["filters"]
            for e in reversed(with_filters[:-1])
            if not np.array_equal(e["filters"], last["filters"])
        ),
        None,
    )
    chart(
        figures.filter_figure(last["filters"], previous, "Filter (top) and last change"),
        f"filter_{run['id']}",
    )
    if last.get("gradient") is not None:
        chart(
            figures.filter_figure(
                last["gradient"],
                None,
                "Gradient dT/df (the filter moves against it)",
                value_label="dT/df",
            ),
            f"gradient_{run['id']}",
        )


def _examples_view(run: dict, shown: list) -> None:
    last = next((e for e in reversed(shown) if e.get("pinned_maps") is not None), {})
    data = data_for(run["config"])
    names = _class_labels(data)
    if last.get("pinned_maps") is not None:
        pinned = pinned_indices(data.y_train)
        labels = [names[0 if data.y_train[i] < 0 else 1] for i in pinned]
        chart(
            figures.feature_maps_figure(data.X_train[pinned], last["pinned_maps"], labels),
            f"maps_{run['id']}",
        )
    support = last.get("support")
    if support is not None and len(support):
        alpha = np.asarray(last.get("alpha", np.ones(len(support))))
        order = np.argsort(-alpha)[:16]
        idx = np.asarray(support)[order]
        chart(
            figures.image_grid(
                data.X_train[idx],
                [f"α={a:.3g}" for a in alpha[order]],
                f"Support vectors of this SVM solve ({len(support)}; largest α first)",
                cols=16,
            ),
            f"svs_{run['id']}",
        )


def _baselines_view(run: dict, views: dict) -> None:
    cnn = views.get("cnn")
    if cnn is not None and any(e.get("kind") == "epoch" for e in cnn.events):
        chart(
            figures.loss_figure(
                [e for e in cnn.events if e.get("kind") == "epoch"], "Small CNN: loss per epoch"
            ),
            f"cnn_{run['id']}",
        )


# -- results --------------------------------------------------------------------------------
def results_panel(run: dict, views: dict) -> None:
    """Comparison with intervals and significance, confusion, mistakes, export."""
    config: RunConfig = run["config"]
    data = data_for(config)
    outs = outcomes(views)
    st.subheader("Comparison on the same split")
    st.dataframe(
        pd.DataFrame(result_rows(config, outs)),
        hide_index=True,
        width="stretch",
        column_config=result_columns(),
    )
    lines = comparisons(config, outs, data.y_test)
    for line in lines:
        st.markdown(md_escape(line))
    if lines:  # only where there is a comparison to read
        st.caption(
            "Why a CSVM can lose: with few training images and a hard margin the SVM "
            "separates the training set whatever the filter, so the filter has little to "
            f"learn from, and on {len(data.y_test)} test images a few images either way is "
            "noise (see About)."
        )
    finished = {m: o["result"] for m, o in outs.items() if o and o.get("result")}
    if not finished:
        return
    if config.multiclass:
        train_multiclass.results_panel(run, finished, data)
        _export_button(run, config, finished, outs, data)
        return
    names = _class_labels(data)
    cols = st.columns(len(finished))
    for col, (model, result) in zip(cols, finished.items(), strict=True):
        label = MODEL_LABELS[config.model if model == "csvm" else model]
        fig = figures.confusion_figure(
            np.array(result["confusion"]), names, f"{label}: test confusion"
        )
        with col:
            chart(fig, f"conf_{run['id']}_{model}")
    csvm_result = finished.get("csvm")
    if csvm_result is None:
        return
    if config.model == "kcsvm":
        ablation_panel(run, csvm_result)
    wrong = csvm_result["misclassified"]
    with st.expander(
        f"Misclassified test images ({csvm_result['n_misclassified']} of {csvm_result['n_test']})"
    ):
        true = [names[0 if data.y_test[i] < 0 else 1] for i in wrong]
        chart(
            figures.image_grid(
                data.X_test[wrong],
                [f"true {t}" for t in true],
                "Misclassified by the CSVM (first 32)",
            ),
            f"wrong_{run['id']}",
        )
    _export_button(run, config, finished, outs, data)


def _export_button(run: dict, config: RunConfig, finished: dict, outs: dict, data) -> None:
    st.download_button(
        "Download run (config, results, history CSV, filters .npy, Python snippet)",
        export_run(config, finished, {"comparisons": comparisons(config, outs, data.y_test)}),
        file_name=f"csvm-run-{run['id']}.zip",
        mime="application/zip",
        key=f"export_{run['id']}",
    )


def ablation_panel(run: dict, result: dict) -> None:
    """Fixed filters against the learned one: one click, trained in the worker pool."""
    st.subheader("What did learning the filter buy?")
    st.caption(
        "The same kernel and SVM on fixed filters — the random start, a delta and a Gaussian, "
        "each rescaled to the learned filter's norm — and the learned filter shrunk to the "
        "start's norm. If a fixed filter at the same norm does as well, the gain came from "
        "the filter's scale (a change of kernel bandwidth), not from its shape."
    )
    pool = get_pool()
    job = run.get("ablation")
    if job is None:
        if owns(run) and st.button("Run the ablation", key=f"ablate_{run['id']}"):
            run["ablation"] = pool.submit(
                run_ablation,
                {
                    "config": run["config"].to_dict(),
                    "learned_filters": np.asarray(result["filters"]).tolist(),
                    "start_filters": None
                    if result.get("start_filters") is None
                    else np.asarray(result["start_filters"]).tolist(),
                },
                name=f"{run['id']}:ablation",
                group="ablation",
                owner=owner(),
            )
            st.rerun()
        return
    first = pool.poll(job)
    pending = first is not None and first.state in ("queued", "running")

    @st.fragment(run_every=1.0 if pending else None)
    def result_view() -> None:
        view = pool.poll(job)
        if view is None:
            st.warning("The ablation is no longer on the server: run it again.")
        elif view.state in ("queued", "running"):
            st.progress(0.0, text="Training the SVMs on fixed filters…")
        elif view.state == "error":
            st.error(md_escape(view.error.strip().split("\n\n")[0]))
        else:
            _ablation_table(view.result)

    result_view()


def _ablation_table(result: dict) -> None:
    rows = [
        {
            "filter": r["label"],
            "norm": round(r["norm"], 3),
            "test accuracy": round(100 * r["test_accuracy"], 2),
            "95 % interval": f"{100 * r['interval'][0]:.2f}–{100 * r['interval'][1]:.2f} %",
            "against the learned filter": r.get("verdict") or "–",
        }
        for r in result["rows"]
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    st.caption(md_escape(result["explanation"]))


def divergence_help(run: dict, views: dict) -> None:
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
                set_config(run["config"].replace(**{name: value}))
                _start(current_config())
    for model, view in views.items():
        if view is not None and view.state == "error":
            message = view.error.strip().split("\n\n")[0] or view.error_type
            label = MODEL_LABELS[run["config"].model if model == "csvm" else model]
            st.error(
                f"**{label} failed** ({md_escape(view.error_type or 'error')}): "
                f"{md_escape(message)}"
            )


# -- page -----------------------------------------------------------------------------------
def _first_visit(config: RunConfig) -> None:
    """A shared link or a reload: reattach to the run it names."""
    if st.session_state.get("_reattached"):
        return
    st.session_state["_reattached"] = True
    query = st.query_params.to_dict()
    if "run" in query and "jobs" in query:
        if not reattach(query["run"][:16], query["jobs"][:200], config):
            st.warning(
                "The run in this link is no longer on the server (it finished long "
                "ago or the server restarted). Press Start to train it again."
            )


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
    _first_visit(config)
    heartbeat()
    current = runs().get(st.session_state.get("current_run", ""))
    sync_url(url_extra())
    st.title("CSVM Explorer")
    show_problems()
    errors, data = _errors(config)
    views = poll_run(current) if current is not None else {}
    controls(config, current, views, errors)
    views = poll_run(current) if current is not None else {}  # after Stop, Pause or Step
    for message in errors:
        st.error(md_escape(message))
    if data is not None and not errors:
        _estimate(config, data)
    if current is None:
        _welcome(data)
        return
    stale = current["config"] != config
    if stale:
        st.info(
            "These are the results of the previous settings: press Start to train "
            "with the new ones.",
            icon=":material/history:",
        )
    running = is_running(views)
    active = running or _behind(current, views)
    pace = PACES[st.session_state.get("pace", DEFAULT_PACE)] or 1.0

    @st.fragment(run_every=min(pace, 1.0) if active else None)
    def live() -> None:
        fresh = poll_run(current)
        heartbeat()
        steps = _steps(fresh, current)
        _enforce_stop(current, fresh)
        shown = steps[: _advance(current, len(steps), not is_running(fresh))]
        with st.container(key="stale" if stale else "live"):
            live_panel(current, fresh, shown)
        if active and not is_running(fresh) and len(shown) >= len(steps):
            st.rerun()  # the run ended and is fully shown: draw the results

    live()
    if active:
        return
    divergence_help(current, views)
    results_panel(current, views)


def _enforce_stop(run: dict, views: dict) -> None:
    """A run asked to stop that has not within the grace period is killed."""
    play = _playback(run)
    if play["stop_at"] and time.monotonic() - play["stop_at"] > _STOP_GRACE:
        pool = get_pool()
        for job in run["jobs"].values():
            view = pool.get(job)
            if view is not None and view.state not in ("done", "error", "stopped"):
                pool.cancel(job, owner())
        play["stop_at"] = None


def _welcome(data) -> None:
    if data is not None:
        names = _class_labels(data)
        if len(names) > 2 or getattr(data, "classes", None) is None:
            # Several classes (labels 0..k-1): the first two images of each.
            idx = np.concatenate([np.flatnonzero(data.y_train == k)[:2] for k in range(len(names))])
        else:
            idx = pinned_indices(data.y_train)
        chart(
            figures.image_grid(
                data.X_train[idx],
                [names[max(int(data.y_train[i]), 0)] for i in idx],
                "Example training images",
                cols=6 if len(idx) <= 6 else 10,
            ),
            "examples",
        )
        st.caption(
            f"{md_escape(data.source)} · train {len(data.y_train)} · test {len(data.y_test)}"
        )
    st.info(
        "Press **Start** to train. The page plays the steps at the pace set in the "
        "sidebar, so the class can watch the filter learn."
    )
    get_pool()  # after drawing: the spare workers warm up while the user reads


page()
