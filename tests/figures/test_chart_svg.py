"""The SVG charts and the HTML feature maps of the Train page's live panel."""

import base64
import io
import re

import numpy as np
from PIL import Image

from csvm.figures._markup import viridis
from csvm.figures.chart_svg import Series, integer_ticks, line_chart_svg, value_axis
from csvm.figures.filter_svg import gradient_svg
from csvm.figures.image_html import feature_maps_html
from csvm.figures.training_svg import loss_svg, objective_svg, progress_svg


def _steps(objectives, model="kcsvm"):
    return [
        {
            "iteration": i,
            "model": model,
            "objective": v,
            "sum_alpha": 2 * v,
            "margin_term": v,
            "regulariser": 0.1,
            "train_accuracy": 0.9 + 0.01 * i,
            "filter_norm": 1.0 + i,
        }
        for i, v in enumerate(objectives)
    ]


def _points(svg: str, series: str) -> list[tuple[float, float]]:
    """The (x, y) of a series's markers, in the chart's coordinates."""
    group = re.search(rf'<g class="series" data-name="{re.escape(series)}">(.*?)</g>', svg)
    return [(float(x), float(y)) for x, y in re.findall(r'cx="([\d.]+)" cy="([\d.]+)"', group[1])]


def _labels(svg: str, kind: str = "tick") -> list[str]:
    return re.findall(rf'<text class="{kind}"[^>]*>([^<]*)</text>', svg)


def test_objective_chart_draws_each_step_higher_values_higher_and_flags_rises():
    svg = objective_svg(_steps([5.0, 3.0, 4.0, 1.0]), "Objective per step")
    assert 'data-title="Objective per step"' in svg and 'data-points="4"' in svg
    points = _points(svg, "objective")
    assert len(points) == 4
    xs, ys = zip(*points, strict=True)
    assert list(xs) == sorted(xs)
    # SVG's y grows downwards: the largest objective is drawn highest.
    assert np.argsort(ys).tolist() == np.argsort([-5.0, -3.0, -4.0, -1.0]).tolist()
    assert svg.count('<g class="flag">') == 1  # 3 -> 4 rose, once
    assert "rose at iteration 2" in svg
    for term in ("Σα", "½ aᵀKa", "r(f)"):
        assert f'data-name="{term}"' in svg


def test_chart_ticks_are_round_and_cover_the_values():
    svg = objective_svg(_steps([0.063, 0.0412, 0.031]))
    left = [float(t) for t in _labels(svg) if re.fullmatch(r"-?[\d.]+", t)]
    assert min(left) <= 0.031 and max(left) >= 0.063
    assert all(len(t.split(".")[-1]) <= 2 for t in _labels(svg) if "." in t)  # 0.06, not 0.063
    assert integer_ticks(23) == [0, 5, 10, 15, 20]
    assert integer_ticks(3) == [0, 1, 2, 3]


def test_linear_model_half_steps_sit_between_iterations():
    steps = [
        {"iteration": 0, "step": "svm", "objective": 2.0, "model": "lcsvm"},
        {"iteration": 0, "step": "filter", "objective": 1.5, "model": "lcsvm"},
        {"iteration": 1, "step": "svm", "objective": 1.2, "model": "lcsvm"},
    ]
    svg = objective_svg(steps)
    assert "½ = filter step" in svg
    assert "filter step 0.5: objective 1.5" in svg and "SVM step 1: objective 1.2" in svg


def test_progress_chart_reads_accuracy_in_per_cent_up_to_100():
    svg = progress_svg(_steps([3.0, 2.0, 1.0]), "Train accuracy and filter norm")
    labels = _labels(svg)
    assert "100 %" in labels
    assert not any(t.endswith("%") and float(t[:-2]) > 100 for t in labels)
    assert 'data-name="filter norm"' in svg and "stroke-dasharray" in svg


