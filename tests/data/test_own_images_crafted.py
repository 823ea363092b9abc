"""Crafted own-image zips are refused by name, in plain words and cheaply: members that
are encrypted, compressed with Deflate64 or damaged; images that together hold more
pixels than the server decodes (refused from their headers, before any is decoded)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from PIL import Image

from csvm.data import own_images
from csvm.data.images import UploadError
from csvm.data.own_images import MAX_IMAGES, MAX_TOTAL_PIXELS, read_image_zip
from tests._crafted_zips import CRAFTS, SAYS, crafted_zip

README = Path(__file__).resolve().parents[2] / "README.md"
#: Words of Python's own errors that must not reach a person.
JARGON = ("ZipInfo", "Error -3", "password required", "That compression method")


def _png(side: int, value: int = 0) -> bytes:
    buffer = io.BytesIO()
    Image.new("L", (side, side), value).save(buffer, "PNG")
    return buffer.getvalue()


def _classes(n: int, png: bytes) -> dict[str, bytes]:
    return {f"{('cats', 'dogs')[i % 2]}/{i}.png": png for i in range(n)}


@pytest.mark.parametrize("craft", CRAFTS)
def test_an_unreadable_image_in_the_zip_is_refused_by_name(craft):
    files = _classes(20, _png(40, 128))
    with pytest.raises(UploadError) as caught:
        read_image_zip(crafted_zip(files, "dogs/7.png", craft))
    message = str(caught.value)
    assert message.startswith(f"'dogs/7.png' in the zip cannot be read ({SAYS[craft]})")
    assert not any(word in message for word in JARGON), message


def test_too_many_pixels_in_all_are_refused_from_the_headers_before_decoding(monkeypatch):
    # 101 blank 2000x2000 PNGs: 4 KB each, each within the 4-megapixel limit of one image,
    # 404 million pixels in all (the audit's 5,000 of them took two CPU minutes).
    heavy = _classes(101, _png(2000))
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_STORED) as zf:
        for name, png in heavy.items():
            zf.writestr(name, png)

    def no_decoding(*args, **kwargs):
        raise AssertionError("an image was decoded before the pixels in all were checked")

    monkeypatch.setattr(own_images, "load_upload", no_decoding)
    with pytest.raises(UploadError, match="404 million pixels in all; this server reads at most"):
        read_image_zip(data.getvalue())


def test_the_pixel_budget_fits_the_largest_honest_upload_and_is_documented():
    # 5,000 images (the most a zip may hold) of 280x280, far more than 28x28 needs.
    assert MAX_IMAGES * 280 * 280 <= MAX_TOTAL_PIXELS
    assert f"{MAX_TOTAL_PIXELS // 10**6} million pixels" in README.read_text()
