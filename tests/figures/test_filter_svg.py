"""The Train page's filter as SVG (csvm.figures.filter_svg): well-formed markup, the
right colours and values, wrapping and diverged weights."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from plotly.colors import sample_colorscale

from csvm.figures.filter_svg import change_svg, filter_svg, format_value, largest_change

NS = {"s": "http://www.w3.org/2000/svg"}


def _parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # raises on malformed markup


def _cells(root: ET.Element) -> list[ET.Element]:
    return root.findall(".//s:rect[@class='cell']", NS)


def test_two_small_filters_have_their_values_written_and_no_colour_bar():
    f = np.arange(50, dtype=float).reshape(2, 5, 5) / 100 - 0.2
    root = _parse(filter_svg(f))
    values = [t.text for t in root.findall(".//s:text[@class='value']", NS)]
    assert values == [f"{v:.2f}" for v in f.ravel()]
    assert [t.text for t in root.findall(".//s:text[@class='label']", NS)] == [
        "filter 1",
        "filter 2",
    ]
    assert root.find(".//s:linearGradient", NS) is None  # no bar: the numbers say it
    titles = [c.find("s:title", NS).text for c in _cells(root)]
    assert titles[7] == f"filter 1, row 1, column 2: {f[0, 1, 2]:.4f}"


def test_colours_follow_the_diverging_scale_centred_on_zero():
    f = np.array([[[-2.0, 0.0, 1.0]]])
    fills = [c.get("fill") for c in _cells(_parse(filter_svg(f)))]
    assert fills == sample_colorscale("RdBu_r", [0.0, 0.5, 0.75])


def test_many_filters_wrap_in_rows_of_four_with_a_titled_colour_bar():
    root = _parse(filter_svg(np.random.default_rng(0).normal(size=(8, 5, 5))))
    assert root.findall(".//s:text[@class='value']", NS) == []  # too small to read
    planes = root.findall(".//s:g[@class='plane']", NS)
    assert len(planes) == 8
    x = [float(p.find("s:rect", NS).get("x")) for p in planes]
    y = [float(p.find("s:rect", NS).get("y")) for p in planes]
    assert x[:4] == x[4:] and len(set(x)) == 4 and y[0] == y[3] < y[4]
    assert root.find(".//s:linearGradient", NS) is not None
    assert "weight" in [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]


def test_colour_filters_draw_one_plane_per_channel():
    root = _parse(filter_svg(np.ones((2, 3, 4, 4))))
    labels = [t.text for t in root.findall(".//s:text[@class='label']", NS)]
    assert labels[:2] == ["filter 1, channel 1", "filter 1, channel 2"] and len(labels) == 6


def test_diverged_weights_are_grey_and_do_not_break_the_scale():
    f = np.array([[[np.nan, 1.0], [np.inf, -1.0]]])
    fills = [c.get("fill") for c in _cells(_parse(filter_svg(f)))]
    assert fills[0] == fills[2] == "#888"
    assert fills[1] == sample_colorscale("RdBu_r", [1.0])[0]


def test_the_change_is_zero_without_a_previous_step_and_has_no_bar():
    f = np.ones((2, 3, 3))
    root = _parse(change_svg(f, None))
    assert root.find(".//s:linearGradient", NS) is None
    assert {c.get("fill") for c in _cells(root)} == set(sample_colorscale("PuOr", [0.5]))
    previous = f.copy()
    previous[1, 0, 0] = 1.25
    assert largest_change(f, previous) == 0.25
    assert largest_change(f, None) == 0.0


def _max_height(root) -> int:
    return int(re.search(r"max-height:(\d+)px", root.get("style")).group(1))


def test_projector_mode_is_a_quarter_taller():
    f = np.ones((2, 5, 5))
    assert _max_height(_parse(filter_svg(f, large=True))) == round(
        1.25 * _max_height(_parse(filter_svg(f)))
    )


def test_a_narrow_column_gets_no_blank_under_the_planes():
    """No fixed height: the picture's own proportions (its viewBox), at most the row's
    height. A fixed 240 px left 150 px blank under the change in a phone's column."""
    root = _parse(change_svg(np.ones((2, 5, 5)), None))
    assert root.get("height") is None and "height:auto" in root.get("style")
    assert root.get("preserveAspectRatio") == "xMidYMin meet"


def test_values_are_formatted_short():
    assert [format_value(v) for v in (0.123, -0.0004, 0.0, 2.5)] == ["0.12", "-4e-4", "0", "2.50"]


@pytest.mark.parametrize("large", [False, True])
def test_the_colour_bars_lowest_number_is_inside_the_picture(large):
    """Its baseline sat below the picture's end: "-0.26" was cut in half on a projector."""
    svg = filter_svg(np.random.default_rng(0).normal(size=(4, 5, 5)), large=large)
    height = float(re.search(r'viewBox="0 0 [\d.]+ ([\d.]+)"', svg).group(1))
    baselines = [float(y) for y in re.findall(r'class="tick" x="[\d.]+" y="([\d.]+)"', svg)]
    assert len(baselines) == 3 and max(baselines) + 2 <= height


def test_a_weight_just_below_zero_is_written_0_00():
    import re

    import numpy as np

    from csvm.figures.filter_svg import filter_svg

    svg = filter_svg(np.array([[[-0.001, 0.5], [0.2, -0.3]]]))
    cells = re.findall(r'<text class="value"[^>]*>([^<]*)</text>', svg)
    assert cells == ["0.00", "0.50", "0.20", "-0.30"]
