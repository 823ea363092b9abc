"""The Train page's live charts as SVG: the objective with its terms, and train accuracy
with the filter norm (the Plotly versions in :mod:`csvm.figures.training` stay for the
pages that compare runs; see :mod:`csvm.figures.chart_svg` for why these are not Plotly).

No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from csvm.figures._style import TERM_LABELS, downsample
from csvm.figures.chart_svg import Series, line_chart_svg, value_axis

__all__ = ["objective_svg", "progress_svg", "loss_svg"]

# Plotly's first four colours, as the charts had before.
_BLUE, _ORANGE, _GREEN, _PURPLE = "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd"
_TERM_COLOURS = (_ORANGE, _GREEN, _PURPLE)


def _steps(events: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[float]]:
    """The events with an objective (at most ``MAX_POINTS``) and their x: L-CSVM filter
    half-steps sit at ``iteration + 0.5``."""
    events = [e for e in events if "objective" in e and e.get("step") != "batch"]
    events = [events[i] for i in downsample(len(events))]
    x = [e["iteration"] + (0.5 if e.get("step") == "filter" else 0.0) for e in events]
    return events, x


def objective_svg(
    events: Sequence[dict[str, Any]], title: str = "Objective", large: bool = False
) -> str:
    """The objective per recorded step (left axis) and its terms (dotted, right axis);
    rises are flagged with a red cross.

    Parameters
    ----------
    events : sequence of dict
        CSVM step events; those without ``"objective"`` are skipped.
    title : str, default "Objective"
    large : bool, default False
        Projector mode.

    Returns
    -------
    str
        An ``<svg>`` element (:func:`csvm.figures.chart_svg.line_chart_svg`).

    Examples
    --------
    >>> steps = [{"iteration": i, "objective": 3.0 - i} for i in range(3)]
    >>> 'data-points="3"' in objective_svg(steps)
    True
    """
    events, x = _steps(events)
    model = events[0].get("model", "kcsvm") if events else "kcsvm"
    linear = model == "lcsvm"
    y = np.array([e["objective"] for e in events], dtype=float)
    kinds = [
        {"svm": "SVM step", "filter": "filter step"}.get(e.get("step"), "iteration") for e in events
    ]
    tips = [f"{k} {xi:g}: objective {v:.5g}" for k, xi, v in zip(kinds, x, y, strict=True)]
    series = [Series("objective", y.tolist(), _BLUE, markers=True, tips=tips)]
    terms: list[float] = []
    labelled = [(k, lab) for k, lab in TERM_LABELS.get(model, []) if events and k in events[0]]
    for (key, label), colour in zip(labelled, _TERM_COLOURS, strict=False):
        values = [e[key] for e in events]
        terms += values
        series.append(Series(label, values, colour, axis="right", width=2.0, dash=True))
    rises = np.flatnonzero(np.diff(y) > 1e-9 * np.maximum(1.0, np.abs(y[:-1]))) + 1
    flags = [(x[i], float(y[i]), f"rose at {kinds[i]} {x[i]:g}: {y[i]:.5g}") for i in rises]
    return line_chart_svg(
        x,
        series,
        title=title,
        x_title="iteration (½ = filter step)" if linear else "iteration",
        left=value_axis(y.tolist(), "objective"),
        right=value_axis(terms, "terms") if terms else None,
        flags=flags,
        large=large,
    )


def progress_svg(
    events: Sequence[dict[str, Any]], title: str = "Progress", large: bool = False
) -> str:
    """Train accuracy (left axis, in per cent) and the filter norm (dotted, right axis)
    per recorded step.

    Parameters
    ----------
    events : sequence of dict
        CSVM step events with ``"train_accuracy"`` and ``"filter_norm"`` where recorded.
    title : str, default "Progress"
    large : bool, default False
        Projector mode.

    Returns
    -------
    str

    Examples
    --------
    >>> steps = [{"iteration": i, "objective": 1.0, "train_accuracy": 0.9,
    ...           "filter_norm": 1.0 + i} for i in range(2)]
    >>> "train accuracy" in progress_svg(steps)
    True
    """
    events, x = _steps(events)
    accuracy = [e.get("train_accuracy") for e in events]
    norms = [e.get("filter_norm") for e in events]
    tips = [
        f"iteration {xi:g}: {100 * a:.1f} % of the training images right" if a is not None else ""
        for xi, a in zip(x, accuracy, strict=True)
    ]
    known = [a for a in accuracy if a is not None]
    low = min(known, default=0.0)
    # Accuracy from a little below its lowest to 100 %, as the Plotly chart had it.
    floor = max(0.0, low - max(0.01, 0.1 * (1 - low)))
    left = value_axis([floor, 1.0], "train accuracy", fmt=_percent, floor=0.0, ceiling=1.0)
    return line_chart_svg(
        x,
        [
            Series("train accuracy", accuracy, _BLUE, markers=True, tips=tips),
            Series("filter norm", norms, _ORANGE, axis="right", width=2.0, dash=True),
        ],
        title=title,
        x_title="iteration",
        left=left,
        right=value_axis(norms, "filter norm"),
        large=large,
    )


def loss_svg(
    events: Sequence[dict[str, Any]], title: str = "Small CNN", large: bool = False
) -> str:
    """The CNN's log loss per epoch (left axis) and its train accuracy (dotted, right axis).

    Parameters
    ----------
    events : sequence of dict
        SmallCNN events; the ``"epoch"`` ones are drawn.
    title : str, default "Small CNN"
    large : bool, default False
        Projector mode.

    Returns
    -------
    str

    Examples
    --------
    >>> epochs = [{"kind": "epoch", "epoch": i, "loss": 1 / (i + 1), "train_accuracy": 0.9}
    ...           for i in range(3)]
    >>> 'data-points="3"' in loss_svg(epochs)
    True
    """
    epochs = [e for e in events if e.get("kind") == "epoch"]
    x = [e["epoch"] + 1 for e in epochs]
    loss = [e["loss"] for e in epochs]
    accuracy = [e.get("train_accuracy") for e in epochs]
    tips = [f"epoch {xi}: log loss {v:.4g}" for xi, v in zip(x, loss, strict=True)]
    return line_chart_svg(
        x,
        [
            Series("epoch loss", loss, _BLUE, markers=True, tips=tips),
            Series("train accuracy", accuracy, _ORANGE, axis="right", width=2.0, dash=True),
        ],
        title=title,
        x_title="epoch",
        left=value_axis(loss, "log loss"),
        right=value_axis([0.0, 1.0], "train accuracy", fmt=_percent, floor=0.0, ceiling=1.0),
        large=large,
    )


def _percent(value: float) -> str:
    return f"{100 * value:.4g} %"
