"""A person's own images as a dataset (issue 23): a zip of class folders, checked before
anything is kept, loaded by every page and worker like a built-in dataset, removed after."""

import io
import os
import time
import zipfile

import numpy as np
import pytest
from PIL import Image

from csvm.data import load_pair
from csvm.data.images import UploadError
from csvm.data.own_images import (
    is_own,
    load_own,
    read_image_zip,
    remove_idle,
    remove_own,
    save_own,
)
from csvm.data.protocols import load_multiclass
from csvm.exceptions import DatasetError
from csvm.runs.config import RunConfig


@pytest.fixture(autouse=True)
def own_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CSVM_OWN_DIR", str(tmp_path / "own"))
    return tmp_path / "own"


def _png(value: int, size=(40, 30), mode="L") -> bytes:
    buf = io.BytesIO()
    Image.new(mode, size, value if mode == "L" else (value, 0, 255 - value)).save(buf, "PNG")
    return buf.getvalue()


def _zip(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _classes(n=10, names=("cats", "dogs"), top="my images/"):
    files = {}
    for k, name in enumerate(names):
        for i in range(n):
            files[f"{top}{name}/{i}.png"] = _png(40 + 150 * k + i)
    return files


def test_a_zip_of_class_folders_becomes_a_dataset_every_loader_reads():
    images = read_image_zip(_zip({**_classes(), "__MACOSX/._x.png": b"junk", ".DS_Store": b""}))
    assert images.class_names == ["cats", "dogs"] and images.counts() == {"cats": 10, "dogs": 10}
    assert images.X.shape == (20, 1, 28, 28) and images.X.dtype == np.uint8
    name = save_own(images)
    assert is_own(name)
    data = load_pair(name, "cats", "dogs")
    assert data.class_names == ("cats", "dogs") and data.image_shape == (1, 28, 28)
    assert len(data.y_train) + len(data.y_val) + len(data.y_test) == 20
    assert 0 <= data.X_train.min() and data.X_train.max() <= 1
    # A run's settings accept the name; the dataset's classes are checked like others.
    config = RunConfig(dataset=name, class_a="cats", class_b="dogs", n_train=None)
    assert config.problems(classes=["cats", "dogs"]) == []
    X, y, names = load_own(name)
    assert names == ("cats", "dogs") and len(X) == 20
    remove_own(name)
    with pytest.raises(DatasetError, match="no longer on this server"):
        load_pair(name, "cats", "dogs")


def test_colour_images_keep_three_channels_and_several_classes_work():
    files = {}
    for k, name in enumerate(("red", "green", "blue")):
        for i in range(10):
            files[f"{name}/{i}.png"] = _png(30 * k + i, mode="RGB")
    name = save_own(read_image_zip(_zip(files), colour=True))
    data = load_multiclass(name, protocol=None)
    assert data.X_train.shape[1:] == (3, 28, 28) and len(data.class_names) == 3


@pytest.mark.parametrize(
    ("files", "says"),
    [
        ({"a/1.png": _png(1)}, r"1 class folder \(a\)"),
        ({**_classes(n=3)}, "at least 10 images"),
        ({"cats/1.gif": b"GIF89a", **_classes()}, "not a PNG or JPEG file"),
        ({"loose.png": _png(1), **_classes()}, "not in a folder"),
        ({"cats/bad.png": b"\x89PNG\r\n\x1a\nnot really", **_classes()}, "cats/bad.png"),
        (_classes(names=("a,b", "c")), "without commas"),
    ],
)
def test_bad_zips_are_refused_by_name(files, says):
    with pytest.raises(UploadError, match=says):
        read_image_zip(_zip(files))


def test_a_zip_bomb_is_bounded_by_the_bytes_actually_read():
    bomb = _zip({**_classes(), "cats/bomb.png": b"\0" * (5 * 2**20)})  # deflates to ~5 KB
    assert len(bomb) < 100_000
    with pytest.raises(UploadError, match="larger than 2 MB|inflates beyond"):
        read_image_zip(bomb)
    with pytest.raises(UploadError, match="not a zip"):
        read_image_zip(b"PK not a zip at all")


def test_idle_datasets_are_removed_and_names_never_escape_the_folder(own_dir):
    name = save_own(read_image_zip(_zip(_classes())))
    old = time.time() - 7200
    os.utime(own_dir / name, (old, old))
    assert remove_idle(3600) == [name] and not (own_dir / name).exists()
    for bad in ("own-../../etc", "own-XYZ", "mnist"):
        assert not is_own(bad)
    with pytest.raises(DatasetError):
        load_own("own-../../etc/passwd")
