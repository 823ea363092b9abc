"""The image grids as HTML (csvm.figures.image_html): every image back from its PNG, one
grey scale for the grid, captions escaped, projector size, empty and constant grids."""

from __future__ import annotations

import base64
import io
import re
from html.parser import HTMLParser

import numpy as np
from PIL import Image

from csvm.figures.image_html import feature_maps_html, image_grid_html


class _Grid(HTMLParser):
    """The grid's images (as arrays), captions and heading text."""

    def __init__(self) -> None:
        super().__init__()
        self.images: list[np.ndarray] = []
        self.alts: list[str] = []
        self.captions: list[str] = []
        self.text: list[str] = []
        self._in_caption = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img":
            raw = base64.b64decode(attrs["src"].split(",", 1)[1])
            self.images.append(np.asarray(Image.open(io.BytesIO(raw))))
            self.alts.append(attrs["alt"])
        self._in_caption = tag == "figcaption"

    def handle_endtag(self, tag):
        self._in_caption = False

    def handle_data(self, data):
        (self.captions if self._in_caption else self.text).append(data)


def _parse(markup: str) -> _Grid:
    grid = _Grid()
    grid.feed(markup)
    return grid


def test_every_image_comes_back_on_one_grey_scale_with_its_caption():
    images = np.stack([np.full((1, 4, 3), 0.5), np.arange(12.0).reshape(1, 4, 3)])
    markup = image_grid_html(images, ["a", "b"], "Two images", cols=8)
    assert "\n" not in markup  # Markdown would read an indented line as code
    grid = _parse(markup)
    assert grid.captions == ["a", "b"] and grid.alts == ["a", "b"]
    assert "".join(grid.text) == "Two images"
    first, second = grid.images
    assert first.shape == second.shape == (4, 3) and first.dtype == np.uint8
    # One scale for the grid: 0 -> 0, 11 -> 255, so the flat 0.5 is dark, not mid-grey.
    np.testing.assert_array_equal(second, np.rint(np.arange(12.0).reshape(4, 3) * 255 / 11))
    assert (first == round(0.5 * 255 / 11)).all()
    assert "/ 2)" in markup  # no more columns than the images it has


def test_a_narrow_column_takes_fewer_images_a_row_than_break_a_caption_word():
    """Each column is at least as wide as the captions' longest word: at a phone's 390 px
    eight support vectors a row broke "α=0.408" after "0.40" (the browser check is
    tests/browser/test_browser_phone.py)."""
    images = np.ones((8, 4, 4))
    short = image_grid_html(images, ["α=1"] * 8, "Support vectors", cols=8)
    long = image_grid_html(images, ["α=1"] * 7 + ["α=0.408"], "Support vectors", cols=8)
    widths = [int(re.search(r"minmax\(max\((\d+)px", m).group(1)) for m in (short, long)]
    assert widths[0] < widths[1] <= 112  # never wider than an image
    assert "repeat(auto-fill" in long and "/ 8)" in long  # at most eight a row


def test_pinned_captions_shrink_to_hold_their_longest_word_but_not_below_9_px():
    markup = feature_maps_html(np.zeros((6, 1, 4, 4)), np.ones((6, 1, 3, 3)), ["horizontal"] * 6)
    (size,) = set(re.findall(r"figcaption style=\"font-size:([^;]+);", markup))
    # Six columns of a container (100cqi) less five gaps, for ten letters at 0.6 em.
    assert size == "clamp(9px,calc((100cqi - 30px) / 36.00),14px)"
    assert "container-type:inline-size" in markup


def test_only_the_first_channel_is_drawn_and_captions_are_escaped():
    rgb = np.zeros((1, 3, 5, 5))
    rgb[0, 0, 2, 2] = 1.0
    rgb[0, 1] = 7.0  # a second channel that must not change the picture
    grid = _parse(image_grid_html(rgb, ["<b>3</b> & 5"], "Colour <i>"))
    assert grid.captions == ["<b>3</b> & 5"]  # shown as text, not markup
    assert "".join(grid.text) == "Colour <i>"
    assert grid.images[0][2, 2] == 255 and grid.images[0].sum() == 255


def test_projector_mode_draws_larger_and_constant_or_empty_grids_are_safe():
    images = np.ones((3, 28, 28))
    normal, large = (
        image_grid_html(images, "abc", "t"),
        image_grid_html(images, "abc", "t", large=True),
    )
    heights = [int(re.search(r"height:(\d+)px", m).group(1)) for m in (normal, large)]
    fonts = [
        int(re.search(r"figcaption style=\"font-size:(\d+)px", m).group(1)) for m in (normal, large)
    ]
    assert heights[1] > heights[0] and fonts[1] > fonts[0] >= 14
    assert (_parse(normal).images[0] == 0).all()  # a flat grid: no division by zero
    empty = _parse(image_grid_html(np.zeros((0, 28, 28)), [], "Misclassified"))
    assert empty.images == [] and "".join(empty.text) == "Misclassified: none"
