"""Plotly figures for the explorer (no Streamlit here: pages only draw what this returns).

Series are downsampled to at most ``MAX_POINTS`` points and every figure sets
``uirevision`` so a user's zoom survives the once-a-second live updates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

__all__ = [
    "accuracy_vs_time",
    "log_ticks",
    "nice_ticks",
    "divergence_figure",
    "for_projector",
    "confusion_figure",
    "feature_maps_figure",
    "filter_figure",
    "image_grid",
    "loss_figure",
    "objective_figure",
    "objectives_overlay",
    "progress_figure",
]

MAX_POINTS = 1000
_LAYOUT = {
    "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
    "uirevision": "keep",
    "font": {"size": 14},
}
_TERM_LABELS = {
    "kcsvm": [("sum_alpha", "Σα"), ("margin_term", "½ aᵀKa"), ("regulariser", "r(f)")],
    "lcsvm": [("data_term", "mean hinge"), ("w_term", "λ_w/2‖w‖²"), ("f_term", "λ_f/2‖f‖²")],
}


def _square_pixels(fig: go.Figure) -> None:
    """Give every subplot square pixels (each y axis anchored to its own x axis)."""
    for name in list(fig.layout):
        if name.startswith("yaxis"):
            fig.layout[name].scaleanchor = "x" + name[len("yaxis") :]
            fig.layout[name].constrain = "domain"
    for name in list(fig.layout):
        if name.startswith("xaxis"):
            fig.layout[name].constrain = "domain"


def _tile(planes: np.ndarray, cols: int, cell: tuple[int, int], gap: int) -> np.ndarray:
    """Lay 2-D planes out row by row on one canvas, NaN between and around them.

    One heatmap trace on one pair of axes draws the whole grid: a grid of separate
    subplots costs plotly a trace, two axes and a title per image, which made the live
    page slow to build and slow to paint (NaN cells are transparent).
    """
    n = len(planes)
    rows = int(np.ceil(n / cols))
    ch, cw = cell
    canvas = np.full((rows * (ch + gap) - gap, cols * (cw + gap) - gap), np.nan)
    for i, plane in enumerate(planes):  # a few dozen images: one slice assignment each
        h, w = plane.shape
        top = (i // cols) * (ch + gap) + (ch - h) // 2
        left = (i % cols) * (cw + gap) + (cw - w) // 2
        canvas[top : top + h, left : left + w] = plane
    return canvas


def _tile_captions(captions: Sequence[str], cols: int, cell: tuple[int, int], gap: int):
    """Caption annotations centred above each tile of :func:`_tile`'s canvas."""
    ch, cw = cell
    return [
        {
            "text": str(text),
            "x": (i % cols) * (cw + gap) + (cw - 1) / 2,
            "y": (i // cols) * (ch + gap) - 0.5,
            "xref": "x",
            "yref": "y",
            "yanchor": "bottom",
            "showarrow": False,
            "font": {"size": 12},
        }
        for i, text in enumerate(captions)
    ]


def _canvas_axes(fig: go.Figure) -> None:
    """Bare axes with square pixels, the first row at the top."""
    bare = {"showticklabels": False, "ticks": "", "showgrid": False, "zeroline": False}
    fig.update_xaxes(constrain="domain", **bare)
    fig.update_yaxes(autorange="reversed", scaleanchor="x", constrain="domain", **bare)


#: A horizontal legend along the bottom edge of the figure, under the x axis's title.
_BOTTOM_LEGEND = {"orientation": "h", "yref": "container", "y": 0.0, "yanchor": "bottom"}


def _fixed_margins(
    fig: go.Figure, left: int = 72, right: int = 72, top: int = 50, bottom: int = 96
) -> go.Figure:
    """Margins that leave room for tick labels, axis titles and a bottom legend, fixed.

    Plotly otherwise grows the margins to fit what it has drawn and then draws the whole
    figure again; on the live page, updated every second, that second drawing was about a
    third of the browser's plotting time.
    """
    fig.update_layout(margin={"l": left, "r": right, "t": top, "b": bottom, "autoexpand": False})
    fig.update_xaxes(automargin=False)
    fig.update_yaxes(automargin=False)
    return fig


def _layout(**overrides: Any) -> dict[str, Any]:
    """The shared layout, with room above the plot for a title over subplot titles."""
    return {**_LAYOUT, **overrides}


def nice_ticks(low: float, high: float, target: int = 5) -> tuple[list[float], list[str]]:
    """Round tick values (1, 2 or 5 times a power of ten) covering ``[low, high]``.

    Parameters
    ----------
    low, high : float
        The data range (in either order); a single value gets a small range around it.
    target : int
        About how many ticks (at least two).

    Returns
    -------
    values : list of float
        Evenly spaced, from at or below ``low`` to at or above ``high``; empty when the
        range is not finite.
    text : list of str
        Each value written with just the decimals its step needs ("0.06", never "0.063").
    """
    low, high = sorted((float(low), float(high)))
    if not (np.isfinite(low) and np.isfinite(high)):
        return [], []
    if high - low <= 1e-12 * max(1.0, abs(high)):
        pad = 0.1 * abs(high) or 1.0  # a flat line: one step either side of it
        low, high = low - pad, high + pad
    raw = (high - low) / max(1, target - 1)
    power = 10.0 ** np.floor(np.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw * (1 - 1e-9))
    first, last = np.floor(low / step + 1e-9), np.ceil(high / step - 1e-9)
    values = [float(k * step) for k in np.arange(first, last + 1)]
    decimals = max(0, int(-np.floor(np.log10(step) + 1e-9)))
    text = [f"{round(v, decimals) + 0.0:,.{decimals}f}" for v in values]  # + 0.0: no "-0"
    return values, text


def log_ticks(low: float, high: float) -> list[float]:
    """Tick values for a log axis over ``[low, high]`` (both > 0), at least two inside.

    Decades when two or more fall inside; else 1, 2 and 5 times a power of ten; else the
    round linear ticks of :func:`nice_ticks` (a range such as 310–480).  Plotly's own
    labels on minor ticks ("2, 5, 2, 5 …") are what this replaces.
    """
    low, high = sorted((float(low), float(high)))
    if not (np.isfinite(low) and np.isfinite(high)) or low <= 0:
        return []
    lo, hi = int(np.floor(np.log10(low))), int(np.ceil(np.log10(high)))
    decades = [10.0**k for k in range(lo, hi + 1)]
    for values in (decades, [m * d for d in decades for m in (1, 2, 5)]):
        inside = [i for i, v in enumerate(values) if low <= v <= high]
        if len(inside) >= 2:
            # One tick either side of the data at most, so the axis is not stretched.
            return values[max(0, inside[0] - 1) : inside[-1] + 2]
    return [v for v in nice_ticks(low, high)[0] if v > 0]


def _finite(values: Sequence[Any]) -> np.ndarray:
    v = np.asarray([np.nan if x is None else x for x in values], dtype=float)
    return v[np.isfinite(v)]


def _round_axis(fig: go.Figure, values: Sequence[Any], **axis: Any) -> None:
    """Explicit round ticks (and the range they span) on a linear y axis: plotly's own
    choice, formatted, gave labels such as 0.063 on the secondary axes."""
    v = _finite(values)
    if not len(v):
        fig.update_yaxes(**axis)
        return
    ticks, text = nice_ticks(v.min(), v.max())
    pad = 0.03 * (ticks[-1] - ticks[0])  # markers on the end ticks stay whole
    fig.update_yaxes(tickvals=ticks, ticktext=text, range=[ticks[0] - pad, ticks[-1] + pad], **axis)


def _integer_axis(fig: go.Figure, last: float, **axis: Any) -> None:
    """Whole-number ticks (iterations, epochs) with about ten labels at most."""
    span = max(1.0, float(last))
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 10**9) if span / s <= 10)
    # Never a tick at -1 when a single point is drawn.
    fig.update_xaxes(tick0=0, dtick=step, tickformat="d", rangemode="nonnegative", **axis)


