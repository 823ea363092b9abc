"""A person's own images as a dataset: a zip of folders, one per class.

``read_image_zip`` checks everything before it keeps anything: the zip's size, the number
of files, each file's size as declared *and* as actually inflated (a zip's header can lie),
the pixels of all the images together as their headers declare them (before any is
decoded: decoding costs the web server's CPU by the pixel), and every image through
:func:`csvm.data.images.load_upload` (PNG or JPEG only, pixel bombs refused).  The images
become 28×28 grey (or 28×28 colour, three channels).

:func:`member_problem` says in plain words why a zip member cannot be read (encrypted,
compressed with a method Python does not read, damaged); the run export and the filter
lab's uploads use it too.

``save_own`` keeps the arrays in a folder of their own under :func:`own_root` (a temporary
folder of this machine, never the server's data folders) and names the dataset
``own-<16 hex digits>``: the registry, the worker processes and every page then load it
like any other dataset.  Each folder records the client (an opaque owner id) that uploaded
it, so a reload of that browser finds it again and its bytes count against that client.

Disk: :class:`UploadQuota` bounds the bytes of all uploads on the server and of each client
(``CSVM_UPLOAD_QUOTA_MB``, ``CSVM_UPLOAD_QUOTA_PER_CLIENT_MB``); :func:`store_own` refuses
an upload that would pass either, by name.  ``remove_unused`` deletes every dataset that
nothing uses any more (the app says what is in use: its live sessions and the runs of its
job pool), ``remove_own`` one of them.
"""

from __future__ import annotations

import io
import json
import lzma
import os
import re
import secrets
import shutil
import struct
import tempfile
import threading
import time
import zipfile
import zlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import numpy as np
from PIL import Image

from csvm.data.images import UploadError, load_upload
from csvm.exceptions import DatasetError

__all__ = [
    "MAX_TOTAL_PIXELS",
    "MEMBER_ERRORS",
    "OWN_PATTERN",
    "OwnImages",
    "UploadQuota",
    "is_own",
    "load_own",
    "member_problem",
    "own_meta",
    "own_root",
    "own_usage",
    "read_image_zip",
    "remove_idle",
    "remove_own",
    "remove_unused",
    "save_own",
    "store_own",
    "touch_own",
]

#: The name of a dataset of one's own images.
OWN_PATTERN = re.compile(r"^own-[0-9a-f]{16}$")
MAX_ZIP_BYTES = 50 * 2**20
MAX_IMAGES = 5000
MAX_FILE_BYTES = 2 * 2**20
MAX_INFLATED_BYTES = 300 * 2**20
#: Most pixels all the images of one upload may hold together, read from their headers
#: before any is decoded.  Decoding and shrinking costs the server 5 to 25 ns a pixel: a
#: 20 MB zip of 5,000 blank 1999×1999 PNGs passed every other limit and took two CPU
#: minutes.  400 million is 5,000 images of 280×280 pixels, or 100 at the 4-megapixel
#: limit of one image, and what 50 MB of ordinary JPEG photos (about 0.13 byte a pixel)
#: unpack to: every upload within the other limits that is not made to be heavy fits.
MAX_TOTAL_PIXELS = 400_000_000
MIN_PER_CLASS = 10  # so the 10 % validation split holds one image of every class
MAX_CLASSES = 10
SIDE = 28
_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")
#: What opening or reading a zip member raises when the member cannot be read: encrypted
#: (RuntimeError), a compression method Python does not read such as Deflate64
#: (NotImplementedError), or damaged (a CRC that does not match, a corrupt stream).
MEMBER_ERRORS = (
    zipfile.BadZipFile,
    RuntimeError,
    NotImplementedError,
    zlib.error,
    lzma.LZMAError,
    OSError,
    EOFError,
)
#: What PIL's header parser raises on a damaged image (and its pixel-bomb guard).
_HEADER_ERRORS = (
    OSError,
    SyntaxError,
    ValueError,
    EOFError,
    struct.error,
    AttributeError,
    Image.DecompressionBombError,
    Image.DecompressionBombWarning,
)


