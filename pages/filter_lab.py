"""Filter lab: change the filter by hand and see, within a second, what the SVM makes of it.

The page only reads widgets and draws: the maths is :mod:`csvm.analysis.lab` (the SVM at a fixed
filter, its gradient, landscape slices), :mod:`csvm.analysis.lab_filters` (starting points, filter
files) and :mod:`csvm.data.images` (safe uploads, MNIST-style digits).  The settings (data,
kernel, C, regulariser, filter size, η) are the session's RunConfig, set on the Train page.
"""

from __future__ import annotations

import html
import time
import uuid
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.errors import StreamlitAPIException
from threadpoolctl import threadpool_limits

from csvm import figures
from csvm.analysis.lab import (
    FILTER_NAMES,
    lab_job,
    landscape_directions,
    load_filters,
    nonconvex_points,
    solve_fixed_filter,
    solve_raw_pixels,
    starting_filters,
)
from csvm.data.images import load_upload, mnist_style
from csvm.exceptions import CSVMError
from csvm.model.conv import correlate
from csvm.runs.config import MODEL_LABELS, RunConfig
from csvm.runs.targets import pinned_indices
from explorer.app import ensure_app
from explorer.common import (
    FINAL_STATES,
    data_for,
    get_pool,
    heartbeat,
    owner,
    poll_run,
    runs,
)
from explorer.settings import current_config, md_escape

ensure_app()  # a page's own URL on a fresh server: run it inside the app

#: Up to this many training images a re-solve runs in the page: measured about 0.06 s on
#: the classroom split and 0.5 s on the thesis's 1,895 (bench/bench_lab.py, one BLAS
#: thread); larger problems go to the worker pool.
IN_PROCESS_MAX = 3000


def _in_process(data) -> bool:
    """Whether a re-solve runs in the page (``lab_in_process_max`` in the session state
    overrides the limit: the tests use it to send the solve to the worker pool)."""
    limit = st.session_state.get("lab_in_process_max", IN_PROCESS_MAX)
    return len(data.y_train) <= limit


GRID_1D = np.linspace(-2.0, 2.0, 21)
GRID_2D = np.linspace(-2.0, 2.0, 15)
LABELS = {
    "identity": "Identity",
    "box": "Box blur",
    "gaussian": "Gaussian",
    "sobel_x": "Sobel x",
    "sobel_y": "Sobel y",
    "laplacian": "Laplacian",
    "random": "Random",
}
_NOT_CONVEX = (
    "**T is not convex in the filter.** For a fixed filter, T is the optimum of the SVM's "
    "dual, a convex problem in α, and the SVM above is solved exactly. But the kernel "
    "depends on the filter through products of feature maps, so T as a function of the "
    "filter f is **not convex in general**: a slice through f can bend downwards, and a "
    "gradient step finds a nearby valley, not necessarily the best filter."
)


# -- settings and state --------------------------------------------------------------------
def _settings(config: RunConfig) -> dict[str, Any]:
    """The SVM settings the lab uses, from the session's RunConfig."""
    return {
        "kernel": config.kernel,
        "degree": config.degree,
        "gamma": config.gamma,
        "coef0": config.coef0,
        "C": config.C,
        "regulariser": config.regulariser,
        "lam": config.lam,
    }


def _data_spec(config: RunConfig) -> dict[str, Any]:
    keys = ("dataset", "class_a", "class_b", "protocol", "n_train", "seed")
    return {k: getattr(config, k) for k in keys}


def _signature(config: RunConfig) -> str:
    """What a result depends on besides the filter: a stale result shows as such."""
    return repr(sorted({**_data_spec(config), **_settings(config)}.items()))


def _set_filters(filters: np.ndarray, source: str) -> None:
    """Replace the filters (a callback: runs before the widgets are drawn)."""
    st.session_state["lab_filters"] = np.array(filters, dtype=np.float64)
    st.session_state["lab_source"] = source
    # New editor keys: a data editor keeps its own edits, so fresh values need a fresh one.
    st.session_state["lab_version"] = st.session_state.get("lab_version", 0) + 1


