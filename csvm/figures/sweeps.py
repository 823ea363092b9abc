"""Figures of sweeps: the validation-accuracy heatmap over two settings.

No Streamlit here: pages only draw what these return.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from csvm.figures._style import category
from csvm.figures.text import plain, plain_all, plain_in_template

__all__ = ["best_cell", "diverged_cells", "sweep_heatmap"]


#: The colour scale spans at least this many points: on 96-97.5 % it painted a two-image
#: difference as dark purple against bright yellow.
MIN_SPAN = 5.0


def _colour_range(z: np.ndarray) -> dict[str, float]:
    """``zmin``/``zmax`` spanning the cells, and at least :data:`MIN_SPAN` points below
    the best (never below 0)."""
    finite = z[np.isfinite(z)]
    if not finite.size:
        return {}
    high = float(finite.max())
    return {"zmin": max(0.0, min(float(finite.min()), high - MIN_SPAN)), "zmax": high}


def sweep_heatmap(
    x_label: str,
    x_values: Sequence[Any],
    y_label: str,
    y_values: Sequence[Any],
    accuracy: np.ndarray,
) -> go.Figure:
    """Validation accuracy (%) over a two-setting grid; cells still running are blank."""
    z = 100 * np.asarray(accuracy, dtype=float)
    text = [["…" if np.isnan(v) else f"{v:.2f}" for v in row] for row in z]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=plain_all(category(v) for v in x_values),
            y=plain_all(category(v) for v in y_values),
            text=text,
            texttemplate="%{text}",
            colorscale="Viridis",
            colorbar={"title": {"text": "val %"}},
            **_colour_range(z),
            hovertemplate=f"{plain_in_template(x_label)} %{{x}}, {plain_in_template(y_label)} "
            "%{y}: %{z:.2f} %<extra></extra>",
        )
    )
    fig.update_xaxes(title_text=plain(x_label), type="category")
    fig.update_yaxes(title_text=plain(y_label), type="category")
    fig.update_layout(
        title="Validation accuracy over the grid",
        height=420,
        uirevision="keep",
        template="plotly_white",
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
    )
    return fig


def best_cell(
    x_label: str,
    x_values: Sequence[Any],
    y_label: str,
    y_values: Sequence[Any],
    accuracy: np.ndarray,
    n_val: int | None = None,
) -> str | None:
    """The grid's best cell in words, its values written as the heatmap's axes write them
    ("γ = 1", not "γ = 1.0"); None while a cell is still unscored.

    With ``n_val``, the number of validation images each cell was scored on, the line
    also says how many images the best cell is ahead of the next best (a class reads
    97.50 against 96.50 % differently once it is two images of 200).

    Examples
    --------
    >>> best_cell("γ", [0.02, 1.0], "C", [10.0], np.array([[0.96, 0.975]]))
    'Best: γ = 1, C = 10: 97.50 % validation accuracy.'
    >>> line = best_cell("γ", [0.02, 1.0], "C", [10.0], np.array([[0.965, 0.975]]), 200)
    >>> line[line.index("("):]
    '(195 of 200 images; the next best cell, 96.50 %, is 2 images behind).'
    """
    acc = np.asarray(accuracy, dtype=float)
    if np.isnan(acc).any():
        return None
    i, j = np.unravel_index(np.argmax(acc), acc.shape)
    line = (
        f"Best: {x_label} = {category(x_values[j])}, {y_label} = {category(y_values[i])}: "
        f"{100 * acc[i, j]:.2f} % validation accuracy"
    )
    return _with_gap(line, acc, n_val) + _unmoved(x_label, y_label, acc)


def _with_gap(line: str, acc: np.ndarray, n_val: int | None) -> str:
    """The best cell's line, with its lead over the next best in images when known."""
    if not n_val or acc.size < 2:
        return line + "."
    right = np.rint(np.sort(acc.ravel())[::-1] * n_val).astype(int)
    gap = int(right[0] - right[1])
    if gap == 0:
        level = int(np.sum(right == right[0])) - 1
        return (
            f"{line} ({right[0]} of {n_val} images, level with {level} other "
            f"cell{'s' if level > 1 else ''})."
        )
    return (
        f"{line} ({right[0]} of {n_val} images; the next best cell, "
        f"{100 * right[1] / n_val:.2f} %, is {gap} image{'s' if gap > 1 else ''} behind)."
    )


def _unmoved(x_label: str, y_label: str, acc: np.ndarray) -> str:
    """A sentence when one axis changed no cell's score (λ under DFO while every filter's
    norm stays below 1): the best value on it is then a tie-break, not a finding.

    >>> _unmoved("γ", "λ", np.array([[0.9, 0.95], [0.9, 0.95]]))
    ' λ changed nothing here: every row has the same scores, so its best value is a tie.'
    """
    for label, axis, line in ((y_label, 0, "row"), (x_label, 1, "column")):
        first = acc[:1] if axis == 0 else acc[:, :1]
        if acc.shape[axis] > 1 and np.all(acc == first):
            return (
                f" {label} changed nothing here: every {line} has the same scores, so its "
                "best value is a tie."
            )
    return ""


def diverged_cells(n: int) -> str:
    """The line under a sweep's heatmap when ``n`` of its cells diverged.

    Examples
    --------
    >>> diverged_cells(1)
    '1 cell diverged; it is scored with its best filter.'
    >>> diverged_cells(3)
    '3 cells diverged; they are scored with their best filter.'
    """
    if n == 1:
        return "1 cell diverged; it is scored with its best filter."
    return f"{n} cells diverged; they are scored with their best filter."
