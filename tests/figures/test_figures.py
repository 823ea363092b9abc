"""Clean ticks on every figure: round values (1-2-5), whole iterations and epochs, no
minor-tick labels on log axes (issue 10)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from csvm import figures
from csvm.figures.playground import smo_progress_figure
from csvm.figures.style import log_axis, log_label


def _is_125(step: float) -> bool:
    mantissa = step / 10.0 ** math.floor(math.log10(step) + 1e-9)
    return any(math.isclose(mantissa, m, rel_tol=1e-6) for m in (1, 2, 5))


def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@given(finite, finite)
def test_nice_ticks_cover_the_range_with_round_evenly_spaced_values(a, b):
    values, text = figures.nice_ticks(a, b)
    low, high = min(a, b), max(a, b)
    assert 2 <= len(values) <= 12
    steps = np.diff(values)
    slack = 1e-6 * steps[0]  # float noise far below a pixel
    assert values[0] <= low + slack and values[-1] >= high - slack
    assert np.allclose(steps, steps[0], rtol=1e-6)
    assert _is_125(steps[0])
    # Each label reads back as its value, written with no more decimals than the step has.
    need = max(0, -math.floor(math.log10(steps[0]) + 1e-9))
    for v, t in zip(values, text, strict=True):
        assert math.isclose(float(t.replace(",", "")), v, rel_tol=1e-9, abs_tol=steps[0] * 1e-6)
        assert _decimals(t) == need


def test_nice_ticks_never_label_an_odd_value_such_as_0_063():
    values, text = figures.nice_ticks(0.0512, 0.0731)
    assert text == ["0.05", "0.06", "0.07", "0.08"]
    assert figures.nice_ticks(3.0, 3.0)[1] == ["2.6", "2.8", "3.0", "3.2", "3.4"]
    assert figures.nice_ticks(0.0, float("nan")) == ([], [])
    assert figures.nice_ticks(-0.3, 0.0)[1][-1] == "0.0"  # never "-0.0"


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (0.003, 40.0, [1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0]),  # decades only
        (180.0, 870.0, [100, 200, 500, 1000]),  # inside one decade: 1-2-5
        (310.0, 480.0, [300, 350, 400, 450, 500]),  # 1-2-5 leave one inside: linear
    ],
)
def test_log_ticks_label_decades_or_round_mantissas(low, high, expected):
    ticks = figures.log_ticks(low, high)
    inside = [t for t in ticks if low <= t <= high]
    assert len(inside) >= 2
    assert np.allclose(ticks, expected)
    assert figures.log_ticks(0.0, 1.0) == []


@pytest.mark.parametrize(
    ("value", "label"),
    [
        (0.001, "0.001"),
        (0.05, "0.05"),
        (1.0, "1"),
        (20.0, "20"),
        (2000.0, "2,000"),
        (50_000.0, "50,000"),
        (5e-6, "5×10⁻⁶"),
        (1e-16, "10⁻¹⁶"),
        (2e6, "2×10⁶"),
    ],
)
def test_log_label_writes_the_whole_number(value, label):
    assert log_label(value) == label


def test_log_axis_labels_every_tick_and_thins_many_decades():
    axis = log_axis([20, 50, 100, 200, 500, 1000, 2000])
    assert axis["ticktext"] == ["10", "100", "1,000", "10,000"]
    axis = log_axis([0.02, 0.09])  # inside one decade: 1-2-5, written in full
    assert axis["ticktext"] == ["0.01", "0.02", "0.05", "0.1"]
    axis = log_axis([3e-16, 0.5, 5.0, float("nan"), 0.0])
    assert len(axis["tickvals"]) <= 8
    assert axis["tickvals"][-1] == 10.0  # the top decade, where the values start, kept
    assert axis["ticktext"] == [log_label(v) for v in axis["tickvals"]]
    assert log_axis([0.0, -1.0]) == {}


def test_the_kkt_gap_axis_is_labelled_in_decades():
    """The playground's KKT axis read "2 1 5 2 0.1 5 2 0.01": Plotly's minor mantissas."""
    gap = [5.0, 0.8, 0.04, 0.002, 4e-4]
    fig = smo_progress_figure([0.0, 1.0, 1.5, 1.6, 1.61], gap, current=2, tol=1e-3)
    axis = fig.layout.yaxis2
    assert axis.type == "log"
    assert list(axis.ticktext) == ["10⁻⁴", "0.001", "0.01", "0.1", "1", "10"]
    assert all(t in (1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0) for t in axis.tickvals)


def _kcsvm_events(n: int) -> list[dict]:
    # Filter norms and terms as a real run gives them: not round numbers.
    return [
        {
            "kind": "iteration",
            "model": "kcsvm",
            "iteration": i,
            "objective": 41.7 - 0.37 * i,
            "sum_alpha": 52.13 - 0.41 * i,
            "margin_term": 10.9 - 0.05 * i,
            "regulariser": 0.0625 + 0.0011 * i,
            "train_accuracy": 0.951 + 0.002 * i,
            "filter_norm": 0.0625 + 0.0013 * i,
        }
        for i in range(n)
    ]


def _assert_round_axis(axis) -> None:
    assert axis.tickvals and axis.ticktext
    steps = np.diff(axis.tickvals)
    assert np.allclose(steps, steps[0]) and _is_125(steps[0])
    assert axis.range[0] <= axis.tickvals[0] and axis.range[1] >= axis.tickvals[-1]


@pytest.mark.parametrize("n", [3, 15, 120])
def test_train_figures_tick_whole_iterations_and_round_secondary_values(n):
    events = _kcsvm_events(n)
    objective = figures.objective_figure(events)
    progress = figures.progress_figure(events)
    for fig in (objective, progress):
        assert fig.layout.xaxis.tickformat == "d"
        assert fig.layout.xaxis.dtick >= 1 and float(fig.layout.xaxis.dtick).is_integer()
        assert n / fig.layout.xaxis.dtick <= 10  # about ten labels at most
        _assert_round_axis(fig.layout.yaxis2)
    _assert_round_axis(objective.layout.yaxis)
    # Every term and every norm lies within the secondary axes' ticks.
    terms = [e[k] for e in events for k in ("sum_alpha", "margin_term", "regulariser")]
    ticks = objective.layout.yaxis2.tickvals
    assert ticks[0] <= min(terms) and ticks[-1] >= max(terms)
    norms = [e["filter_norm"] for e in events]
    ticks = progress.layout.yaxis2.tickvals
    assert ticks[0] <= min(norms) and ticks[-1] >= max(norms)


@pytest.mark.parametrize(("epochs", "dtick"), [(3, 1), (10, 1), (40, 5), (200, 20)])
def test_cnn_epochs_are_whole_numbers(epochs, dtick):
    events = [
        {"kind": "epoch", "epoch": i, "loss": 1 / (i + 1), "train_accuracy": 0.9}
        for i in range(epochs)
    ]
    loss = figures.loss_figure(events)
    assert loss.layout.xaxis.tickformat == "d" and loss.layout.xaxis.dtick == dtick
    assert loss.layout.yaxis2.dtick == 0.25  # accuracy: 0, 25, 50, 75, 100 %


def test_a_long_run_name_wraps_in_the_overlay_legend():
    """Two presets differ in six settings: the run's name ran past the legend's edge."""
    steps = [{"model": "kcsvm", "iteration": i, "objective": 10.0 - i} for i in range(3)]
    name = (
        "γ 0.03125 · η 0.2 · C 10 · Iterations 15 · Layers 5x5x8-abs-max2,3x3x8-abs-avg2-"
        "bn2-sqrt · First filters zero-mean"
    )
    (trace,) = figures.objectives_overlay([(name, steps)], "all runs").data
    lines = trace.name.split("<br>")
    assert len(lines) > 1 and all(len(line) <= 60 for line in lines[:-1])
    assert " · ".join(lines) == name
    assert name in trace.hovertemplate  # the hover keeps it on one line


def test_log_axes_label_no_minor_ticks():
    wide = [{"model": "kcsvm", "iteration": i, "objective": 10.0**-i} for i in range(4)]
    narrow = [{"model": "kcsvm", "iteration": i, "objective": 870.0 - 60 * i} for i in range(12)]
    # 870 down to 210: 1-2-5 give 500 only inside, so round linear values.
    overlay = figures.objectives_overlay([("a", wide)], "all runs")
    assert overlay.layout.yaxis.type == "log"
    assert np.allclose(overlay.layout.yaxis.tickvals, [1e-3, 1e-2, 1e-1, 1.0])
    overlay = figures.objectives_overlay([("a", narrow), ("b", wide[:1])], "all runs")
    assert all(t in (1.0, 10.0, 100.0, 1000.0) for t in overlay.layout.yaxis.tickvals)
    overlay = figures.objectives_overlay([("a", narrow)], "one run")
    assert np.allclose(overlay.layout.yaxis.tickvals, [200, 400, 600, 800, 1000])
    assert overlay.layout.xaxis.tickformat == "d"
    steps = [{"iteration": i, "filter_norm": 3.0 * 10**i} for i in range(3)]
    blow_up = figures.divergence_figure(steps, {"iteration": 2, "filter_norm_after": 3e7})
    assert blow_up.layout.yaxis.type == "log"
    assert np.allclose(blow_up.layout.yaxis.tickvals, [10.0**k for k in range(9)])


def test_the_best_cell_is_written_as_the_axes_write_its_values():
    acc = np.array([[0.96, 0.965, 0.975], [0.96, 0.96, 0.965]])
    line = figures.best_cell("γ", [0.0005, 0.02, 1.0], "C", [10.0, 0.01], acc)
    assert line == "Best: γ = 1, C = 10: 97.50 % validation accuracy."
    with_images = figures.best_cell("γ", [0.0005, 0.02, 1.0], "C", [10.0, 0.01], acc, 200)
    assert with_images == (
        "Best: γ = 1, C = 10: 97.50 % validation accuracy (195 of 200 images; the next best "
        "cell, 96.50 %, is 2 images behind)."
    )
    acc[1, 2] = 0.975  # two cells level
    assert figures.best_cell("γ", [0.0005, 0.02, 1.0], "C", [10.0, 0.01], acc, 200).endswith(
        "(195 of 200 images, level with 1 other cell)."
    )
    # a cell still running: no best yet
    acc[1, 0] = np.nan
    assert figures.best_cell("γ", [0.0005, 0.02, 1.0], "C", [10.0, 0.01], acc) is None


def test_sweep_heatmap_labels_values_as_typed():
    acc = np.array([[0.9, np.nan], [0.95, 0.97]])
    fig = figures.sweep_heatmap("η", [0.01, 0.1], "C", [1000.0, 1e-5], acc)
    assert list(fig.data[0].x) == ["0.01", "0.1"]
    assert list(fig.data[0].y) == ["1000", "1e-05"]
    assert (fig.data[0].zmin, fig.data[0].zmax) == (90.0, 97.0)  # the cells' own range


def test_sweep_colours_do_not_make_a_gulf_of_two_images():
    """On 96-97.5 % a two-image difference was dark purple against bright yellow."""
    fig = figures.sweep_heatmap("η", [0.01, 0.1], "C", [1.0], np.array([[0.96, 0.975]]))
    assert fig.data[0].zmax == 97.5 and fig.data[0].zmin == 92.5  # at least 5 points
    empty = figures.sweep_heatmap("η", [0.01], "C", [1.0], np.array([[np.nan]]))
    assert empty.data[0].zmin is None  # nothing scored yet: Plotly's own range


def test_colour_bars_of_small_values_use_powers_of_ten_not_si_prefixes():
    f = np.random.default_rng(0).normal(size=(1, 5, 5))
    fig = figures.filter_figure(f, f + 1e-4)
    assert fig.data[1].colorbar.exponentformat == "power"  # "4×10⁻⁴", not "400μ"
    assert figures.gradient_figure(1e-4 * f).data[0].colorbar.exponentformat == "power"


def test_a_single_step_has_no_negative_iteration_and_a_gradient_is_labelled_as_one():
    fig = figures.objective_figure(_kcsvm_events(1))
    assert fig.layout.xaxis.rangemode == "nonnegative"
    g = np.random.default_rng(1).normal(size=(1, 5, 5))
    assert figures.filter_figure(g, value_label="dT/df").data[0].colorbar.title.text == "dT/df"
    assert figures.filter_figure(g).data[0].colorbar.title.text == "weight"


def test_filter_grid_click_markers_carry_each_sub_problem_index():
    import numpy as np

    from csvm import figures

    filters = [np.ones((1, 5, 5)) * (k + 1) for k in range(4)]
    fig = figures.filter_grid_figure(filters, list("abcd"), cols=3, clickable=True)
    (marker,) = [t for t in fig.data if t.name == "focus"]
    assert list(marker.customdata) == [0, 1, 2, 3]
    # Each marker sits on its own cell of the tiled canvas.
    z = np.asarray(fig.data[0].customdata, dtype=float)
    for k in range(4):
        assert z[int(marker.y[k]), int(marker.x[k])] == k + 1
    assert not [t for t in figures.filter_grid_figure(filters, list("abcd")).data if t.name]


def test_a_grid_for_a_narrow_column_is_as_tall_as_its_filters_there():
    # The most confused pairs share the page in columns of about 400 px: a grid sized for
    # 800 px left a band of empty space above and below its two filters.
    from csvm import figures

    pair = [np.ones((2, 5, 5))]  # one sub-problem, two filters: a 5 × 11 cell
    extra = figures.filter_grid_figure(pair, ["3 vs 5"], "", width=0.001).layout.height
    wide, narrow = (
        figures.filter_grid_figure(pair, ["3 vs 5"], "", width=w).layout.height - extra
        for w in (800, 400)
    )
    assert narrow == pytest.approx(wide / 2, abs=1)
    # The cell and its 2-pixel gap, 13 wide and 7 high, fill the 400 px across.
    assert narrow == pytest.approx(400 / 13 * 7, abs=1)


def test_a_click_selection_names_the_sub_problem():
    from explorer.train_multiclass import clicked_sub_problem

    assert clicked_sub_problem({"selection": {"points": [{"customdata": 3}]}}) == 3
    assert clicked_sub_problem({"selection": {"points": [{"customdata": [2]}]}}) == 2
    assert clicked_sub_problem({"selection": {"points": [{"x": 1}]}}) is None
    assert clicked_sub_problem({"selection": {"points": []}}) is None
    assert clicked_sub_problem(None) is None


def test_feature_maps_figure_sends_each_trace_only_its_own_rows_in_float32():
    from csvm.figures import feature_maps_figure
    from tests._apptest import plotly_array

    images = np.random.default_rng(0).random((6, 1, 28, 28))
    maps = np.random.default_rng(1).random((6, 2, 24, 24))
    fig = feature_maps_figure(images, maps, list("abcdef")).to_plotly_json()
    top, below = (plotly_array(t["z"]) for t in fig["data"])
    assert top.dtype == below.dtype == np.float32
    assert top.shape[0] == 28 and fig["data"][1]["y0"] == 28 + 3  # the maps start below
    np.testing.assert_allclose(top[:, :28], images[0, 0], rtol=1e-6)
    np.testing.assert_allclose(below[2:26, 2:26], maps[0, 0], rtol=1e-6)  # centred in its cell
    assert fig["layout"]["title"]["text"].startswith("Pinned images before (top)")
    own = feature_maps_figure(images[:1], maps[:1], ["mine"], "Your digit").to_plotly_json()
    assert own["layout"]["title"]["text"] == "Your digit"


def test_the_lab_and_the_train_page_draw_the_gradient_in_one_colour_scale():
    """The Train page drew dT/df in red/blue and the Filter lab in orange/purple."""
    from plotly.colors import get_colorscale

    from csvm.figures._markup import SCALES

    fig = figures.gradient_figure(np.ones((1, 3, 3)))
    drawn = [(round(at, 6), colour) for at, colour in fig.data[0].colorscale]
    assert drawn == [(round(at, 6), colour) for at, colour in get_colorscale(SCALES["gradient"])]
