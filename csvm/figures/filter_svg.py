"""The Train page's filter and its last change as plain SVG markup.

A shared link opened in a fresh browser drew its Plotly figures 4-7 s after the click:
the browser first loads and compiles Plotly's 4.6 MB script, which competes with every
other page on a busy classroom server.  The filter is what a class watches, so it is
drawn as a few kilobytes of SVG that the page shows with its first elements, and that
costs the server no Plotly figure per tick.  Values are written in the cells where they
can be read and are on hover (an SVG ``<title>``) everywhere.

No Streamlit here: the page passes the markup to ``st.html``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from csvm.figures._markup import SCALES, colour_bar, format_value, scale_colours, svg_text
from csvm.figures._style import TEXT_MAX_FILTERS, TEXT_MAX_SIDE, TEXT_PX, WRAP, WRAP_ROW
from csvm.figures.style import log_label

__all__ = [
    "filter_svg",
    "change_svg",
    "gradient_svg",
    "largest_change",
    "change_scale",
    "format_value",
    "symmetric_limit",
]

#: One plane (a filter, or one colour channel of it) is this many units square.
_PLANE = 200
_TITLE = 26  # the band above a plane for "filter k"
_GAP = 24  # between planes in a row
_ROW_GAP = 16
_BAR_ROOM = 84  # bar, its tick labels and its title
# Values are written in the cells, and planes wrap, by the Plotly filter's rules (in a
# cell of 40 units or more: at the page's scale of 1.1 or more, 15 px or larger).
#: Height on the page in pixels: one row (per row when they wrap: the Plotly filter's).
_ONE_ROW_PX = 250
#: Projector mode: the narrowest column a filter is drawn in (the Train page's, beside its
#: last change, at 1280×720) and the smallest type a class reads on the screen.
_LARGE_COLUMN_PX = 540
_LARGE_MIN_PX = 18


def filter_svg(filters: np.ndarray, values: bool = True, large: bool = False) -> str:
    """The filter(s) as SVG: one heatmap per plane on a diverging scale centred on zero.

    Parameters
    ----------
    filters : ndarray
        Shape ``(n_filters, p, q)`` or ``(n_filters, C, p, q)``; every plane is drawn,
        more than four in rows of four.
    values : bool, default True
        Write each weight in its cell where it can be read (up to two planes of 5×5 or
        less); otherwise a colour bar titled "weight" is drawn.
    large : bool, default False
        A quarter taller (projector mode).

    Returns
    -------
    str
        An ``<svg>`` element that fills its column's width, at most a fixed height tall.

    Examples
    --------
    >>> svg = filter_svg(np.eye(3)[None])
    >>> svg.startswith("<svg") and "filter 1" in svg
    True
    """
    planes = _planes(filters)
    titles = _plane_titles(filters)
    return _heatmaps(planes, titles, "weight", values, large, "Filter", bar=True)


def change_svg(filters: np.ndarray, previous: np.ndarray | None, large: bool = False) -> str:
    """The change of each plane since ``previous`` (zero when there is none yet) on its
    own signed scale (purple up, orange down), drawn beside :func:`filter_svg` in the same
    order, without titles or colour bar: in the page's narrow column a bar's numbers were
    6 px; the page writes the scale, :func:`largest_change`, in the heading instead.

    Parameters
    ----------
    filters, previous : ndarray
        Shape ``(n_filters, p, q)`` or ``(n_filters, C, p, q)``.
    large : bool, default False
        A quarter taller (projector mode).

    Returns
    -------
    str

    Examples
    --------
    >>> "change" in change_svg(np.ones((1, 3, 3)), np.zeros((1, 3, 3)))
    True
    """
    return _heatmaps(
        _change(filters, previous), None, "change", False, large, "Last change", bar=False
    )


def gradient_svg(gradient: np.ndarray, large: bool = False) -> str:
    """The gradient dT/df of each filter plane, on a signed scale with a colour bar titled
    "dT/df" (values on hover; not written in the cells, where a gradient's small numbers
    would read as 0.00).

    Parameters
    ----------
    gradient : ndarray
        Shape ``(n_filters, p, q)`` or ``(n_filters, C, p, q)``.
    large : bool, default False
        A quarter taller (projector mode).

    Returns
    -------
    str

    Examples
    --------
    >>> "dT/df" in gradient_svg(np.ones((1, 3, 3)))
    True
    """
    return _heatmaps(
        _planes(gradient), _plane_titles(gradient), "gradient", False, large, "Gradient", bar=True
    )


def symmetric_limit(values: np.ndarray) -> float:
    """The largest absolute finite value (1 when there is none, or it is 0): a diverging
    scale's ends, ±limit, with zero in the middle.

    Examples
    --------
    >>> symmetric_limit(np.array([-3.0, 2.0, np.nan])), symmetric_limit(np.zeros(2))
    (3.0, 1.0)
    """
    finite = values[np.isfinite(values)]
    return (float(np.abs(finite).max()) if finite.size else 0.0) or 1.0


def largest_change(filters: np.ndarray, previous: np.ndarray | None) -> float:
    """The largest absolute change of a weight: full colour in :func:`change_svg`.

    Examples
    --------
    >>> largest_change(np.ones((1, 2, 2)), np.zeros((1, 2, 2)))
    1.0
    """
    change = _change(filters, previous)
    finite = change[np.isfinite(change)]
    return float(np.abs(finite).max()) if finite.size else 0.0


def change_scale(value: float) -> str:
    """:func:`largest_change` as the page's heading writes it: "0.25", "0.008", "4×10⁻⁵".

    Not :func:`format_value`'s "8e-3": in a narrow column the heading wrapped at its
    hyphen ("±8e-" above "3"), and a class reads 0.008 more easily.

    Examples
    --------
    >>> change_scale(0.25), change_scale(0.0083), change_scale(4.2e-5), change_scale(0.0)
    ('0.25', '0.008', '4×10⁻⁵', '0')
    """
    if value >= 0.01 or value <= 0 or not np.isfinite(value):
        return format_value(value)
    return log_label(float(f"{value:.1g}"))


def _change(filters: np.ndarray, previous: np.ndarray | None) -> np.ndarray:
    planes = _planes(filters)
    return planes - _planes(previous) if previous is not None else 0 * planes


def _planes(filters: np.ndarray) -> np.ndarray:
    f = np.asarray(filters, dtype=float)
    return f.reshape(-1, *f.shape[-2:])


def _plane_titles(filters: np.ndarray) -> list[str]:
    shape = np.shape(filters)
    if len(shape) == 4 and shape[1] > 1:  # colour filters: one plane per channel
        return [
            f"filter {k + 1}, channel {c + 1}" for k in range(shape[0]) for c in range(shape[1])
        ]
    return [f"filter {k + 1}" for k in range(int(np.prod(shape[:-2])))]


def _heatmaps(
    planes: np.ndarray,
    titles: Sequence[str] | None,
    scale: str,
    values: bool,
    large: bool,
    label: str,
    bar: bool,
) -> str:
    n, p, q = planes.shape
    cols = min(n, WRAP)
    rows = -(-n // cols)
    cell = _PLANE / max(p, q)
    written = values and max(p, q) <= TEXT_MAX_SIDE and n <= TEXT_MAX_FILTERS
    bar = bar and not written  # values written in the cells make a colour bar redundant
    px = (WRAP_ROW * rows if rows > 1 else _ONE_ROW_PX) * (1.25 if large else 1.0)

    def extent(k: float) -> tuple[float, float]:
        top = _TITLE * k if titles else 4
        # The bar starts 14 units right of the planes; its room ends past its title.
        room = _BAR_ROOM * k + 14 if bar else 0
        width = cols * q * cell + (cols - 1) * _GAP + room + 8
        height = rows * (top + p * cell) + (rows - 1) * _ROW_GAP + 4
        if bar:  # the bar's lowest number sits 5 units (times k) below its end: "-0.2" cut
            height = max(height, top + min(p * cell, _PLANE) + 9 * k)
        return width, height

    # Wrapped rows are drawn smaller: their titles and the bar's numbers grow by as much,
    # so they stay about 13 px on the page (8 px before, for a stack's eight filters).
    k = max(1.0, (rows * (_TITLE + p * cell) + (rows - 1) * _ROW_GAP) / px)
    smallest = 13 if bar else 15  # the bar's numbers, or the planes' titles
    if large and (bar or titles):
        # On a projector, grown until the smallest of them is 18 px on the page in the
        # narrowest column it is drawn in (it scales to that width or to its height).
        for _ in range(6):  # a fixed point: k grows the bar's room, which shrinks it
            width, height = extent(k)
            k = max(k, _LARGE_MIN_PX / (smallest * min(_LARGE_COLUMN_PX / width, px / height)))
    top = _TITLE * k if titles else 4
    width, height = extent(k)
    vmax = symmetric_limit(planes)
    parts = []
    for i, plane in enumerate(planes):
        x0 = 4 + (i % cols) * (q * cell + _GAP)
        y0 = (i // cols) * (top + p * cell + _ROW_GAP) + top
        if titles:
            parts.append(svg_text(x0 + q * cell / 2, y0 - 8 * k, titles[i], 15 * k, "middle"))
        parts.append(_plane(plane, x0, y0, cell, vmax, scale, written, titles, i))
    if bar:
        bar_x = 4 + cols * q * cell + (cols - 1) * _GAP + 14
        parts.append(colour_bar(bar_x, top, min(p * cell, _PLANE), vmax, scale, k))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" '
        f'class="csvm-figure csvm-{scale}" '
        f'aria-label="{label}: {n} plane{"s" if n != 1 else ""} of {p} × {q}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" width="100%" '
        # At most px tall (then top-centred in a wide column), no taller than the picture
        # in a narrow one: a fixed height left 150 px blank under the change in a phone's
        # column, where the planes are as wide as the screen allows.
        f'preserveAspectRatio="xMidYMin meet" '
        f'style="font-family:inherit;height:auto;max-height:{px:.0f}px">{"".join(parts)}</svg>'
    )


def _plane(plane, x0, y0, cell, vmax, scale, written, titles, k) -> str:
    fills = _colours(plane, vmax, scale)
    name = titles[k] if titles else f"filter {k + 1}"
    word = "change " if scale == "change" else ""
    out = ['<g class="plane">']
    for (r, c), value in np.ndenumerate(plane):
        x, y = x0 + c * cell, y0 + r * cell
        out.append(
            f'<rect class="cell" x="{x:.1f}" y="{y:.1f}" width="{cell:.1f}" height="{cell:.1f}" '
            f'fill="{fills[r][c]}"><title>{name}, row {r}, column {c}: {word}{value:.4f}'
            "</title></rect>"
        )
        if written:
            ink = "#fff" if np.isfinite(value) and abs(value) > 0.55 * vmax else "#222"
            out.append(
                svg_text(
                    x + cell / 2,
                    y + cell / 2 + 5,
                    f"{value:.2f}".replace("-0.00", "0.00"),  # no "−0" for -0.001
                    TEXT_PX,
                    "middle",
                    ink,
                    "value",
                )
            )
    out.append("</g>")
    return "".join(out)


def _colours(plane: np.ndarray, vmax: float, scale: str) -> list[list[str]]:
    t = np.clip((np.nan_to_num(plane, nan=0.0) / vmax + 1) / 2, 0, 1)
    lut = scale_colours(SCALES[scale])
    levels = np.rint(t * 256).astype(int)
    grid = [[lut[i] for i in row] for row in levels.tolist()]
    for r, c in zip(*np.nonzero(~np.isfinite(plane)), strict=True):
        grid[r][c] = "#888"  # a diverged value has no colour on the scale
    return grid
