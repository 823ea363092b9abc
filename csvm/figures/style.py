"""Shared style of the figures: layout, axis ticks, tiles of images, downsampling and the
projector's larger type.

No Streamlit here: pages only draw what these return.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

__all__ = [
    "MAX_POINTS",
    "nice_ticks",
    "log_ticks",
    "log_axis",
    "log_label",
    "integer_step",
    "for_projector",
]


MAX_POINTS = 1000


_LAYOUT = {
    "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
    "uirevision": "keep",
    "font": {"size": 14},
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


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def log_label(value: float) -> str:
    """A log axis's tick written in full, never as Plotly's bare mantissa ("2", "5").

    From 0.001 to below 100,000 the number itself; beyond, a power of ten.

    >>> [log_label(v) for v in (0.001, 0.05, 1, 20, 2000, 5e-6, 1e-16, 2e6)]
    ['0.001', '0.05', '1', '20', '2,000', '5×10⁻⁶', '10⁻¹⁶', '2×10⁶']
    """
    exponent = int(np.floor(np.log10(value) + 1e-9))
    if -3 <= exponent < 5:
        return f"{value:,.{max(0, -exponent)}f}"
    mantissa = f"{value / 10.0**exponent:.2g}"
    power = "10" + str(exponent).translate(_SUPERSCRIPT)
    return power if mantissa == "1" else f"{mantissa}×{power}"


def log_axis(values: Sequence[Any], max_ticks: int = 8) -> dict[str, Any]:
    """``tickvals`` and ``ticktext`` for a log axis over the positive values given: the
    decades or 1-2-5 values of :func:`log_ticks` (every second or third decade when
    there are more than ``max_ticks``), each labelled by :func:`log_label`.  Empty when no
    value is positive (Plotly's own ticks then)."""
    v = _finite(values)
    v = v[v > 0]
    if not len(v):
        return {}
    ticks = log_ticks(v.min(), v.max())
    if len(ticks) > max_ticks:  # only decades come this many (log_ticks)
        # Thinned from the top, so the largest decade, where the values start, keeps its tick.
        step = -(-len(ticks) // max_ticks)  # rounded up
        ticks = ticks[::-1][::step][::-1]
    return {"tickmode": "array", "tickvals": ticks, "ticktext": [log_label(t) for t in ticks]}


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


def integer_step(last: float) -> int:
    """The step of whole-number ticks from 0 to ``last`` (iterations, epochs): about ten
    labels at most.

    Examples
    --------
    >>> integer_step(8), integer_step(23), integer_step(400)
    (1, 5, 50)
    """
    span = max(1.0, float(last))
    return next(s for s in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 10**9) if span / s <= 10)


def _integer_axis(fig: go.Figure, last: float, **axis: Any) -> None:
    """Whole-number ticks (iterations, epochs) with about ten labels at most."""
    step = integer_step(last)
    # Never a tick at -1 when a single point is drawn.
    fig.update_xaxes(tick0=0, dtick=step, tickformat="d", rangemode="nonnegative", **axis)


def _downsample(n: int) -> np.ndarray:
    if n <= MAX_POINTS:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, MAX_POINTS).astype(int))


#: The smallest type on a projector (issue 33: 14 px could not be read from the back).
PROJECTOR_MIN_PX = 18


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
    # Numbers in heatmap cells grow; where a figure sized its cells for its type (the
    # filters) by a fifth at most: 1.5× ran them into each other ("0.0203.04") at 1280 px.
    # Never below what a class reads on a projector, though.
    for trace in fig.data:
        if trace.type == "heatmap":
            size = trace.textfont.size
            size = base * 0.8 if size is None else size * min(scale, 1.2)
            trace.textfont.size = max(size, PROJECTOR_MIN_PX)
    return fig


def _category(value: Any) -> str:
    """A grid value as an axis label: 1000 rather than 1000.0, 0.03 rather than 0.03000…1."""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _log_scale(values: np.ndarray) -> bool:
    """A log axis when T is positive and spans more than two decades (one steep side)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return bool(len(v)) and v.min() > 0 and v.max() / v.min() > 100
