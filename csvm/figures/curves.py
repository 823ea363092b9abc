"""Figures of learning curves: test accuracy of each method against the training-set size.

No Streamlit here: pages only draw what these return.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from csvm.figures._style import layout
from csvm.figures.style import log_ticks
from csvm.figures.text import plain, plain_in_template, plain_lines

__all__ = ["curve_figure", "curve_subtitle", "curve_title"]

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

#: What each learned curve method is, in the few words a curve's title can hold: several
#: saved curves share a pair, and a class must tell their figures apart at a glance.
_LEARNED_IN_WORDS = {
    "kcsvm": "one layer",
    "layers": "two layers",
    "hoglearn": "a HOG-like stack",
    "hoglearn3": "a HOG-like stack",
    "hogcolour": "a HOG-like stack on colour",
    "hogprod": "a stack beside HOG",
    "hogprod3": "a stack beside HOG",
    "hogprodv": "a stack beside HOG",
    "hogprod3m": "a stack beside HOG",
}
#: Datasets' names as written in a title.
_DATASET_NAMES = {"mnist": "MNIST", "cifar10": "CIFAR-10", "fashion-mnist": "Fashion-MNIST"}

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


def curve_title(dataset: str, pair: Sequence[str]) -> str:
    """A saved curve's title: its dataset and pair.

    Examples
    --------
    >>> curve_title("cifar10", ("airplane", "automobile"))
    'CIFAR-10: airplane v automobile'
    """
    a, b = pair
    return f"{_DATASET_NAMES.get(dataset, dataset)}: {a} v {b}"


def curve_subtitle(methods: Sequence[str]) -> str:
    """What a curve learns, in a few words: several saved curves share a pair, and their
    figures must read apart.

    Parameters
    ----------
    methods : sequence of str
        The curve's methods (keys of :data:`csvm.analysis.curves.METHODS`).

    Returns
    -------
    str
        ``""`` when none of them learns.

    Examples
    --------
    >>> curve_subtitle(["svm", "hog", "hoglearn3", "hogprod3", "hogprod3m"])
    'learned: a HOG-like stack, a stack beside HOG'
    >>> curve_subtitle(["svm", "hog"])
    ''
    """
    learned = dict.fromkeys(_LEARNED_IN_WORDS[m] for m in methods if m in _LEARNED_IN_WORDS)
    return f"learned: {', '.join(learned)}" if learned else ""


def _title(title: str, subtitle: str) -> dict[str, Any]:
    """Plotly's title: with a subtitle, a second, smaller line, the top margin grown to
    hold it (automargin) and both lines over the plot, right of the y axis's title, which
    a short projector figure draws taller than its plot."""
    if not subtitle:
        return {"text": plain(title)}
    return {
        "text": f"{plain(title)}<br><sup>{plain(subtitle)}</sup>",
        "automargin": True,
        "yref": "paper",
        "xref": "paper",
        "x": 0,
        "xanchor": "left",
    }


def curve_figure(
    rows: Sequence[Mapping[str, Any]], title: str = "", subtitle: str = ""
) -> go.Figure:
    """Mean test accuracy (%) against training images (log axis), one line per method,
    with its 95 % interval as error bars.

    Parameters
    ----------
    rows : sequence of mapping
        :func:`csvm.analysis.curves.summarise_curve`'s rows (``method``, ``label``,
        ``n_train``, ``accuracy``, ``interval``).
    title : str, default=""
    subtitle : str, default=""
        A second, smaller line under the title.
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
                # Plotly does not wrap a legend entry: at a phone's 390 px one of 75
                # characters ran out of the figure; 60 fit.
                name=plain_lines(mine[0]["label"], 60, sep=" "),
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
        title=_title(title, subtitle),
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
