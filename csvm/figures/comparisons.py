"""Figures of the comparison models trained beside a run: the filter bank's MKL weights over
the filters' thumbnails, a test image's HOG cells, the two-layer SVM's hidden outputs.

No Streamlit here: pages only draw what these return.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from csvm.figures._style import canvas_axes, layout, tile
from csvm.figures.text import plain, plain_all

__all__ = ["hidden_outputs_figure", "hog_figure", "mkl_weights_figure"]

_GAP = 1


def mkl_weights_figure(
    names: Sequence[str], bank: Sequence[np.ndarray], weights: Sequence[float]
) -> go.Figure:
    """The MKL weight d_k of every filter of the bank as bars, each over its filter.

    Parameters
    ----------
    names : sequence of str
        The bank's filter names.
    bank : sequence of arrays (p, q)
        The filters, in the order of ``names``.
    weights : sequence of float
        d_k >= 0 (averaged over the sub-problems of a multi-class run).
    """
    names = plain_all(names)
    planes = [np.asarray(f, dtype=float).reshape(np.shape(f)[-2:]) for f in bank]
    side = max(max(p.shape) for p in planes)
    scaled = [p / (float(np.abs(p).max()) or 1.0) for p in planes]
    canvas = tile(scaled, len(planes), (side, side), _GAP)
    fig = make_subplots(rows=2, cols=1, row_heights=[0.7, 0.3], vertical_spacing=0.08)
    fig.add_trace(
        go.Bar(
            x=list(range(len(names))),
            y=[float(w) for w in weights],
            marker_color="#9467bd",
            hovertemplate="%{customdata}: d = %{y:.3f}<extra></extra>",
            customdata=list(names),
        ),
        row=1,
        col=1,
    )
    dx = 1.0 / (side + _GAP)  # one thumbnail per unit of the bars' axis
    fig.add_trace(
        go.Heatmap(
            z=canvas,
            x0=-0.5 + dx / 2,
            dx=dx,
            colorscale="RdBu_r",
            zmid=0,
            showscale=False,
            hoverinfo="skip",
        ),
        row=2,
        col=1,
    )
    ticks = {"tickmode": "array", "tickvals": list(range(len(names))), "ticktext": list(names)}
    fig.update_xaxes(range=[-0.5, len(names) - 0.5], **ticks, row=1, col=1)
    fig.update_xaxes(range=[-0.5, len(names) - 0.5], visible=False, row=2, col=1)
    fig.update_yaxes(title_text="weight d", row=1, col=1)
    fig.update_yaxes(visible=False, autorange="reversed", row=2, col=1)
    n_used = int(np.sum(np.asarray(weights) > 1e-6))
    fig.update_layout(
        title=f"MKL over a filter bank: the weight of each fixed filter ({n_used} of "
        f"{len(names)} used)",
        height=420,
        showlegend=False,
        **layout(),
    )
    return fig


def hog_figure(image: np.ndarray, hog_image: np.ndarray) -> go.Figure:
    """A test image beside its HOG cells (the gradient orientations the SVM sees)."""
    image = np.asarray(image, dtype=float)
    cells = np.asarray(hog_image, dtype=float)
    h, w = image.shape
    canvas = np.full((h, 2 * w + 3), np.nan)
    canvas[:, :w] = image / (float(np.abs(image).max()) or 1.0)
    canvas[:, w + 3 :] = cells / (float(cells.max()) or 1.0)
    fig = go.Figure(go.Heatmap(z=canvas, colorscale="gray", showscale=False, hoverinfo="skip"))
    canvas_axes(fig)
    fig.update_layout(
        title="HOG + SVM: a test image and its histogram-of-gradients cells",
        height=320,
        **layout(),
    )
    return fig


def hidden_outputs_figure(hidden: np.ndarray, labels: Sequence[str]) -> go.Figure:
    """The two-layer SVM's hidden SVM outputs (columns) for the pinned images (rows)."""
    z = np.asarray(hidden, dtype=float)
    vmax = float(np.abs(z).max()) or 1.0
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[f"hidden {k + 1}" for k in range(z.shape[1])],
            y=[f"{i + 1}: {plain(label)}" for i, label in enumerate(labels)],
            colorscale="RdBu_r",
            zmin=-vmax,
            zmax=vmax,
            text=np.round(z, 2),
            texttemplate="%{text}",
            colorbar={"title": {"text": "output"}},
            hovertemplate="%{y}, %{x}: %{z:.3f}<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(
        title="Two-layer SVM: each hidden SVM's output for the pinned images",
        height=120 + 34 * len(labels),
        **layout(),
    )
    return fig
