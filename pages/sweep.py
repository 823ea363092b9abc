"""Sweep page: a grid over two settings, validation accuracy as a heatmap (thesis 4.2–4.6)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from csvm import figures
from csvm.jobs import QuotaExceeded
from csvm.runs.config import SPECS
from csvm.runs.summary import task_words
from csvm.runs.sweeps import (
    DEFAULT_VALUES,
    SWEEP_PARAMS,
    ignore_event,
    parse_values,
    run_validation,
    sweep_configs,
    sweepable,
)
from explorer.app import ensure_app
from explorer.cluster import cluster, executor_address, future_view
from explorer.datasets import data_for
from explorer.display import projected
from explorer.glossary import value_words
from explorer.live import group_busy, live_jobs, poll_views
from explorer.owner_cookie import heartbeat, owner
from explorer.pool import get_pool
from explorer.settings import current_config, md_escape, show_problems
from explorer.sweep_jobs import recover_sweep, seed_widgets, submit_sweep
from explorer.widget_state import resend

ensure_app()  # a page's own URL on a fresh server: run it inside the app

st.title("Sweep two settings")
show_problems()  # a link's settings that were replaced, as Train says them
st.caption(
    "Every cell trains one CSVM with the Train page's settings, two of them varied, and is "
    "scored on the validation images, as in the thesis's tables 4.2–4.6. Cells run in "
    "parallel on the worker pool."
)
heartbeat()
base = current_config()
st.caption(  # several classes: every cell trains them all ("classes 3, 5, 0; K-CSVM")
    f"Base settings: {md_escape(base.dataset)} {md_escape(task_words(base))}; "
    f"{value_words(base.model)}"
    + (f", {value_words(base.kernel)} kernel" if base.model in SPECS["kernel"].models else "")
    + " (change them on the Train page)."
)
if "sweep" not in st.session_state:  # a reload: the browser's newest sweep in the pool
    st.session_state["sweep"] = recover_sweep(get_pool().jobs(owner=owner(), group="sweep"))
    if st.session_state["sweep"] is not None:
        seed_widgets(st.session_state["sweep"], st.session_state)
# Defaults through the session, not the boxes' value: a recovered sweep seeds them.
st.session_state.setdefault("sw_n_train", 300)
st.session_state.setdefault("sw_n_iter", 8)
c1, c2 = st.columns(2)
n_train = c1.number_input(
    "Training images per cell",
    10,
    60000,
    step=50,
    key="sw_n_train",
    help="Small grids of small runs finish fastest.",
)
n_iter = c2.number_input("Iterations per cell", 1, 200, key="sw_n_iter", help="Per cell.")
names = sweepable(base)  # only what the current model and kernel use
x_default = "gamma" if "gamma" in names else names[0]
y_default = "C" if "C" in names else next(n for n in names if n != x_default)
for key, default in (("sw_x", x_default), ("sw_y", y_default)):
    if st.session_state.get(key) not in names:  # e.g. γ after a switch to the L-CSVM
        st.session_state[key] = default
for name in names:
    for axis in ("x", "y"):
        st.session_state.setdefault(f"sw_{axis}_values_{name}", DEFAULT_VALUES[name])
resend(["sw_x", "sw_y"])  # sent on every run: explorer/widget_state.py
c1, c2 = st.columns(2)
x_name = c1.selectbox(
    "Horizontal axis",
    names,
    key="sw_x",
    format_func=lambda n: SWEEP_PARAMS[n][0],
    help="The first setting (only those the current model uses).",
)
# The default grid shows a pattern on the classroom preset (RBF kernel, relative steps): a
# small C underfits at every γ (80-86 % against 90-95 % validation accuracy, measured).
x_text = c1.text_input(
    "Values",
    key=f"sw_x_values_{x_name}",
    help="Comma-separated, at most 8.",
)
y_name = c2.selectbox(
    "Vertical axis",
    names,
    key="sw_y",
    format_func=lambda n: SWEEP_PARAMS[n][0],
    help="The second setting.",
)
y_text = c2.text_input(
    "Values",
    key=f"sw_y_values_{y_name}",
    help="Comma-separated, at most 8.",
)


def _views(sweep: dict) -> list:
    if "futures" in sweep:
        return [future_view(f"sweep {i}", f) for i, f in enumerate(sweep["futures"])]
    return poll_views(sweep["jobs"])


cells, error = [], None
try:
    cell_base = base.replace(n_train=int(n_train), n_iter=int(n_iter), baselines=())
    x_values, y_values = parse_values(x_name, x_text), parse_values(y_name, y_text)
    image_shape = data_for(cell_base).image_shape
    cells = sweep_configs(cell_base, x_name, x_values, y_name, y_values, image_shape)
except Exception as exc:  # noqa: BLE001 - every problem is shown, not raised
    error = str(exc)
pool = get_pool()
executor, cluster_problem = cluster(executor_address())
if cluster_problem:
    st.warning(
        md_escape(cluster_problem) + " The sweep runs on this server's own workers instead.",
        icon=":material/cloud_off:",
    )
if not error and executor is None:
    # A sweep runs one job per cell; the server caps a browser's queued + running jobs.
    busy = sum(
        1
        for v in pool.jobs(owner=owner())
        if v.group != "sweep" and v.state in ("queued", "running")
    )
    room = pool.settings.max_active_per_owner - busy
    if len(cells) > room:
        error = (
            f"This grid has {len(cells)} cells, and this browser may have "
            f"{pool.settings.max_active_per_owner} jobs queued or running at once "
            f"(CSVM_MAX_ACTIVE_PER_SESSION; {busy} in use by other runs): use fewer values."
        )
if error:
    st.error(md_escape(error))
if executor is not None:
    st.caption("Cells run on the Dask cluster named by CSVM_DASK_SCHEDULER.")


def _stop_sweep() -> None:
    old = st.session_state.get("sweep") or {}
    for future in old.get("futures", ()):
        future.cancel()  # pending cells never start; running ones are ignored
    pool.cancel_owner(owner(), group="sweep")


c1, c2 = st.columns([1, 4])
if c1.button("▶ Start sweep", type="primary", disabled=bool(error), key="sw_start"):
    _stop_sweep()  # one sweep per session: the new one replaces it
    if executor is not None:
        futures = [executor.submit(run_validation, ignore_event, c) for c in cells]
        st.session_state["sweep"] = {
            "futures": futures,
            "x": (x_name, x_values),
            "y": (y_name, y_values),
        }
    else:
        try:
            axes = {"x": (x_name, x_values), "y": (y_name, y_values)}
            st.session_state["sweep"] = submit_sweep(pool, cells, axes, owner())
        except QuotaExceeded as exc:
            pool.cancel_owner(owner(), group="sweep")
            st.error(str(exc))
# Drawn after Start is handled, so the run that starts a sweep already offers its Stop.
c2.button(
    "■ Stop sweep",
    key="sw_stop",
    on_click=_stop_sweep,
    disabled=not group_busy("sweep", (st.session_state.get("sweep") or {}).get("futures", ())),
)


def _grid(sweep: dict, fresh: list) -> None:
    """The heatmap of the cells scored so far, "Best" once all are, and any problems."""
    (xn, xv), (yn, yv) = sweep["x"], sweep["y"]
    acc = np.full((len(yv), len(xv)), np.nan)
    sizes = set()  # the validation images of each scored cell: one split for every cell
    for k, v in enumerate(fresh):
        if v is not None and v.result is not None:
            acc[k // len(xv), k % len(xv)] = v.result["val_accuracy"]
            sizes.add(v.result.get("n_val"))
    done = int(np.sum(~np.isnan(acc)))
    st.progress(done / acc.size, text=f"{done} of {acc.size} cells done")
    st.plotly_chart(
        projected(figures.sweep_heatmap(SWEEP_PARAMS[xn][0], xv, SWEEP_PARAMS[yn][0], yv, acc)),
        key="sweep_heatmap",
        width="stretch",
    )
    n_val = sizes.pop() if len(sizes) == 1 else None
    best = figures.best_cell(SPECS[xn].label, xv, SPECS[yn].label, yv, acc, n_val)
    if best:  # only once every cell has its score
        st.success(best)
    diverged = [v for v in fresh if v is not None and v.result and v.result.get("diverged")]
    if diverged:
        st.caption(figures.diverged_cells(len(diverged)))
    for v in fresh:
        if v is None:
            st.warning("A cell is no longer on the server.")
        elif v.state == "error":
            st.warning(f"{md_escape(v.name)}: {md_escape(v.error.strip().splitlines()[0])}")


sweep = st.session_state.get("sweep")
if sweep is not None:
    live_jobs(sweep, lambda fresh: _grid(sweep, fresh), views=_views)
