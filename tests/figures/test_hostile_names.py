"""Every figure shows user-given names as text (issue 37, row 7).

Class folder names of an upload (``<a href=...>CLICK``, ``<b>``, ``<span style=...>``)
were rendered as HTML in Plotly's confusion matrices: a clickable external link, bold,
90 px text.  Each figure function is fed hostile names in every text it takes; Plotly's
own tag parser (emulated below) must find none of their tags, and the SVG/HTML figures
must hold none of their elements.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import re
from html.parser import HTMLParser

import numpy as np
import plotly.graph_objects as go
import pytest

import csvm.figures as figures_package
from csvm.figures import (
    chart_svg,
    comparisons,
    curves,
    filters,
    image_html,
    landscape,
    layers,
    layers_svg,
    playground,
    results,
    sweeps,
    training,
    training_svg,
)
from csvm.figures.text import plain, plain_in_template

LINK = '<a href="https://evil.example/">CLICK</a>'
BOLD = "<b>bold</b>"
BIG = '<span style="font-size:90px">big</span>'
FILL = "%{x:HOSTILE}"  # a template placeholder: must be shown, not filled in
HOSTILE = [LINK, BOLD, BIG, FILL]
# A fifth name with a plain apostrophe and ampersand: shown as they are.
NAMES = [*HOSTILE, "cats & dogs' pair"]

# Plotly's svg_text_utils: the string is split on tags, each tag matched by ONE_TAG.
_TAG = re.compile(r"<(/?)([^ >]*)(\s+(.*))?>", re.IGNORECASE)
#: Tags the figures write themselves (line breaks, the hover box's <extra>, the
#: focused sub-problem's bold caption, a learning curve's smaller subtitle).
_OWN_TAGS = {"br", "extra", "b", "sup"}


def _strings(value, key=""):
    """Every string of a figure's JSON, with the key it sits under."""
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, k)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v, key)


def _plotly_check(fig: go.Figure, expect: list[str]) -> None:
    """No tag of a hostile name reaches Plotly's renderer; each expected name is shown."""
    spec = json.loads(fig.to_json())
    strings = list(_strings(spec))
    for key, text in strings:
        for match in _TAG.finditer(text):
            name, attributes = match.group(2).lower(), match.group(3) or ""
            assert name in _OWN_TAGS and not attributes, (key, text)
        assert BOLD not in text, (key, text)  # <b> itself is one of the figures' own tags
        if key.endswith("template"):  # hover/text templates fill in %{…}
            assert FILL not in text, (key, text)
    joined = "\n".join(text for _, text in strings)
    for name in expect:
        assert plain(name) in joined or plain_in_template(name) in joined, name


class _Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def _markup_check(markup: str, expect: list[str]) -> None:
    """The SVG/HTML holds no element of a hostile name; each expected name is its text."""
    parser = _Elements()
    parser.feed(markup)
    for tag, attrs in parser.tags:
        assert tag not in ("a", "b", "span"), (tag, attrs)
        assert "href" not in attrs or str(attrs["href"]).startswith("data:image/png")
        assert "90px" not in str(attrs.get("style", ""))
    shown = "\n".join(parser.text) + "\n" + "\n".join(str(a) for _, a in parser.tags)
    for name in expect:
        assert name in shown, name


def _events(n=4):
    return [
        {
            "iteration": i,
            "model": "kcsvm",
            "objective": 5.0 - i,
            "sum_alpha": 2.0,
            "margin_term": 1.0,
            "regulariser": 0.1,
            "train_accuracy": 0.9,
            "filter_norm": 1.0 + i,
        }
        for i in range(n)
    ]


_EPOCHS = [
    {"kind": "epoch", "epoch": i, "loss": 1 / (i + 1), "train_accuracy": 0.8} for i in range(3)
]
_F = np.arange(50, dtype=float).reshape(2, 5, 5) - 25
_IMAGES = np.random.default_rng(0).random((5, 1, 8, 8))
_MAPS = np.random.default_rng(1).random((5, 1, 4, 4))
_ROWS = [
    {"method": m, "label": label, "n_train": n, "accuracy": 0.9, "interval": (0.85, 0.95)}
    for m, label in (("svm", LINK), ("kcsvm", FILL))
    for n in (100, 1000)
]

