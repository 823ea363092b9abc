"""Figures for the explorer, one module per kind of picture (no Streamlit here: pages only
draw what these return).  Most are Plotly; the Train page's live panel is SVG and small PNGs
(``chart_svg``, ``training_svg``, ``filter_svg``, ``image_html``, ``layers_svg``): cheap to
build every tick, and nothing for a new browser to load before it draws them.

Series are downsampled to at most ``MAX_POINTS`` points and every figure sets
``uirevision`` so a user's zoom survives the once-a-second live updates.
"""

from csvm.figures.filter_svg import change_svg, filter_svg, gradient_svg
from csvm.figures.filters import (
    feature_maps_figure,
    filter_figure,
    filter_grid_figure,
    gradient_figure,
)
from csvm.figures.image_html import feature_maps_html, image_grid_html
from csvm.figures.landscape import landscape_1d_figure, landscape_2d_figure
from csvm.figures.layers_svg import layer_filters_svg, layer_maps_html
from csvm.figures.results import confusion_figure, per_class_accuracy_figure
from csvm.figures.style import MAX_POINTS, for_projector, log_ticks, nice_ticks
from csvm.figures.sweeps import best_cell, diverged_cells, sweep_heatmap
from csvm.figures.training import (
    accuracy_vs_time,
    divergence_figure,
    loss_figure,
    objective_figure,
    objectives_overlay,
    progress_figure,
)
from csvm.figures.training_svg import loss_svg, objective_svg, progress_svg

__all__ = [
    "MAX_POINTS",
    "accuracy_vs_time",
    "best_cell",
    "change_svg",
    "confusion_figure",
    "diverged_cells",
    "divergence_figure",
    "feature_maps_figure",
    "feature_maps_html",
    "filter_figure",
    "filter_grid_figure",
    "filter_svg",
    "for_projector",
    "gradient_figure",
    "gradient_svg",
    "image_grid_html",
    "landscape_1d_figure",
    "landscape_2d_figure",
    "layer_filters_svg",
    "layer_maps_html",
    "log_ticks",
    "loss_figure",
    "loss_svg",
    "nice_ticks",
    "objective_figure",
    "objective_svg",
    "objectives_overlay",
    "per_class_accuracy_figure",
    "progress_figure",
    "progress_svg",
    "sweep_heatmap",
]