def member_problem(name: str, error: BaseException) -> str:
    """Why a zip member could not be read, in plain words (the caller adds what to do).

    Parameters
    ----------
    name : str
        The member's name in the zip.
    error : exception
        One of :data:`MEMBER_ERRORS`, as opening or reading the member raised it.

    Returns
    -------
    str
        E.g. "config.json in the zip cannot be read (it is encrypted)".

    Examples
    --------
    >>> member_problem("a/1.png", NotImplementedError("That compression method ..."))
    'a/1.png in the zip cannot be read (it is compressed with a method this server does not read)'
    """
    # NotImplementedError is a RuntimeError: it is asked first.
    if isinstance(error, NotImplementedError):
        why = "it is compressed with a method this server does not read"
    elif isinstance(error, RuntimeError):  # zipfile's other RuntimeError: a password is needed
        why = "it is encrypted"
    else:
        why = "it is damaged"
    return f"{name} in the zip cannot be read ({why})"


class OwnImages:
    """Images (n, C, 28, 28) uint8, labels 0..k-1 and the class (folder) names."""

    def __init__(self, X: np.ndarray, y: np.ndarray, class_names: list[str]):
        self.X, self.y, self.class_names = X, y, class_names

    def counts(self) -> dict[str, int]:
        return {n: int(np.sum(self.y == k)) for k, n in enumerate(self.class_names)}


def own_root() -> Path:
    """Where own datasets are kept: ``$CSVM_OWN_DIR``, else ``<temp>/csvm-own``."""
    return Path(os.environ.get("CSVM_OWN_DIR") or Path(tempfile.gettempdir()) / "csvm-own")


def is_own(name: str) -> bool:
    """Whether ``name`` names a dataset of one's own images."""
    return bool(OWN_PATTERN.match(str(name)))


def _folder(name: str) -> Path:
    if not is_own(name):
        raise DatasetError(f"{name!r} is not the name of an uploaded dataset (own-<16 hex>).")
    return own_root() / name


def _members(zf: zipfile.ZipFile) -> list[tuple[zipfile.ZipInfo, str]]:
    """The image files of the zip and their class: the folder each lies in."""
    out = []
    for info in zf.infolist():
        path = PurePosixPath(info.filename.replace("\\", "/"))
        if info.is_dir() or any(p.startswith((".", "__MACOSX")) for p in path.parts):
            continue
        if path.suffix.lower() not in _IMAGE_SUFFIXES:
            raise UploadError(
                f"{info.filename!r} is not a PNG or JPEG file: the zip may hold only "
                "images, in one folder per class."
            )
        if len(path.parts) < 2:
            raise UploadError(
                f"{info.filename!r} is not in a folder: put each class's images in a folder "
                "named after the class (e.g. cats/1.png, dogs/1.png)."
            )
        out.append((info, path.parts[-2]))
    return out


def _check_classes(labels: list[str]) -> list[str]:
    names = sorted(set(labels))
    for name in names:
        # Class names travel in links and comma lists of classes: short, printable, no comma.
        if len(name) > 40 or "," in name or not name.isprintable() or not name.strip():
            raise UploadError(
                f"The folder name {name[:40]!r} cannot name a class: use up to 40 printable "
                "characters without commas."
            )
    if not 2 <= len(names) <= MAX_CLASSES:
        raise UploadError(
            f"The zip has {len(names)} class folder{'s' if len(names) != 1 else ''} "
            f"({', '.join(names) or 'none'}); give 2 to {MAX_CLASSES} folders, one per class."
        )
    few = {n: labels.count(n) for n in names if labels.count(n) < MIN_PER_CLASS}
    if few:
        listed = ", ".join(f"{n}: {c}" for n, c in few.items())
        raise UploadError(
            f"Each class needs at least {MIN_PER_CLASS} images (to split into training, "
            f"validation and test images); too few in {listed}."
        )
    return names


def _to_array(image: Image.Image, colour: bool) -> np.ndarray:
    """28×28, grey (1, 28, 28) or colour (3, 28, 28), uint8."""
    mode = "RGB" if colour else "L"
    small = image.convert(mode).resize((SIDE, SIDE), Image.Resampling.LANCZOS)
    a = np.asarray(small, dtype=np.uint8)
    return a.transpose(2, 0, 1) if colour else a[None]