def _downsample(n: int) -> np.ndarray:
    if n <= MAX_POINTS:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, MAX_POINTS).astype(int))


def for_projector(fig: go.Figure, scale: float = 1.5) -> go.Figure:
    """Larger type for a projector: title, ticks, legend and heatmap numbers scaled up.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        Changed in place (and returned).
    scale : float
        Factor on every font size.
    """
    base = (fig.layout.font.size or 14) * scale
    margin = fig.layout.margin
    if margin.autoexpand is False:  # fixed margins: make room for the larger type
        fig.update_layout(margin={k: int(getattr(margin, k) * scale) for k in ("l", "r", "t", "b")})
    fig.update_layout(
        font={"size": base},
        title_font={"size": base * 1.25},
        legend_font={"size": base},
        height=int((fig.layout.height or 320) * 1.2),
    )
    fig.update_xaxes(tickfont={"size": base}, title_font={"size": base})
    fig.update_yaxes(tickfont={"size": base}, title_font={"size": base})
    fig.update_annotations(font_size=base)  # subplot titles
    fig.update_traces(textfont_size=base * 0.8, selector={"type": "heatmap"})
    return fig


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
    _integer_axis(fig, max(x, default=1), title_text="iteration")
    v = _finite(y)
    v = v[v > 0]
    ticks = log_ticks(v.min(), v.max()) if len(v) else []
    fig.update_yaxes(
        title_text="filter norm (log)",
        type="log",
        exponentformat="power",
        **({"tickvals": ticks} if ticks else {"dtick": 1}),
    )
    fig.update_layout(
        title=f"{title}: {divergence.get('cause', 'diverged')}", height=320, **_LAYOUT
    )
    return _fixed_margins(fig, bottom=60)


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
        fig.update_layout(title=title, **_LAYOUT)
        return fig
    keep = _downsample(len(events))
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
    for key, label in _TERM_LABELS.get(model, []):
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
    _integer_axis(fig, max(x), title_text="iteration (½ = filter step)" if linear else "iteration")
    _round_axis(fig, y, title_text="objective", secondary_y=False)
    _round_axis(fig, terms, title_text="terms", secondary_y=True, showgrid=False)
    fig.update_layout(title=title, legend=_BOTTOM_LEGEND, **_LAYOUT)
    return _fixed_margins(fig)


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
        keep = _downsample(len(events))
        events = [events[i] for i in keep]
        shown += [e["objective"] for e in events]
        fig.add_trace(
            go.Scatter(
                x=[e["iteration"] + (0.5 if e.get("step") == "filter" else 0.0) for e in events],
                y=[e["objective"] for e in events],
                mode="lines+markers",
                name=label,
                hovertemplate=label + "<br>iteration %{x}: %{y:.5g}<extra></extra>",
            )
        )
    fig.update_layout(
        title=title,
        xaxis_title="iteration",
        yaxis_title="objective (log scale)",
        yaxis_type="log",
        yaxis_exponentformat="power",
        legend={"orientation": "h", "y": -0.25},
        height=460,
        **_LAYOUT,
    )
    # Labels on decades (or 1-2-5 within one decade) only: plotly's minor-tick labels
    # ("2, 0.1, 9, 8 …") misread, and a range inside one decade had no label at all.
    v = _finite(shown)
    v = v[v > 0]
    ticks = log_ticks(v.min(), v.max()) if len(v) else []
    fig.update_yaxes(**({"tickvals": ticks} if ticks else {"dtick": 1}))
    last = max((e.get("iteration", 0) for _, ev in curves for e in ev), default=1)
    _integer_axis(fig, last + 0.5)
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
        keep = _downsample(len(events))
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
    _integer_axis(fig, last, title_text="iteration")
    accuracies = [e.get("train_accuracy") for e in events if e.get("train_accuracy") is not None]
    low = min(accuracies, default=0.0)
    fig.update_yaxes(
        title_text="train accuracy",
        tickformat=".1%",
        range=[max(0.0, low - max(0.01, 0.1 * (1 - low))), 1.003],
        secondary_y=False,
    )
    norms = [e.get("filter_norm") for e in events]
    _round_axis(fig, norms, title_text="filter norm", secondary_y=True, showgrid=False)
    fig.update_layout(title=title, height=320, legend=_BOTTOM_LEGEND, **_LAYOUT)
    return _fixed_margins(fig)


