"""Compare page: this session's runs side by side, the settings that differ first."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from csvm import figures
from csvm.runs.config import MODEL_LABELS, SPECS, RunConfig
from csvm.runs.targets import result_rows, step_events
from explorer.app import ensure_app
from explorer.common import get_pool, heartbeat, is_running, outcomes, result_columns, runs

ensure_app()  # a page's own URL on a fresh server: run it inside the app


def _settings_text(config: RunConfig, varying: list[str]) -> str:
    """The settings that differ between the runs, then the model and pair."""
    shown = [f"{SPECS[n].label}={getattr(config, n)}" for n in varying]
    return " · ".join(shown) or f"{config.dataset} {config.class_a} v {config.class_b}"


def page() -> None:
    """The Compare page: every run of this session in one table, curves and filters."""
    st.title("Compare runs")
    heartbeat()
    session_runs = list(runs().values())
    if not session_runs:
        st.info("No runs yet in this browser session: start one on the Train page.")
        return
    pool = get_pool()
    active = any(is_running({m: pool.get(j) for m, j in r["jobs"].items()}) for r in session_runs)

    @st.fragment(run_every=2.0 if active else None)
    def body() -> None:
        heartbeat()
        _draw(session_runs)

    body()


def _draw(session_runs: list[dict]) -> None:
    pool = get_pool()
    configs = [r["config"] for r in session_runs]
    varying = [n for n in SPECS if len({getattr(c, n) for c in configs}) > 1]
    rows, curves, filters = [], {}, {}
    for run in session_runs:
        views = {m: pool.get(j) for m, j in run["jobs"].items()}
        for row in result_rows(run["config"], outcomes(views)):
            rows.append(
                {"run": run["id"], "settings": _settings_text(run["config"], varying), **row}
            )
        view = views.get("csvm")
        steps = step_events(view.events) if view is not None else []
        if steps:
            curves[run["id"]] = (f"{run['id']}: {_settings_text(run['config'], varying)}", steps)
            filters[run["id"]] = steps[-1].get("filters")
    if varying:
        st.caption(
            "Settings that differ between the runs: " + ", ".join(SPECS[n].label for n in varying)
        )
    st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        width="stretch",
        column_config={"settings": st.column_config.TextColumn(width="large"), **result_columns()},
    )
    if not curves:
        return
    pinned = st.multiselect(
        "Pin runs side by side",
        list(curves),
        default=list(curves)[-2:],
        key="compare_pinned",
        help="Their curves and filters, next to each other.",
    )
    chosen = [curves[r] for r in pinned] or list(curves.values())
    fig = figures.objectives_overlay(chosen, "Objective per step")
    st.plotly_chart(fig, key="compare_objectives", width="stretch")
    cols = st.columns(max(1, min(len(pinned), 4)))
    for i, run_id in enumerate(pinned):
        if filters.get(run_id) is not None:
            cols[i % len(cols)].plotly_chart(
                figures.filter_figure(np.asarray(filters[run_id]), None, f"run {run_id}"),
                key=f"compare_filter_{run_id}",
                width="stretch",
            )
    st.caption(f"Models: {', '.join(sorted(set(MODEL_LABELS.values())))}.")


page()