def _read_image(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """One image file's bytes, never more than :data:`MAX_FILE_BYTES` inflated."""
    if info.file_size > MAX_FILE_BYTES:
        raise UploadError(f"{info.filename!r} is larger than 2 MB: use smaller images.")
    try:
        with zf.open(info) as fh:
            data = fh.read(MAX_FILE_BYTES + 1)  # never more than the limit
    except MEMBER_ERRORS as err:
        raise UploadError(
            f"{member_problem(repr(info.filename), err)}: zip the class folders again, "
            "without a password and with ordinary compression."
        ) from None
    if len(data) > MAX_FILE_BYTES:
        raise UploadError(
            f"{info.filename!r} inflates beyond its limit (its header said "
            f"{info.file_size:,} bytes): the zip is refused."
        )
    return data


def _header_pixels(data: bytes) -> int:
    """Width × height as the image's header declares them; nothing is decoded (PIL opens
    lazily).  0 for a header PIL cannot read: :func:`load_upload` names the problem."""
    try:
        with Image.open(io.BytesIO(data), formats=["PNG", "JPEG"]) as image:
            width, height = image.size
    except _HEADER_ERRORS:
        return 0
    return width * height


def _check_totals(zf: zipfile.ZipFile, members: list[tuple[zipfile.ZipInfo, str]]) -> None:
    """Refuse the zip when its images inflate to more than :data:`MAX_INFLATED_BYTES` or
    declare more than :data:`MAX_TOTAL_PIXELS` in all, before any image is decoded."""
    inflated = pixels = 0
    for info, _ in members:
        data = _read_image(zf, info)
        inflated += len(data)
        if inflated > MAX_INFLATED_BYTES:
            raise UploadError(
                f"{info.filename!r} inflates beyond its limit (its header said "
                f"{info.file_size:,} bytes): the zip is refused."
            )
        pixels += _header_pixels(data)
    if pixels > MAX_TOTAL_PIXELS:
        raise UploadError(
            f"These images hold {pixels / 1e6:,.0f} million pixels in all; this server reads "
            f"at most {MAX_TOTAL_PIXELS // 10**6:,} million: use fewer or smaller images "
            f"(each becomes {SIDE}×{SIDE} pixels, so a few hundred pixels a side is plenty)."
        )


def read_image_zip(blob: bytes, *, colour: bool = False) -> OwnImages:
    """The images of a zip of class folders, checked (see the module docstring).

    Raises
    ------
    UploadError
        Naming what was wrong: too large, not a zip, too many files, a file that is not
        a PNG/JPEG, cannot be read from the zip or inflates beyond its limit, too many
        pixels in all, too few classes or images per class.
    """
    if len(blob) > MAX_ZIP_BYTES:
        raise UploadError(
            f"The zip is {len(blob) / 2**20:.1f} MB; the limit is {MAX_ZIP_BYTES // 2**20} MB."
        )
    try:
        zf = zipfile.ZipFile(io.BytesIO(blob))
    except zipfile.BadZipFile:
        raise UploadError("This is not a zip file: upload a .zip of class folders.") from None
    with zf:
        members = _members(zf)
        if len(members) > MAX_IMAGES:
            raise UploadError(f"The zip holds {len(members)} images; the limit is {MAX_IMAGES}.")
        names = _check_classes([label for _, label in members])
        # A first pass reads only bytes and headers: inflating is cheap, decoding is not.
        _check_totals(zf, members)
        images, labels = [], []
        for info, label in members:
            data = _read_image(zf, info)
            try:
                image = load_upload(data, max_bytes=MAX_FILE_BYTES)
            except UploadError as err:
                raise UploadError(f"{info.filename!r}: {err}") from None
            images.append(_to_array(image, colour))
            labels.append(names.index(label))
    return OwnImages(np.stack(images), np.asarray(labels, dtype=np.int64), names)


def save_own(images: OwnImages, owner: str = "") -> str:
    """Keep ``images`` as a dataset, with no quota; returns its name (``own-<16 hex>``).

    ``owner`` is the opaque id of the client that uploaded it ("" for none).  The app
    uses :func:`store_own`, which checks the disk quotas first.
    """
    folder = _write(images, owner)
    name = f"own-{secrets.token_hex(8)}"
    folder.rename(own_root() / name)
    return name


def _write(images: OwnImages, owner: str) -> Path:
    """The dataset's files in a fresh hidden folder of :func:`own_root` (``.new-…``: no
    dataset name, so nothing loads or counts it until it is renamed)."""
    folder = own_root() / f".new-{secrets.token_hex(8)}"
    folder.mkdir(parents=True, mode=0o700)
    # Compressed: uint8 images of a few classes take about a third of their raw bytes.
    np.savez_compressed(folder / "data.npz", X=images.X, y=images.y)
    meta = {
        "classes": images.class_names,
        "image_shape": list(images.X.shape[1:]),
        "counts": images.counts(),
        "owner": str(owner),
        "created": time.time(),
    }
    (folder / "meta.json").write_text(json.dumps(meta))
    return folder


@dataclass(frozen=True)
class UploadQuota:
    """How much disk the uploaded images may take.

    Parameters
    ----------
    total_bytes : int
        All uploads on the server together (``CSVM_UPLOAD_QUOTA_MB``, default 500 MB).
    per_client_bytes : int
        The uploads of one client, i.e. one browser (``CSVM_UPLOAD_QUOTA_PER_CLIENT_MB``,
        default 60 MB: the largest upload, 5,000 colour images, takes about 12 MB).
    grace_seconds : float
        How long an upload nothing uses is kept before it is removed
        (``CSVM_UPLOAD_GRACE_SECONDS``, default 60: a reload of the page finds it).
    """

    total_bytes: int = 500 * 2**20
    per_client_bytes: int = 60 * 2**20
    grace_seconds: float = 60.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> UploadQuota:
        """The quota with each value its environment variable sets (others the defaults).

        Raises
        ------
        ValueError
            Naming the variable whose value is not a number >= 0.
        """
        environ = os.environ if environ is None else environ
        values: dict[str, float] = {}
        for field, var, scale in _QUOTA_ENV:
            text = environ.get(var, "").strip()
            if not text:
                continue
            try:
                value = float(text)
            except ValueError:
                value = float("nan")
            if not (value >= 0 and value < float("inf")):
                raise ValueError(
                    f"The environment variable {var}={text[:20]!r} is not a number >= 0; "
                    "fix or unset it."
                )
            values[field] = value * scale
        return cls(
            total_bytes=int(values.get("total_bytes", cls.total_bytes)),
            per_client_bytes=int(values.get("per_client_bytes", cls.per_client_bytes)),
            grace_seconds=values.get("grace_seconds", cls.grace_seconds),
        )


_QUOTA_ENV = (
    ("total_bytes", "CSVM_UPLOAD_QUOTA_MB", 2**20),
    ("per_client_bytes", "CSVM_UPLOAD_QUOTA_PER_CLIENT_MB", 2**20),
    ("grace_seconds", "CSVM_UPLOAD_GRACE_SECONDS", 1),
)
#: Quota checks and writes of the server's sessions (threads of one process) in turn, so
#: two uploads at once cannot both pass a quota that has room for one.
_STORE_LOCK = threading.Lock()


def _bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.iterdir() if f.is_file())


