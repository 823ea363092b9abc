"""The SVM playground's figures: the decision function in 2-D, SMO's progress, the lift.

Pure plotly (no Streamlit).  Class +1 is drawn red (circles), class -1 blue (squares), and
the filled background uses the same diverging scale: red where f > 0, blue where f < 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from csvm.figures.style import log_axis
from csvm.figures.text import plain

__all__ = [
    "decision_figure",
    "lift_figure",
    "quadratic_features",
    "smo_progress_figure",
]

RED, BLUE, PAIR = "#c0392b", "#1f5fa8", "#f39c12"
#: The background saturates beyond |f| = SATURATE (well outside the margins at ±1).
SATURATE = 3.0
_SCALE = [[0.0, "#2c6fbb"], [0.5, "#f7f7f7"], [1.0, "#d64541"]]
#: Points with slack xi = 1 - y f above this are marked as inside their margin (SMO's
#: tolerance leaves free support vectors within about 1e-3 of the margin).
XI_SHOWN = 0.01
#: Trace names the page's click handling relies on.
GRID_TRACE, POINT_TRACES = "click grid", ("class +1", "class −1")


#: The decision figure's height in projector mode: the whole plot above the fold of a
#: 1280×720 screen under the page's title (a quarter taller than 520 reached 960 px).
DECISION_PROJECTOR_PX = 460


def _style(fig: go.Figure, projector: bool, height: int, projector_px: int = 0) -> go.Figure:
    size = 20 if projector else 13
    fig.update_layout(
        height=(projector_px or int(height * 1.25)) if projector else height,
        font={"size": size},
        title_font={"size": size * 1.2},
        legend_font={"size": size * 0.9},
        margin={"l": 10, "r": 10, "t": 60 if projector else 48, "b": 10},
        uirevision="keep",
        template="plotly_white",
    )
    if projector:
        # Streamlit's theme gives every axis 12 px ticks unless the figure names a size.
        axis = {"tickfont": {"size": size}, "title_font": {"size": size}}
        fig.update_xaxes(**axis)
        fig.update_yaxes(**axis)
        # Four ticks on each 3-D axis: more ran into each other (√2·x₁x₂) at this size.
        # Their titles larger than the ticks: x₁², √2·x₁x₂ are mostly sub- and superscript
        # glyphs, which at the tick size read smaller than the numbers beside them.
        titles = {"title_font": {"size": round(size * 1.4)}}
        fig.update_scenes(**{f"{a}axis": {**axis, **titles, "nticks": 4} for a in "xyz"})
    return fig


def _points(X, y, alpha, yf, projector: bool) -> list[go.Scatter]:
    """One trace per class; ``customdata`` holds each point's training index."""
    traces = []
    for label, name, colour, symbol in (
        (1, POINT_TRACES[0], RED, "circle"),
        (-1, POINT_TRACES[1], BLUE, "square"),
    ):
        idx = np.flatnonzero(y == label)
        info = [f"α = {alpha[i]:.3g}, y·f = {yf[i]:.3g}" for i in idx]
        traces.append(
            go.Scatter(
                x=X[idx, 0],
                y=X[idx, 1],
                mode="markers",
                name=name,
                customdata=idx,
                text=info,
                marker={
                    "color": colour,
                    "symbol": symbol,
                    "size": 11 if projector else 8,
                    "line": {"color": "white", "width": 1},
                },
                selected={"marker": {"opacity": 1}},
                unselected={"marker": {"opacity": 1}},
                hovertemplate=f"{name}<br>(%{{x:.2f}}, %{{y:.2f}})<br>%{{text}}<extra></extra>",
            )
        )
    return traces


