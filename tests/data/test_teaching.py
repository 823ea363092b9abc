"""The teaching set: deterministic, balanced, offline, and its shapes known."""

from __future__ import annotations

import numpy as np
import pytest

from csvm.data import load_pair
from csvm.data.registry import DATASETS, OFFLINE
from csvm.data.teaching import (
    SHAPE_CLASSES,
    class_shapes,
    make_shapes,
    shape_similarity,
    shapes,
)
from csvm.figures.shapes_svg import filter_shape_match, shape_match_svg, shapes_svg


def test_the_set_is_the_same_every_time_and_balanced():
    X, y = shapes()
    X2, y2 = make_shapes(1000, 20261126)
    assert X.shape == (6000, 1, 28, 28) and X.dtype == np.float32
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    assert np.bincount(y).tolist() == [1000] * len(SHAPE_CLASSES)
    assert 0.0 <= X.min() and X.max() <= 1.0


def test_another_seed_draws_other_images():
    a, _ = make_shapes(10, 1)
    b, _ = make_shapes(10, 2)
    assert a.shape == b.shape and not np.allclose(a, b)


def test_each_image_holds_its_shape_somewhere():
    # Without noise the shape's best match in the image is where it was stamped: the
    # correlation with the class's own shape peaks higher than with the other bar's.
    X, y = make_shapes(20, 7)
    from scipy.signal import correlate2d

    known = class_shapes()
    h, v = SHAPE_CLASSES.index("horizontal"), SHAPE_CLASSES.index("vertical")
    right = 0
    for image, label in zip(X[:, 0], y, strict=True):
        if label not in (h, v):
            continue
        own = known[SHAPE_CLASSES[label]]
        other = known["vertical" if label == h else "horizontal"]
        centred = image - image.mean()
        score = correlate2d(centred, own - own.mean(), mode="valid").max()
        rival = correlate2d(centred, other - other.mean(), mode="valid").max()
        right += score > rival
    assert right >= 36  # of 40: noise hides a weak shape now and then


def test_the_set_is_offline_and_loads_as_a_pair():
    assert "shapes" in OFFLINE and DATASETS["shapes"].classes == SHAPE_CLASSES
    data = load_pair("shapes", "horizontal", "vertical", n_train=100)
    assert data.X_train.shape == (100, 1, 28, 28)
    assert data.counts["train"] == (50, 50)
    assert data.class_names == ("horizontal", "vertical")


def test_similarity_is_one_for_the_shape_whatever_its_scale_sign_offset_or_place():
    bar = class_shapes()["horizontal"]
    for f in (bar, 3 * bar, -bar, bar + 0.7, np.roll(bar, 1, axis=0), np.roll(bar, -2, axis=0)):
        assert shape_similarity(f, ("horizontal", "vertical")) == pytest.approx(1.0)


def test_similarity_of_random_filters_is_low_and_bars_are_told_apart():
    rng = np.random.default_rng(0)
    random = [shape_similarity(rng.standard_normal((5, 5)), ("horizontal",)) for _ in range(200)]
    # The best of 25 places and two shapes: a random filter matches about half-way.
    assert np.mean(random) < 0.55
    bar = class_shapes()["horizontal"]
    assert shape_similarity(bar, ("vertical",)) < 0.3


def test_a_larger_filter_is_compared_on_its_centre():
    padded = np.zeros((7, 7))
    padded[1:6, 1:6] = class_shapes()["cross"]
    assert shape_similarity(padded, ("cross",)) == pytest.approx(1.0)


def test_figures_name_the_shapes_and_follow_the_filter():
    svg = shapes_svg(("horizontal", "vertical"), large=True)
    assert svg.startswith("<svg") and "horizontal" in svg and "vertical" in svg
    assert svg.count("<rect") == 50
    bar = class_shapes()["vertical"]
    steps = [
        {"iteration": 0, "filters": np.eye(5)[None]},
        {"iteration": 1, "filters": bar[None]},
    ]
    chart = shape_match_svg(steps, ("horizontal", "vertical"))
    assert 'data-points="2"' in chart and "similarity" in chart
    assert filter_shape_match(steps[1]["filters"], ("horizontal", "vertical")) == 1.0
    assert filter_shape_match(None, ("horizontal",)) is None