#: function -> (call with hostile names, the names the figure must show).
PLOTLY = {
    "confusion_figure": (
        lambda: results.confusion_figure(np.eye(5, dtype=int), NAMES, LINK),
        NAMES,
    ),
    "per_class_accuracy_figure": (
        lambda: results.per_class_accuracy_figure({FILL: [0.5] * 5, BIG: [0.7] * 5}, NAMES, BOLD),
        [*NAMES, FILL, BIG, BOLD],
    ),
    "mkl_weights_figure": (
        lambda: comparisons.mkl_weights_figure(NAMES[:2], list(_F), [0.5, 0.5]),
        NAMES[:2],
    ),
    "hidden_outputs_figure": (
        lambda: comparisons.hidden_outputs_figure(np.ones((5, 3)), NAMES),
        NAMES,
    ),
    "curve_figure": (lambda: curves.curve_figure(_ROWS, BIG, BOLD), [LINK, FILL, BIG, BOLD]),
    "filter_figure": (
        lambda: filters.filter_figure(_F, title=LINK, value_label=BIG),
        [LINK, BIG],
    ),
    "feature_maps_figure": (
        lambda: filters.feature_maps_figure(_IMAGES, _MAPS, NAMES),
        NAMES,
    ),
    "gradient_figure": (lambda: filters.gradient_figure(_F, BOLD), [BOLD]),
    "filter_grid_figure": (
        lambda: filters.filter_grid_figure(list(_F) * 3, NAMES + [BOLD], LINK, 1, clickable=True),
        [*NAMES, LINK],
    ),
    "layer_maps_figure": (
        lambda: layers.layer_maps_figure(_IMAGES[0], [_MAPS[0, 0][None]], BIG),
        [BIG],
    ),
    "landscape_1d_figure": (
        lambda: landscape.landscape_1d_figure(np.linspace(-1, 1, 5), np.arange(5.0), (), BOLD),
        [BOLD],
    ),
    "landscape_2d_figure": (
        lambda: landscape.landscape_2d_figure(
            np.linspace(-1, 1, 3), np.linspace(-1, 1, 3), np.ones((3, 3)), LINK
        ),
        [LINK],
    ),
    "sweep_heatmap": (
        lambda: sweeps.sweep_heatmap(FILL, [BOLD, LINK], BIG, [1.0, 2.0], np.ones((2, 2))),
        [FILL, BOLD, LINK, BIG],
    ),
    "objective_figure": (lambda: training.objective_figure(_events(), LINK), [LINK]),
    "objectives_overlay": (
        lambda: training.objectives_overlay([(FILL, _events()), (BIG, _events())], BOLD),
        [FILL, BIG, BOLD],
    ),
    "progress_figure": (lambda: training.progress_figure(_events(), BIG), [BIG]),
    "loss_figure": (lambda: training.loss_figure(_EPOCHS, BOLD), [BOLD]),
    "accuracy_vs_time": (
        lambda: training.accuracy_vs_time([{"model": LINK, "seconds": 1.0, "test accuracy": 90.0}]),
        [LINK],
    ),
    "divergence_figure": (
        lambda: training.divergence_figure(_events(), {"cause": BIG, "iteration": 3}, LINK),
        [LINK, BIG],
    ),
    "decision_figure": (
        lambda: playground.decision_figure(
            np.array([[0.0, 0.0], [1.0, 1.0]]),
            np.array([-1, 1]),
            np.linspace(-1, 2, 4),
            np.zeros((4, 4)),
            np.array([1.0, 1.0]),
            np.array([-1.0, 1.0]),
            title=BOLD,
        ),
        [BOLD],
    ),
    "lift_figure": (
        lambda: playground.lift_figure(
            np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]),
            np.array([-1, 1, 1]),
            np.array([1.0, 0.5, 0.2]),
            -0.5,
            title=LINK,
        ),
        [LINK],
    ),
}

