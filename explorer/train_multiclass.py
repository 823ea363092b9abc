"""The Train page's view of a multi-class run: the grid of sub-problem filters while they
train, the sub-problem in focus, and afterwards the k×k confusion, per-class accuracy and
the most confused pairs with their filters side by side.

Drawn by :mod:`explorer.train_view` when the run's ``classes`` is set; the two-class view is
untouched.  Everything shown is computed in :mod:`csvm.runs.targets`; this module only draws.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from itertools import combinations
from typing import Any

import numpy as np
import streamlit as st

from csvm import figures
from csvm.figures.training_svg import objective_svg
from csvm.runs.config import MODEL_LABELS, RunConfig
from csvm.runs.summary import named_pair
from csvm.runs.targets import step_events, sub_problem_progress
from explorer.display import chart, image_grid, markup_figure, projector_mode
from explorer.settings import md_escape
from explorer.state import Run

_FOLLOW = -1  # the focus option "the sub-problem training now"
#: The main area's width at 1280 px with the sidebar open, which the confused pairs' columns
#: share (wider screens draw them a little smaller than their columns, never with bands).
_MAIN_WIDTH = 800


def describe(config: RunConfig, class_names: Sequence[str]) -> str:
    """ "3 classes (7, 0, 3), one-vs-one: 3 sub-problems"."""
    k = len(class_names)
    scheme = "one-vs-one" if config.multi_class == "ovo" else "one-vs-rest"
    shown = ", ".join(str(c) for c in class_names)
    return f"{k} classes ({shown}), {scheme}: {config.n_sub_problems(k)} sub-problems"


def pair_name(pair: Sequence[Any] | None, class_names: Sequence[str], k: int, ovo: bool) -> str:
    """A sub-problem in words: "7 vs 0" (one-vs-one) or "3 vs rest"."""
    if pair is None:  # not started: name it from its index, as binary_tasks orders them
        if ovo:
            i, j = list(combinations(range(len(class_names)), 2))[k]
            return f"{class_names[i]} vs {class_names[j]}"
        return f"{class_names[k]} vs rest"
    return " vs ".join(named_pair(pair, class_names))


def _focus(run: Run, rows: list[dict], labels: list[str], finished: bool) -> int:
    """The sub-problem in focus: chosen in a selectbox, or the one training now (once
    every one has finished, the last one trained)."""
    key = f"focus_{run.id}"
    options = [_FOLLOW, *range(len(rows))]
    follow = "the last one trained" if finished else "the one training now"
    choice = st.selectbox(
        "Sub-problem in focus",
        options,
        key=key,
        format_func=lambda k: follow if k == _FOLLOW else labels[k],
        help="Its objective is drawn below and its filter is marked ▶ in the grid.",
    )
    if choice != _FOLLOW:
        return int(choice)
    started = [r["classifier"] for r in rows if r["steps"]]
    return started[-1] if started else 0


def clicked_sub_problem(selection: Any) -> int | None:
    """The sub-problem whose filter was clicked in the grid (its marker's customdata)."""
    try:
        points = selection["selection"]["points"]
    except (KeyError, TypeError):
        return None
    for point in points or ():
        index = point.get("customdata")
        if isinstance(index, list):  # Plotly may wrap a scalar customdata in a list
            index = index[0] if index else None
        if isinstance(index, (int, float)):
            return int(index)
    return None


def _focus_clicked(grid_key: str, focus_key: str) -> None:
    index = clicked_sub_problem(st.session_state.get(grid_key))
    if index is not None:
        st.session_state[focus_key] = index  # the focus menu follows the click


def live_panel(run: Run, shown: list, class_names: Sequence[str]) -> None:
    """The grid of filters, per-sub-problem progress and the focused objective."""
    config: RunConfig = run.config
    ovo = config.multi_class == "ovo"
    rows = sub_problem_progress(config, shown)
    labels = [pair_name(r["pair"], class_names, r["classifier"], ovo) for r in rows]
    done = sum(r["steps"] >= r["total"] for r in rows)
    focus = _focus(run, rows, labels, finished=done == len(rows))
    row = rows[focus]
    c1, c2, c3 = st.columns(3)
    c1.metric("sub-problems finished", f"{done} of {len(rows)}")
    c2.metric(
        f"objective ({labels[focus]})",
        "–" if row["objective"] is None else f"{row['objective']:.4g}",
    )
    accuracy = row["train_accuracy"]
    c3.metric(
        f"train accuracy ({labels[focus]})",
        "–" if accuracy is None else f"{100 * accuracy:.2f} %",
    )
    titles = [f"{lab} · {r['steps']}/{r['total']}" for lab, r in zip(labels, rows, strict=True)]
    fig = figures.filter_grid_figure(
        [r["filters"] for r in rows],
        titles,
        f"Filters of the {len(rows)} sub-problems (click one to focus it)",
        focus=focus,
        clickable=True,
    )
    grid_key = f"grid_{run.id}"
    chart(
        fig,
        grid_key,
        on_select=partial(_focus_clicked, grid_key, f"focus_{run.id}"),
        selection_mode="points",
    )
    mine = [e for e in step_events(shown, every_sub_problem=True) if e.get("classifier") == focus]
    if mine:  # SVG, as the one-pair page's (csvm.figures.chart_svg)
        title = f"Objective of {labels[focus]}"
        markup_figure(objective_svg(mine, title, projector_mode()), "objective")


def results_panel(run: Run, finished: dict[str, dict], data) -> None:
    """k×k confusion per model, per-class accuracy, the most confused pairs' filters."""
    config: RunConfig = run.config
    names = [str(c) for c in data.class_names]
    k = len(names)
    labels = {m: MODEL_LABELS[config.model if m == "csvm" else m] for m in finished}
    tabs = st.tabs([f"{labels[m]}: confusion" for m in finished])
    for tab, (model, result) in zip(tabs, finished.items(), strict=True):
        with tab:
            chart(
                figures.confusion_figure(
                    np.array(result["confusion"]),
                    names,
                    f"{labels[model]}: test confusion ({k}×{k})",
                ),
                f"conf_{run.id}_{model}",
            )
    chart(
        figures.per_class_accuracy_figure(
            {labels[m]: r["per_class_accuracy"] for m, r in finished.items()},
            names,
            "Test accuracy per class",
        ),
        f"perclass_{run.id}",
    )
    csvm_result = finished.get("csvm")
    if csvm_result is None:
        return
    _confused_view(run, csvm_result, names)
    wrong = csvm_result["misclassified"]
    with st.expander(
        f"Misclassified test images ({csvm_result['n_misclassified']} of {csvm_result['n_test']})"
    ):
        predicted = np.asarray(csvm_result["test_predictions"])
        image_grid(
            data.X_test[wrong],
            [f"{names[data.y_test[i]]} → {names[predicted[i]]}" for i in wrong],
            "Misclassified by the CSVM (first 32): true → predicted",
        )


def _confused_view(run: Run, result: dict, names: list[str]) -> None:
    """The three most confused pairs, each with the filter(s) that separate them."""
    confused = result.get("confused") or []
    st.header("Most confused pairs")
    if not confused:
        st.caption("No two classes were confused on the test set.")
        return
    ovo = result.get("multi_class", "ovo") == "ovo"
    filters = np.asarray(result["filters"])
    cols = st.columns(len(confused))
    for col, item in zip(cols, confused, strict=True):
        i, j = item["classes"]
        captions = [
            pair_name(_as_labels(result["pairs"][c], names), names, c, ovo)
            for c in item["classifiers"]
        ]
        title = (
            f"{names[i]} ↔ {names[j]}: {item['count']} mistakes "
            f"({names[i]} as {names[j]}: {item['i_as_j']}, {names[j]} as {names[i]}: "
            f"{item['j_as_i']})"
        )
        with col:
            # The pair's words as text above its filters: as the figure's title they ran
            # past a third of the page.
            st.markdown(f"**{md_escape(title)}**")
            chart(
                figures.filter_grid_figure(
                    [filters[c] for c in item["classifiers"]],
                    captions,
                    "",
                    width=_MAIN_WIDTH / len(confused),
                ),
                f"confused_{run.id}_{i}_{j}",
            )


def _as_labels(pair: Sequence[str], names: list[str]) -> list[Any]:
    """A result's pair of class names back to labels (as the events carry them)."""
    return [names.index(p) if p != "rest" else "rest" for p in pair]
