"""Figures of results: confusion matrices and per-class accuracy.

No Streamlit here: pages only draw what these return.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from csvm.figures._style import LAYOUT
from csvm.figures.text import plain, plain_all, plain_in_template

__all__ = ["confusion_figure", "per_class_accuracy_figure"]


def confusion_figure(matrix: np.ndarray, class_names: Sequence[str], title: str) -> go.Figure:
    """A confusion matrix (rows: true class, columns: predicted) with counts on the cells.

    Parameters
    ----------
    matrix : array-like of shape (2, 2)
    class_names : sequence of str
        Names of the -1 and +1 classes.
    title : str

    Returns
    -------
    plotly.graph_objects.Figure
    """
    m = np.asarray(matrix)
    names = plain_all(class_names)  # folder names of uploads: never markup
    fig = go.Figure(
        go.Heatmap(
            z=m,
            x=names,
            y=names,
            colorscale="Blues",
            showscale=False,
            texttemplate="%{z}",
            textfont={"size": 20},
            hovertemplate="true %{y}, predicted %{x}: %{z}<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed", title_text="true")
    # Two long names under two narrow columns ran into each other, rotated (the teaching
    # set's "horizontal (−1)"): each breaks before its sign and stays level.
    breaks = [n.replace(" (", "<br>(") for n in names]
    fig.update_xaxes(title_text="predicted", tickvals=names, ticktext=breaks, tickangle=0)
    k = len(names)
    if k > 2:  # many classes: smaller counts, a taller square, every class ticked
        fig.update_traces(textfont={"size": 16 if k <= 4 else 11})
        fig.update_xaxes(type="category")
        fig.update_yaxes(type="category")
    fig.update_layout(title=plain(title), height=300 if k <= 3 else 120 + 36 * k, **LAYOUT)
    return fig


def per_class_accuracy_figure(
    accuracies: dict[str, Sequence[float]], class_names: Sequence[str], title: str
) -> go.Figure:
    """Test accuracy per class (recall), one group of bars per class, a bar per model.

    Parameters
    ----------
    accuracies : dict
        Model label -> accuracy of each class, in [0, 1].
    class_names : sequence of str
    title : str

    Returns
    -------
    plotly.graph_objects.Figure
    """
    names = plain_all(class_names)
    fig = go.Figure(
        [
            go.Bar(
                name=plain(label),
                x=names,
                y=[100 * a for a in values],
                hovertemplate=plain_in_template(label)
                + "<br>class %{x}: %{y:.1f} %<extra></extra>",
            )
            for label, values in accuracies.items()
        ]
    )
    fig.update_xaxes(type="category", title_text="class")
    fig.update_yaxes(title_text="test accuracy (%)", range=[0, 100])
    fig.update_layout(title=plain(title), barmode="group", height=320, **LAYOUT)
    return fig
