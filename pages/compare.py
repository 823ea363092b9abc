"""Compare page: this session's runs side by side, the settings that differ first."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from csvm import figures
from csvm.runs.config import SPECS
from csvm.runs.targets import result_rows, step_events
from explorer.app import ensure_app
from explorer.display import link_to, projected, result_columns, table
from explorer.live import get_views, live_jobs
from explorer.owner_cookie import heartbeat
from explorer.run_names import run_names, varying
from explorer.run_store import earlier_runs, restore_runs
from explorer.runs import outcomes, runs
from explorer.settings import md_escape
from explorer.state import Run

ensure_app()  # a page's own URL on a fresh server: run it inside the app


def _names(session_runs: list[Run]) -> dict[str, str]:
    """Each run named by what sets it apart ("η 0.5" beside "η 0.1")."""
    return run_names({run.id: run.config for run in session_runs})


def _bring_back(run_ids: list[str]) -> None:
    said = restore_runs(run_ids)
    if said:
        st.session_state["_compare_problem"] = said[1]


def _earlier_runs() -> None:
    """Offer this browser's stored runs that this session lacks (a reload starts a new
    session, which holds only the run of its link: Compare lost the others)."""
    earlier = earlier_runs()
    problem = st.session_state.pop("_compare_problem", None)
    if problem:
        st.warning(md_escape(problem))
    if not earlier:
        return
    text, button = st.columns([4, 1], vertical_alignment="center")
    many = len(earlier) > 1
    text.info(
        f"{len(earlier)} earlier run{'s' if many else ''} of this browser "
        f"{'are' if many else 'is'} kept in the run store, not yet on this page (a reload "
        "starts a new session).",
        icon=":material/history:",
    )
    button.button(
        "Show them here" if many else "Show it here",
        key="compare_bring_back",
        icon=":material/restore:",
        on_click=_bring_back,
        args=(earlier,),
        width="stretch",
    )


def page() -> None:
    """The Compare page: every run of this session in one table, curves and filters."""
    st.title("Compare runs")
    heartbeat()
    _earlier_runs()
    session_runs = list(runs().values())
    if not session_runs:
        st.info(
            "No runs yet in this browser session: start one on the Train page, or open the "
            "class's runs here from the Class board."
        )
        train, board = st.columns(2)
        link_to(train, "pages/train.py", "Train", ":material/model_training:")
        link_to(board, "pages/class_board.py", "Class board", ":material/leaderboard:")
        return
    jobs = {r.id: r.jobs for r in session_runs}
    curves, filters = _curves(session_runs, get_views(jobs))
    # The pin menu stays outside the live fragment (no widgets inside it): its choices
    # are the runs with steps as the page is drawn; a run that ends reruns the page.
    pinned = (
        st.multiselect(
            "Pin runs side by side",
            list(curves),
            default=list(curves)[-2:],
            key="compare_pinned",
            format_func=_names(session_runs).get,
            help="Their curves and filters, next to each other.",
        )
        if curves
        else []
    )
    live_jobs(
        jobs,
        lambda views: _draw(session_runs, views, pinned),
        views=get_views,
        every=2.0,
    )


def _varying(session_runs: list[Run]) -> list[str]:
    return varying([r.config for r in session_runs])


def _curves(session_runs: list[Run], views: dict) -> tuple[dict, dict]:
    """Each run's CSVM steps (label, steps) and last filters, for the runs with steps."""
    names = _names(session_runs)
    curves, filters = {}, {}
    for run in session_runs:
        view = views[run.id].get("csvm")
        steps = step_events(view.events) if view is not None else []
        if steps:
            # Of several classes, the steps and filters drawn are the first sub-problem's.
            first = " · first sub-problem" if run.config.multiclass else ""
            curves[run.id] = (names[run.id] + first, steps)
            filters[run.id] = steps[-1].get("filters")
    return curves, filters


def _draw(session_runs: list[Run], views: dict, pinned: list[str]) -> None:
    varying = _varying(session_runs)
    names = _names(session_runs)
    # The run's name says what differs; the columns take the width their values need
    # (fixed widths cut the accuracy to "9…" at 1280 px).
    rows = [
        {"run": names[run.id], **row}
        for run in session_runs
        for row in result_rows(run.config, outcomes(views[run.id]))
    ]
    curves, filters = _curves(session_runs, views)
    if varying:
        st.caption(
            "Settings that differ between the runs: " + ", ".join(SPECS[n].label for n in varying)
        )
    table(
        pd.DataFrame(rows),
        hide_index=True,
        width="stretch",
        column_config={
            "run": st.column_config.TextColumn(help="The settings that set this run apart."),
            **result_columns(),
        },
    )
    if not curves:
        return
    pinned = [r for r in pinned if r in curves]
    chosen = [curves[r] for r in pinned] or list(curves.values())
    fig = figures.objectives_overlay(chosen, "Objective per step")
    st.plotly_chart(projected(fig), key="compare_objectives", width="stretch")
    cols = st.columns(max(1, min(len(pinned), 4)))
    for i, run_id in enumerate(pinned):
        if filters.get(run_id) is not None:
            col = cols[i % len(cols)]
            # The run's name as text above its filters, where it wraps in its column: as
            # the figure's title it ran into the next column's ("… · Iterations γ 0.03…").
            col.markdown(f"**{md_escape(curves[run_id][0])}**")
            col.plotly_chart(
                projected(
                    figures.filter_figure(np.asarray(filters[run_id]), None, None, values=False)
                ),
                key=f"compare_filter_{run_id}",
                width="stretch",
            )


page()
