"""A grid of grey images with captions as plain HTML (example images, support vectors,
misclassified images).

The Train page's only Plotly figure before Start was its grid of example images, so a new
visitor's browser loaded and compiled Plotly's 4.6 MB script before the page was usable
(the same cost :mod:`csvm.figures.filter_svg` took off the filter).  Each image here is a
small PNG inside an ``<img>``, scaled up without smoothing so a 28×28 digit keeps its
pixels; the grid wraps to its column's width.

No Streamlit here: the page passes the markup to ``st.markdown(..., unsafe_allow_html=True)``.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

import numpy as np
from PIL import Image

from csvm.figures._markup import html_cell, html_heading, html_sizes, to_levels, viridis
from csvm.figures.text import plain

__all__ = ["image_grid_html", "feature_maps_html", "png_data_uri"]


def png_data_uri(plane: np.ndarray) -> str:
    """One 8-bit grey plane (H, W), or colour plane (H, W, 3), as a
    ``data:image/png;base64,...`` URI.

    Examples
    --------
    >>> png_data_uri(np.zeros((2, 2), dtype=np.uint8)).startswith("data:image/png;base64,")
    True
    """
    buffer = io.BytesIO()
    pixels = np.ascontiguousarray(plane, dtype=np.uint8)
    Image.fromarray(pixels, mode="RGB" if pixels.ndim == 3 else "L").save(buffer, "PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _grey(images: np.ndarray) -> np.ndarray:
    """The first channel of every image on one 0-255 scale (the grid's min to max, as the
    Plotly grid's grey colour scale spanned them)."""
    planes = np.asarray(images, dtype=float)
    return to_levels(planes.reshape(len(planes), -1, *planes.shape[-2:])[:, 0])


_GAP_PX = 6
# A caption's character is about 0.6 of its type size wide (Source Sans, the page's font).
_CHAR_EM = 0.6


def _grid(cells: Sequence[str], columns: int, min_px: int | None = None) -> str:
    """``columns`` equal columns; with ``min_px``, at most ``columns``, each at least
    ``min_px`` wide, so a narrow column (a phone) takes fewer a row."""
    tracks = f"repeat({columns},minmax(0,1fr))"
    if min_px is not None:
        share = f"calc((100% - {(columns - 1) * _GAP_PX}px) / {columns})"
        tracks = f"repeat(auto-fill,minmax(max({min_px}px,{share}),1fr))"
    return (
        f'<div style="display:grid;grid-template-columns:{tracks};'
        f'gap:8px {_GAP_PX}px;align-items:start">{"".join(cells)}</div>'
    )


def _longest_word(captions: Sequence[str]) -> int:
    """The number of characters of the longest word of any caption (1 at least)."""
    return max((len(w) for c in captions for w in str(c).split()), default=1)


def _caption_px(captions: Sequence[str], text: int, row_px: int) -> int:
    """The width that holds the captions' longest word at ``text`` px, at most an image's
    height: eight support vectors a row at 390 px broke "α=0.408" after "0.40", six
    example images "horizontal" after "horizont"."""
    return min(row_px, round(_longest_word(captions) * _CHAR_EM * text) + 2)


def _shrinking_type(captions: Sequence[str], columns: int, text: int) -> str:
    """A CSS font size, ``text`` px at most and 9 px at least, at which the captions'
    longest word fits one of ``columns`` columns of the enclosing container."""
    letters = columns * _longest_word(captions) * _CHAR_EM
    share = f"(100cqi - {(columns - 1) * _GAP_PX}px) / {letters:.2f}"
    return f"clamp(9px,calc({share}),{text}px)"


def image_grid_html(
    images: np.ndarray,
    captions: Sequence[str],
    title: str,
    cols: int = 8,
    large: bool = False,
) -> str:
    """A titled grid of grey images, each with its caption underneath.

    Parameters
    ----------
    images : ndarray of shape (n, C, H, W) or (n, H, W)
        The first channel of each is drawn, all on one grey scale.
    captions : sequence of str
        One per image (escaped here).
    title : str
    cols : int, default 8
        At most this many images a row; a column too narrow for the captions' longest
        word (a phone's) takes fewer.
    large : bool, default False
        Images and text a third larger (projector mode).

    Returns
    -------
    str
        One ``<div>`` of markup, no line breaks (Markdown would read indented lines as code).

    Examples
    --------
    >>> markup = image_grid_html(np.eye(4)[None], ["one"], "An image")
    >>> "An image" in markup and markup.count("<img") == 1
    True
    """
    n = len(images)
    text, row_px = html_sizes(large)
    heading = html_heading(f"{title}{': none' if n == 0 else ''}", text)
    if n == 0:
        return f"<div>{heading}</div>"
    cells = [
        html_cell(png_data_uri(plane), plain(str(caption)), row_px, text, True)
        for plane, caption in zip(_grey(images), captions, strict=True)
    ]
    grid = _grid(cells, min(int(cols), n), _caption_px(captions, text, row_px))
    return f"<div>{heading}{grid}</div>"


def feature_maps_html(
    images: np.ndarray, maps: np.ndarray, labels: Sequence[str], large: bool = False
) -> str:
    """Pinned images (top row, grey, captioned) and their feature maps after each filter
    (a row per filter, under its image; Viridis, one scale over all the maps).

    Parameters
    ----------
    images : ndarray of shape (n, C, H, W)
    maps : ndarray of shape (n, n_filters, H', W')
    labels : sequence of str
        One caption per image.
    large : bool, default False
        A third larger (projector mode).

    Returns
    -------
    str
        One ``<div>`` of markup.

    Examples
    --------
    >>> markup = feature_maps_html(np.zeros((2, 1, 4, 4)), np.ones((2, 1, 3, 3)), ["3", "5"])
    >>> markup.count("<img")
    4
    """
    n = len(images)
    m = np.asarray(maps, dtype=float).reshape(n, -1, *np.shape(maps)[-2:])
    colours = viridis()[to_levels(m)]  # (n, k, H', W', 3)
    text, row_px = html_sizes(large)
    # A stack's eight filters give eight rows of maps: smaller, or the page ran to 1,500 px.
    map_px = row_px if m.shape[1] <= 2 else round(0.6 * row_px)
    labels = [plain(str(label)) for label in labels]
    # The maps stand under their images, so the columns cannot wrap as image_grid_html's
    # do: in a narrow column (a phone's) the captions shrink to hold their longest word.
    size = _shrinking_type(labels, n, text)
    cells = [
        html_cell(png_data_uri(p), label, row_px, text, True, size)
        for p, label in zip(_grey(images), labels, strict=True)
    ]
    for k in range(m.shape[1]):
        cells += [
            html_cell(png_data_uri(colours[j, k]), f"{labels[j]}: map {k + 1}", map_px, text, False)
            for j in range(n)
        ]
    heading = html_heading("Pinned images before (top) and after the filter (feature maps)", text)
    return (
        f'<div class="csvm-maps" style="container-type:inline-size">{heading}'
        f"{_grid(cells, n)}</div>"
    )