def _ensure_filters(config: RunConfig, channels: int) -> np.ndarray:
    shape = (config.n_filters, channels, config.filter_size, config.filter_size)
    f = st.session_state.get("lab_filters")
    if f is None or f.shape != shape:
        _start_from("random", config, channels)
    return st.session_state["lab_filters"]


def _start_from(name: str, config: RunConfig, channels: int) -> None:
    k, size = config.n_filters, config.filter_size
    seed = int(st.session_state.get("lab_seed", config.seed))
    f = starting_filters(name, size, n_filters=k, seed=seed)[:, None]
    f = np.repeat(f, channels, axis=1) / channels
    label = f"{LABELS[name]} (seed {seed})" if name == "random" else LABELS[name]
    _set_filters(f, label)


def _fresh_result(config: RunConfig, filters: np.ndarray):
    """The last solve if it was at these filters and settings, else None."""
    result = st.session_state.get("lab_result")
    if result is None or st.session_state.get("lab_result_sig") != _signature(config):
        return None
    return result if np.array_equal(result.filters, filters) else None


# -- solving ---------------------------------------------------------------------------------
def _solve_here(config: RunConfig, data, filters: np.ndarray) -> None:
    # One BLAS thread, as the worker pool runs jobs: on shared cores two threads per
    # process make the gradient's small products many times slower (bench/bench_lab.py).
    with threadpool_limits(1):
        result = solve_fixed_filter(
            data.X_train,
            data.y_train,
            filters,
            X_test=data.X_test,
            y_test=data.y_test,
            **_settings(config),
        )
    _store_result(result, _signature(config))


def _store_result(result, signature: str) -> None:
    """Keep a solve's result; if it is the learned filter's, keep its row for the table."""
    st.session_state["lab_result"] = result
    st.session_state["lab_result_sig"] = signature
    learned = st.session_state.get("lab_learned")
    if (
        learned is not None
        and "row" not in learned
        and np.array_equal(learned["filters"], result.filters)
    ):
        learned["row"] = _row(result)


def _submit(task: str, config: RunConfig, filters: np.ndarray, **extra: Any) -> None:
    group = st.session_state.setdefault("session_group", uuid.uuid4().hex)
    kwargs = {
        "task": task,
        "data": _data_spec(config),
        "filters": filters,
        "settings": _settings(config),
        **extra,
    }
    try:
        job = _submit_to_pool(kwargs, task, group)
    except Exception as exc:  # noqa: BLE001 - e.g. the server's cap on a session's jobs
        st.session_state["lab_error"] = f"The {task} job could not start: {exc}"
        return
    jobs = st.session_state.setdefault("lab_jobs", {})
    jobs[task] = {
        "id": job,
        "sig": _signature(config),
        "filters": filters,
        "started": time.time(),
        **extra,
    }


def _submit_to_pool(kwargs: dict[str, Any], task: str, group: str) -> str:
    return get_pool().submit(lab_job, kwargs, name=f"lab:{task}", group=group, owner=owner())


def _resolve(config: RunConfig, data, filters: np.ndarray) -> None:
    if _in_process(data):
        _solve_here(config, data, filters)
    else:
        _submit("solve", config, filters)


def _take_step(config: RunConfig, data, eta: float) -> None:
    """Button callback: one gradient step from the solved filter, then solve there."""
    result = st.session_state.get("lab_result")
    if result is None:
        return
    new = result.filters - eta * result.gradient
    _set_filters(new, f"{st.session_state.get('lab_source', 'filter')} + gradient step η={eta:g}")
    _resolve(config, data, new)


