"""Images from people: safe decoding of uploads and MNIST-style preprocessing.

An uploaded file is hostile until proven otherwise.  :func:`load_upload` checks the byte
count before decoding anything, lets Pillow parse only PNG and JPEG, refuses images with
more pixels than a small limit *before* their pixels are decompressed (a "decompression
bomb" is a tiny file that expands to gigabytes), and turns every failure into an
:class:`UploadError` with a message that says what was wrong.  Nothing is ever unpickled.

:func:`mnist_style` turns a digit drawn or photographed by a person into what the models
were trained on, the way MNIST was made: grey, white ink on black, the digit's bounding box
scaled so its longer side is 20 pixels, pasted into 28x28 with its centre of mass at the
centre.
"""

from __future__ import annotations

import io
import struct
import threading
import warnings
from typing import Any

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from csvm.exceptions import CSVMError

__all__ = ["UploadError", "load_upload", "mnist_style"]

#: Ink below this fraction of the brightest ink is ignored when finding the digit's box.
INK_THRESHOLD = 0.1
_CENTRE = 14.0
_FORMATS = ("PNG", "JPEG")
# Image.MAX_IMAGE_PIXELS and the warnings filters are process-wide: uploads of several
# sessions (threads of one Streamlit server) take turns changing them.
_PIL_LOCK = threading.Lock()
_MAGIC = {
    b"GIF87a": "a GIF",
    b"GIF89a": "a GIF",
    b"BM": "a BMP",
    b"RIFF": "a WebP (or other RIFF) file",
    b"II*\x00": "a TIFF",
    b"MM\x00*": "a TIFF",
    b"%PDF": "a PDF",
    b"PK\x03\x04": "a ZIP archive",
    b"\x80": "a Python pickle",
}


class UploadError(CSVMError, ValueError):
    """An uploaded image was refused; the message says why and what to upload instead."""


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def _what_is_it(data: bytes) -> str:
    for magic, name in _MAGIC.items():
        if data.startswith(magic):
            return name
    return "not a PNG or JPEG image"


