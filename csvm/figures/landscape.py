"""Figures of the Filter lab's landscapes: T along one or two directions through the filter.

No Streamlit here: pages only draw what these return.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from csvm.figures._style import LAYOUT, log_scale
from csvm.figures.text import plain

__all__ = ["landscape_1d_figure", "landscape_2d_figure"]


def landscape_1d_figure(
    ts: np.ndarray,
    objectives: np.ndarray,
    bends: Sequence[int] = (),
    title: str = "T along the gradient direction",
) -> go.Figure:
    """T(f + t d) against t, the current filter (t = 0) and one gradient step (t = 1) marked.

    Parameters
    ----------
    ts, objectives : 1-D arrays
        From :func:`csvm.analysis.lab.landscape_1d`.
    bends : sequence of int
        Indices where the slice bends downwards (:func:`csvm.analysis.lab.nonconvex_points`);
        marked as evidence that T is not convex in f.
    title : str

    Returns
    -------
    plotly.graph_objects.Figure
        A log y axis when T spans more than two decades.
    """
    t = np.asarray(ts, dtype=float)
    v = np.asarray(objectives, dtype=float)
    fig = go.Figure(
        go.Scatter(
            x=t,
            y=v,
            mode="lines+markers",
            name="T(f + t·d)",
            hovertemplate="t = %{x:.2f}: T = %{y:.5g}<extra></extra>",
        )
    )
    for where, label, symbol, colour in [
        (0.0, "current filter (t = 0)", "star", "#d62728"),
        (1.0, "after one gradient step (t = 1)", "diamond", "#2ca02c"),
    ]:
        hit = np.flatnonzero(np.isclose(t, where))
        if len(hit):
            fig.add_trace(
                go.Scatter(
                    x=t[hit[:1]],
                    y=v[hit[:1]],
                    mode="markers",
                    name=label,
                    marker={"symbol": symbol, "size": 14, "color": colour},
                    hovertemplate=f"{label}: T = %{{y:.5g}}<extra></extra>",
                )
            )
    bends = [int(i) for i in bends]
    if bends:
        fig.add_trace(
            go.Scatter(
                x=t[bends],
                y=v[bends],
                mode="markers",
                name="bends downwards: not convex here",
                marker={
                    "symbol": "circle-open",
                    "size": 16,
                    "color": "#9467bd",
                    "line": {"width": 2},
                },
                hovertemplate="not convex near t = %{x:.2f}<extra></extra>",
            )
        )
    fig.update_xaxes(title_text="t (gradient steps of size η; negative: uphill)")
    fig.update_yaxes(title_text="T", type="log" if log_scale(v) else "linear")
    fig.update_layout(
        title=plain(title), height=360, legend={"orientation": "h", "y": -0.3}, **LAYOUT
    )
    return fig


def landscape_2d_figure(
    s: np.ndarray,
    t: np.ndarray,
    objectives: np.ndarray,
    title: str = "T over the gradient direction and a direction orthogonal to it",
) -> go.Figure:
    """Contours of T over ``f + s d1 + t d2`` (cells not computed yet may be NaN).

    Parameters
    ----------
    s, t : 1-D arrays
        Positions along d1 (the gradient step) and d2 (orthogonal, same length).
    objectives : 2-D array (len(t), len(s))
        From :func:`csvm.analysis.lab.landscape_2d`; NaN where not computed yet.
    title : str

    Returns
    -------
    plotly.graph_objects.Figure
        Colours show log10 T when T spans more than two decades.
    """
    z = np.asarray(objectives, dtype=float)
    log = log_scale(z)
    shown = np.log10(z) if log else z
    label = "log10 T" if log else "T"
    fig = go.Figure(
        go.Contour(
            x=np.asarray(s, dtype=float),
            y=np.asarray(t, dtype=float),
            z=shown,
            colorscale="Viridis",
            colorbar={"title": {"text": label}},
            contours={"showlabels": True},
            customdata=z,
            hovertemplate="s = %{x:.2f}, t = %{y:.2f}: T = %{customdata:.5g}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[0.0, 1.0],
            y=[0.0, 0.0],
            mode="markers+text",
            text=["now", "one step"],
            textposition="top center",
            marker={"symbol": ["star", "diamond"], "size": 14, "color": ["#d62728", "#2ca02c"]},
            hoverinfo="skip",
            showlegend=False,
        )
    )
    fig.update_xaxes(title_text="s: along the gradient step d1")
    fig.update_yaxes(title_text="t: along d2, orthogonal to d1")
    fig.update_layout(title=plain(title), height=460, **LAYOUT)
    return fig
