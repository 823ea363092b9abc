"""``--plot DIR``: the pictures of a command's run, from :mod:`csvm.figures`, as files.

``train`` writes the learned filters (``filters.svg``), the objective and its terms
(``objective.svg``), train accuracy with the filter norm (``progress.svg``) and, for
several classes, every sub-problem's objective (``objectives.html``).  ``sweep`` writes
its validation-accuracy heatmap (``sweep.html``), ``curve`` its learning curves
(``curve.html``).  SVG opens in any browser; the HTML files are Plotly figures that load
``plotly.min.js`` from the same folder (written beside them), so they work offline.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["require_figures", "write_curve", "write_sweep", "write_training"]

#: The pictures need Plotly (its colour scales and figures), an extra of the library.
_MISSING = (
    "--plot needs Plotly, which is not installed: pip install 'csvm-explorer[app]' "
    "(or pip install plotly), or leave --plot out"
)


def require_figures() -> None:
    """Import the figure modules now, so that a missing Plotly is said before any work.

    Raises
    ------
    ValueError
        Naming what to install.
    """
    try:
        import csvm.figures  # noqa: F401
    except ImportError:
        raise ValueError(_MISSING) from None


def _write_text(folder: str, name: str, text: str) -> str:
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def _write_figure(folder: str, name: str, fig) -> str:
    path = os.path.join(folder, name)
    # "directory": the page loads plotly.min.js from its own folder (offline, written once).
    fig.write_html(path, include_plotlyjs="directory", full_html=True)
    return path


def write_training(
    folder: str, filters: np.ndarray, events: Sequence[Mapping[str, Any]], title: str = ""
) -> list[str]:
    """The filters and the objective of one ``train`` run; the paths written.

    Parameters
    ----------
    folder : str
        An existing folder.
    filters : ndarray
        The estimator's ``filters_``, (n_classifiers, n_filters, p, q) or with a colour
        axis; every sub-problem's filters are drawn, in order.
    events : sequence of dict
        The run's step events (``callback``'s), every sub-problem's.
    title : str
        Prefix of the charts' titles (e.g. the dataset and classes).
    """
    from csvm.figures import filter_svg, objective_svg, objectives_overlay, progress_svg

    filters = np.asarray(filters, dtype=float)
    planes = filters.reshape(-1, *filters.shape[2:])
    written = [_write_text(folder, "filters.svg", filter_svg(planes, values=len(planes) <= 2))]
    steps = [dict(e) for e in events if "objective" in e]
    by_problem: dict[int, list[dict[str, Any]]] = {}
    for e in steps:
        by_problem.setdefault(int(e.get("classifier", 0)), []).append(e)
    if not by_problem:
        return written
    first = by_problem[min(by_problem)]
    name = _pair_name(first[0], len(by_problem))
    written.append(
        _write_text(folder, "objective.svg", objective_svg(first, title=f"{title}Objective{name}"))
    )
    written.append(
        _write_text(folder, "progress.svg", progress_svg(first, title=f"{title}Progress{name}"))
    )
    if len(by_problem) > 1:
        curves = [(_pair_name(ev[0], 2).strip(" ()"), ev) for _, ev in sorted(by_problem.items())]
        fig = objectives_overlay(curves, title=f"{title}Objective of every sub-problem")
        written.append(_write_figure(folder, "objectives.html", fig))
    return written


def _pair_name(event: Mapping[str, Any], n_problems: int) -> str:
    """`` (3 vs 5)`` for a multi-class run's sub-problem, else nothing."""
    pair = event.get("pair")
    if n_problems < 2 or pair is None:
        return ""
    return f" ({pair[0]} vs {pair[1]})"


def write_sweep(
    folder: str,
    x: tuple[str, Sequence[Any]],
    y: tuple[str, Sequence[Any]],
    results: Sequence[Mapping[str, Any] | None],
) -> list[str]:
    """The sweep's validation-accuracy heatmap (rows ``y``, columns ``x``)."""
    from csvm.figures import sweep_heatmap

    (x_name, xs), (y_name, ys) = x, y
    flat = [np.nan if r is None else r["val_accuracy"] for r in results]
    accuracy = np.array(flat, dtype=float).reshape(len(ys), len(xs))
    fig = sweep_heatmap(x_name, list(xs), y_name, list(ys), accuracy)
    return [_write_figure(folder, "sweep.html", fig)]


def write_curve(
    folder: str, rows: Sequence[Mapping[str, Any]], title: str = "", subtitle: str = ""
) -> list[str]:
    """The learning curves: mean test accuracy against training images, per method."""
    from csvm.figures.curves import curve_figure

    return [_write_figure(folder, "curve.html", curve_figure(rows, title, subtitle))]
