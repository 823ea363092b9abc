"""Plotly figures for the explorer, one module per kind of picture (no Streamlit here:
pages only draw what these return).

Series are downsampled to at most ``MAX_POINTS`` points and every figure sets
``uirevision`` so a user's zoom survives the once-a-second live updates.
"""

from csvm.figures.filter_svg import change_svg, filter_svg
from csvm.figures.filters import (
    feature_maps_figure,
    filter_figure,
    filter_grid_figure,
    gradient_figure,
)
from csvm.figures.image_html import image_grid_html
from csvm.figures.landscape import landscape_1d_figure, landscape_2d_figure
from csvm.figures.results import confusion_figure, per_class_accuracy_figure
from csvm.figures.style import MAX_POINTS, for_projector, log_ticks, nice_ticks
from csvm.figures.sweeps import sweep_heatmap
from csvm.figures.training import (
    accuracy_vs_time,
    divergence_figure,
    loss_figure,
    objective_figure,
    objectives_overlay,
    progress_figure,
)

__all__ = [
    "MAX_POINTS",
    "accuracy_vs_time",
    "change_svg",
    "confusion_figure",
    "divergence_figure",
    "feature_maps_figure",
    "filter_figure",
    "filter_grid_figure",
    "filter_svg",
    "for_projector",
    "gradient_figure",
    "image_grid_html",
    "landscape_1d_figure",
    "landscape_2d_figure",
    "log_ticks",
    "loss_figure",
    "nice_ticks",
    "objective_figure",
    "objectives_overlay",
    "per_class_accuracy_figure",
    "progress_figure",
    "sweep_heatmap",
]
