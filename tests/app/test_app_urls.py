"""Hostile and broken links: the Train page names each bad value, never crashes, and never
renders markdown, links or images that came from the URL."""

import re
from html.parser import HTMLParser

import pytest

from csvm.runs.config import SPECS
from explorer.app import _STYLE
from tests._apptest import open_app

EVIL = "http://evil.example/x.png"

NUMERIC = [n for n, s in SPECS.items() if s.kind in ("int", "float")]
TEXT = [n for n, s in SPECS.items() if s.kind == "str"]
CORPUS = (
    # the six links that used to crash the page
    [("n_iter", "inf"), ("seed", "1e400"), ("C", "0"), ("C", "-1"), ("C", "inf"), ("C", "nan")]
    # nan, inf and 1e400 for every numeric setting
    + [(n, v) for n in NUMERIC for v in ("nan", "-inf", "1e400")]
    # unknown names, 1 MB values, markdown and HTML in every text setting
    + [("regulariser", "foo"), ("model", "svm"), ("kernel", "sigmoid"), ("baselines", "gpu")]
    # Streamlit ignores a whole query string over 512 KB (the page sees no parameters at
    # all), so 400 KB is the largest value that can reach the page.
    + [(n, "x" * 400_000) for n in TEXT]
    + [(n, f"[click](http://evil.example) ![img]({EVIL})") for n in TEXT]
    + [(n, f"<img src='{EVIL}'><a href='http://evil.example'>a</a>") for n in TEXT]
    + [(n, ":red[**boom**] $x^2$ :material/warning:") for n in TEXT]
)
assert len(CORPUS) >= 40


class _GridText(HTMLParser):
    """The text of one of the app's image grids (csvm.figures.image_html), and any tag,
    attribute or source it should never hold."""

    TAGS = {"div", "figure", "img", "figcaption"}

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.foreign: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag not in self.TAGS or set(attrs) - {"style", "src", "alt", "title"}:
            self.foreign.append(tag)
        if tag == "img" and not attrs.get("src", "").startswith("data:image/png;base64,"):
            self.foreign.append(attrs.get("src", ""))
        self.text += [attrs.get("alt", ""), attrs.get("title", "")]

    def handle_data(self, data):
        self.text.append(data)


def _bodies(at) -> list[str]:
    """Every text the page shows, but the app's own constant style sheet (a markdown
    element: explorer.app asks for it first so the browser loads its HTML support early);
    of the app's image grids, their text, once their markup is checked to be the grid's own."""
    out = []
    for kind in ("markdown", "caption", "warning", "error", "info", "success", "title"):
        for body in (str(e.value) for e in at.get(kind)):
            if body == _STYLE:
                continue
            if kind == "markdown" and body.startswith('<div><div style="font-size:'):
                grid = _GridText()
                grid.feed(body)
                assert not grid.foreign, grid.foreign  # only the grid's tags, PNG sources
                body = " ".join(grid.text)
            out.append(body)
    return out


@pytest.mark.parametrize("name,raw", CORPUS, ids=[f"{n}={r[:12]}" for n, r in CORPUS])
def test_hostile_link_is_named_escaped_and_harmless(name, raw):
    at = open_app({name: raw})
    assert not at.exception, at.exception
    messages = [w.value for w in at.warning] + [e.value for e in at.error]
    plain = [m.replace("\\", "") for m in messages]  # as the reader sees them
    named = [m for m in plain if name in m or SPECS[name].label in m]
    assert named, f"no message names {name}: {messages}"
    for body in _bodies(at):
        assert not re.search(r"(?<!\\)\]\(", body), body  # no live markdown link or image
        assert not re.search(r"(?<!\\)<", body), body  # no live HTML tag
        assert "://" not in body.replace("\\", ""), body  # no autolink either
        assert len(body) < 5000
    # the URL now holds only valid values
    for key in at.query_params:
        assert len(str(at.query_params[key])) <= 64, key
    assert not at.button(key="start").disabled or name in ("class_a", "class_b")


@pytest.mark.parametrize(
    "raw,shown", [("3.3", "3.3"), ("0.05", "0.05"), ("100", "100"), ("1", "1"), ("1e-11", "1e-11")]
)
def test_a_c_between_decades_is_kept_as_given(raw, shown):
    """The C slider stops at decades; a link's C between two is added as a stop of its
    own instead of silently snapping to the nearest decade."""
    from csvm.runs.values import parse_value
    from explorer.settings import _c_label

    at = open_app({"C": raw})
    assert not at.exception and not at.warning
    slider = at.select_slider(key="w_C")
    assert slider.value == parse_value("C", raw)
    assert _c_label(slider.value) == shown
    assert at.query_params["C"] == raw or float(at.query_params["C"]) == float(raw)


def test_a_typed_stack_of_layers_is_read_or_its_fault_named():
    from tests._apptest import open_app

    at = open_app()
    at.text_input(key="w_layers").set_value("5x5-tanh").run()
    errors = [e.value.replace("\\", "") for e in at.error]
    assert any("'tanh' is neither a nonlinearity" in e for e in errors)
    assert next(b for b in at.button if b.key == "start").disabled
    at.text_input(key="w_layers").set_value("5x5x4-abs-max2").run()
    assert not at.error and at.query_params["layers"] in ("5x5x4-abs-max2", ["5x5x4-abs-max2"])
