"""Figures of filters and images: a filter (with its last change), feature maps, the gradient
dT/df, the multi-class filter grid, image grids.

No Streamlit here: pages only draw what these return.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from csvm.figures._markup import SCALES
from csvm.figures._style import (
    LAYOUT,
    TEXT_MAX_FILTERS,
    TEXT_MAX_SIDE,
    TEXT_PX,
    WRAP,
    WRAP_ROW,
    canvas_axes,
    fixed_margins,
    layout,
    square_pixels,
    tile,
    tile_captions,
)
from csvm.figures.text import plain, plain_all, plain_lines

__all__ = [
    "cell_numbers",
    "filter_figure",
    "feature_maps_figure",
    "gradient_figure",
    "filter_grid_figure",
    "power_words",
]


def _readable_values(plane: np.ndarray, cols: int, fmt: str, text=None) -> dict:
    if max(plane.shape) <= TEXT_MAX_SIDE and cols <= TEXT_MAX_FILTERS:
        written = {"texttemplate": fmt, "textfont": {"size": TEXT_PX}}
        return written if text is None else written | {"text": text}
    return {}  # too small to read: the values are on hover


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def cell_numbers(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Numbers short enough for a heatmap cell, and the power of ten they are written in.

    Two significant digits of the largest value, at most five characters ("-0.35",
    "-1.1", "-110"): values from 0.1 to 999 are written as they are (power 0), others
    as multiples of one power of ten shared by every cell, which the figure names once
    ("× 10⁻³"), instead of "-1.1e+02" overflowing a cell.

    >>> cell_numbers(np.array([-110.0, 3.0]))[0].tolist()
    ['-110', '3']
    >>> text, power = cell_numbers(np.array([2e-4, -1e-5]))
    >>> text.tolist(), power
    (['2.0', '-0.1'], -4)
    """
    v = np.asarray(values, dtype=float)
    finite = np.abs(v[np.isfinite(v)])
    top = float(finite.max()) if finite.size else 0.0
    if top == 0.0:
        return np.where(np.isfinite(v), "0", "").astype(object), 0
    e = int(np.floor(np.log10(top)))
    power = 0 if -1 <= e <= 2 else e
    decimals = max(0, 1 - (e - power))
    scaled = v / 10.0**power
    # round(…) + 0.0 turns a rounded -0.0 into 0.0: no "-0.0" in a cell.
    out = [
        f"{round(x, decimals) + 0.0:.{decimals}f}" if np.isfinite(x) else "" for x in scaled.ravel()
    ]
    return np.array(out, dtype=object).reshape(v.shape), power


def power_words(power: int) -> str:
    """How a figure names the power of :func:`cell_numbers`: " (× 10⁻³)", or "" for 0."""
    return f" (× 10{str(power).translate(_SUPERSCRIPT)})" if power else ""


def _unbroken(words: str) -> str:
    """ " (× 10⁻³)" kept on one line when a title is broken at its spaces."""
    return words[:1] + words[1:].replace(" ", "\u00a0")


