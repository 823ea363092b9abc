"""The teaching set's shapes beside the learned filter, and how close they are per step.

The teaching set (:mod:`csvm.data.teaching`) knows the 5×5 shape behind each class, so the
Train page can draw the pair's two shapes next to the filter a run is learning and a line
of their similarity at every recorded step: the class sees the filter *become* the shape.

No Streamlit here: the page passes the markup to ``st.markdown(..., unsafe_allow_html=True)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from csvm.data.teaching import class_shapes, shape_similarity
from csvm.figures.chart_svg import Series, line_chart_svg, value_axis
from csvm.figures.text import plain

__all__ = ["filter_shape_match", "shape_match_svg", "shapes_svg"]

_CELL = 24
_GAP = 30
_INK, _PAPER, _GRID = "#111111", "#ffffff", "#8a8a8a"
_GREEN = "#2ca02c"


def filter_shape_match(filters: Any, classes: Sequence[str]) -> float | None:
    """The best similarity of any first-layer filter in ``filters`` to one of the shapes
    of ``classes`` (:func:`csvm.data.teaching.shape_similarity`); None without filters.

    Examples
    --------
    >>> bar = class_shapes()["vertical"]
    >>> filter_shape_match(np.stack([bar, bar.T]), ("horizontal", "vertical"))
    1.0
    """
    if filters is None:
        return None
    f = np.asarray(filters, dtype=np.float64)
    planes = f.reshape(-1, *f.shape[-2:])
    return round(max(shape_similarity(p, tuple(classes)) for p in planes), 6)


def shapes_svg(classes: Sequence[str], large: bool = False) -> str:
    """The shapes of ``classes`` as black cells on white, each titled with its class.

    Examples
    --------
    >>> "vertical" in shapes_svg(("horizontal", "vertical"))
    True
    """
    known = class_shapes()
    font = 20 if large else 15
    side = 5 * _CELL
    width = len(classes) * side + (len(classes) - 1) * _GAP
    height = side + font + 12
    parts = []
    for k, name in enumerate(classes):
        x0 = k * (side + _GAP)
        parts.append(
            f'<text x="{x0 + side / 2:.1f}" y="{font:.1f}" font-size="{font}" '
            f'fill="currentColor" text-anchor="middle">{plain(str(name))}</text>'
        )
        shape = known[str(name)]
        for (i, j), on in np.ndenumerate(shape):
            parts.append(
                f'<rect x="{x0 + j * _CELL}" y="{font + 8 + i * _CELL}" width="{_CELL}" '
                f'height="{_CELL}" fill="{_INK if on else _PAPER}" stroke="{_GRID}" '
                'stroke-width="1"/>'
            )
    names = " and ".join(plain(str(c)) for c in classes)
    scale = 1.25 if large else 1.0
    return (
        f'<svg class="csvm-shapes" role="img" viewBox="-2 -2 {width + 4} {height + 4}" '
        f'width="{(width + 4) * scale:.0f}" height="{(height + 4) * scale:.0f}" '
        # Never wider than its column: at 1280 px in projector mode the Train page's
        # narrow column cut the second shape off.
        'style="max-width:100%;height:auto">'
        f"<title>The shapes the images were drawn from: {names}</title>{''.join(parts)}</svg>"
    )


def shape_match_svg(
    events: Sequence[dict[str, Any]], classes: Sequence[str], large: bool = False
) -> str:
    """The filter's similarity to the nearest shape at every recorded step (0 to 1).

    Examples
    --------
    >>> bar = class_shapes()["horizontal"]
    >>> steps = [{"iteration": i, "filters": bar[None] + 0.1 * i} for i in range(3)]
    >>> "similarity" in shape_match_svg(steps, ("horizontal", "vertical"))
    True
    """
    steps = [e for e in events if e.get("filters") is not None and "iteration" in e]
    x = [float(e["iteration"]) for e in steps]
    match = [filter_shape_match(e["filters"], classes) for e in steps]
    tips = [f"step {xi:g}: similarity {m:.2f}" for xi, m in zip(x, match, strict=True)]
    return line_chart_svg(
        x,
        [Series("similarity to the shape", match, _GREEN, markers=True, tips=tips)],
        title="How close the filter is to a shape",
        x_title="iteration",
        left=value_axis([0.0, 1.0], "similarity", floor=0.0, ceiling=1.0),
        large=large,
    )
