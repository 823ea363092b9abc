"""The figures' private layout helpers, shared by the modules of :mod:`csvm.figures` only
(the public ticks and projector type are in :mod:`csvm.figures.style`): the base layout,
tiles of images on one canvas, fixed margins, round and whole-number axes, downsampling,
and the rules for values written in heatmap cells.

No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from csvm.figures.style import MAX_POINTS, integer_step, nice_ticks

__all__ = [
    "TEXT_MAX_SIDE",
    "TEXT_MAX_FILTERS",
    "TEXT_PX",
    "WRAP",
    "WRAP_ROW",
    "TERM_LABELS",
    "LAYOUT",
    "square_pixels",
    "tile",
    "tile_captions",
    "canvas_axes",
    "BOTTOM_LEGEND",
    "fixed_margins",
    "layout",
    "finite_values",
    "round_axis",
    "integer_axis",
    "downsample",
    "category",
    "log_scale",
]

#: Cell values are written in the cells only up to this size (5×5) and this many filters:
#: on the Train page at 1280 px such a cell is about 40 px, enough for "-0.05" at 14 px.
#: The Plotly filter (:mod:`csvm.figures.filters`) and the SVG one follow the same rules.
TEXT_MAX_SIDE = 5
TEXT_MAX_FILTERS = 2
#: Type size of the values in the cells (never scaled down below what a class can read).
TEXT_PX = 14
#: More filters than this wrap into rows of this many, each row this many pixels tall.
WRAP = 4
WRAP_ROW = 150

#: The terms of each model's objective, as the Plotly and the SVG charts label them.
TERM_LABELS = {
    "kcsvm": [("sum_alpha", "Σα"), ("margin_term", "½ aᵀKa"), ("regulariser", "r(f)")],
    "lcsvm": [("data_term", "mean hinge"), ("w_term", "λ_w/2‖w‖²"), ("f_term", "λ_f/2‖f‖²")],
}


LAYOUT = {
    "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
    "uirevision": "keep",
    "font": {"size": 14},
}


def square_pixels(fig: go.Figure) -> None:
    """Give every subplot square pixels (each y axis anchored to its own x axis)."""
    for name in list(fig.layout):
        if name.startswith("yaxis"):
            fig.layout[name].scaleanchor = "x" + name[len("yaxis") :]
            fig.layout[name].constrain = "domain"
    for name in list(fig.layout):
        if name.startswith("xaxis"):
            fig.layout[name].constrain = "domain"


def tile(planes: np.ndarray, cols: int, cell: tuple[int, int], gap: int) -> np.ndarray:
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


def tile_captions(captions: Sequence[str], cols: int, cell: tuple[int, int], gap: int):
    """Caption annotations centred above each tile of :func:`tile`'s canvas."""
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


def canvas_axes(fig: go.Figure) -> None:
    """Bare axes with square pixels, the first row at the top."""
    bare = {"showticklabels": False, "ticks": "", "showgrid": False, "zeroline": False}
    fig.update_xaxes(constrain="domain", **bare)
    fig.update_yaxes(autorange="reversed", scaleanchor="x", constrain="domain", **bare)


#: A horizontal legend along the bottom edge of the figure, under the x axis's title.
BOTTOM_LEGEND = {"orientation": "h", "yref": "container", "y": 0.0, "yanchor": "bottom"}


def fixed_margins(
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


def layout(**overrides: Any) -> dict[str, Any]:
    """The shared layout, with room above the plot for a title over subplot titles."""
    return {**LAYOUT, **overrides}


def finite_values(values: Sequence[Any]) -> np.ndarray:
    v = np.asarray([np.nan if x is None else x for x in values], dtype=float)
    return v[np.isfinite(v)]


def round_axis(fig: go.Figure, values: Sequence[Any], **axis: Any) -> None:
    """Explicit round ticks (and the range they span) on a linear y axis: plotly's own
    choice, formatted, gave labels such as 0.063 on the secondary axes."""
    v = finite_values(values)
    if not len(v):
        fig.update_yaxes(**axis)
        return
    ticks, text = nice_ticks(v.min(), v.max())
    pad = 0.03 * (ticks[-1] - ticks[0])  # markers on the end ticks stay whole
    fig.update_yaxes(tickvals=ticks, ticktext=text, range=[ticks[0] - pad, ticks[-1] + pad], **axis)


def integer_axis(fig: go.Figure, last: float, **axis: Any) -> None:
    """Whole-number ticks (iterations, epochs) with about ten labels at most."""
    step = integer_step(last)
    # Never a tick at -1 when a single point is drawn.
    fig.update_xaxes(tick0=0, dtick=step, tickformat="d", rangemode="nonnegative", **axis)


def downsample(n: int) -> np.ndarray:
    if n <= MAX_POINTS:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, MAX_POINTS).astype(int))


def category(value: Any) -> str:
    """A grid value as an axis label: 1000 rather than 1000.0, 0.03 rather than 0.03000…1."""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def log_scale(values: np.ndarray) -> bool:
    """A log axis when T is positive and spans more than two decades (one steep side)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return bool(len(v)) and v.min() > 0 and v.max() / v.min() > 100