def filter_figure(
    filters: np.ndarray,
    previous: np.ndarray | None = None,
    title: str | None = "Filter",
    value_label: str = "weight",
    values: bool = True,
) -> go.Figure:
    """Heatmap(s) of the filter(s) on a diverging scale centred on zero, values on hover
    (and in the cells where they can be read); with ``previous``, a second row shows the
    change since the previous iteration.  (The Train page draws its filter and the change
    beside it as SVG: :mod:`csvm.figures.filter_svg`.)

    Parameters
    ----------
    filters : ndarray
        Shape ``(n_filters, p, q)`` or ``(n_filters, C, p, q)``; every plane is drawn.
    previous : ndarray, optional
        The filters of an earlier step, same shape.
    title : str, default "Filter"
        None or "" for none (the subplot titles "filter k" remain).
    value_label : str, default "weight"
        The colour bar's title (a gradient is drawn with this figure too).
    values : bool, default True
        Write each weight in its cell where it can be read (up to two 5×5 filters, at
        14 px, in cells of about 40 px or more); False for a figure in a narrow column.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    f = np.asarray(filters, dtype=float)
    f = f.reshape(-1, *f.shape[-2:])  # every (filter, channel) plane
    # More than four planes wrap into rows of four: eight in one row were 38 px each on a
    # 1280 px projector (a stack's eight first-layer filters).
    wrap = previous is None and len(f) > WRAP
    rows = -(-len(f) // WRAP) if wrap else (2 if previous is not None else 1)
    cols = WRAP if wrap else len(f)
    titles = [f"filter {i + 1}" for i in range(len(f))]
    if previous is not None:
        titles += [f"change {i + 1}" for i in range(cols)]
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=titles,
        horizontal_spacing=0.05,
        vertical_spacing=0.16 if wrap else 0.12,
    )
    vmax = float(np.abs(f).max()) or 1.0
    # Values written in the cells make a colour bar redundant: its room goes to the cells
    # (two 5×5 filters keep 200 px cells on a 1280 px projector with the sidebar open).
    text = _readable_values(f[0], cols, "%{z:.2f}") if values and rows == 1 else {}
    for i, plane in enumerate(f):
        fig.add_trace(
            go.Heatmap(
                z=plane,
                colorscale="RdBu_r",
                zmid=0,
                zmin=-vmax,
                zmax=vmax,
                showscale=i == cols - 1 and not text,
                colorbar=_colour_bar(value_label) | ({"len": 0.45, "y": 0.78} if rows == 2 else {}),
                hovertemplate="row %{y}, column %{x}: %{z:.4f}<extra></extra>",
                **text,
            ),
            row=i // cols + 1,
            col=i % cols + 1,
        )
    if previous is not None:
        d = f - np.asarray(previous, dtype=float).reshape(f.shape)
        for i, trace in enumerate(_change_traces(d)):
            trace.update(colorbar={"len": 0.45, "y": 0.22})
            fig.add_trace(trace, row=2, col=i + 1)
    _heatmap_axes(fig)
    # Without a title the subplot titles need 45 px above the cells, with one 80; a row of
    # cells gets 210 px (the Train page's filter, whose title is its column's).
    top = 80 if title else 45
    height = WRAP_ROW * rows if wrap else (220 if rows == 1 else 500)
    fig.update_layout(title=plain(title) if title else title, height=top + height, **LAYOUT)
    right = 10 if text else 90  # room for the colour bars, if any
    return fixed_margins(fig, left=10, right=right, top=top, bottom=10)


def _colour_bar(title: str) -> dict:
    # The title runs along the bar: above it, it met the top tick's label whenever the
    # largest value was a round number (the change of a step that changed nothing: "1").
    return {"title": {"text": plain(title), "side": "right"}, "thickness": 14}


def _change_traces(d: np.ndarray) -> list[go.Heatmap]:
    dmax = float(np.abs(d).max()) or 1.0
    return [
        go.Heatmap(
            z=plane,
            colorscale="PuOr",
            zmid=0,
            zmin=-dmax,
            zmax=dmax,
            showscale=i == len(d) - 1,
            # No bar title: the figure's says "change", and one beside "−4×10⁻⁴" was cut.
            colorbar={"thickness": 14, "exponentformat": "power"},
            hovertemplate=f"filter {i + 1}, " + "row %{y}, column %{x}: change %{z:.4f}"
            "<extra></extra>",
        )
        for i, plane in enumerate(d)
    ]


def _heatmap_axes(fig: go.Figure) -> None:
    bare = {"showticklabels": False, "ticks": "", "showgrid": False, "zeroline": False}
    fig.update_xaxes(**bare)
    fig.update_yaxes(**bare, autorange="reversed")
    square_pixels(fig)


def feature_maps_figure(
    images: np.ndarray,
    maps: np.ndarray,
    labels: Sequence[str],
    title: str = "Pinned images before (top) and after the filter (feature maps)",
) -> go.Figure:
    """Pinned example images (top row) and their feature maps after the filter (below).

    Parameters
    ----------
    images : ndarray of shape (n, C, H, W)
    maps : ndarray of shape (n, n_filters, H', W')
    labels : sequence of str
        One caption per image.
    title : str, default="Pinned images before (top) and after the filter (feature maps)"
        The figure's title (the pinned training images are the default; the Filter lab's
        own digit names itself).

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
    # float32: these values are drawn, not computed on, and the figure is the live page's
    # largest message (a shared link's first page waited for 400 kB of it).
    canvas = tile(pictures, n, cell, gap).astype(np.float32)
    below = cell[0] + gap  # where the maps' rows start
    fig = go.Figure(
        [  # two traces, two colour scales, each only over its own rows
            go.Heatmap(
                z=canvas[: cell[0]],
                colorscale="gray",
                showscale=False,
                hovertemplate="pixel %{z:.2f}<extra></extra>",
            ),
            go.Heatmap(
                z=canvas[below:],
                y0=below,
                colorscale="Viridis",
                showscale=False,
                hovertemplate="map %{z:.3f}<extra></extra>",
            ),
        ]
    )
    canvas_axes(fig)
    rows = 1 + n_maps
    fig.update_layout(
        # Plotly does not wrap a title: at a phone's 390 px the 63 characters ran out of
        # the figure. Lines of 40 fit there (and the lab's narrower column).
        title=plain_lines(title, 40, sep=" "),
        height=180 * rows + 60,
        annotations=tile_captions(plain_all(labels), n, cell, gap),
        **layout(margin={"l": 10, "r": 10, "t": 90, "b": 10}),
    )
    return fig


