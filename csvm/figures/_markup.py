"""The SVG and HTML pieces that the markup figures of :mod:`csvm.figures` share among
themselves (:mod:`~csvm.figures.filter_svg`, :mod:`~csvm.figures.image_html`,
:mod:`~csvm.figures.layers_svg`, :mod:`~csvm.figures.chart_svg`): text, colour scales and
their bars, image cells.  Private to the package; :func:`format_value` is public as
:func:`csvm.figures.filter_svg.format_value`.

No Streamlit here.
"""

from __future__ import annotations

import functools

import numpy as np
from plotly.colors import sample_colorscale

from csvm.figures._style import TEXT_PX
from csvm.figures.text import plain

__all__ = [
    "SCALES",
    "format_value",
    "scale_colours",
    "colour_bar",
    "svg_text",
    "viridis",
    "to_levels",
    "html_sizes",
    "html_heading",
    "html_cell",
]

#: The diverging scale of each kind of filter plane.
SCALES = {"weight": "RdBu_r", "change": "PuOr", "gradient": "RdBu_r"}
#: A colour bar's title, where it is not the scale's name (which also names its class and id).
_BAR_TITLES = {"gradient": "dT/df"}
_BAR = 16  # the colour bar's width

#: Height of one image on the page, in pixels (projector mode: a third more).
_ROW_PX = 112
_LARGE = 4 / 3


def format_value(value: float) -> str:
    """A weight or a change in a few characters: "0.25", "-3e-4", "0".

    Examples
    --------
    >>> format_value(0.25), format_value(-0.0003), format_value(0.0)
    ('0.25', '-3e-4', '0')
    """
    if value == 0 or not np.isfinite(value):
        return f"{value:g}"
    return f"{value:.2f}" if abs(value) >= 0.01 else f"{value:.0e}".replace("e-0", "e-")


@functools.lru_cache(maxsize=8)
def scale_colours(name: str) -> tuple[str, ...]:
    """A Plotly colour scale sampled at 257 levels, zero's white exactly in the middle
    (sampling it per cell was most of the time of a stack's 576-cell layer figure)."""
    return tuple(sample_colorscale(name, np.linspace(0, 1, 257).tolist()))


def colour_bar(x: float, y: float, height: float, vmax: float, scale: str, k: float) -> str:
    """A vertical colour bar of ``scale`` at (x, y), ``height`` tall, from ``vmax`` at the
    top to ``-vmax`` at the bottom, its numbers and its title at ``k`` times their size."""
    stops = sample_colorscale(SCALES[scale], np.linspace(1, 0, 11).tolist())
    gradient = f"csvm-bar-{scale}"
    out = [f'<defs><linearGradient id="{gradient}" x1="0" y1="0" x2="0" y2="1">']
    out += [f'<stop offset="{i / 10:.1f}" stop-color="{s}"/>' for i, s in enumerate(stops)]
    out.append("</linearGradient></defs>")
    out.append(
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{_BAR * k:.1f}" height="{height:.1f}" '
        f'fill="url(#{gradient})"/>'
    )
    right = x + _BAR * k
    for value, fraction in ((vmax, 0.0), (0.0, 0.5), (-vmax, 1.0)):
        out.append(
            svg_text(
                right + 5,
                y + fraction * height + 5 * k,
                format_value(value),
                13 * k,
                "start",
                kind="tick",
            )
        )
    # The title runs along the bar, right of the widest number ("-0.05", "-3e-4").
    title_x, middle = right + 54 * k, y + height / 2
    out.append(
        f'<text x="{title_x:.1f}" y="{middle:.1f}" font-size="{14 * k:.1f}" '
        f'fill="currentColor" text-anchor="middle" '
        f'transform="rotate(90 {title_x:.1f} {middle:.1f})">{_BAR_TITLES.get(scale, scale)}</text>'
    )
    return "".join(out)


def svg_text(x, y, text, size, anchor, ink="currentColor", kind="label", weight=None) -> str:
    """An SVG ``<text>`` of class ``kind`` at (x, y), escaped here."""
    bold = f' font-weight="{weight}"' if weight else ""
    return (
        f'<text class="{kind}" x="{x:.1f}" y="{y:.1f}" font-size="{size:.1f}" fill="{ink}" '
        f'text-anchor="{anchor}"{bold}>{plain(str(text))}</text>'
    )


@functools.lru_cache(maxsize=1)
def viridis() -> np.ndarray:
    """Viridis as a (256, 3) table of 8-bit colours (the Plotly maps' scale)."""
    stops = sample_colorscale("Viridis", np.linspace(0, 1, 256).tolist(), colortype="tuple")
    return np.rint(np.asarray(stops) * 255).astype(np.uint8)


def to_levels(values: np.ndarray, low: float | None = None, high: float | None = None):
    """Values as 0-255 levels from ``low`` to ``high`` (default: their own min and max);
    NaN and infinities count as 0."""
    v = np.nan_to_num(np.asarray(values, dtype=float), nan=0.0, posinf=0.0, neginf=0.0)
    low = float(v.min()) if low is None else low
    high = float(v.max()) if high is None else high
    scale = 255.0 / (high - low) if high > low else 0.0
    return np.rint((v - low) * scale).astype(np.uint8)


def html_sizes(large: bool) -> tuple[int, int]:
    """Caption type and image height in pixels (a third more in projector mode)."""
    k = _LARGE if large else 1
    return round(TEXT_PX * k), round(_ROW_PX * k)


def html_heading(title: str, text: int) -> str:
    """A figure's title (escaped here), a little larger than its captions."""
    return (
        f'<div style="font-size:{text + 4}px;font-weight:600;margin:0.4em 0">{plain(title)}</div>'
    )


def html_cell(
    uri: str, label: str, row_px: int, text: int, caption: bool, size: str | None = None
) -> str:
    """One image (a data URI) with its label as alt text and tooltip, and as a caption
    underneath when ``caption``, ``text`` px or the CSS font size ``size``."""
    words = (
        f'<figcaption style="font-size:{size or f"{text}px"};line-height:1.2;'
        f'overflow-wrap:anywhere">'
        f"{label}</figcaption>"
        if caption
        else ""
    )
    return (
        '<figure style="margin:0;text-align:center;min-width:0">'
        f'<img src="{uri}" alt="{label}" title="{label}" '
        f'style="height:{row_px}px;max-width:100%;object-fit:contain;'
        f'image-rendering:pixelated">{words}</figure>'
    )