def own_usage() -> dict[str, tuple[str, int]]:
    """Every own dataset on disk: name -> (the owner recorded with it, bytes on disk)."""
    root = own_root()
    out: dict[str, tuple[str, int]] = {}
    if not root.is_dir():
        return out
    for folder in root.iterdir():
        if not is_own(folder.name):
            continue
        try:
            owner = str(json.loads((folder / "meta.json").read_text()).get("owner", ""))
            out[folder.name] = (owner, _bytes(folder))
        except (OSError, ValueError, AttributeError):
            continue  # removed meanwhile, or half written: not a dataset
    return out


def store_own(
    images: OwnImages, owner: str, quota: UploadQuota, replacing: str | None = None
) -> str:
    """:func:`save_own` within the disk quotas; returns the new dataset's name.

    Parameters
    ----------
    images : OwnImages
    owner : str
        The client's opaque id (its bytes are counted against ``quota.per_client_bytes``).
    quota : UploadQuota
    replacing : str, optional
        A dataset of the same client that the caller removes once this one is kept (its
        bytes are not counted).

    Raises
    ------
    UploadError
        When the server's or the client's quota has no room, saying how much is used,
        what the limit is, which variable sets it and what to do.
    """
    with _STORE_LOCK:
        folder = _write(images, owner)
        try:
            _check_room(_bytes(folder), owner, quota, replacing)
        except UploadError:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        name = f"own-{secrets.token_hex(8)}"
        folder.rename(own_root() / name)
        return name


