"""Shared style of the figures, public part: round and log axis ticks, the largest series
drawn (:data:`MAX_POINTS`) and the projector's larger type.  The layout helpers the figure
modules share among themselves are in the private :mod:`csvm.figures._style`.

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
    v = np.asarray([np.nan if x is None else x for x in values], dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if not len(v):
        return {}
    ticks = log_ticks(v.min(), v.max())
    if len(ticks) > max_ticks:  # only decades come this many (log_ticks)
        # Thinned from the top, so the largest decade, where the values start, keeps its tick.
        step = -(-len(ticks) // max_ticks)  # rounded up
        ticks = ticks[::-1][::step][::-1]
    return {"tickmode": "array", "tickvals": ticks, "ticktext": [log_label(t) for t in ticks]}


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
