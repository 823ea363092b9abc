"""Figures of training as it runs: the objective and its terms, progress, the CNN's loss,
accuracy against time, divergence.

No Streamlit here: pages only draw what these return.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from csvm.figures._style import (
    BOTTOM_LEGEND,
    LAYOUT,
    TERM_LABELS,
    downsample,
    finite_values,
    fixed_margins,
    integer_axis,
    round_axis,
)
from csvm.figures.style import log_ticks
from csvm.figures.text import plain, plain_in_template, plain_lines

__all__ = [
    "divergence_figure",
    "objective_figure",
    "objectives_overlay",
    "progress_figure",
    "loss_figure",
    "accuracy_vs_time",
]


def divergence_figure(
    steps: Sequence[dict[str, Any]], divergence: dict[str, Any], title: str = "Blow-up"
) -> go.Figure:
    """The filter norm per step up to the step that diverged, on a log axis.

    Parameters
    ----------
    steps : sequence of dict
        The step events before the divergence (``iteration``, ``filter_norm``).
    divergence : dict
        The ``"divergence"`` event: ``filter_norm_after`` (when known) is the last point.
    """
    x = [int(e.get("iteration", i)) for i, e in enumerate(steps)]
    y = [float(e.get("filter_norm", np.nan)) for e in steps]
    after = divergence.get("filter_norm_after")
    if after is not None and np.isfinite(after):
        x.append(int(divergence.get("iteration", len(steps) - 1)) + 1)
        y.append(float(after))
    fig = go.Figure(
        go.Scatter(
            x=x,
            y=y,
            mode="lines+markers",
            name="filter norm",
            marker={"color": ["#1f77b4"] * (len(y) - 1) + ["#d62728"]},
        )
    )
    integer_axis(fig, max(x, default=1), title_text="iteration")
    v = finite_values(y)
    v = v[v > 0]
    ticks = log_ticks(v.min(), v.max()) if len(v) else []
    fig.update_yaxes(
        title_text="filter norm (log)",
        type="log",
        exponentformat="power",
        **({"tickvals": ticks} if ticks else {"dtick": 1}),
    )
    fig.update_layout(
        title=plain(f"{title}: {divergence.get('cause', 'diverged')}"), height=320, **LAYOUT
    )
    return fixed_margins(fig, bottom=60)


def objective_figure(events: Sequence[dict[str, Any]], title: str = "Objective") -> go.Figure:
    """Objective per recorded step, split into its terms; rises are flagged in red.

    For the L-CSVM (events with step "svm"/"filter") each half-step is one point, labelled
    "SVM step" or "filter step", as in the thesis's figure 3.3.

    Parameters
    ----------
    events : sequence of dict
        CSVM events; those without ``"objective"`` are skipped.
    title : str

    Returns
    -------
    plotly.graph_objects.Figure
        The objective on the left axis, its terms (dotted) on the right axis.
    """
    events = [e for e in events if "objective" in e and e.get("step") != "batch"]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    if not events:
        fig.update_layout(title=plain(title), **LAYOUT)
        return fig
    keep = downsample(len(events))
    events = [events[i] for i in keep]
    model = events[0].get("model", "kcsvm")
    linear = model == "lcsvm"
    x = [e["iteration"] + (0.5 if e.get("step") == "filter" else 0.0) for e in events]
    y = np.array([e["objective"] for e in events], dtype=float)
    labels = [
        {"svm": "SVM step", "filter": "filter step"}.get(e.get("step"), "iteration") for e in events
    ]
    fig.add_trace(
        go.Scatter(
            x=x,
            y=y,
            mode="lines+markers",
            name="objective",
            text=labels,
            line={"width": 3},
            hovertemplate="%{text} %{x}<br>objective %{y:.5g}<extra></extra>",
        )
    )
    rises = np.flatnonzero(np.diff(y) > 1e-9 * np.maximum(1.0, np.abs(y[:-1]))) + 1
    if len(rises):
        fig.add_trace(
            go.Scatter(
                x=[x[i] for i in rises],
                y=y[rises],
                mode="markers",
                name="rise (flagged)",
                marker={"color": "red", "size": 13, "symbol": "x"},
            )
        )
    terms: list[Any] = []
    for key, label in TERM_LABELS.get(model, []):
        if key in events[0]:
            terms += [e[key] for e in events]
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=[e[key] for e in events],
                    mode="lines",
                    name=label,
                    line={"dash": "dot"},
                    opacity=0.8,
                ),
                secondary_y=True,
            )
    integer_axis(fig, max(x), title_text="iteration (½ = filter step)" if linear else "iteration")
    round_axis(fig, y, title_text="objective", secondary_y=False)
    round_axis(fig, terms, title_text="terms", secondary_y=True, showgrid=False)
    fig.update_layout(title=plain(title), legend=BOTTOM_LEGEND, **LAYOUT)
    return fixed_margins(fig)


def objectives_overlay(
    curves: Sequence[tuple[str, Sequence[dict[str, Any]]]], title: str = "Objective per iteration"
) -> go.Figure:
    """Several runs' objective curves on one log-scale chart (the Compare page).

    Parameters
    ----------
    curves : sequence of (label, events)
        One legend label and the recorded CSVM events of each run.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure()
    shown: list[float] = []
    for label, events in curves:
        events = [e for e in events if "objective" in e]
        keep = downsample(len(events))
        events = [events[i] for i in keep]
        shown += [e["objective"] for e in events]
        fig.add_trace(
            go.Scatter(
                x=[e["iteration"] + (0.5 if e.get("step") == "filter" else 0.0) for e in events],
                y=[e["objective"] for e in events],
                mode="lines+markers",
                # A run's name (settings, classes of an upload), on lines of up to 60
                # characters: one run's differing settings ran past the legend's edge.
                name=plain_lines(label, 60),
                hovertemplate=plain_in_template(label)
                + "<br>iteration %{x}: %{y:.5g}<extra></extra>",
            )
        )
    fig.update_layout(
        title=plain(title),
        xaxis_title="iteration",
        yaxis_title="objective (log scale)",
        yaxis_type="log",
        yaxis_exponentformat="power",
        legend={"orientation": "h", "y": -0.25},
        height=460,
        **LAYOUT,
    )
    # Labels on decades (or 1-2-5 within one decade) only: plotly's minor-tick labels
    # ("2, 0.1, 9, 8 …") misread, and a range inside one decade had no label at all.
    v = finite_values(shown)
    v = v[v > 0]
    ticks = log_ticks(v.min(), v.max()) if len(v) else []
    fig.update_yaxes(**({"tickvals": ticks} if ticks else {"dtick": 1}))
    if len(v):  # a margin above and below: the first point's marker was cut at the top
        low, high = np.log10(v.min()), np.log10(v.max())
        pad = max(0.05 * (high - low), 0.01)
        fig.update_yaxes(range=[low - pad, high + pad])
    last = max((e.get("iteration", 0) for _, ev in curves for e in ev), default=1)
    integer_axis(fig, last + 0.5)
    return fig


