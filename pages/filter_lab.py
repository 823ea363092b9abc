"""Filter lab: change the filter by hand and see, within a second, what the SVM makes of it.

The page only reads widgets and draws (its state and actions are :mod:`explorer.lab`, its
figures :mod:`explorer.lab_view`): the maths is :mod:`csvm.analysis.lab` (the SVM at a fixed
filter, its gradient, landscape slices), :mod:`csvm.analysis.lab_filters` (starting points, filter
files) and :mod:`csvm.data.images` (safe uploads, MNIST-style digits).  The settings (data,
kernel, C, regulariser, filter size, η) are the session's RunConfig, set on the Train page.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from csvm import figures
from csvm.analysis.lab import FILTER_NAMES, load_filters, step_scale
from csvm.analysis.landscape import landscape_directions
from csvm.analysis.stats import format_interval, format_signed, wilson_interval
from csvm.data.images import load_upload, mnist_style
from csvm.exceptions import CSVMError
from csvm.runs.config import MODEL_LABELS, RunConfig
from csvm.runs.summary import task_words
from explorer import lab, lab_view
from explorer.app import ensure_app, url_extra
from explorer.datasets import data_for
from explorer.display import link_to, projected, projector_mode, table
from explorer.glossary import explain
from explorer.lab_settings import LabSettings
from explorer.lab_stack import stack_section
from explorer.live import live_jobs
from explorer.owner_cookie import heartbeat
from explorer.settings import current_config, md_escape, show_problems, sync_url
from explorer.widget_state import resend

ensure_app()  # a page's own URL on a fresh server: run it inside the app


# -- page sections -------------------------------------------------------------------------
def _header(config: RunConfig, data) -> None:
    st.title("Filter lab")
    show_problems()  # a link's settings that were replaced, as Train says them
    st.caption(
        "Change the filter by hand and see, within a second, what an SVM makes of it.",
        help="Accuracy, support vectors, the objective T(f), where the gradient would move "
        "the filter, and the shape of T around it.",
    )
    # The settings and the way to change them on one line: below them the filter grid, the
    # page's main figure, must fit a 720 px projector screen.
    summary, change = st.columns([3, 1], vertical_alignment="center")
    summary.caption(md_escape(lab.settings_summary(config, data)))
    if not link_to(
        change,
        "pages/train.py",
        "Change on Train",
        ":material/settings:",
        help="These settings are the Train page's: change them there.",
    ):
        change.caption("Change these settings on the Train page.")
    if config.model != "kcsvm":
        st.info(
            "The lab studies the K-CSVM's objective; your settings choose the "
            f"{MODEL_LABELS[config.model]}, so only the kernel, C and regulariser are used."
        )
    trained = current_config()  # ``config`` is its pair
    if trained.multiclass:
        st.info(  # one line on a projector: the filter's grid below it is the page's figure
            f"The lab studies one pair, {md_escape(task_words(config))} (the Train page "
            f"trains {md_escape(task_words(trained))})."
        )


def _filter_intro(config: RunConfig) -> None:
    st.header(
        "1. The filter",
        help="Edit any weight in the grid, or start from a classic filter below it (one "
        "click: the SVM is solved at it at once).",
    )
    st.session_state.setdefault("lab_seed", int(config.seed))
    resend(["lab_seed"])  # sent on every run: explorer/widget_state.py


def _starting_points(config: RunConfig, data) -> None:
    # Below the grid, not above it: the grid is the page's main figure, and above it
    # these two rows of buttons pushed it under the fold of a 720 px projector screen.
    cols = st.columns(4) + st.columns(4)  # two rows: the labels stay readable
    for col, name in zip(cols, FILTER_NAMES, strict=False):
        col.button(
            lab.LABELS[name],
            key=f"lab_start_{name}",
            help=FILTER_NAMES[name],
            on_click=lab.choose_start,
            args=(name, config, data),
            width="stretch",
        )
    cols[-1].number_input(
        "Random filter's seed",
        0,
        2**31 - 1,
        key="lab_seed",
        help="The random filter with seed s is the first filter of a run with seed s.",
        step=1,
    )
    with st.expander("Start from a learned filter"):
        found = lab.learned_runs()
        if found:
            run_id = st.selectbox(
                "A finished run of this session", list(found), format_func=lambda r: found[r][0]
            )
            st.button(
                "Use this run's filter",
                key="lab_use_run",
                on_click=lab.use_learned,
                args=(found[run_id][1], found[run_id][0], config, data),
            )
        else:
            st.caption(
                "No finished two-class run in this session yet: train one on the Train page."
            )
        upload = st.file_uploader(
            "…or upload filters.npy, a run's JSON or the Train page's export (.zip)",
            type=["npy", "json", "zip"],
            key="lab_filter_file",
        )
        if upload is not None and st.button("Use the uploaded filters", key="lab_use_file"):
            try:
                f = load_filters(upload.getvalue())
            except CSVMError as exc:
                st.error(md_escape(exc))
            else:
                lab.use_learned(f, "uploaded file", config, data)
                st.rerun()


def _editor(filters: np.ndarray, container) -> np.ndarray:
    """One grid editor per filter plane; returns the filters as edited."""
    version = st.session_state.get("lab_version", 0)
    k, c, p, q = filters.shape
    planes = filters.reshape(-1, p, q)
    names = [
        f"Filter {i // c + 1}" + (f", channel {i % c + 1}" if c > 1 else "")
        for i in range(len(planes))
    ]
    # Two grids side by side only while they fit: two 5×5 grids in the left column at
    # 1280 px hid columns 3-4 behind a horizontal scroll bar.  Wider grids go one to a tab:
    # stacked, four 5×5 grids pushed the filter's picture 1,900 px down a projector's page.
    tabbed = len(planes) > 1 and q > 3
    if tabbed:
        cols = container.tabs(names)
    else:
        cols = container.columns(2) if len(planes) > 1 else [container]
    edited = []
    for i, plane in enumerate(planes):
        col = cols[i % len(cols)]  # with tabs, one per plane
        if not tabbed:
            col.caption(names[i])
        frame = pd.DataFrame(plane, columns=[str(j) for j in range(q)])
        frame.index.name = "row"  # the row numbers' header: empty, a screen reader read none
        out = col.data_editor(
            frame,
            key=f"lab_grid_{i}_{version}",
            num_rows="fixed",
            # On a projector the grid is zoomed (explorer/app.py): 600 px fit 820 zoomed.
            **({"width": 600} if projector_mode() else {}),
            column_config={
                name: st.column_config.NumberColumn(format="%.4f", step=1e-4)
                for name in frame.columns
            },
        )
        edited.append(np.nan_to_num(out.to_numpy(dtype=np.float64)))  # a cleared cell is 0
    new = np.stack(edited).reshape(filters.shape)
    if not np.array_equal(new, filters):
        st.session_state["lab_filters"] = new
        source = st.session_state.get("lab_source", "")
        if not source.endswith("edited by hand"):
            st.session_state["lab_source"] = f"{source}, edited by hand".lstrip(", ")
    return new


def _solve_section(config: RunConfig, data, filters: np.ndarray):
    """Re-solve button, numbers, comparison table; returns the result if it is current."""
    st.header("2. Re-solve the SVM with this filter")
    where = "here" if lab.in_process(data) else "in a worker process"
    if st.button(
        "Re-solve the SVM",
        type="primary",
        key="lab_resolve",
        help=f"Solves only the SVM, with the filter held fixed ({where}).",
    ):
        lab.resolve_clicked(config, data, filters)
    else:
        lab.catch_late_edit(config, data, filters)
    result = st.session_state.get("lab_result")
    if result is None:
        st.info("Press **Re-solve the SVM** to see what the SVM makes of this filter.")
        return None
    fresh = lab.fresh_result(config, filters)
    if fresh is None:
        st.warning(
            "The filter or the settings changed since the last solve: the numbers below "
            "are for the filter as it was. Press **Re-solve the SVM**."
        )
    cols = st.columns(4)
    test, about = "–", None
    if result.test_accuracy is not None:
        n_test = len(data.y_test)
        test = f"{100 * result.test_accuracy:.2f} %"
        low, high = wilson_interval(int(round(result.test_accuracy * n_test)), n_test)
        about = (
            f"95 % interval {format_interval(low, high)} over {n_test:,} test images. A "
            "filter changed by hand while watching this number is chosen on the test "
            "images, so its score is optimistic: train it on the Train page to score it "
            "fairly."
        )
    cols[0].metric("Test accuracy", test, help=about)
    cols[1].metric("Train accuracy", f"{100 * result.train_accuracy:.2f} %")
    cols[2].metric("Support vectors", result.n_support)
    cols[3].metric("T(f)", f"{result.objective:.5g}")
    st.caption(
        f"Solved in {result.seconds['total']:.2f} s (kernel {result.seconds['kernel']:.2f} s, "
        f"SVM {result.seconds['svm']:.2f} s, gradient {result.seconds['gradient']:.2f} s)."
    )
    rows = {"this filter": lab.row(result)}
    rows["plain SVM on raw pixels"] = lab.raw_pixels(
        lab.data_spec(config), LabSettings.from_config(config)
    )
    learned = st.session_state.get("lab_learned")
    if learned is not None and "row" in learned:
        rows[f"learned filter ({learned['label']})"] = learned["row"]
    results = pd.DataFrame.from_dict(rows, orient="index")
    results.index.name = "features"  # the rows' header, else empty to a screen reader
    table(
        results,
        column_config={
            "train accuracy": st.column_config.NumberColumn(format="%.2f %%"),
            "test accuracy": st.column_config.NumberColumn(format="%.2f %%"),
            "seconds": st.column_config.NumberColumn(format="%.3f s"),
        },
    )
    st.caption(
        "T(f) = Σα − ½ aᵀKa + r(f) at the SVM's optimum; on raw pixels there is no filter, "
        "so no r(f). A lower T is what the K-CSVM's gradient steps aim for."
    )
    return fresh


def _gradient_section(config: RunConfig, data, fresh) -> float:
    """The gradient heatmap and the step button; returns the multiplier of dT/df that one
    step uses (the landscape's unit)."""
    st.header("3. Where the filter wants to go")
    st.session_state.setdefault("lab_eta", float(config.eta))
    resend(["lab_eta"])
    st.session_state.setdefault("lab_last_step", None)
    if fresh is None:
        st.caption("Re-solve the SVM to see the gradient at the current filter.")
        return float(st.session_state["lab_eta"])
    st.plotly_chart(
        projected(figures.gradient_figure(fresh.gradient)), key="lab_grad", width="stretch"
    )
    st.caption(
        "dT/df at the current filter, the SVM held at its optimum. A gradient step moves "
        "each weight against it: blue weights (negative dT/df) grow, red ones shrink, as "
        "on the Train page. " + explain("dT/df", "Danskin", sep=" ")
    )
    relative = config.step != "constant"
    c1, c2 = st.columns([1, 2])
    eta = c1.number_input(
        "η (fraction of the filter's norm)" if relative else "η (step size)",
        min_value=0.0,
        format="%g",
        key="lab_eta",
        help=(
            "As on the Train page: the relative step moves the filter by the fraction η of "
            "its own norm along −dT/df, whatever the size of T."
            if relative
            else "The thesis's constant step moves the filter by −η·dT/df; its size grows "
            "with the number of images."
        ),
    )
    scale = step_scale(fresh.filters, fresh.gradient, eta, config.step)
    c2.button(
        f"Take one gradient step (η = {eta:g})",
        key="lab_step",
        on_click=lab.take_step,
        args=(config, data, float(eta)),
        disabled=eta <= 0,
    )
    moved = scale * float(np.linalg.norm(fresh.gradient))
    rule = "the Train page's relative step" if relative else "the thesis's constant step"
    c2.caption(
        f"One step ({rule}) moves the filter by {moved:.4g}; its own norm is "
        f"{np.linalg.norm(fresh.filters):.4g}."
    )
    last = st.session_state.get("lab_last_step")
    if last is not None and np.array_equal(last["filters"], fresh.filters):
        if fresh.objective > last["objective"]:
            st.warning(
                f"That step raised T from {last['objective']:.4g} to {fresh.objective:.4g}: "
                "the step overshot. Halve η and step again from the previous filter (the "
                "Train page's relative rule halves η itself when T rises).",
                icon=":material/trending_up:",
            )
        else:
            st.caption(
                f"That step lowered T from {last['objective']:.4g} to {fresh.objective:.4g}."
            )
    return float(scale)


def _landscape_section(config: RunConfig, fresh, eta: float) -> None:
    st.header("4. The landscape of T around the filter")
    st.markdown(lab_view.NOT_CONVEX)
    if fresh is not None:
        try:
            d1, d2 = landscape_directions(fresh.gradient, step=eta, seed=0)
        except ValueError as exc:
            st.info(md_escape(exc))
        else:
            st.caption(
                "t counts gradient steps of size η: t = 0 is the current filter, t = 1 where "
                "one step lands. The second direction is random (seed 0), orthogonal to the "
                "step and as long. Every point is a fresh SVM solve, run in a worker process."
            )
            c1, c2 = st.columns(2)
            if c1.button("Slice along the gradient (21 solves)", key="lab_1d"):
                lab.submit("landscape_1d", config, fresh.filters, d1=d1, grid=lab.GRID_1D)
            if c2.button("Contour over two directions (15×15 solves)", key="lab_2d"):
                lab.submit("landscape_2d", config, fresh.filters, d1=d1, d2=d2, grid=lab.GRID_2D)
    else:
        st.caption("Re-solve the SVM to slice T through the current filter.")
    live_jobs(lab_view.lab_jobs, lab_view.collect_jobs)
    for task in ("landscape_1d", "landscape_2d"):
        done = st.session_state.get(f"lab_{task}")
        if done is None or task in st.session_state.get("lab_jobs", {}):
            continue
        res = done["result"]
        values = res.objectives.ravel()
        lab_view.draw_landscape(task, done, values, key=f"lab_done_{task}")
        if fresh is None or not np.array_equal(done["filters"], fresh.filters):
            st.caption("Computed around an earlier filter: press the button again to update.")
        if task == "landscape_1d":
            lab_view.say_convexity(res)


def _digit_section(data) -> None:
    st.header("5. Your own digit")
    if tuple(data.image_shape) != (1, 28, 28):
        st.info(
            "Your own digit needs 28×28 grey images (MNIST-like datasets); the chosen "
            f"dataset's images are {'×'.join(map(str, data.image_shape))}."
        )
        return
    st.caption(
        "Draw a digit or upload a PNG/JPEG. It is turned grey, scaled and centred as MNIST's "
        "digits were (longer side 20 pixels in a 28×28 frame, centred by mass), filtered, "
        "and classified by the SVM of the last solve."
    )
    draw, upload = st.tabs(["Draw", "Upload a PNG or JPEG"])
    with draw:
        drawn = lab_view.canvas()
    with upload:
        file = st.file_uploader(
            "One digit, PNG or JPEG, at most 2 MB", type=["png", "jpg", "jpeg"], key="lab_digit"
        )
    raw = file.getvalue() if file is not None else drawn
    if raw is None:
        st.caption("Nothing drawn or uploaded yet.")
        return
    try:
        digit = mnist_style(load_upload(raw))
    except CSVMError as exc:
        st.warning(md_escape(exc))
        return
    result = st.session_state.get("lab_result")
    if result is None:
        st.info("Re-solve the SVM first: the prediction needs a solved SVM.")
        return
    decision = float(result.decision_function(digit)[0])
    names = [str(n) for n in data.class_names]
    c1, c2 = st.columns([1, 2])
    c1.metric("Predicted class", names[1] if decision > 0 else names[0])
    c1.metric("Decision value", format_signed(decision, 3), help=f"Positive means {names[1]}.")
    c2.plotly_chart(
        projected(
            figures.feature_maps_figure(
                digit[None, None],
                result.feature_maps(digit),
                ["your digit, MNIST-style"],
                "Your digit before (top) and after the filter (feature maps)",
            )
        ),
        key="lab_digit_maps",
        width="stretch",
    )


def page() -> None:
    # One binary problem: of several classes, the Train page's pair (whose boxes it keeps).
    config = current_config().replace(classes=None)
    heartbeat()
    try:
        data = data_for(config)
    except CSVMError as exc:
        st.title("Filter lab")
        st.error(md_escape(exc))
        return
    _header(config, data)
    problems = config.problems(data.image_shape)
    for message in problems:
        st.error(md_escape(message))
    if problems:
        return
    error = st.session_state.pop("lab_error", None)
    if error:
        st.error(md_escape(error))
    filters = lab.ensure_filters(config, data.image_shape[0])
    _filter_intro(config)
    # On a projector one under the other, the starting points right under the grid: the
    # larger grids need the page's width.
    left, right = (st.container(), None) if projector_mode() else st.columns([3, 2])
    filters = _editor(st.session_state["lab_filters"], left)
    _starting_points(config, data)
    lab_view.filter_views(data, filters, right or st.container())
    if "lab_result" not in st.session_state and lab.in_process(data):
        lab.solve_here(config, data, filters)  # the first visit answers at once
    fresh = _solve_section(config, data, filters)
    eta = _gradient_section(config, data, fresh)
    _landscape_section(config, fresh, eta)
    _digit_section(data)
    stack_section(config)
    sync_url(url_extra())  # the app wrote the URL before this run's edit reached the grid


page()
