"""Figures of a stack of layers: the filters of layer 2 and beyond, and the maps of a pinned
image through every layer (layer 1's filters are the Train page's big filter figure).

No Streamlit here: pages only draw what these return.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from csvm.figures._style import canvas_axes, layout
from csvm.figures.filters import filter_grid_figure
from csvm.figures.text import plain

__all__ = ["layer_filters_figure", "layer_maps_figure"]

_GAP = 2


def layer_filters_figure(filters: np.ndarray, layer: int) -> go.Figure:
    """Layer ``layer``'s filters as a grid: one cell per filter, its planes (one per map of
    the layer below) side by side in the cell.

    Parameters
    ----------
    filters : ndarray (k, C, p, q)
        The layer's filters; C is the number of maps of layer ``layer - 1``.
    layer : int
        The layer's number (2 for the first layer above the image's).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    f = np.asarray(filters, dtype=float)
    k, c = f.shape[:2]
    return filter_grid_figure(
        [f[i] for i in range(k)],
        [f"filter {i + 1}" for i in range(k)],
        f"Layer {layer}: {k} filter{'s' if k != 1 else ''}, each over layer {layer - 1}'s "
        f"{c} map{'s' if c != 1 else ''} (one plane per map, left to right)",
        cols=min(k, 4 if c < 4 else 2),  # many planes per cell: fewer, wider cells
    )


def _row(planes: Sequence[np.ndarray], width: int) -> np.ndarray:
    """Planes of one size side by side, NaN between them, padded with NaN to ``width``."""
    h = max(p.shape[0] for p in planes)
    row = np.full((h, width), np.nan)
    left = 0
    for plane in planes:
        ph, pw = plane.shape
        row[(h - ph) // 2 : (h - ph) // 2 + ph, left : left + pw] = plane
        left += pw + _GAP
    return row


def layer_maps_figure(image: np.ndarray, layer_maps: Sequence[np.ndarray], label: str) -> go.Figure:
    """One pinned image (top) and its maps after every layer (one row per layer).

    Each layer's maps are scaled to their own largest value (a layer's scale says nothing
    about the next layer's), so the picture shows where each layer responds.

    Parameters
    ----------
    image : ndarray (C, H, W) or (H, W)
    layer_maps : sequence of ndarray (k_l, H_l, W_l)
        The pooled maps of every layer, first layer first.
    label : str
        The image's caption (its class).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    picture = np.asarray(image, dtype=float).reshape(-1, *np.shape(image)[-2:])[0]
    rows = [[picture / (float(np.abs(picture).max()) or 1.0)]]
    for maps in layer_maps:
        m = np.asarray(maps, dtype=float)
        rows.append(list(m / (float(np.abs(m).max()) or 1.0)))
    width = max(sum(p.shape[1] + _GAP for p in row) - _GAP for row in rows)
    blocks = [_row(row, width) for row in rows]
    canvas = np.vstack(
        [np.vstack([b, np.full((3 * _GAP, width), np.nan)]) for b in blocks[:-1]] + blocks[-1:]
    )
    fig = go.Figure(
        go.Heatmap(
            z=canvas.astype(np.float32),  # drawn, not computed on: half the message
            colorscale="Viridis",
            showscale=False,
            hovertemplate="value %{z:.3f} (of the row's largest)<extra></extra>",
        )
    )
    canvas_axes(fig)
    tops = np.cumsum([0] + [b.shape[0] + 3 * _GAP for b in blocks[:-1]])
    notes = ["image: " + plain(label)] + [
        f"after layer {i + 1} ({len(m)} map{'s' if len(m) != 1 else ''})"
        for i, m in enumerate(layer_maps)
    ]
    fig.update_layout(
        title="A pinned image through every layer",
        # About 800 px wide on the Train page: as tall as the canvas is at that width.
        height=int(80 + canvas.shape[0] * min(12.0, 800 / canvas.shape[1])),
        annotations=[
            {
                "text": text,
                "x": -0.5,
                "y": top - 0.5,
                "xref": "x",
                "yref": "y",
                "xanchor": "left",
                "yanchor": "bottom",
                "showarrow": False,
                "font": {"size": 13},
            }
            for text, top in zip(notes, tops, strict=True)
        ],
        **layout(margin={"l": 10, "r": 10, "t": 70, "b": 10}),
    )
    return fig