#: Functions that take no text (nothing of a user's reaches them).
NO_TEXT = {
    "hog_figure",
    "layer_filters_figure",
    "smo_progress_figure",
    "filter_svg",
    "change_svg",
    "gradient_svg",
    "layer_filters_svg",
    # The teaching set's shapes by name: only its own class names are known to them.
    "filter_shape_match",
    "shape_match_svg",
    "shapes_svg",
    # Wraps a figure's markup (escaped where it was drawn) as an <img>.
    "svg_as_image",
}


def _chart():
    axis = chart_svg.value_axis([1.0, 2.0], BIG)
    return chart_svg.line_chart_svg(
        [0, 1],
        [chart_svg.Series(LINK, [1.0, 2.0], "#000", tips=[BOLD, FILL])],
        title=BOLD,
        x_title=FILL,
        left=axis,
        flags=[(1, 2.0, LINK)],
    )


MARKUP = {
    "line_chart_svg": (_chart, [LINK, BOLD, FILL, BIG]),
    "objective_svg": (lambda: training_svg.objective_svg(_events(), LINK), [LINK]),
    "progress_svg": (lambda: training_svg.progress_svg(_events(), BIG), [BIG]),
    "loss_svg": (lambda: training_svg.loss_svg(_EPOCHS, BOLD), [BOLD]),
    "image_grid_html": (
        lambda: image_html.image_grid_html(_IMAGES[:, 0], NAMES, LINK),
        [*NAMES, LINK],
    ),
    "feature_maps_html": (lambda: image_html.feature_maps_html(_IMAGES, _MAPS, NAMES), NAMES),
    "layer_maps_html": (
        lambda: layers_svg.layer_maps_html(_IMAGES[0], [_MAPS[0, 0][None]], BIG),
        [BIG],
    ),
}


@pytest.mark.parametrize("name", sorted(PLOTLY))
def test_plotly_figures_show_hostile_names_as_text(name):
    make, expect = PLOTLY[name]
    _plotly_check(make(), expect)


@pytest.mark.parametrize("name", sorted(MARKUP))
def test_markup_figures_show_hostile_names_as_text(name):
    make, expect = MARKUP[name]
    markup = make()
    assert isinstance(markup, str)
    _markup_check(markup, expect)


def test_every_figure_function_is_checked():
    """A new figure function must join one of the tables above."""
    checked = set(PLOTLY) | set(MARKUP) | NO_TEXT
    missing = []
    for info in pkgutil.iter_modules(figures_package.__path__):
        if info.name.startswith("_"):  # the private helpers the figure modules share
            continue
        module = importlib.import_module(f"csvm.figures.{info.name}")
        for name in getattr(module, "__all__", []):
            function = getattr(module, name)
            if not inspect.isfunction(function):
                continue
            returns = str(inspect.signature(function).return_annotation)
            if returns in ("go.Figure", "str"):
                if name not in checked and info.name != "text":
                    missing.append(f"{info.name}.{name}")
    # The text helpers and value formatters return str too but draw nothing.
    helpers = {"chart_svg.value_axis", "filter_svg.format_value", "filters.power_words"}
    helpers |= {"filter_svg.change_scale"}  # a number for the page's heading
    helpers |= {"style.log_label", "style.for_projector", "image_html.png_data_uri"}
    helpers |= {"curves.curve_title", "curves.curve_subtitle"}  # curve_figure escapes them
    helpers |= {"sweeps.diverged_cells"}  # a count in words: no name in it
    assert sorted(set(missing) - helpers) == []


def test_plain_escapes_once_and_keeps_ordinary_text():
    assert plain("3 vs 5 · 4/15") == "3 vs 5 · 4/15"
    assert plain('<a href="x">') == "&lt;a href=&#34;x&#34;&gt;"
    assert plain("a & b") == "a &amp; b"
    assert plain_in_template("%{y}") == "&#37;{y}"
    assert plain(7) == "7"
