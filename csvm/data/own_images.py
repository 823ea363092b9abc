"""A person's own images as a dataset: a zip of folders, one per class.

``read_image_zip`` checks everything before it keeps anything: the zip's size, the number
of files, each file's size as declared *and* as actually inflated (a zip's header can lie),
and every image through :func:`csvm.data.images.load_upload` (PNG or JPEG only, pixel
bombs refused).  The images become 28×28 grey (or 28×28 colour, three channels).

``save_own`` keeps the arrays in a folder of their own under :func:`own_root` (a temporary
folder of this machine, never the server's data folders) and names the dataset
``own-<16 hex digits>``: the registry, the worker processes and every page then load it
like any other dataset.  ``remove_own`` deletes it, ``remove_idle`` every one not used for
a while (a session that ended).
"""

from __future__ import annotations

import io
import json
import os
import re
import secrets
import shutil
import tempfile
import time
import zipfile
from pathlib import Path, PurePosixPath

import numpy as np
from PIL import Image

from csvm.data.images import UploadError, load_upload
from csvm.exceptions import DatasetError

__all__ = [
    "OWN_PATTERN",
    "OwnImages",
    "is_own",
    "load_own",
    "own_meta",
    "own_root",
    "read_image_zip",
    "remove_idle",
    "remove_own",
    "save_own",
    "touch_own",
]

#: The name of a dataset of one's own images.
OWN_PATTERN = re.compile(r"^own-[0-9a-f]{16}$")
MAX_ZIP_BYTES = 50 * 2**20
MAX_IMAGES = 5000
MAX_FILE_BYTES = 2 * 2**20
MAX_INFLATED_BYTES = 300 * 2**20
MIN_PER_CLASS = 10  # so the 10 % validation split holds one image of every class
MAX_CLASSES = 10
SIDE = 28
_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


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
            f"The zip has {len(names)} class folder(s) ({', '.join(names) or 'none'}); give 2 "
            f"to {MAX_CLASSES} folders, one per class."
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


def read_image_zip(blob: bytes, *, colour: bool = False) -> OwnImages:
    """The images of a zip of class folders, checked (see the module docstring).

    Raises
    ------
    UploadError
        Naming what was wrong: too large, not a zip, too many files, a file that is not
        a PNG/JPEG or inflates beyond its limit, too few classes or images per class.
    """
    if len(blob) > MAX_ZIP_BYTES:
        raise UploadError(f"The zip is {len(blob) / 2**20:.1f} MB; the limit is 50 MB.")
    try:
        zf = zipfile.ZipFile(io.BytesIO(blob))
    except zipfile.BadZipFile:
        raise UploadError("This is not a zip file: upload a .zip of class folders.") from None
    with zf:
        members = _members(zf)
        if len(members) > MAX_IMAGES:
            raise UploadError(f"The zip holds {len(members)} images; the limit is {MAX_IMAGES}.")
        names = _check_classes([label for _, label in members])
        images, labels, inflated = [], [], 0
        for info, label in members:
            if info.file_size > MAX_FILE_BYTES:
                raise UploadError(f"{info.filename!r} is larger than 2 MB: use smaller images.")
            try:
                with zf.open(info) as fh:
                    data = fh.read(MAX_FILE_BYTES + 1)  # never more than the limit
            except (zipfile.BadZipFile, OSError, NotImplementedError, RuntimeError) as err:
                raise UploadError(f"{info.filename!r} cannot be read from the zip: {err}") from None
            inflated += len(data)
            if len(data) > MAX_FILE_BYTES or inflated > MAX_INFLATED_BYTES:
                raise UploadError(
                    f"{info.filename!r} inflates beyond its limit (its header said "
                    f"{info.file_size:,} bytes): the zip is refused."
                )
            try:
                image = load_upload(data, max_bytes=MAX_FILE_BYTES)
            except UploadError as err:
                raise UploadError(f"{info.filename!r}: {err}") from None
            images.append(_to_array(image, colour))
            labels.append(names.index(label))
    return OwnImages(np.stack(images), np.asarray(labels, dtype=np.int64), names)


def save_own(images: OwnImages) -> str:
    """Keep ``images`` as a dataset; returns its name (``own-<16 hex>``)."""
    name = f"own-{secrets.token_hex(8)}"
    folder = own_root() / name
    folder.mkdir(parents=True, mode=0o700)
    np.savez(folder / "data.npz", X=images.X, y=images.y)
    meta = {"classes": images.class_names, "image_shape": list(images.X.shape[1:])}
    (folder / "meta.json").write_text(json.dumps(meta))
    return name


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
    gone = []
    root = own_root()
    if not root.is_dir():
        return gone
    now = time.time()
    for folder in root.iterdir():
        if is_own(folder.name) and now - folder.stat().st_mtime > max_idle_seconds:
            shutil.rmtree(folder, ignore_errors=True)
            gone.append(folder.name)
    return gone