def filter_figure(
    filters: np.ndarray,
    previous: np.ndarray | None = None,
    title: str = "Filter",
    value_label: str = "weight",
) -> go.Figure:
    """Heatmap(s) of the filter(s) on a diverging scale centred on zero, values on hover;
    with ``previous``, a second row shows the change since the previous iteration.

    Parameters
    ----------
    filters : ndarray
        Shape ``(n_filters, p, q)`` or ``(n_filters, C, p, q)``; every plane is drawn.
    previous : ndarray, optional
        The filters of an earlier step, same shape.
    title : str
    value_label : str
        The colour bar's title (a gradient is drawn with this figure too).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    f = np.asarray(filters, dtype=float)
    f = f.reshape(-1, *f.shape[-2:])  # every (filter, channel) plane
    rows = 2 if previous is not None else 1
    cols = len(f)
    titles = [f"filter {i + 1}" for i in range(cols)]
    if previous is not None:
        titles += [f"change {i + 1}" for i in range(cols)]
    fig = make_subplots(
        rows=rows, cols=cols, subplot_titles=titles, horizontal_spacing=0.05, vertical_spacing=0.12
    )
    vmax = float(np.abs(f).max()) or 1.0
    for i, plane in enumerate(f):
        fig.add_trace(
            go.Heatmap(
                z=plane,
                colorscale="RdBu_r",
                zmid=0,
                zmin=-vmax,
                zmax=vmax,
                texttemplate="%{z:.2f}" if max(plane.shape) <= 7 and cols <= 3 else None,
                showscale=i == cols - 1,
                colorbar={"title": {"text": value_label}, "len": 0.45 if rows == 2 else 1.0}
                | ({"y": 0.78} if rows == 2 else {}),
                hovertemplate="row %{y}, column %{x}: %{z:.4f}<extra></extra>",
            ),
            row=1,
            col=i + 1,
        )
    if previous is not None:
        d = f - np.asarray(previous, dtype=float).reshape(f.shape)
        dmax = float(np.abs(d).max()) or 1.0
        for i, plane in enumerate(d):
            fig.add_trace(
                go.Heatmap(
                    z=plane,
                    colorscale="PuOr",
                    zmid=0,
                    zmin=-dmax,
                    zmax=dmax,
                    showscale=i == cols - 1,
                    colorbar={
                        "title": {"text": "change"},
                        "len": 0.45,
                        "y": 0.22,
                        "exponentformat": "power",
                    },
                    hovertemplate="row %{y}, column %{x}: change %{z:.4f}<extra></extra>",
                ),
                row=2,
                col=i + 1,
            )
    fig.update_xaxes(showticklabels=False, showgrid=False, zeroline=False)
    fig.update_yaxes(showticklabels=False, showgrid=False, zeroline=False, autorange="reversed")
    _square_pixels(fig)
    fig.update_layout(title=title, height=270 * rows + 40, **_LAYOUT)
    return _fixed_margins(fig, left=10, right=110, top=80, bottom=10)  # colour bars at the right


def feature_maps_figure(images: np.ndarray, maps: np.ndarray, labels: Sequence[str]) -> go.Figure:
    """Pinned example images (top row) and their feature maps after the filter (below).

    Parameters
    ----------
    images : ndarray of shape (n, C, H, W)
    maps : ndarray of shape (n, n_filters, H', W')
    labels : sequence of str
        One caption per image.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    images = np.asarray(images, dtype=float)
    maps = np.asarray(maps, dtype=float)
    n = len(images)
    maps = maps.reshape(n, -1, *maps.shape[-2:])
    n_maps = maps.shape[1]
    firsts = images.reshape(n, -1, *images.shape[-2:])[:, 0]
    cell, gap = firsts.shape[-2:], 3
    # Row 0: the images; row 1 + k: every image's map k, under its image.
    pictures = list(firsts) + [maps[j, k] for k in range(n_maps) for j in range(n)]
    canvas = _tile(pictures, n, cell, gap)
    grey, below = canvas.copy(), canvas
    grey[cell[0] :] = np.nan  # two traces, two colour scales, one canvas
    below[: cell[0]] = np.nan
    fig = go.Figure(
        [
            go.Heatmap(
                z=grey,
                colorscale="gray",
                showscale=False,
                hovertemplate="pixel %{z:.2f}<extra></extra>",
            ),
            go.Heatmap(
                z=below,
                colorscale="Viridis",
                showscale=False,
                hovertemplate="map %{z:.3f}<extra></extra>",
            ),
        ]
    )
    _canvas_axes(fig)
    rows = 1 + n_maps
    fig.update_layout(
        title="Pinned images before (top) and after the filter (feature maps)",
        height=180 * rows + 60,
        annotations=_tile_captions(labels, n, cell, gap),
        **_layout(margin={"l": 10, "r": 10, "t": 90, "b": 10}),
    )
    return fig


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
        keep = _downsample(len(batches))
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
    _integer_axis(fig, last_epoch, title_text="epoch")
    fig.update_yaxes(title_text="log loss", secondary_y=False)
    fig.update_yaxes(
        title_text="train accuracy",
        secondary_y=True,
        range=[0, 1.02],
        tickformat=".0%",
        dtick=0.25,
        showgrid=False,
    )
    fig.update_layout(title=title, legend=_BOTTOM_LEGEND, **_LAYOUT)
    return _fixed_margins(fig)


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
                text=[row["model"]],
                textposition="top center",
                marker={"size": 16},
                name=row["model"],
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
        **_LAYOUT,
    )
    return fig