def _rings(X, alpha, yf, C, pair, projector: bool) -> list[go.Scatter]:
    """Support vectors ringed (size grows with alpha), violators crossed, the pair."""
    out = []
    sv = np.flatnonzero(alpha > 0)
    if len(sv):
        rel = np.sqrt(alpha[sv] / alpha[sv].max())
        base = 1.6 if projector else 1.0
        out.append(
            go.Scatter(
                x=X[sv, 0],
                y=X[sv, 1],
                mode="markers",
                name=f"support vectors ({len(sv)})",
                marker={
                    "symbol": "circle-open",
                    "color": "black",
                    "size": base * (12 + 14 * rel),
                    "line": {"width": 2},
                },
                hoverinfo="skip",
            )
        )
    bad = np.flatnonzero((alpha > 0) & (yf < 1 - XI_SHOWN))
    if len(bad):
        kind = f"inside the margin, ξ > 0 ({len(bad)})"
        at_c = "" if C is None else f" (α = C = {C:.3g})"
        out.append(
            go.Scatter(
                x=X[bad, 0],
                y=X[bad, 1],
                mode="markers",
                name=kind,
                marker={
                    "symbol": "x-thin-open",
                    "color": "black",
                    "size": 14 if projector else 10,
                    "line": {"width": 2},
                },
                text=[f"ξ = {1 - yf[i]:.3g}{at_c}" for i in bad],
                hovertemplate="%{text}<extra></extra>",
            )
        )
    if pair is not None:
        i, j = pair
        out.append(
            go.Scatter(
                x=X[[i, j], 0],
                y=X[[i, j], 1],
                mode="markers",
                name="the pair SMO updates",
                marker={
                    "symbol": "circle-open",
                    "color": PAIR,
                    "size": 34 if projector else 26,
                    "line": {"width": 4},
                },
                hoverinfo="skip",
            )
        )
    return out


def _free_grid(click_axis: np.ndarray, X: np.ndarray) -> np.ndarray:
    """The click grid without the nodes next to a data point, so that a click on a
    point reaches the point (to remove it) rather than the grid under it."""
    gx, gy = np.meshgrid(click_axis, click_axis)
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    if len(X) == 0:
        return grid
    step = float(click_axis[1] - click_axis[0]) if len(click_axis) > 1 else 0.1
    near = np.zeros(len(grid), dtype=bool)
    for start in range(0, len(X), 100):  # bounded memory: 100 points at a time
        d2 = ((grid[:, None, :] - X[None, start : start + 100, :]) ** 2).sum(axis=2)
        near |= (d2 < (1.5 * step) ** 2).any(axis=1)
    return grid[~near]


def _lines(axis: np.ndarray, F: np.ndarray) -> list[go.Contour]:
    """The boundary f = 0 (solid) and the margins f = ±1 (dashed) as contour lines of F."""
    common = {
        "showlegend": True,
        "x": axis,
        "y": axis,
        "z": F,
        "showscale": False,
        "hoverinfo": "skip",
        "colorscale": [[0, "black"], [1, "black"]],
    }
    boundary = go.Contour(
        name="boundary f = 0",
        contours={"start": 0, "end": 0, "size": 1, "coloring": "lines"},
        line={"width": 3},
        **common,
    )
    margins = go.Contour(
        name="margins f = ±1",
        contours={"start": -1, "end": 1, "size": 2, "coloring": "lines"},
        line={"width": 2, "dash": "dash"},
        **common,
    )
    return [boundary, margins]


def _background(axis: np.ndarray, F: np.ndarray) -> go.Heatmap:
    """f over the plane, saturating at ±SATURATE (red f > 0, blue f < 0)."""
    return go.Heatmap(
        x=axis,
        y=axis,
        z=np.clip(F, -SATURATE, SATURATE),
        zmin=-SATURATE,
        zmax=SATURATE,
        zsmooth="best",
        colorscale=_SCALE,
        opacity=0.75,
        hoverinfo="skip",
        showscale=False,
        name="f(x)",
    )


