"""Figures of learning curves: test accuracy of each method against the training-set size.

No Streamlit here: pages only draw what these return.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from csvm.figures._style import layout
from csvm.figures.style import log_ticks
from csvm.figures.text import plain, plain_in_template

__all__ = ["curve_figure"]

#: One colour per method, the same on every curve (the plain SVM, the reference, in grey).
_COLOURS = {
    "svm": "#6b6b6b",
    "kcsvm": "#1f77b4",
    "layers": "#d62728",
    "hog": "#2ca02c",
    "mkl": "#9467bd",
    "hoglearn": "#ff7f0e",
    "hoglearn3": "#8c564b",
    "hogcolour": "#e377c2",
    "recommended": "#17becf",
    "hogprod": "#bcbd22",
    "hogprod0": "#8c6d31",
    "hogprod3": "#393b79",
    "hogprodv": "#843c39",
    "hogprod3m": "#7b4173",
    "hogv": "#31a354",
    "hogm": "#31a354",
}
#: Dashed lines: the plain SVM (the reference, dotted), the stack beside HOG at its start
#: (not learned), the recommended model, which is HOG + RBF SVM at a fixed C up to 15,000
#: images and so often lies on HOG's line, and HOG with virtual support vectors (HOG's
#: green, long dashes).
_DASHES = {
    "svm": "dot",
    "recommended": "dash",
    "hogprod0": "dashdot",
    "hogv": "longdash",
    "hogm": "longdash",
}

#: At most this many measured sizes are labelled; more would run into each other.
_MAX_SIZE_TICKS = 8


def _size_ticks(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The x axis's ticks: the measured training-set sizes (round log ticks when there
    are many).  Plotly's own labelled its minor ticks "2, 5, 2, 5" at three quarters of
    the tick size: 9 px, unreadable on a projector."""
    sizes = sorted({int(r["n_train"]) for r in rows})
    if not sizes:
        return {}
    if len(sizes) > _MAX_SIZE_TICKS:
        sizes = log_ticks(sizes[0], sizes[-1])
    return {"tickvals": sizes, "ticktext": [f"{v:,.0f}" for v in sizes]}


def curve_figure(rows: Sequence[Mapping[str, Any]], title: str = "") -> go.Figure:
    """Mean test accuracy (%) against training images (log axis), one line per method,
    with its 95 % interval as error bars.

    Parameters
    ----------
    rows : sequence of mapping
        :func:`csvm.analysis.curves.summarise_curve`'s rows (``method``, ``label``,
        ``n_train``, ``accuracy``, ``interval``).
    title : str
    """
    fig = go.Figure()
    methods = list(dict.fromkeys(r["method"] for r in rows))
    for method in methods:
        mine = sorted((r for r in rows if r["method"] == method), key=lambda r: r["n_train"])
        y = [100 * r["accuracy"] for r in mine]
        fig.add_trace(
            go.Scatter(
                x=[r["n_train"] for r in mine],
                y=y,
                name=plain(mine[0]["label"]),
                mode="lines+markers",
                line={"color": _COLOURS.get(method), "dash": _DASHES.get(method)},
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": [100 * r["interval"][1] - v for r, v in zip(mine, y, strict=True)],
                    "arrayminus": [
                        v - 100 * r["interval"][0] for r, v in zip(mine, y, strict=True)
                    ],
                },
                hovertemplate="%{x} images: %{y:.2f} %<extra>"
                + plain_in_template(mine[0]["label"])
                + "</extra>",
            )
        )
    fig.update_layout(
        title=plain(title),
        xaxis={"title": "training images", "type": "log", **_size_ticks(rows)},
        yaxis={"title": "test accuracy (%)"},
        # At the figure's bottom edge, not a fraction of the plot's height below it: in a
        # shorter figure (a projector's, 440 px) that fraction put the legend on the
        # x axis's title.
        legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom"},
        height=460,
        **layout(),
    )
    return fig