def gradient_figure(gradient: np.ndarray, title: str = "Where the filter wants to go") -> go.Figure:
    """The gradient dT/df of each filter as signed colours centred on zero.

    A gradient step moves each weight *against* its value here: the step's arrow is
    ``-eta * dT/df``, so blue cells (negative gradient) grow and red ones shrink: the
    colours of the Train page's gradient (:func:`csvm.figures.filter_svg.gradient_svg`).

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
    # Short numbers, one power of ten for every cell: "-1.1e+02" overflowed a cell.
    texts, power = cell_numbers(g)
    # What is drawn and its power once, in the title: four "dT/df, filter 1 (× 10⁻³)"
    # over four narrow plots ran into each other on a phone.
    fig = make_subplots(
        rows=1,
        cols=cols,
        subplot_titles=[f"filter {i + 1}" for i in range(cols)],
        horizontal_spacing=0.05,
    )
    gmax = float(np.abs(g).max()) or 1.0
    for i, plane in enumerate(g):
        fig.add_trace(
            go.Heatmap(
                z=plane,
                colorscale=SCALES["gradient"],
                zmid=0,
                zmin=-gmax,
                zmax=gmax,
                showscale=i == cols - 1,
                colorbar=_colour_bar("dT/df") | {"exponentformat": "power"},
                hovertemplate="row %{y}, column %{x}: dT/df %{z:.4g}<extra></extra>",
                **_readable_values(plane, cols, "%{text}", texts[i]),
            ),
            row=1,
            col=i + 1,
        )
    _heatmap_axes(fig)
    fig.update_layout(
        title=plain_lines(f"{title}: dT/df{_unbroken(power_words(power))}", 40, sep=" "),
        height=310,
        **layout(margin={"l": 10, "r": 10, "t": 80, "b": 10}),
    )
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
    """Each pixel of :func:`tile`'s canvas labelled with its cell's title ("" between)."""
    m = len(titles)
    owner = tile([np.full(shape, k, dtype=float) for k in range(m)], cols, shape, 2)
    labels = np.asarray([*titles, ""], dtype=object)
    return np.where(np.isnan(owner), "", labels[np.nan_to_num(owner, nan=m).astype(int)])


def _click_markers(titles: Sequence[str], cols: int, shape: tuple[int, int]) -> go.Scatter:
    """An invisible marker on each cell's centre of :func:`tile`'s canvas: Plotly reports
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