def load_upload(
    data: bytes | bytearray | memoryview, *, max_bytes: int = 2_000_000, max_pixels: int = 4_000_000
) -> Image.Image:
    """Decode an uploaded PNG or JPEG safely.

    Parameters
    ----------
    data : bytes
        The file's contents (e.g. ``UploadedFile.getvalue()``).
    max_bytes : int
        Larger files are refused before any decoding.
    max_pixels : int
        Images with more pixels (width x height, read from the header) are refused
        before their pixels are decompressed.

    Returns
    -------
    PIL.Image.Image
        The decoded image, fully loaded, turned upright if its EXIF says so.

    Raises
    ------
    UploadError
        Too many bytes, not a PNG/JPEG (GIF, text, ...), too many pixels (a decompression
        bomb), or a truncated or damaged file; the message names the problem.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise UploadError(f"Expected the file's bytes, got {type(data).__name__}.")
    size = data.nbytes if isinstance(data, memoryview) else len(data)
    if size > max_bytes:  # before any copy or decoding
        raise UploadError(
            f"The file is {_mb(size)}; the limit is {_mb(max_bytes)}. Upload a smaller "
            "PNG or JPEG (a digit needs only a few kilobytes)."
        )
    data = bytes(data)
    if not data:
        raise UploadError("The file is empty: upload a PNG or JPEG image of a digit.")
    with _PIL_LOCK:
        saved = Image.MAX_IMAGE_PIXELS
        Image.MAX_IMAGE_PIXELS = int(max_pixels)
        try:
            with warnings.catch_warnings():
                # Above MAX_IMAGE_PIXELS Pillow only warns (it errors at twice that):
                # make the warning an error so the limit is the one given here.
                warnings.simplefilter("error", Image.DecompressionBombWarning)
                return _decode(data, max_pixels)
        finally:
            Image.MAX_IMAGE_PIXELS = saved


def _decode(data: bytes, max_pixels: int) -> Image.Image:
    try:
        img = Image.open(io.BytesIO(data), formats=list(_FORMATS))
    except (Image.DecompressionBombWarning, Image.DecompressionBombError):
        raise UploadError(
            f"The image has more than {max_pixels:,} pixels (a decompression bomb, or just "
            "far too large): upload a smaller picture of the digit."
        ) from None
    except UnidentifiedImageError:
        raise UploadError(
            f"The file is {_what_is_it(data)}, which cannot be used: upload a PNG or JPEG."
        ) from None
    except (OSError, SyntaxError, ValueError, EOFError, struct.error, AttributeError) as exc:
        # A damaged header can trip the parser itself (Pillow raised AttributeError on a
        # PNG signature followed by junk).
        raise UploadError(
            f"The file is damaged ({type(exc).__name__}): export or save it again and upload "
            "the new file."
        ) from None
    # The header parser already checked the size; this repeats it for any format that
    # reports its size late, before a single pixel is decoded.
    width, height = img.size
    if width * height > max_pixels:
        raise UploadError(
            f"The image is {width}x{height} pixels, more than {max_pixels:,}: upload a "
            "smaller picture of the digit."
        )
    try:
        img.load()  # decodes now, inside the limits, so truncation shows up here
        img = ImageOps.exif_transpose(img)
    except (OSError, SyntaxError, ValueError, EOFError, struct.error) as exc:
        raise UploadError(
            f"The {img.format or 'image'} file is truncated or damaged ({exc}): export or "
            "save it again and upload the new file."
        ) from None
    return img


# -- MNIST-style preprocessing ------------------------------------------------------------
def _grey(image: Any) -> np.ndarray:
    """Ink-agnostic grey levels in [0, 1] from a PIL image or an array.

    An image with transparency (the drawable canvas gives RGBA with a transparent
    background) is read by its alpha channel: the strokes are wherever something was
    drawn, whatever their colour.  Otherwise the luminance (ITU-R 601) is used.
    """
    if isinstance(image, Image.Image):
        if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
            image = image.convert("RGBA")
        elif image.mode != "L":
            image = image.convert("RGB")
        a = np.asarray(image)
    else:
        a = np.asarray(image)
    if a.ndim == 3 and a.shape[-1] == 1:
        a = a[..., 0]
    if not (a.ndim == 2 or (a.ndim == 3 and a.shape[-1] in (3, 4))):
        raise UploadError(
            f"Expected a grey (H, W), RGB (H, W, 3) or RGBA (H, W, 4) image, got shape {a.shape}."
        )
    if a.size == 0:
        raise UploadError("The image is empty (no pixels).")
    if np.issubdtype(a.dtype, np.integer) or a.dtype == bool:
        a = a.astype(np.float32) / (255.0 if a.dtype != bool else 1.0)
    else:
        a = a.astype(np.float32)
        if not np.all(np.isfinite(a)):
            raise UploadError("The image holds NaN or infinite values.")
        if a.max() > 1.0:  # floats on the 0-255 scale
            a = a / 255.0
    if a.ndim == 2:
        return np.clip(a, 0.0, 1.0)
    if a.shape[-1] == 4 and a[..., 3].min() < 1.0:
        return np.clip(a[..., 3], 0.0, 1.0)
    rgb = a[..., :3]
    return np.clip(rgb @ np.array([0.299, 0.587, 0.114], dtype=np.float32), 0.0, 1.0)


def mnist_style(image: Any) -> np.ndarray:
    """A person's digit as an MNIST image: (28, 28) float32 in [0, 1], white ink on black.

    Steps, as MNIST was made: grey levels (alpha for transparent images such as the
    drawable canvas's RGBA, else luminance); inverted when the background (the median
    of the border pixels) is light, so ink is bright; the background level subtracted and
    the brightest ink scaled to 1; cropped to the ink's bounding box (ink: at least
    ``INK_THRESHOLD`` of the brightest); the longer side scaled to 20 pixels keeping the
    aspect ratio (antialiased); pasted into 28x28 so that the centre of mass sits at
    pixel (14, 14) as in MNIST (rounded to whole pixels, kept inside the frame).  An
    MNIST digit comes back almost unchanged (correlation at least 0.9997 on the first
    200 mnist-5k test digits of 3 and 5).

    Parameters
    ----------
    image : PIL.Image.Image or array
        From :func:`load_upload`, or an array (H, W) grey, (H, W, 3) RGB or (H, W, 4)
        RGBA; integers on 0-255, floats on 0-1.

    Returns
    -------
    float32 array (28, 28)

    Raises
    ------
    UploadError
        For an image with no ink (blank) or an unusable shape.
    """
    g = _grey(image)
    border = np.concatenate([g[0], g[-1], g[1:-1, 0], g[1:-1, -1]])
    if np.median(border) > 0.5:
        g = 1.0 - g
        border = 1.0 - border
    background = float(np.median(border))
    peak = float(g.max())
    if peak - background < 0.05:
        raise UploadError("No digit found: the image is blank. Draw or upload a digit.")
    g = np.clip((g - background) / (peak - background), 0.0, 1.0)
    rows = np.flatnonzero((g >= INK_THRESHOLD).any(axis=1))
    cols = np.flatnonzero((g >= INK_THRESHOLD).any(axis=0))
    g = g[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]
    h, w = g.shape
    scale = 20.0 / max(h, w)
    size = (max(1, round(w * scale)), max(1, round(h * scale)))  # PIL: (width, height)
    small = np.asarray(Image.fromarray(g).resize(size, Image.Resampling.LANCZOS))
    small = np.clip(small, 0.0, 1.0)  # Lanczos rings slightly outside [0, 1]
    total = float(small.sum())
    ys, xs = np.indices(small.shape)
    cy, cx = (ys * small).sum() / total, (xs * small).sum() / total
    # MNIST's centres of mass sit at pixel (14, 14) (row and column index; the mean over
    # mnist-5k is about 14.0 both ways), not at the geometric middle 13.5.
    top = int(np.clip(round(_CENTRE - cy), 0, 28 - small.shape[0]))
    left = int(np.clip(round(_CENTRE - cx), 0, 28 - small.shape[1]))
    out = np.zeros((28, 28), dtype=np.float32)
    out[top : top + small.shape[0], left : left + small.shape[1]] = small
    return out