def progress_figure(events: Sequence[dict[str, Any]], title: str = "Progress") -> go.Figure:
    """Train accuracy (left axis) and filter norm (right axis) per recorded step.

    Parameters
    ----------
    events : sequence of dict
        CSVM events with ``"iteration"`` and, where recorded, ``"train_accuracy"`` and
        ``"filter_norm"``; L-CSVM half-steps sit at ``iteration + 0.5`` for the filter step.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    events = [e for e in events if "objective" in e]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    if events:
        keep = downsample(len(events))
        events = [events[i] for i in keep]
        x = [e["iteration"] + (0.5 if e.get("step") == "filter" else 0.0) for e in events]
        fig.add_trace(
            go.Scatter(
                x=x,
                y=[e.get("train_accuracy") for e in events],
                mode="lines+markers",
                name="train accuracy",
                line={"width": 3},
                hovertemplate="iteration %{x}: %{y:.1%}<extra></extra>",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=x,
                y=[e.get("filter_norm") for e in events],
                mode="lines",
                name="filter norm",
                line={"dash": "dot"},
                hovertemplate="iteration %{x}: ‖f‖ %{y:.4g}<extra></extra>",
            ),
            secondary_y=True,
        )
    last = max((e["iteration"] + 0.5 for e in events), default=1)
    integer_axis(fig, last, title_text="iteration")
    accuracies = [e.get("train_accuracy") for e in events if e.get("train_accuracy") is not None]
    low = min(accuracies, default=0.0)
    fig.update_yaxes(
        title_text="train accuracy",
        tickformat=".1%",
        range=[max(0.0, low - max(0.01, 0.1 * (1 - low))), 1.003],
        secondary_y=False,
    )
    norms = [e.get("filter_norm") for e in events]
    round_axis(fig, norms, title_text="filter norm", secondary_y=True, showgrid=False)
    fig.update_layout(title=plain(title), height=320, legend=BOTTOM_LEGEND, **LAYOUT)
    return fixed_margins(fig)


def loss_figure(events: Sequence[dict[str, Any]], title: str = "Small CNN") -> go.Figure:
    """The CNN's training loss per epoch (and per logged batch) and its train accuracy.

    Parameters
    ----------
    events : sequence of dict
        SmallCNN events (``"step"`` "epoch" or "batch").
    title : str

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    epochs = [e for e in events if e.get("kind") == "epoch"]
    batches = [e for e in events if e.get("kind") == "batch"]
    if batches:
        keep = downsample(len(batches))
        fig.add_trace(
            go.Scatter(
                x=[batches[i].get("epoch_progress", batches[i]["iteration"]) for i in keep],
                y=[batches[i]["loss"] for i in keep],
                mode="lines",
                name="batch loss",
                opacity=0.4,
            )
        )
    if epochs:
        fig.add_trace(
            go.Scatter(
                x=[e["epoch"] + 1 for e in epochs],
                y=[e["loss"] for e in epochs],
                mode="lines+markers",
                name="epoch loss",
                line={"width": 3},
            )
        )
        fig.add_trace(
            go.Scatter(
                x=[e["epoch"] + 1 for e in epochs],
                y=[e.get("train_accuracy") for e in epochs],
                mode="lines",
                name="train accuracy",
                line={"dash": "dot"},
            ),
            secondary_y=True,
        )
    # Whole epochs only (1.5, 2.5 meant nothing), about ten labels at most.
    last_epoch = max((e["epoch"] + 1 for e in epochs), default=1)
    integer_axis(fig, last_epoch, title_text="epoch")
    fig.update_yaxes(title_text="log loss", secondary_y=False)
    fig.update_yaxes(
        title_text="train accuracy",
        secondary_y=True,
        range=[0, 1.02],
        tickformat=".0%",
        dtick=0.25,
        showgrid=False,
    )
    fig.update_layout(title=plain(title), legend=BOTTOM_LEGEND, **LAYOUT)
    return fixed_margins(fig)


def accuracy_vs_time(rows: Sequence[dict[str, Any]]) -> go.Figure:
    """Test accuracy against training seconds, one marker per model.

    Parameters
    ----------
    rows : sequence of dict
        Comparison rows with "model", "seconds" and "test accuracy" (percent; None skips).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure()
    for row in rows:
        if row.get("test accuracy") is None:
            continue
        fig.add_trace(
            go.Scatter(
                x=[row["seconds"]],
                y=[row["test accuracy"]],
                mode="markers+text",
                text=[plain(row["model"])],
                textposition="top center",
                marker={"size": 16},
                name=plain(row["model"]),
            )
        )
    accs = [r["test accuracy"] for r in rows if r.get("test accuracy") is not None]
    if accs:
        low, high = min(accs), max(accs)
        pad = max(0.5, 0.25 * (high - low))
        fig.update_yaxes(range=[low - pad, min(100.0, high + pad) + 0.3])
        fig.update_xaxes(rangemode="tozero")
    fig.update_layout(
        title="Test accuracy against training time",
        xaxis_title="seconds",
        yaxis_title="test accuracy (%)",
        showlegend=False,
        **LAYOUT,
    )
    return fig