def test_a_missing_value_breaks_the_line_and_titles_are_escaped():
    svg = line_chart_svg(
        [0, 1, 2, 3, 4],
        [Series("s", [1.0, 2.0, None, 3.0, 4.0], "#000", markers=True)],
        title="<script>alert(1)</script>",
        x_title="x",
        left=value_axis([1.0, 4.0], "y"),
    )
    assert svg.count("<polyline") == 2
    assert len(_points(svg, "s")) == 4
    assert "<script>" not in svg and "&lt;script&gt;" in svg


def test_loss_chart_one_point_per_epoch():
    epochs = [
        {"kind": "epoch", "epoch": i, "loss": 1 / (i + 1), "train_accuracy": 0.5 + 0.1 * i}
        for i in range(4)
    ]
    svg = loss_svg(epochs + [{"kind": "batch", "iteration": 3, "loss": 9.0}], "Small CNN")
    assert 'data-points="4"' in svg and "epoch 4: log loss 0.25" in svg


def test_gradient_is_a_signed_heatmap_with_a_colour_bar():
    g = np.array([[[1e-4, -2e-4], [0.0, 3e-4]]])
    svg = gradient_svg(g)
    assert 'class="csvm-figure csvm-gradient"' in svg and ">dT/df</text>" in svg
    assert 'id="csvm-bar-gradient"' in svg and "url(#csvm-bar-gradient)" in svg
    assert "filter 1, row 1, column 1: 0.0003" in svg
    assert svg.count('class="value"') == 0  # small numbers are on hover, not "0.00"


def _decode(uri: str) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))))


def test_feature_maps_show_each_image_and_its_maps_on_one_viridis_scale():
    images = np.zeros((2, 1, 4, 4))
    maps = np.stack([np.full((2, 3, 3), -1.0), np.full((2, 3, 3), 2.0)])  # (n, k, 3, 3)
    maps[0, 0, 0, 0] = 2.0
    markup = feature_maps_html(images, maps, ["3", "<b>5</b>"])
    uris = re.findall(r'src="(data:image/png;base64,[^"]+)"', markup)
    assert len(uris) == 2 + 2 * 2  # two images, then each filter's row of maps
    assert "&lt;b&gt;5&lt;/b&gt;" in markup and "<b>5" not in markup
    first_map = _decode(uris[2])  # image 1, filter 1
    assert first_map.shape == (3, 3, 3)
    lut = viridis()
    assert (first_map[0, 0] == lut[255]).all() and (first_map[1, 1] == lut[0]).all()
    assert (_decode(uris[3])[0, 0] == lut[255]).all()  # image 2, filter 1: the same scale


def test_a_later_layer_draws_every_plane_of_every_filter_on_one_scale():
    from csvm.figures.layers_svg import _rgb_lut, layer_filters_svg

    f = np.arange(2 * 3 * 3 * 3, dtype=float).reshape(2, 3, 3, 3) - 20
    svg = layer_filters_svg(f, 2, large=True)
    assert svg.count('<g class="plane">') == 6
    assert "layer 2 filter 2, map 3 (rows top to bottom): 25.0000 26.0000" in svg
    pixels = [_decode(u) for u in re.findall(r'href="(data:image/png;base64,[^"]+)"', svg)]
    assert len(pixels) == 6 and pixels[0].shape == (3, 3, 3)  # one small PNG per plane
    lut = _rgb_lut("weight")
    assert (pixels[5][2, 2] == lut[256]).all()  # 33, the largest |w|: the scale's top
    assert (pixels[0][0, 0] == lut[round((1 - 20 / 33) / 2 * 256)]).all()  # -20
    assert "Layer 2: 2 filters, each over layer 1&#x27;s 3 maps" in svg
    assert ">weight</text>" in svg and ">33</text>" not in svg  # a bar, no written values


def test_layer_maps_scale_each_layer_to_its_own_largest_value():
    from csvm.figures.layers_svg import layer_maps_html

    maps = np.linspace(0, 1, 2 * 2 * 2).reshape(2, 2, 2)
    small = layer_maps_html(np.ones((4, 4)), [maps, maps], "3")
    large = layer_maps_html(np.ones((4, 4)), [maps, 1000 * maps], "3")
    assert small.count("<img") == 1 + 2 + 2 and small == large
    assert "after layer 2 (2 maps)" in small
