"""Sweep page: a grid over two settings, validation accuracy as a heatmap (thesis 4.2–4.6)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from csvm import figures
from csvm.experiments import DEFAULT_CONFIG, MODEL_LABELS
from csvm.sweeps import SWEEP_PARAMS, parse_values, run_validation, sweep_configs
from pages.common import FINAL_STATES, data_for, dataset_table, get_pool

st.title("Sweep two settings")
st.caption(
    "Every cell trains one CSVM and is scored on the validation images, as in the "
    "thesis's tables 4.2–4.6. Cells run in parallel on the worker pool."
)

available = {d["name"]: d for d in dataset_table() if d["available"]}
c1, c2, c3, c4 = st.columns(4)
dataset = c1.selectbox(
    "Dataset", list(available), key="sw_dataset", help="mnist-5k ships with the app."
)
classes = [str(c) for c in available[dataset]["classes"]]
class_a = c2.selectbox(
    "Class −1", classes, index=min(3, len(classes) - 1), key="sw_a", help="The class labelled −1."
)
class_b = c3.selectbox(
    "Class +1", classes, index=min(5, len(classes) - 1), key="sw_b", help="The class labelled +1."
)
model = c4.radio(
    "Model",
    ["kcsvm", "lcsvm"],
    format_func=MODEL_LABELS.get,
    key="sw_model",
    horizontal=True,
    help="K-CSVM (Algorithm 5) or L-CSVM (Algorithm 4).",
)
c1, c2 = st.columns(2)
n_train = c1.number_input(
    "Training images",
    10,
    60000,
    300,
    step=50,
    key="sw_n_train",
    help="Per cell; small grids of small runs finish fastest.",
)
n_iter = c2.number_input("Iterations", 1, 200, 10, key="sw_n_iter", help="Per cell.")
names = list(SWEEP_PARAMS)
c1, c2 = st.columns(2)
x_name = c1.selectbox(
    "Horizontal axis",
    names,
    index=names.index("lam"),
    key="sw_x",
    format_func=lambda n: SWEEP_PARAMS[n][0],
    help="The first setting.",
)
x_text = c1.text_input(
    "Values", "0.001, 0.01, 0.1", key="sw_x_values", help="Comma-separated, at most 8."
)
y_name = c2.selectbox(
    "Vertical axis",
    names,
    index=names.index("eta"),
    key="sw_y",
    format_func=lambda n: SWEEP_PARAMS[n][0],
    help="The second setting.",
)
y_text = c2.text_input("Values", "0.01, 0.1", key="sw_y_values", help="Comma-separated, at most 8.")

base = {
    **DEFAULT_CONFIG,
    "dataset": dataset,
    "class_a": class_a,
    "class_b": class_b,
    "n_train": int(n_train),
    "model": model,
    "n_iter": int(n_iter),
}
cells, error = [], None
try:
    x_values, y_values = parse_values(x_name, x_text), parse_values(y_name, y_text)
    image_shape = data_for(base).image_shape
    cells = sweep_configs(base, x_name, x_values, y_name, y_values, image_shape)
except Exception as exc:  # noqa: BLE001 - every problem is shown, not raised
    error = str(exc)
if error:
    st.error(error)
pool = get_pool()
if st.button("▶ Start sweep", type="primary", disabled=bool(error), key="sw_start"):
    jobs = [
        pool.submit(run_validation, {"config": c}, name=f"sweep {i}") for i, c in enumerate(cells)
    ]
    st.session_state["sweep"] = {"jobs": jobs, "x": (x_name, x_values), "y": (y_name, y_values)}

sweep = st.session_state.get("sweep")
if sweep is not None:
    views = [pool.poll(j) for j in sweep["jobs"]]
    running = any(v is not None and v.state not in FINAL_STATES for v in views)

    @st.fragment(run_every=1.0 if running else None)
    def grid() -> None:
        fresh = [pool.poll(j) for j in sweep["jobs"]]
        (xn, xv), (yn, yv) = sweep["x"], sweep["y"]
        acc = np.full((len(yv), len(xv)), np.nan)
        for k, v in enumerate(fresh):
            if v is not None and v.result is not None:
                acc[k // len(xv), k % len(xv)] = v.result["val_accuracy"]
        done = int(np.sum(~np.isnan(acc)))
        st.progress(done / acc.size, text=f"{done} of {acc.size} cells done")
        st.plotly_chart(
            figures.sweep_heatmap(SWEEP_PARAMS[xn][0], xv, SWEEP_PARAMS[yn][0], yv, acc),
            key="sweep_heatmap",
            width="stretch",
        )
        if done and not np.all(np.isnan(acc)):
            i, j = np.unravel_index(np.nanargmax(acc), acc.shape)
            st.success(
                f"Best: {SWEEP_PARAMS[xn][0]} = {xv[j]}, {SWEEP_PARAMS[yn][0]} = "
                f"{yv[i]}: {100 * acc[i, j]:.2f} % validation accuracy."
            )
        failed = [v for v in fresh if v is not None and v.state == "error"]
        for v in failed:
            st.warning(f"{v.name}: {v.error.strip().splitlines()[0]}")
        if running and not any(v is not None and v.state not in FINAL_STATES for v in fresh):
            st.rerun()

    grid()