def confusion_figure(matrix: np.ndarray, class_names: Sequence[str], title: str) -> go.Figure:
    """A confusion matrix (rows: true class, columns: predicted) with counts on the cells.

    Parameters
    ----------
    matrix : array-like of shape (2, 2)
    class_names : sequence of str
        Names of the -1 and +1 classes.
    title : str

    Returns
    -------
    plotly.graph_objects.Figure
    """
    m = np.asarray(matrix)
    names = [str(c) for c in class_names]
    fig = go.Figure(
        go.Heatmap(
            z=m,
            x=names,
            y=names,
            colorscale="Blues",
            showscale=False,
            texttemplate="%{z}",
            textfont={"size": 20},
            hovertemplate="true %{y}, predicted %{x}: %{z}<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed", title_text="true")
    fig.update_xaxes(title_text="predicted")
    k = len(names)
    if k > 2:  # many classes: smaller counts, a taller square, every class ticked
        fig.update_traces(textfont={"size": 16 if k <= 4 else 11})
        fig.update_xaxes(type="category")
        fig.update_yaxes(type="category")
    fig.update_layout(title=title, height=300 if k <= 3 else 120 + 36 * k, **_LAYOUT)
    return fig


def _grid_cells(filters: Sequence[np.ndarray | None]) -> list[np.ndarray | None]:
    """Each sub-problem's planes side by side, split by a blank column (None stays None)."""
    cells: list[np.ndarray | None] = []
    for f in filters:
        if f is None:
            cells.append(None)
            continue
        planes = np.asarray(f, dtype=float)
        planes = planes.reshape(-1, *planes.shape[-2:])
        blank = np.full((planes.shape[1], 1), np.nan)
        cells.append(np.concatenate([c for plane in planes for c in (plane, blank)][:-1], axis=1))
    return cells


def _cell_text(titles: Sequence[str], cols: int, shape: tuple[int, int]) -> np.ndarray:
    """Each pixel of :func:`_tile`'s canvas labelled with its cell's title ("" between)."""
    m = len(titles)
    owner = _tile([np.full(shape, k, dtype=float) for k in range(m)], cols, shape, 2)
    labels = np.asarray([*titles, ""], dtype=object)
    return np.where(np.isnan(owner), "", labels[np.nan_to_num(owner, nan=m).astype(int)])


def _click_markers(titles: Sequence[str], cols: int, shape: tuple[int, int]) -> go.Scatter:
    """An invisible marker on each cell's centre of :func:`_tile`'s canvas: Plotly reports
    clicks on points, not on heatmap cells, so these carry each cell's index to the page."""
    ch, cw = shape
    k = np.arange(len(titles))
    return go.Scatter(
        x=(k % cols) * (cw + 2) + (cw - 1) / 2,
        y=(k // cols) * (ch + 2) + (ch - 1) / 2,
        customdata=k,
        text=list(titles),
        mode="markers",
        marker={"size": 22, "symbol": "square", "color": "rgba(0,0,0,0)"},
        hovertemplate="%{text}: click to focus<extra></extra>",
        showlegend=False,
        name="focus",
    )


def filter_grid_figure(
    filters: Sequence[np.ndarray | None],
    titles: Sequence[str],
    title: str = "Filters",
    focus: int | None = None,
    cols: int | None = None,
    clickable: bool = False,
) -> go.Figure:
    """One small heatmap per sub-problem: the grid of a multi-class run's filters.

    Each sub-problem's filters get their own symmetric colour scale (their shapes are
    compared, not their norms, which differ between sub-problems); several filters of a
    sub-problem (or colour channels) sit side by side in its cell, split by a blank column.

    Parameters
    ----------
    filters : sequence of ndarray or None
        One entry per sub-problem, ``(n_filters, p, q)`` or ``(n_filters, C, p, q)``;
        None draws an empty cell (a sub-problem not started yet).
    titles : sequence of str
        One caption per sub-problem ("3 vs 5 · 4/15").
    title : str
    focus : int, optional
        The sub-problem in focus: its caption is bold and marked.
    cols : int, optional
        Cells per row (default: up to 9, so that 45 one-vs-one filters make 5 rows).
    clickable : bool, default False
        Add an invisible marker on each cell whose ``customdata`` is the sub-problem's
        index, so that a click on a filter can select it (``st.plotly_chart``'s
        ``on_select``).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    m = len(filters)
    cols = cols or min(m, 9)
    rows = -(-m // cols)
    captions = [f"<b>▶ {t}</b>" if k == focus else str(t) for k, t in enumerate(titles)]
    cells = _grid_cells(filters)
    shape = next((z.shape for z in cells if z is not None), (5, 5))
    empty = np.full(shape, np.nan)
    raw = _tile([empty if z is None else z for z in cells], cols, shape, 2)
    # One trace for the whole grid: each cell is divided by its own largest |weight| so
    # that one colour scale shows every cell's shape; hover gives the raw weight.
    scaled = _tile(
        [empty if z is None else z / (float(np.nanmax(np.abs(z))) or 1.0) for z in cells],
        cols,
        shape,
        2,
    )
    fig = go.Figure(
        go.Heatmap(
            z=scaled,
            customdata=raw,
            text=_cell_text(titles, cols, shape),
            colorscale="RdBu_r",
            zmid=0,
            zmin=-1,
            zmax=1,
            showscale=False,
            hovertemplate="%{text}<br>weight %{customdata:.4f}<extra></extra>",
        )
    )
    if clickable:
        fig.add_trace(_click_markers(titles, cols, shape))
    _canvas_axes(fig)
    annotations = _tile_captions(captions, cols, shape, 2)
    for note in annotations:
        note["font"] = {"size": 11 if cols > 5 else 13}
    fig.update_layout(title=title, height=90 + 110 * rows, annotations=annotations, **_LAYOUT)
    if clickable:
        fig.update_layout(clickmode="event+select", dragmode=False)
    return fig


def per_class_accuracy_figure(
    accuracies: dict[str, Sequence[float]], class_names: Sequence[str], title: str
) -> go.Figure:
    """Test accuracy per class (recall), one group of bars per class, a bar per model.

    Parameters
    ----------
    accuracies : dict
        Model label -> accuracy of each class, in [0, 1].
    class_names : sequence of str
    title : str

    Returns
    -------
    plotly.graph_objects.Figure
    """
    names = [str(c) for c in class_names]
    fig = go.Figure(
        [
            go.Bar(
                name=label,
                x=names,
                y=[100 * a for a in values],
                hovertemplate=f"{label}<br>class %{{x}}: %{{y:.1f}} %<extra></extra>",
            )
            for label, values in accuracies.items()
        ]
    )
    fig.update_xaxes(type="category", title_text="class")
    fig.update_yaxes(title_text="test accuracy (%)", range=[0, 100])
    fig.update_layout(title=title, barmode="group", height=320, **_LAYOUT)
    return fig


def image_grid(images: np.ndarray, captions: Sequence[str], title: str, cols: int = 8) -> go.Figure:
    """A grid of grey images with captions (misclassified images, support vectors).

    Parameters
    ----------
    images : ndarray of shape (n, C, H, W)
        The first channel of each is drawn.
    captions : sequence of str
    title : str
    cols : int, default 8

    Returns
    -------
    plotly.graph_objects.Figure
    """
    images = np.asarray(images, dtype=float)
    n = len(images)
    if n == 0:
        fig = go.Figure()
        fig.update_layout(title=f"{title}: none", height=80, **_LAYOUT)
        return fig
    cols = min(cols, n)
    rows = int(np.ceil(n / cols))
    planes = images.reshape(n, -1, *images.shape[-2:])[:, 0]
    cell, gap = planes.shape[-2:], max(2, planes.shape[-1] // 6)
    fig = go.Figure(
        go.Heatmap(
            z=_tile(list(planes), cols, cell, gap),
            colorscale="gray",
            showscale=False,
            hoverinfo="skip",
        )
    )
    _canvas_axes(fig)
    fig.update_layout(
        title=title,
        height=140 * rows + 70,
        annotations=_tile_captions(captions, cols, cell, gap),
        **_layout(margin={"l": 10, "r": 10, "t": 80, "b": 10}),
    )
    return fig


def _category(value: Any) -> str:
    """A grid value as an axis label: 1000 rather than 1000.0, 0.03 rather than 0.03000…1."""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def sweep_heatmap(
    x_label: str,
    x_values: Sequence[Any],
    y_label: str,
    y_values: Sequence[Any],
    accuracy: np.ndarray,
) -> go.Figure:
    """Validation accuracy (%) over a two-setting grid; cells still running are blank."""
    z = 100 * np.asarray(accuracy, dtype=float)
    text = [["…" if np.isnan(v) else f"{v:.2f}" for v in row] for row in z]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[_category(v) for v in x_values],
            y=[_category(v) for v in y_values],
            text=text,
            texttemplate="%{text}",
            colorscale="Viridis",
            colorbar={"title": {"text": "val %"}},
            hovertemplate=f"{x_label} %{{x}}, {y_label} %{{y}}: %{{z:.2f}} %<extra></extra>",
        )
    )
    fig.update_xaxes(title_text=x_label, type="category")
    fig.update_yaxes(title_text=y_label, type="category")
    fig.update_layout(
        title="Validation accuracy over the grid",
        height=420,
        uirevision="keep",
        template="plotly_white",
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
    )
    return fig


# -- filter lab (csvm.analysis.lab) ----------------------------------------------------------------
# Kept in one block at the end of the module: the lab's figures, listed in __all__ here.
__all__ += ["gradient_figure", "landscape_1d_figure", "landscape_2d_figure"]


def gradient_figure(gradient: np.ndarray, title: str = "Where the filter wants to go") -> go.Figure:
    """The gradient dT/df of each filter as signed colours centred on zero.

    A gradient step moves each weight *against* its value here: the step's arrow is
    ``-eta * dT/df``, so orange cells (negative gradient) grow and purple ones shrink.

    Parameters
    ----------
    gradient : ndarray
        Shape ``(p, q)``, ``(n_filters, p, q)`` or ``(n_filters, C, p, q)``.
    title : str

    Returns
    -------
    plotly.graph_objects.Figure
    """
    g = np.asarray(gradient, dtype=float)
    g = g.reshape(-1, *g.shape[-2:])
    cols = len(g)
    fig = make_subplots(
        rows=1,
        cols=cols,
        subplot_titles=[f"dT/df, filter {i + 1}" for i in range(cols)],
        horizontal_spacing=0.05,
    )
    gmax = float(np.abs(g).max()) or 1.0
    for i, plane in enumerate(g):
        fig.add_trace(
            go.Heatmap(
                z=plane,
                colorscale="PuOr",
                zmid=0,
                zmin=-gmax,
                zmax=gmax,
                texttemplate="%{z:.2g}" if max(plane.shape) <= 7 and cols <= 3 else None,
                showscale=i == cols - 1,
                colorbar={"title": {"text": "dT/df"}, "exponentformat": "power"},
                hovertemplate="row %{y}, column %{x}: dT/df %{z:.4g}<extra></extra>",
            ),
            row=1,
            col=i + 1,
        )
    fig.update_xaxes(showticklabels=False, showgrid=False, zeroline=False)
    fig.update_yaxes(showticklabels=False, showgrid=False, zeroline=False, autorange="reversed")
    _square_pixels(fig)
    fig.update_layout(
        title=title, height=310, **_layout(margin={"l": 10, "r": 10, "t": 80, "b": 10})
    )
    return fig


def _log_scale(values: np.ndarray) -> bool:
    """A log axis when T is positive and spans more than two decades (one steep side)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return bool(len(v)) and v.min() > 0 and v.max() / v.min() > 100


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
    fig.update_yaxes(title_text="T", type="log" if _log_scale(v) else "linear")
    fig.update_layout(title=title, height=360, legend={"orientation": "h", "y": -0.3}, **_LAYOUT)
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
    log = _log_scale(z)
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
    fig.update_layout(title=title, height=460, **_LAYOUT)
    return fig
