"""Figures of sweeps: the validation-accuracy heatmap over two settings.

No Streamlit here: pages only draw what these return.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from csvm.figures.style import _category

__all__ = ["sweep_heatmap"]


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
            x=[_category(v) for v in x_values],
            y=[_category(v) for v in y_values],
            text=text,
            texttemplate="%{text}",
            colorscale="Viridis",
            colorbar={"title": {"text": "val %"}},
            hovertemplate=f"{x_label} %{{x}}, {y_label} %{{y}}: %{{z:.2f}} %<extra></extra>",
        )
    )
    fig.update_xaxes(title_text=x_label, type="category")
    fig.update_yaxes(title_text=y_label, type="category")
    fig.update_layout(
        title="Validation accuracy over the grid",
        height=420,
        uirevision="keep",
        template="plotly_white",
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
    )
    return fig