#: The plot width (px) the grid is laid out for (the Train page at 1280 px with the
#: sidebar open) and the most height it may take.
_GRID_WIDTH, _GRID_HEIGHT = 800, 480


def _grid_pixel(m: int, shape: tuple[int, int], cols: int, width: float = _GRID_WIDTH) -> float:
    """Screen pixels per filter pixel for ``m`` cells of ``shape`` (+ a 2-pixel gap) in
    ``cols`` columns of a ``width`` × ``_GRID_HEIGHT`` plot."""
    rows = -(-m // cols)
    return min(width / (cols * (shape[1] + 2)), _GRID_HEIGHT / (rows * (shape[0] + 2)))


def _grid_columns(m: int, shape: tuple[int, int]) -> int:
    """The number of columns that gives the largest cells (the fewest among equals)."""
    return max(range(1, m + 1), key=lambda c: (_grid_pixel(m, shape, c), -c))


def _raw_and_scaled(cells, cols: int, shape) -> tuple[np.ndarray, np.ndarray]:
    """The grid's cells tiled as they are, and each divided by its own largest |weight|
    (one trace for the whole grid: one colour scale shows every cell's shape; hover gives
    the raw weight)."""
    empty = np.full(shape, np.nan)
    raw = tile([empty if z is None else z for z in cells], cols, shape, 2)
    scaled = [empty if z is None else z / (float(np.nanmax(np.abs(z))) or 1.0) for z in cells]
    return raw, tile(scaled, cols, shape, 2)


def filter_grid_figure(
    filters: Sequence[np.ndarray | None],
    titles: Sequence[str],
    title: str = "Filters",
    focus: int | None = None,
    cols: int | None = None,
    clickable: bool = False,
    width: float = _GRID_WIDTH,
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
        Cells per row (default: the number that gives the largest cells in an 800 × 480
        px plot, e.g. 7 × 7 for 45 one-vs-one sub-problems with two 5×5 filters each).
    clickable : bool, default False
        Add an invisible marker on each cell whose ``customdata`` is the sub-problem's
        index, so that a click on a filter can select it (``st.plotly_chart``'s
        ``on_select``).
    width : float, default 800
        The width in pixels the plot is drawn at: its height is the grid's at that width,
        so a grid in a narrow column gets no band of empty space above and below it.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    m = len(filters)
    titles = plain_all(titles)  # class names: shown as text in captions and hover
    captions = [f"<b>▶ {t}</b>" if k == focus else t for k, t in enumerate(titles)]
    cells = _grid_cells(filters)
    shape = next((z.shape for z in cells if z is not None), (5, 5))
    cols = cols or _grid_columns(m, shape)
    rows = -(-m // cols)
    raw, scaled = _raw_and_scaled(cells, cols, shape)
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
    canvas_axes(fig)
    annotations = tile_captions(captions, cols, shape, 2)
    for note in annotations:
        note["font"] = {"size": 11 if cols > 5 else 13}
    # As tall as the grid is when laid out at ``width`` (the Train page's 800 px), so that
    # it fills the width with no band of empty space above and below (45 filters in 9
    # columns used the middle third of a 640 px chart).  No title: room for the captions.
    margin = {**LAYOUT["margin"], "t": LAYOUT["margin"]["t"] if title else 16}
    unit = _grid_pixel(m, shape, cols, width)
    height = int(rows * (shape[0] + 2) * unit) + margin["t"] + 20
    fig.update_layout(
        title=plain(title), height=height, annotations=annotations, **{**LAYOUT, "margin": margin}
    )
    if clickable:
        fig.update_layout(clickmode="event+select", dragmode=False)
    return fig
