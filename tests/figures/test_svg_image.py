"""A playing figure as an image: the same picture, a valid SVG document, one element."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from urllib.parse import unquote

import numpy as np

from csvm.figures.chart_svg import Axis, Series, line_chart_svg
from csvm.figures.filter_svg import filter_svg
from csvm.figures.svg_image import svg_as_image


def _document(img: str) -> ET.Element:
    uri = re.search(r'src="data:image/svg\+xml,([^"]*)"', img).group(1)
    assert "&" not in uri and "<" not in uri and '"' not in uri  # nothing the page decodes
    return ET.fromstring(unquote(uri))


def test_a_filter_becomes_an_image_of_the_same_cells_without_tooltips():
    svg = filter_svg(np.arange(50, dtype=float).reshape(2, 5, 5) - 25)
    img = svg_as_image(svg)
    assert img.startswith("<img ") and img.count("<") == 1
    doc = _document(img)
    ns = "{http://www.w3.org/2000/svg}"
    assert len(doc.findall(f".//{ns}rect")) == svg.count("<rect")
    assert not doc.findall(f".//{ns}title")  # no tooltip in an image: no bytes for one
    assert "height:" in img and "object-fit:contain" in img  # its height limit kept


def test_hostile_text_stays_text_inside_the_image():
    axis = Axis("y", [0.0, 1.0], ["0", "1"], 0.0, 1.0)
    title = 'a <b>"x"</b> & co'
    svg = line_chart_svg(
        [1, 2], [Series("s", [0.5, 1.0], "#1f77b4")], title=title, x_title="x", left=axis
    )
    img = svg_as_image(svg)
    assert 'alt="a &lt;b&gt;&quot;x&quot;&lt;/b&gt; &amp; co"' in img
    doc = _document(img)
    assert title in "".join(doc.itertext())  # drawn as the text it is, not as markup
    assert doc.attrib["viewBox"].startswith("0 0 ")
    assert "font-family:" in doc.attrib["style"] and "inherit" not in doc.attrib["style"]


def test_markup_that_is_not_one_svg_is_left_as_it_is():
    assert svg_as_image("<div>maps</div>") == "<div>maps</div>"
