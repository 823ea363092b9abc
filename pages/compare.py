"""Compare page: this session's runs side by side."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from csvm import figures
from csvm.experiments import MODEL_LABELS
from pages.common import FINAL_STATES, get_pool, result_columns, runs


def _summary(config: dict) -> str:
    c = config
    if c["model"] == "lcsvm":
        model = f"L-CSVM λ_w={c['lam_w']:g} λ_f={c['lam_f']:g}"
    else:
        C = "no C" if c["C"] is None else f"C={c['C']:g}"
        model = (
            f"K-CSVM {c['kernel']} d={c['degree']} {c['regulariser']} λ={c['lam']:g} "
            f"η={c['eta']:g} {c['step']} {C}"
        )
    return f"{c['dataset']} {c['class_a']} v {c['class_b']} · {model} · seed {c['seed']}"


def page() -> None:
    """The Compare page: every run of this session in one table, curves and filters."""
    st.title("Compare runs")
    pool = get_pool()
    session_runs = list(runs().values())
    if not session_runs:
        st.info("No runs yet in this browser session: start one on the Train page.")
        return
    active = any(
        v is not None and v.state not in FINAL_STATES
        for run in session_runs
        for v in (pool.get(j) for j in run["jobs"].values())
    )

    # While any run trains, the table and curves refresh every two seconds on their own.
    @st.fragment(run_every=2.0 if active else None)
    def body() -> None:
        _draw(pool, session_runs)

    body()


def _draw(pool, session_runs: list[dict]) -> None:
    rows, curves, filters = [], [], []
    for run in session_runs:
        for model, job_id in run["jobs"].items():
            view = pool.get(job_id)
            result = view.result if view is not None else None
            label = MODEL_LABELS[run["config"]["model"]] if model == "csvm" else MODEL_LABELS[model]
            rows.append(
                {
                    "run": run["id"],
                    "model": label,
                    "settings": _summary(run["config"]) if model == "csvm" else "",
                    "state": view.state if view is not None else "lost",
                    "train accuracy": None
                    if result is None
                    else round(100 * result["train_accuracy"], 2),
                    "test accuracy": None
                    if result is None
                    else round(100 * result["test_accuracy"], 2),
                    "seconds": None if result is None else round(result["seconds"], 2),
                }
            )
            if model == "csvm" and view is not None:  # running runs too: the page refreshes
                events = [e for e in view.events if "objective" in e]
                if events:
                    curves.append((f"{run['id']}: {_summary(run['config'])}", events))
                    filters.append((run["id"], events[-1]["filters"]))
    st.caption("This browser session's runs; the page refreshes itself while any is training.")
    st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        width="stretch",
        column_config={"settings": st.column_config.TextColumn(width="large"), **result_columns()},
    )
    if curves:
        fig = figures.objectives_overlay(curves, "Objective per iteration, all runs")
        st.plotly_chart(fig, key="compare_objectives", width="stretch")
        st.subheader("Final filters")
        cols = st.columns(min(len(filters), 4))
        for i, (run_id, f) in enumerate(filters):
            cols[i % len(cols)].plotly_chart(
                figures.filter_figure(np.asarray(f), None, f"run {run_id}"),
                key=f"compare_filter_{run_id}",
                width="stretch",
            )


page()