@st.cache_data(max_entries=8, show_spinner="Solving the plain SVM on raw pixels…")
def _raw_pixels(spec: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    data = data_for(RunConfig(**spec))
    kwargs = {k: v for k, v in settings.items() if k not in ("regulariser", "lam")}
    with threadpool_limits(1):
        r = solve_raw_pixels(
            data.X_train, data.y_train, X_test=data.X_test, y_test=data.y_test, **kwargs
        )
    return _row(r)


def _row(r) -> dict[str, Any]:
    return {
        "train accuracy": 100 * r.train_accuracy,
        "test accuracy": None if r.test_accuracy is None else 100 * r.test_accuracy,
        "support vectors": r.n_support,
        "T(f)": r.objective,
        "Σα": r.sum_alpha,
        "½ aᵀKa": r.margin_term,
        "r(f)": r.regulariser,
        "seconds": r.seconds["total"],
    }


# -- the learned filter ------------------------------------------------------------------
def _learned_runs() -> dict[str, tuple[str, np.ndarray]]:
    """This session's finished runs that learned filters: id -> (label, filters)."""
    found = {}
    for run_id, run in runs().items():
        view = poll_run(run).get("csvm")
        if view is None or view.state != "done" or not view.result:
            continue
        if "filters" not in view.result:
            continue
        c = run["config"]
        c = c.to_dict() if hasattr(c, "to_dict") else dict(c)
        label = (
            f"run {run_id}: {MODEL_LABELS.get(c.get('model'), 'CSVM')} "
            f"{c.get('dataset')} {c.get('class_a')} vs {c.get('class_b')}, "
            f"test {100 * view.result.get('test_accuracy', float('nan')):.2f} %"
        )
        found[run_id] = (label, np.asarray(view.result["filters"], dtype=np.float64))
    return found


def _use_learned(filters: np.ndarray, label: str, config: RunConfig, data) -> None:
    """Load a learned filter (callback); keep its numbers for the comparison table."""
    expected = (config.n_filters, data.image_shape[0], config.filter_size, config.filter_size)
    f = np.asarray(filters, dtype=np.float64)
    f = f[:, None] if f.ndim == 3 else (f[None, None] if f.ndim == 2 else f)
    if f.shape != expected:
        st.session_state["lab_error"] = (
            f"The learned filters have shape {f.shape[:1] + f.shape[2:]} but the settings ask "
            f"for {config.n_filters} filter(s) of {config.filter_size}×{config.filter_size}: "
            "change the filter size or count on the Train page to match."
        )
        return
    _set_filters(f, f"learned ({label})")
    st.session_state["lab_learned"] = {"label": label, "filters": f}
    _resolve(config, data, f)


# -- page sections -------------------------------------------------------------------------
def _header(config: RunConfig, data) -> None:
    st.title("Filter lab")
    st.caption(
        "Change the convolutional filter by hand and see, within a second, what a support "
        "vector machine makes of it: accuracy, support vectors, the objective T(f), where "
        "the gradient would move the filter, and the shape of T around it."
    )
    c = "no limit" if config.C is None else f"{config.C:g}"
    summary = (
        f"{data.dataset} {config.class_a} vs {config.class_b} · {len(data.y_train)} training "
        f"/ {len(data.y_test)} test images · {config.kernel} kernel (degree {config.degree}, "
        f"γ {config.gamma:g}, coef0 {config.coef0:g}) · C {c} · {config.n_filters} filter(s) "
        f"of {config.filter_size}×{config.filter_size} · {config.regulariser} λ "
        f"{config.lam:g} · η {config.eta:g}"
    )
    st.caption(md_escape(summary))
    try:
        st.page_link(
            "pages/train.py",
            label="Change these settings on the Train page",
            icon=":material/settings:",
        )
    except StreamlitAPIException:  # the page run on its own, outside app.py's navigation
        st.caption("Change these settings on the Train page.")
    if config.model != "kcsvm":
        st.info(
            "The lab studies the K-CSVM's objective; your settings choose the "
            f"{MODEL_LABELS[config.model]}, so only the kernel, C and regulariser are used."
        )


def _starting_points(config: RunConfig, data) -> None:
    channels = data.image_shape[0]
    st.subheader("1. The filter")
    st.session_state.setdefault("lab_seed", int(config.seed))
    st.caption("Start from a classic filter (one click), then edit any weight in the grid.")
    cols = st.columns(4) + st.columns(4)  # two rows: the labels stay readable
    for col, name in zip(cols, FILTER_NAMES, strict=False):
        col.button(
            LABELS[name],
            key=f"lab_start_{name}",
            help=FILTER_NAMES[name],
            on_click=_start_from,
            args=(name, config, channels),
            width="stretch",
        )
    cols[-1].number_input(
        "Seed of the random filter",
        0,
        2**31 - 1,
        key="lab_seed",
        help="The random filter with seed s is the first filter of a run with seed s.",
        step=1,
        label_visibility="collapsed",
    )
    with st.expander("Start from a learned filter"):
        found = _learned_runs()
        if found:
            run_id = st.selectbox(
                "A finished run of this session", list(found), format_func=lambda r: found[r][0]
            )
            st.button(
                "Use this run's filter",
                key="lab_use_run",
                on_click=_use_learned,
                args=(found[run_id][1], found[run_id][0], config, data),
            )
        else:
            st.caption("No finished run in this session yet: train one on the Train page.")
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
                _use_learned(f, "uploaded file", config, data)
                st.rerun()


def _editor(filters: np.ndarray, container) -> np.ndarray:
    """One grid editor per filter plane; returns the filters as edited."""
    version = st.session_state.get("lab_version", 0)
    k, c, p, q = filters.shape
    planes = filters.reshape(-1, p, q)
    cols = container.columns(min(len(planes), 2))
    edited = []
    for i, plane in enumerate(planes):
        col = cols[i % len(cols)]
        col.caption(f"Filter {i // c + 1}" + (f", channel {i % c + 1}" if c > 1 else ""))
        frame = pd.DataFrame(plane, columns=[str(j) for j in range(q)])
        out = col.data_editor(
            frame,
            key=f"lab_grid_{i}_{version}",
            num_rows="fixed",
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


def _filter_views(data, filters: np.ndarray, container) -> None:
    source = st.session_state.get("lab_source", "")
    container.plotly_chart(
        # Plotly renders some HTML in titles; the source may hold a run's or a file's name.
        figures.filter_figure(filters, title=f"Filter: {html.escape(source)}"),
        key="lab_heat",
        width="stretch",
    )
    idx = pinned_indices(data.y_train)
    maps = correlate(data.X_train[idx], filters.astype(np.float32))
    names = [str(n) for n in data.class_names]
    labels = [names[0 if data.y_train[i] < 0 else 1] for i in idx]
    st.plotly_chart(
        figures.feature_maps_figure(data.X_train[idx], maps, labels),
        key="lab_maps",
        width="stretch",
    )


def _solve_section(config: RunConfig, data, filters: np.ndarray):
    """Re-solve button, numbers, comparison table; returns the result if it is current."""
    st.subheader("2. Re-solve the SVM with this filter")
    where = "here" if _in_process(data) else "in a worker process"
    if st.button(
        "Re-solve the SVM",
        type="primary",
        key="lab_resolve",
        help=f"Solves only the SVM, with the filter held fixed ({where}).",
    ):
        _resolve(config, data, filters)
    result = st.session_state.get("lab_result")
    if result is None:
        st.info("Press **Re-solve the SVM** to see what the SVM makes of this filter.")
        return None
    fresh = _fresh_result(config, filters)
    if fresh is None:
        st.warning(
            "The filter or the settings changed since the last solve: the numbers below "
            "are for the filter as it was. Press **Re-solve the SVM**."
        )
    cols = st.columns(4)
    test = "–" if result.test_accuracy is None else f"{100 * result.test_accuracy:.2f} %"
    cols[0].metric("Test accuracy", test)
    cols[1].metric("Train accuracy", f"{100 * result.train_accuracy:.2f} %")
    cols[2].metric("Support vectors", result.n_support)
    cols[3].metric("T(f)", f"{result.objective:.5g}")
    st.caption(
        f"Solved in {result.seconds['total']:.2f} s (kernel {result.seconds['kernel']:.2f} s, "
        f"SVM {result.seconds['svm']:.2f} s, gradient {result.seconds['gradient']:.2f} s)."
    )
    rows = {"this filter": _row(result)}
    rows["plain SVM on raw pixels"] = _raw_pixels(_data_spec(config), _settings(config))
    learned = st.session_state.get("lab_learned")
    if learned is not None and "row" in learned:
        rows[f"learned filter ({learned['label']})"] = learned["row"]
    table = pd.DataFrame.from_dict(rows, orient="index")
    st.dataframe(
        table,
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
    """The gradient heatmap and the step button; returns the step size η."""
    st.subheader("3. Where the filter wants to go")
    st.session_state.setdefault("lab_eta", float(config.eta))
    if fresh is None:
        st.caption("Re-solve the SVM to see the gradient at the current filter.")
        return float(st.session_state["lab_eta"])
    st.plotly_chart(figures.gradient_figure(fresh.gradient), key="lab_grad", width="stretch")
    st.caption(
        "dT/df at the current filter, the SVM held at its optimum (Danskin). A gradient step "
        "moves each weight against it: orange weights (negative dT/df) grow, purple ones "
        "shrink."
    )
    c1, c2 = st.columns([1, 2])
    eta = c1.number_input(
        "η (step size)",
        min_value=0.0,
        format="%g",
        key="lab_eta",
        help="The step moves the filter by −η·dT/df. The settings' η is the default.",
    )
    norm = float(np.linalg.norm(fresh.gradient))
    c2.button(
        f"Take one gradient step (η = {eta:g})",
        key="lab_step",
        on_click=_take_step,
        args=(config, data, float(eta)),
        disabled=eta <= 0,
    )
    c2.caption(
        f"‖dT/df‖ = {norm:.4g}: one step moves the filter by {eta * norm:.4g} "
        f"(the filter's own norm is {np.linalg.norm(fresh.filters):.4g})."
    )
    return float(eta)


def _poll_jobs() -> bool:
    """Collect finished lab jobs, show progress of running ones; True if any runs."""
    jobs = st.session_state.setdefault("lab_jobs", {})
    pool, running, changed = get_pool(), False, False
    for task, job in list(jobs.items()):
        view = pool.poll(job["id"])
        if view is None or view.state in FINAL_STATES:
            jobs.pop(task)
            changed = True
            if view is None or view.state == "stopped":
                st.session_state["lab_error"] = f"The {task} job was stopped before it finished."
            elif view.state == "error":
                first = view.error.strip().split("\n")[0]
                st.session_state["lab_error"] = f"The {task} job failed: {first}"
            elif task == "solve":
                _store_result(view.result, job["sig"])
            else:
                st.session_state[f"lab_{task}"] = {**job, "result": view.result}
            continue
        running = True
        points = [e for e in view.events if e.get("kind") == "landscape"]
        if task == "solve":
            st.progress(0.0, text="Solving the SVM in a worker process…")
            continue
        total = points[-1]["total"] if points else (21 if task == "landscape_1d" else 225)
        st.progress(len(points) / total, text=f"{task.replace('_', ' ')}: {len(points)}/{total}")
        values = np.full(total, np.nan)
        values[: len(points)] = [e["objective"] for e in points]
        _draw_landscape(task, job, values, key=f"lab_live_{task}")
    if changed:
        st.rerun()
    return running


def _draw_landscape(task: str, job: dict[str, Any], values: np.ndarray, key: str) -> None:
    if task == "landscape_1d":
        done = ~np.isnan(values)
        bends = nonconvex_points(job["grid"][done], values[done]) if done.all() else []
        fig = figures.landscape_1d_figure(job["grid"], values, bends)
    else:
        n = len(job["grid"])
        fig = figures.landscape_2d_figure(job["grid"], job["grid"], values.reshape(n, n))
    st.plotly_chart(fig, key=key, width="stretch")


def _landscape_section(config: RunConfig, fresh, eta: float) -> None:
    st.subheader("4. The landscape of T around the filter")
    st.markdown(_NOT_CONVEX)
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
                _submit("landscape_1d", config, fresh.filters, d1=d1, grid=GRID_1D)
            if c2.button("Contour over two directions (15×15 solves)", key="lab_2d"):
                _submit("landscape_2d", config, fresh.filters, d1=d1, d2=d2, grid=GRID_2D)
    else:
        st.caption("Re-solve the SVM to slice T through the current filter.")
    jobs = st.session_state.get("lab_jobs", {})

    @st.fragment(run_every=1.0 if jobs else None)
    def live() -> None:
        _poll_jobs()

    live()
    for task in ("landscape_1d", "landscape_2d"):
        done = st.session_state.get(f"lab_{task}")
        if done is None or task in st.session_state.get("lab_jobs", {}):
            continue
        res = done["result"]
        values = res.objectives.ravel()
        _draw_landscape(task, done, values, key=f"lab_done_{task}")
        if fresh is None or not np.array_equal(done["filters"], fresh.filters):
            st.caption("Computed around an earlier filter: press the button again to update.")
        if task == "landscape_1d":
            _say_convexity(res)


def _say_convexity(res) -> None:
    bends = nonconvex_points(res.ts, res.objectives)
    if len(bends):
        where = ", ".join(f"{t:g}" for t in res.ts[bends])
        st.markdown(
            f"Along this line T **bends downwards** near t = {where}: here T is not "
            "convex in the filter."
        )
    else:
        st.markdown(
            "Along this line the samples look convex, but that does not make T convex in "
            "the filter: other lines (try the contour) can bend the other way."
        )


def _canvas() -> bytes | None:
    """The drawn digit as PNG bytes, or None while nothing is drawn."""
    try:
        from streamlit_drawable_canvas import st_canvas
    except Exception:  # noqa: BLE001 - an absent or broken component must not break the page
        st.info(
            "Drawing needs streamlit-drawable-canvas (pip install "
            "'streamlit-drawable-canvas>=0.9,<1'); uploading a picture works without it."
        )
        return None
    result = st_canvas(
        stroke_width=18,
        stroke_color="#FFFFFF",
        background_color="#000000",
        height=224,
        width=224,
        drawing_mode="freedraw",
        return_image_data=True,
        key="lab_canvas",
    )
    if result is None or not (result.json_data or {}).get("objects"):
        return None
    return result.image_bytes


def _digit_section(data) -> None:
    st.subheader("5. Your own digit")
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
        drawn = _canvas()
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
    c1.metric("Decision value", f"{decision:+.3f}", help=f"Positive means {names[1]}.")
    c2.plotly_chart(
        figures.feature_maps_figure(
            digit[None, None], result.feature_maps(digit), ["your digit, MNIST-style"]
        ),
        key="lab_digit_maps",
        width="stretch",
    )


def page() -> None:
    config = current_config()
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
    filters = _ensure_filters(config, data.image_shape[0])
    _starting_points(config, data)
    left, right = st.columns([3, 2])
    filters = _editor(st.session_state["lab_filters"], left)
    _filter_views(data, filters, right)
    if "lab_result" not in st.session_state and _in_process(data):
        _solve_here(config, data, filters)  # the first visit answers at once
    fresh = _solve_section(config, data, filters)
    eta = _gradient_section(config, data, fresh)
    _landscape_section(config, fresh, eta)
    _digit_section(data)


page()
