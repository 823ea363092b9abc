"""A line chart with a left and an optional right axis as plain SVG markup.

The Train page's live charts (the objective and its terms, train accuracy and filter
norm) were Plotly figures: building one cost the server tens of milliseconds a tick
(``make_subplots`` and ``update_layout`` were most of a watching page's tick in py-spy),
and a shared link's fresh browser loaded and compiled Plotly's 4.6 MB script before it
drew them.  These charts are a few kilobytes of SVG built from numbers: every point
has its value on hover (an SVG ``<title>``), the text scales with the page (13 units in
a 400-unit-wide chart: about 13 px in a half-width column at 1280 px), and projector
mode draws them larger.

No Streamlit here: the page passes the markup to ``st.markdown(..., unsafe_allow_html=True)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from csvm.figures._markup import svg_text
from csvm.figures._style import finite_values
from csvm.figures.style import integer_step, nice_ticks
from csvm.figures.text import plain

__all__ = ["Axis", "Series", "line_chart_svg", "value_axis", "integer_ticks", "MAX_SCALE"]

#: The chart's coordinate width: one half of the page at 1280 px with the sidebar open is
#: about as wide, so its text is drawn at about its size there.
_WIDTH = 400
_HEIGHT = 300
# Projector mode: one chart per row, text half as large again.
_LARGE = {"width": 900, "height": 420, "font": 20}
_FONT = 13
_FLAG = "rise (flagged)"
# At most this much larger than its coordinates: a chart given the page's whole width
# (the CNN's loss) is not drawn with 26 px tick labels.
MAX_SCALE = 1.6


@dataclass(frozen=True)
class Series:
    """One line of a chart.

    ``y`` may hold None or NaN (the line breaks there); ``tips`` are the points' hover
    texts (default: the value); ``axis`` is "left" or "right".
    """

    name: str
    y: Sequence[float | None]
    colour: str
    axis: str = "left"
    width: float = 2.5
    dash: bool = False
    markers: bool = False
    tips: Sequence[str] | None = None


@dataclass(frozen=True)
class Axis:
    """A y axis: its title, tick values with their labels, and the range drawn."""

    title: str
    ticks: Sequence[float]
    labels: Sequence[str]
    low: float
    high: float


def value_axis(
    values: Sequence[float | None],
    title: str,
    fmt: Callable[[float], str] | None = None,
    floor: float | None = None,
    ceiling: float | None = None,
) -> Axis:
    """Round ticks (:func:`csvm.figures.style.nice_ticks`) over the finite ``values``,
    optionally held within ``[floor, ceiling]`` and written with ``fmt``.

    Examples
    --------
    >>> value_axis([0.2, 0.9], "accuracy").labels
    ['0.2', '0.4', '0.6', '0.8', '1.0']
    """
    v = finite_values(values)
    low, high = (float(v.min()), float(v.max())) if v.size else (0.0, 1.0)
    ticks, labels = nice_ticks(low, high)
    keep = [
        i
        for i, t in enumerate(ticks)
        if (floor is None or t >= floor - 1e-12) and (ceiling is None or t <= ceiling + 1e-12)
    ]
    ticks = [ticks[i] for i in keep] or [low, high]
    labels = [labels[i] for i in keep] if keep else [f"{low:g}", f"{high:g}"]
    if fmt is not None:
        labels = [fmt(t) for t in ticks]
    lo, hi = min(ticks[0], low), max(ticks[-1], high)
    pad = 0.03 * ((hi - lo) or 1.0)  # markers on the end ticks stay whole
    return Axis(title, ticks, labels, lo - pad, hi + pad)


def integer_ticks(last: float) -> list[int]:
    """Whole-number ticks from 0 to ``last`` (iterations), about ten at most.

    Examples
    --------
    >>> integer_ticks(23)
    [0, 5, 10, 15, 20]
    """
    return list(range(0, int(max(1.0, float(last))) + 1, integer_step(last)))


def line_chart_svg(
    x: Sequence[float],
    series: Sequence[Series],
    *,
    title: str,
    x_title: str,
    left: Axis,
    right: Axis | None = None,
    flags: Sequence[tuple[float, float, str]] = (),
    large: bool = False,
) -> str:
    """A titled line chart, the legend underneath.

    Parameters
    ----------
    x : sequence of float
        Shared by every series.
    series : sequence of Series
    title, x_title : str
    left, right : Axis
        The y axes (``right`` for series with ``axis="right"``).
    flags : sequence of (x, y, tip)
        Points marked with a red cross on the left axis (the objective's rises).
    large : bool, default False
        Projector mode: wider and with larger type.

    Returns
    -------
    str
        An ``<svg>`` element that fills its column's width (its height follows).

    Examples
    --------
    >>> svg = line_chart_svg([0, 1], [Series("loss", [2.0, 1.0], "#1f77b4")],
    ...                      title="Loss", x_title="step", left=value_axis([1, 2], "loss"))
    >>> svg.startswith("<svg") and 'data-points="2"' in svg
    True
    """
    font = _LARGE["font"] if large else _FONT
    width = _LARGE["width"] if large else _WIDTH
    height = _LARGE["height"] if large else _HEIGHT
    legend = _legend(series, flags, font, width)
    xs = np.asarray(x, dtype=float)
    first, last = (float(xs.min()), float(xs.max())) if xs.size else (0.0, 1.0)
    x_ticks = integer_ticks(last)
    box = _Box(
        left=_margin(left, font),
        right=width - (_margin(right, font) if right is not None else 14),
        top=2.4 * font,
        bottom=height - 2.8 * font,
        x_range=(min(0.0, first), max(last, x_ticks[-1], 1.0)),
    )
    parts = [svg_text(width / 2, 1.3 * font, title, font + 3, "middle", weight="600")]
    parts += _x_axis(box, x_ticks, x_title, font)
    parts += _y_axis(box, left, font, "left")
    if right is not None:
        parts += _y_axis(box, right, font, "right")
    for s in series:
        parts.append(_line(box, xs, s, right if s.axis == "right" else left))
    for fx, fy, tip in flags:
        parts.append(_cross(box.px(fx), box.py(fy, left), font * 0.45, tip))
    parts.append(legend.markup(height))
    total = height + legend.height
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="csvm-figure csvm-chart" role="img" '
        f'aria-label="{plain(title)}" data-title="{plain(title)}" '
        f'data-points="{len(xs)}" viewBox="0 0 {width} {total:.0f}" width="100%" '
        f'style="font-family:inherit;height:auto;max-width:{MAX_SCALE * width:.0f}px">'
        f"{''.join(parts)}</svg>"
    )


@dataclass
class _Box:
    left: float
    right: float
    top: float
    bottom: float
    x_range: tuple[float, float] = (0.0, 1.0)

    def px(self, x: float) -> float:
        lo, hi = self.x_range
        return self.left + (x - lo) / ((hi - lo) or 1.0) * (self.right - self.left)

    def py(self, y: float, axis: Axis) -> float:
        span = (axis.high - axis.low) or 1.0
        return self.bottom - (y - axis.low) / span * (self.bottom - self.top)


def _x_axis(box: _Box, ticks: Sequence[int], title: str, font: float) -> list[str]:
    out = [_line_markup(box.left, box.bottom, box.right, box.bottom, "currentColor", 1)]
    for t in ticks:
        x = box.px(t)
        out.append(_line_markup(x, box.bottom, x, box.bottom + 4, "currentColor", 1))
        out.append(svg_text(x, box.bottom + font + 4, f"{t:d}", font, "middle", kind="tick"))
    out.append(
        svg_text((box.left + box.right) / 2, box.bottom + 2.3 * font + 4, title, font, "middle")
    )
    return out


def _y_axis(box: _Box, axis: Axis, font: float, side: str) -> list[str]:
    out = []
    edge = box.left if side == "left" else box.right
    anchor, offset = ("end", -6) if side == "left" else ("start", 6)
    for value, label in zip(axis.ticks, axis.labels, strict=True):
        y = box.py(value, axis)
        if side == "left":  # one grid, the left axis's
            out.append(_line_markup(box.left, y, box.right, y, "#8888", 1))
        out.append(svg_text(edge + offset, y + font * 0.35, label, font, anchor, kind="tick"))
    middle = (box.top + box.bottom) / 2
    # Turned a quarter, a title's glyphs lie on the outer side of its baseline.
    away = _label_width(axis, font) + 10 + 0.2 * font
    x = edge - away if side == "left" else edge + away
    out.append(
        f'<text x="{x:.1f}" y="{middle:.1f}" font-size="{font}" fill="currentColor" '
        f'text-anchor="middle" transform="rotate({-90 if side == "left" else 90} '
        f'{x:.1f} {middle:.1f})">{plain(axis.title)}</text>'
    )
    return out


def _label_width(axis: Axis, font: float) -> float:
    """About how wide the axis's longest tick label is drawn (0.6 em a character)."""
    return 0.6 * font * max((len(label) for label in axis.labels), default=1)


def _margin(axis: Axis, font: float) -> float:
    """Room beside the plot for an axis's tick labels and its title."""
    return _label_width(axis, font) + 10 + 1.2 * font + 6


def _line(box: _Box, xs: np.ndarray, s: Series, axis: Axis) -> str:
    ys = np.asarray([np.nan if v is None else v for v in s.y], dtype=float)
    ok = np.isfinite(ys) & np.isfinite(xs)
    dash = ' stroke-dasharray="3 4"' if s.dash else ""
    out = [f'<g class="series" data-name="{plain(s.name)}">']
    # One polyline per unbroken run of finite values.
    runs = np.split(np.arange(len(ys)), np.flatnonzero(~ok))
    for run in runs:
        run = run[ok[run]]
        if len(run) > 1:
            points = " ".join(f"{box.px(xs[i]):.1f},{box.py(ys[i], axis):.1f}" for i in run)
            out.append(
                f'<polyline points="{points}" fill="none" stroke="{s.colour}" '
                f'stroke-width="{s.width}"{dash}/>'
            )
    if s.markers:
        for i in np.flatnonzero(ok):
            tip = s.tips[i] if s.tips is not None else f"{s.name} {ys[i]:.5g}"
            out.append(
                f'<circle class="point" cx="{box.px(xs[i]):.1f}" cy="{box.py(ys[i], axis):.1f}" '
                f'r="3.5" fill="{s.colour}"><title>{plain(tip)}</title></circle>'
            )
    out.append("</g>")
    return "".join(out)


def _cross(x: float, y: float, r: float, tip: str, kind: str = "flag") -> str:
    return (
        f'<g class="{kind}"><title>{plain(tip)}</title>'
        f'<path d="M{x - r:.1f},{y - r:.1f}L{x + r:.1f},{y + r:.1f}M{x - r:.1f},{y + r:.1f}'
        f'L{x + r:.1f},{y - r:.1f}" stroke="#d62728" stroke-width="3"/></g>'
    )


@dataclass
class _Legend:
    items: list[tuple[float, float, str]]  # x, row, markup
    height: float

    def markup(self, top: float) -> str:
        return "".join(
            f'<g class="legend" transform="translate({x:.1f} {top + y:.1f})">{m}</g>'
            for x, y, m in self.items
        )


def _legend(series: Sequence[Series], flags, font: float, width: float) -> _Legend:
    entries = [(s.name, s.colour, s.dash) for s in series]
    if flags:
        entries.append((_FLAG, "#d62728", False))
    items, x, row = [], 10.0, 1.1 * font  # the first row's baseline
    for name, colour, dash in entries:
        size = 34 + 0.55 * font * len(name) + 18  # swatch, text (about), space
        if x + size > width and x > 10:
            x, row = 10.0, row + 1.6 * font
        pattern = ' stroke-dasharray="3 4"' if dash else ""
        swatch = (
            _cross(13, -0.35 * font, 0.45 * font, name, "key")
            if name == _FLAG
            else f'<line x1="0" y1="{-0.35 * font:.1f}" x2="26" y2="{-0.35 * font:.1f}" '
            f'stroke="{colour}" stroke-width="3"{pattern}/>'
        )
        items.append((x, row, swatch + svg_text(32, 0, name, font, "start")))
        x += size
    return _Legend(items, row + 0.8 * font)


def _line_markup(x1, y1, x2, y2, colour: str, width: float) -> str:
    return (
        f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
        f'stroke="{colour}" stroke-width="{width}"/>'
    )