def decision_figure(
    X: np.ndarray,
    y: np.ndarray,
    axis: np.ndarray,
    F: np.ndarray,
    alpha: np.ndarray,
    yf: np.ndarray,
    C: float | None = None,
    *,
    pair: tuple[int, int] | None = None,
    click_axis: np.ndarray | None = None,
    title: str = "Decision function",
    projector: bool = False,
) -> go.Figure:
    """The decision function f over the plane with the data, boundary and margins.

    Parameters
    ----------
    X, y : ndarray
        Points (n, 2) and labels ±1.
    axis : ndarray of shape (m,)
        The coordinates of the square grid on which ``F`` was evaluated.
    F : ndarray of shape (m, m)
        ``F[r, c] = f(axis[c], axis[r])`` (rows are y).
    alpha, yf : ndarray of shape (n,)
        Each point's alpha and ``y_i f(x_i)`` (``yf < 1`` with ``alpha > 0``: ξ > 0).
    C : float or None, default=None
        The bound on alpha (shown in the violators' hover text).
    pair : (int, int), optional
        The two indices SMO updated last, ringed in orange.
    click_axis : ndarray, optional
        Coordinates of an invisible grid of markers that a click can select (to place a
        point there); its trace is named ``GRID_TRACE``.
    title : str, default="Decision function"
    projector : bool, default=False
        Larger type and markers.
    """
    limit = float(max(abs(axis[0]), abs(axis[-1])))
    traces: list = [_background(axis, F)]
    if click_axis is not None:
        free = _free_grid(click_axis, X)
        traces.append(
            go.Scatter(
                x=free[:, 0],
                y=free[:, 1],
                mode="markers",
                name=GRID_TRACE,
                showlegend=False,
                # small markers: plotly's hover measures the distance to a marker's edge,
                # so big overlapping ones would all tie and the first would win
                marker={"size": 3, "color": "rgba(0,0,0,0)"},
                selected={"marker": {"opacity": 0}},
                unselected={"marker": {"opacity": 0}},
                hovertemplate="click: add a point at (%{x:.2f}, %{y:.2f})<extra></extra>",
            )
        )
    traces += _lines(axis, F)
    traces += _rings(X, alpha, yf, C, pair, projector)
    traces += _points(X, y, alpha, yf, projector)
    fig = go.Figure(traces)
    fig.update_layout(
        title={"text": plain(title)},
        hovermode="closest",
        clickmode="event+select",
        dragmode=False,
        legend={"orientation": "h", "y": -0.07, "yanchor": "top", "x": 0},
    )
    fig.update_xaxes(range=[-limit, limit], constrain="domain", showgrid=False, zeroline=False)
    fig.update_yaxes(range=[-limit, limit], scaleanchor="x", showgrid=False, zeroline=False)
    if projector:  # below the larger tick labels, not over them
        fig.update_layout(legend_y=-0.13)
    return _style(fig, projector, 520, DECISION_PROJECTOR_PX)


def _downsample(n: int, keep: int = 1000) -> np.ndarray:
    return np.unique(np.linspace(0, n - 1, min(n, keep)).round().astype(int))


def smo_progress_figure(
    objective: Sequence[float],
    gap: Sequence[float],
    current: int,
    tol: float,
    projector: bool = False,
) -> go.Figure:
    """W(alpha) and the KKT gap per SMO step, the current step marked.

    Parameters
    ----------
    objective, gap : sequence of float
        One value per step, step 0 (all alphas 0) first.
    current : int
        The step shown in the decision figure.
    tol : float
        SMO stops once the gap is below this (drawn as a dotted line).
    projector : bool, default=False
    """
    objective, gap = np.asarray(objective, float), np.asarray(gap, float)
    idx = _downsample(len(objective))
    fig = make_subplots(
        rows=2,
        cols=1,
        vertical_spacing=0.2,
        # Short enough for the page's narrow column at a projector's 20 px type (1280 px
        # wide: "dual objective W(α) (SMO raises it)" ran past the figure's edge).
        subplot_titles=("dual W(α) (SMO raises it)", "KKT gap (SMO stops below tol)"),
    )
    fig.add_scatter(
        x=idx,
        y=objective[idx],
        mode="lines",
        name="W(α)",
        row=1,
        col=1,
        line={"color": "#34495e"},
        hovertemplate="step %{x}: W = %{y:.6g}<extra></extra>",
    )
    fig.add_scatter(
        x=idx,
        y=np.maximum(gap[idx], 1e-16),
        mode="lines",
        name="gap",
        row=2,
        col=1,
        line={"color": "#8e44ad"},
        hovertemplate="step %{x}: gap %{y:.3g}<extra></extra>",
    )
    fig.add_hline(y=tol, line_dash="dot", row=2, col=1, annotation_text=f"tol {tol:g}")
    for row, values in ((1, objective), (2, np.maximum(gap, 1e-16))):
        fig.add_scatter(
            x=[current],
            y=[values[current]],
            mode="markers",
            row=row,
            col=1,
            marker={"color": PAIR, "size": 14 if projector else 10},
            showlegend=False,
            hoverinfo="skip",
        )
        fig.add_vline(x=current, line_color=PAIR, line_width=1, row=row, col=1)
    # Labelled decades (the tolerance's among them): Plotly's own labelled the minor ticks
    # with bare mantissas, "2 1 5 2 0.1 5 2 0.01".
    gaps = np.append(np.maximum(gap, 1e-16), tol)
    fig.update_yaxes(type="log", row=2, col=1, **log_axis(gaps))
    fig.update_xaxes(title_text="step", row=2, col=1)
    fig.update_layout(showlegend=False)
    fig = _style(fig, projector, 520)
    fig.update_annotations(font_size=(20 if projector else 13))
    return fig


