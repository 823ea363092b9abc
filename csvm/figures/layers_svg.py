"""A stack of layers on the Train page without Plotly: layer 2's (and later layers')
filters as SVG, and a pinned image's maps through every layer as small PNGs (the Plotly
versions in :mod:`csvm.figures.layers` stay for the filter lab).  See
:mod:`csvm.figures.chart_svg` for why the live panel draws no Plotly figure.

No Streamlit here.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from csvm.figures._markup import (
    SCALES,
    colour_bar,
    html_cell,
    html_heading,
    html_sizes,
    scale_colours,
    svg_text,
    to_levels,
    viridis,
)
from csvm.figures.chart_svg import MAX_SCALE
from csvm.figures.filter_svg import symmetric_limit
from csvm.figures.image_html import png_data_uri
from csvm.figures.text import plain

__all__ = ["layer_filters_svg", "layer_maps_html"]

_WIDTH = 880  # coordinate width of the filters' grid (a full-width figure at 1280 px)
_GAP = 24
_TITLE = 24
_BAR_ROOM = 100  # the bar, its numbers and its title


def layer_filters_svg(filters: np.ndarray, layer: int, large: bool = False) -> str:
    """Layer ``layer``'s filters: one block per filter, its planes (one per map of the
    layer below) side by side in it, all on one signed scale with a colour bar.

    Parameters
    ----------
    filters : ndarray (k, C, p, q)
        The layer's filters; C is the number of maps of layer ``layer - 1``.
    layer : int
        The layer's number (2 for the first layer above the image's).
    large : bool, default False
        Projector mode: larger type.

    Returns
    -------
    str
        An ``<svg>`` that fills its column's width (its height follows).

    Examples
    --------
    >>> svg = layer_filters_svg(np.ones((2, 3, 3, 3)), 2)
    >>> svg.count('class="plane"'), "Layer 2: 2 filters" in svg
    (6, True)
    """
    f = np.asarray(filters, dtype=float)
    k, c, p, q = f.shape
    cols = min(k, 4 if c < 4 else 2)  # many planes per filter: fewer, wider blocks
    rows = -(-k // cols)
    # On a projector the bar's numbers (13 units) are 18 px in the 820 px column at 1280.
    k_text = 1.6 if large else 1.0
    room = _BAR_ROOM * k_text
    inner = (_WIDTH - room - (cols - 1) * _GAP) / cols  # one filter's block
    unit = inner / (c * q + (c - 1) * 0.5)  # a cell; half a cell between planes
    head = 30 * k_text
    vmax = symmetric_limit(f)
    title = (
        f"Layer {layer}: {k} filter{'s' if k != 1 else ''}, each over layer {layer - 1}'s "
        f"{c} map{'s' if c != 1 else ''} (one plane per map, left to right)"
    )
    parts = [svg_text(4, 20 * k_text, title, 16 * k_text, "start")]
    block_h = _TITLE * k_text + p * unit
    for i in range(k):
        x0 = 4 + (i % cols) * (inner + _GAP)
        y0 = head + (i // cols) * (block_h + 12) + _TITLE * k_text
        parts.append(svg_text(x0 + inner / 2, y0 - 7, f"filter {i + 1}", 14 * k_text, "middle"))
        names = [f"layer {layer} filter {i + 1}, map {m + 1}" for m in range(c)]
        for m in range(c):
            x = x0 + m * (q + 0.5) * unit
            parts.append(_plane_image(f[i, m], x, y0, unit, vmax, names[m]))
    height = head + rows * (block_h + 12)
    bar_x = _WIDTH - room + 10
    parts.append(
        colour_bar(
            bar_x, head + _TITLE * k_text, min(160.0, height - head - 30), vmax, "weight", k_text
        )
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" class="csvm-figure csvm-layer" '
        f'aria-label="{plain(title)}" viewBox="0 0 {_WIDTH} {height:.0f}" width="100%" '
        f'style="font-family:inherit;height:auto;max-width:{MAX_SCALE * _WIDTH:.0f}px">'
        f"{''.join(parts)}</svg>"
    )


@functools.lru_cache(maxsize=4)
def _rgb_lut(scale: str) -> np.ndarray:
    """A colour scale's 257 levels (:func:`csvm.figures._markup.scale_colours`) as 8-bit RGB."""
    colours = scale_colours(SCALES[scale])
    return np.array(
        [[int(float(v)) for v in colour[4:-1].split(",")] for colour in colours], dtype=np.uint8
    )


