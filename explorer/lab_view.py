"""The Filter lab's drawing apart from its widgets: the filter and its feature maps, the
lab's jobs while they run (the body of the live-jobs fragment), the landscapes of T, and
the drawing canvas."""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st

from csvm import figures
from csvm.analysis.landscape import nonconvex_points
from csvm.model.conv import correlate
from csvm.runs.targets import pinned_indices
from explorer import lab
from explorer.display import projected
from explorer.pool import FINAL_STATES

NOT_CONVEX = (
    "**T is not convex in the filter.** For a fixed filter, T is the optimum of the SVM's "
    "dual, a convex problem in α, and the SVM above is solved exactly. But the kernel "
    "depends on the filter through products of feature maps, so T as a function of the "
    "filter f is **not convex in general**: a slice through f can bend downwards, and a "
    "gradient step finds a nearby valley, not necessarily the best filter."
)


def filter_views(data, filters: np.ndarray, container) -> None:
    source = st.session_state.get("lab_source", "")
    container.plotly_chart(
        # The source may hold a run's or a file's name: filter_figure escapes its title.
        projected(figures.filter_figure(filters, title=f"Filter: {source}", values=False)),
        key="lab_heat",
        width="stretch",
    )
    idx = pinned_indices(data.y_train)
    maps = correlate(data.X_train[idx], filters.astype(np.float32))
    names = [str(n) for n in data.class_names]
    labels = [names[0 if data.y_train[i] < 0 else 1] for i in idx]
    st.plotly_chart(
        projected(figures.feature_maps_figure(data.X_train[idx], maps, labels)),
        key="lab_maps",
        width="stretch",
    )


def lab_jobs() -> dict[str, str]:
    """The lab's jobs being watched: task -> job id (the live fragment's ``jobs``)."""
    return {task: job["id"] for task, job in st.session_state.get("lab_jobs", {}).items()}


def collect_jobs(views: dict[str, Any]) -> bool:
    """Keep the results of the lab jobs that ended, show the progress of those running.

    The body of the lab's live-jobs fragment; True (a full rerun) once a job has ended.
    """
    jobs = st.session_state.setdefault("lab_jobs", {})
    changed = False
    for task, view in views.items():
        job = jobs.get(task)
        if job is None:
            continue
        if view is None or view.state in FINAL_STATES:
            jobs.pop(task)
            changed = True
            _keep(task, job, view)
            continue
        if task == "solve":
            st.progress(0.0, text="Solving the SVM in a worker process…")
            continue
        points = [e for e in view.events if e.get("kind") == "landscape"]
        total = points[-1]["total"] if points else (21 if task == "landscape_1d" else 225)
        st.progress(len(points) / total, text=f"{task.replace('_', ' ')}: {len(points)}/{total}")
        values = np.full(total, np.nan)
        values[: len(points)] = [e["objective"] for e in points]
        draw_landscape(task, job, values, key=f"lab_live_{task}")
    return changed


def _keep(task: str, job: dict[str, Any], view) -> None:
    """A lab job that ended: its result, or why there is none, into the session."""
    if view is None or view.state == "stopped":
        st.session_state["lab_error"] = f"The {task} job was stopped before it finished."
    elif view.state == "error":
        first = view.error.strip().split("\n")[0]
        st.session_state["lab_error"] = f"The {task} job failed: {first}"
    elif task == "solve":
        lab.store_result(view.result, job["sig"])
    else:
        st.session_state[f"lab_{task}"] = {**job, "result": view.result}


def draw_landscape(task: str, job: dict[str, Any], values: np.ndarray, key: str) -> None:
    if task == "landscape_1d":
        done = ~np.isnan(values)
        bends = nonconvex_points(job["grid"][done], values[done]) if done.all() else []
        fig = figures.landscape_1d_figure(job["grid"], values, bends)
    else:
        n = len(job["grid"])
        fig = figures.landscape_2d_figure(job["grid"], job["grid"], values.reshape(n, n))
    st.plotly_chart(projected(fig), key=key, width="stretch")


def say_convexity(res) -> None:
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


#: Room above the drawing canvas for its toolbar (drawn at top: -2.65rem, 2.4rem tall).
CANVAS_TOOLBAR_ROOM = "3rem"


def canvas() -> bytes | None:
    """The drawn digit as PNG bytes, or None while nothing is drawn."""
    try:
        from streamlit_drawable_canvas import st_canvas
    except Exception:  # noqa: BLE001 - an absent or broken component must not break the page
        st.info(
            "Drawing needs streamlit-drawable-canvas (pip install "
            "'streamlit-drawable-canvas>=0.9,<1'); uploading a picture works without it."
        )
        return None
    # The canvas's toolbar (undo, redo, clear) appears 2.65rem above the canvas when the
    # pointer is on it: without room there it covered the "Upload" tab above.
    st.html(f"<style>.st-key-lab_canvas_box{{padding-top:{CANVAS_TOOLBAR_ROOM}}}</style>")
    with st.container(key="lab_canvas_box"):
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