def quadratic_features(X: np.ndarray) -> np.ndarray:
    """``phi(x) = (x1^2, sqrt(2) x1 x2, x2^2)``: ``phi(x) . phi(z) = (x . z)^2``, the
    degree-2 polynomial kernel with gamma 1 and coef0 0."""
    X = np.asarray(X, float)
    return np.column_stack([X[:, 0] ** 2, np.sqrt(2) * X[:, 0] * X[:, 1], X[:, 1] ** 2])


def lift_figure(
    X: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    b: float,
    title: str = "Lifted to the quadratic features",
    projector: bool = False,
) -> go.Figure:
    """The points mapped by :func:`quadratic_features` and the plane ``w . phi + b = 0``.

    The plane is solved for the coordinate with the largest ``|w|`` and drawn over the
    points' range of the other two.
    """
    Z = quadratic_features(X)
    names = ["x₁²", "√2·x₁x₂", "x₂²"]
    traces = []
    for label, name, colour in ((1, POINT_TRACES[0], RED), (-1, POINT_TRACES[1], BLUE)):
        m = y == label
        traces.append(
            go.Scatter3d(
                x=Z[m, 0],
                y=Z[m, 1],
                z=Z[m, 2],
                mode="markers",
                name=name,
                marker={"size": 5 if projector else 3.5, "color": colour},
                hovertemplate=f"{name}<br>φ = (%{{x:.2f}}, %{{y:.2f}}, %{{z:.2f}})<extra></extra>",
            )
        )
    k = int(np.argmax(np.abs(w)))
    if abs(w[k]) > 1e-12:
        others = [c for c in range(3) if c != k]
        lo, hi = Z[:, others].min(axis=0), Z[:, others].max(axis=0)
        u, v = np.meshgrid(np.linspace(lo[0], hi[0], 12), np.linspace(lo[1], hi[1], 12))
        solved = -(w[others[0]] * u + w[others[1]] * v + b) / w[k]
        coords = {others[0]: u, others[1]: v, k: solved}
        traces.append(
            go.Surface(
                x=coords[0],
                y=coords[1],
                z=coords[2],
                name="separating plane",
                showscale=False,
                opacity=0.3,
                colorscale=[[0, "#555"], [1, "#555"]],
                hoverinfo="skip",
                showlegend=True,
            )
        )
    fig = go.Figure(traces)
    fig.update_layout(
        title={"text": plain(title)},
        scene={
            # the axes span the points, so the plane is cut at the points' box
            **{
                f"{a}axis": {"title": {"text": names[c]}, "range": [lo - pad, hi + pad]}
                for c, a in enumerate("xyz")
                for lo, hi, pad in [(Z[:, c].min(), Z[:, c].max(), 0.05 * np.ptp(Z[:, c]) + 0.1)]
            },
            "camera": {"eye": {"x": 1.5, "y": -1.5, "z": 0.9}},
        },
        legend={"orientation": "h", "y": 0.0},
    )
    return _style(fig, projector, 560)