def _plane_image(plane: np.ndarray, x: float, y: float, unit: float, vmax: float, name: str):
    """One plane as a pixelated PNG in the SVG, its values in the plane's tooltip.

    A later layer has hundreds of cells (8 filters over 8 maps of 3 × 3 is 576); one
    ``<rect>`` and ``<title>`` each made a 97 kB figure that a loaded browser re-parsed
    on every live tick, and that (bench_pause) is what made the stack's page fall behind
    its pace and miss Pause clicks.  An image per plane is about a sixth of that.
    """
    p, q = plane.shape
    finite = np.isfinite(plane)
    t = np.clip((np.where(finite, plane, 0.0) / vmax + 1) / 2, 0, 1)
    pixels = _rgb_lut("weight")[np.rint(t * 256).astype(int)]
    pixels[~finite] = 136  # #888: a diverged value has no colour on the scale
    rows = " / ".join(" ".join(f"{v:.4f}" for v in row) for row in plane)
    return (
        f'<g class="plane"><image x="{x:.1f}" y="{y:.1f}" width="{q * unit:.1f}" '
        f'height="{p * unit:.1f}" preserveAspectRatio="none" style="image-rendering:pixelated" '
        f'href="{png_data_uri(pixels)}"><title>{plain(name)} (rows top to bottom): '
        f"{rows}</title></image></g>"
    )


def layer_maps_html(
    image: np.ndarray, layer_maps: Sequence[np.ndarray], label: str, large: bool = False
) -> str:
    """One pinned image and its maps after every layer, a row per layer.

    Each layer's maps are scaled to their own largest absolute value (a layer's scale says
    nothing about the next one's), then all rows share Viridis over the range that leaves,
    as the Plotly figure did.

    Parameters
    ----------
    image : ndarray (C, H, W) or (H, W)
    layer_maps : sequence of ndarray (k_l, H_l, W_l)
        The pooled maps of every layer, first layer first.
    label : str
        The image's caption (its class).
    large : bool, default False
        A third larger (projector mode).

    Returns
    -------
    str

    Examples
    --------
    >>> markup = layer_maps_html(np.ones((4, 4)), [np.ones((2, 2, 2))], "3")
    >>> markup.count("<img")
    3
    """
    picture = np.asarray(image, dtype=float).reshape(-1, *np.shape(image)[-2:])[0]
    rows = [picture[None] / (float(np.abs(picture).max()) or 1.0)]
    rows += [np.asarray(m, dtype=float) / (float(np.abs(m).max()) or 1.0) for m in layer_maps]
    rows = [np.nan_to_num(r, nan=0.0, posinf=0.0, neginf=0.0) for r in rows]
    low = min(float(r.min()) for r in rows)
    high = max(float(r.max()) for r in rows)
    lut = viridis()
    text, row_px = html_sizes(large)
    row_px = round(0.7 * row_px)
    name = plain(str(label))
    notes = [f"image: {name}"] + [
        f"after layer {i + 1} ({len(m)} map{'s' if len(m) != 1 else ''})"
        for i, m in enumerate(layer_maps)
    ]
    blocks = []
    for note, row in zip(notes, rows, strict=True):
        cells = "".join(
            html_cell(
                png_data_uri(lut[to_levels(plane, low, high)]),
                f"{note}, {j + 1}",
                row_px,
                text,
                False,
            )
            for j, plane in enumerate(row)
        )
        blocks.append(
            f'<div style="font-size:{text}px;margin:0.5em 0 0.2em">{note}</div>'
            f'<div style="display:flex;flex-wrap:wrap;gap:6px">{cells}</div>'
        )
    heading = html_heading("A pinned image through every layer", text)
    return f'<div class="csvm-layer-maps">{heading}{"".join(blocks)}</div>'