def _check_room(need: int, owner: str, quota: UploadQuota, replacing: str | None) -> None:
    usage = {n: v for n, v in own_usage().items() if n != replacing}
    total = sum(size for _, size in usage.values())
    mine = sum(size for who, size in usage.values() if owner and who == owner)
    mb = 2**20
    if mine + need > quota.per_client_bytes:
        raise UploadError(
            f"Your uploaded images on this server already take {mine / mb:.3g} MB and these "
            f"need {need / mb:.3g} MB: each browser may keep {quota.per_client_bytes / mb:g} "
            "MB (CSVM_UPLOAD_QUOTA_PER_CLIENT_MB). Images that a run of yours still shows "
            "are kept until the run is forgotten; close the tabs of older runs or wait a "
            "few minutes, then try again."
        )
    if total + need > quota.total_bytes:
        raise UploadError(
            f"The server's uploaded images already take {total / mb:.3g} MB and these need "
            f"{need / mb:.3g} MB: the server keeps at most {quota.total_bytes / mb:g} MB "
            "(CSVM_UPLOAD_QUOTA_MB). Uploads are removed when their sessions end: try again "
            "in a few minutes, or ask whoever runs the server to raise the limit."
        )


def own_meta(name: str) -> dict:
    """The classes and image shape of an own dataset (DatasetError when it is gone)."""
    try:
        return json.loads((_folder(name) / "meta.json").read_text())
    except (OSError, ValueError):
        raise DatasetError(
            f"The uploaded images {name!r} are no longer on this server (they are removed "
            "when the session that uploaded them ends): upload the zip again."
        ) from None


def load_own(name: str) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Images (uint8), labels and class names of an own dataset."""
    meta = own_meta(name)
    with np.load(_folder(name) / "data.npz", allow_pickle=False) as npz:
        return npz["X"], npz["y"], tuple(meta["classes"])


def touch_own(name: str) -> None:
    """Mark an own dataset as in use now (for :func:`remove_idle`)."""
    try:
        os.utime(_folder(name))
    except (OSError, DatasetError):
        pass


def remove_own(name: str) -> None:
    """Delete an own dataset (nothing happens when it is already gone)."""
    shutil.rmtree(_folder(name), ignore_errors=True)


def remove_idle(max_idle_seconds: float) -> list[str]:
    """Delete every own dataset not used for ``max_idle_seconds``; returns their names."""
    return remove_unused((), max_idle_seconds)


def remove_unused(in_use: Collection[str], grace_seconds: float) -> list[str]:
    """Delete every own dataset that is not ``in_use`` and was not touched (created, or
    marked by :func:`touch_own`) for ``grace_seconds``; returns their names.

    Half-written folders (``.new-…``) older than an hour go too (a server stopped during
    a write).
    """
    gone: list[str] = []
    root = own_root()
    if not root.is_dir():
        return gone
    now = time.time()
    keep = set(in_use)
    for folder in root.iterdir():
        try:
            age = now - folder.stat().st_mtime
        except OSError:
            continue  # removed meanwhile
        if is_own(folder.name) and folder.name not in keep and age > grace_seconds:
            shutil.rmtree(folder, ignore_errors=True)
            gone.append(folder.name)
        elif folder.name.startswith(".new-") and age > 3600:
            shutil.rmtree(folder, ignore_errors=True)
    return gone
