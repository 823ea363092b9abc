"""What datasets exist, their classes, and where their files are looked for.

Nothing here reads a data file: :func:`available` and :func:`list_datasets` only check
that the files are present (whether they are intact is checked on load).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import platformdirs

from csvm.data.offline import digits, mnist_5k, stratified_split
from csvm.data.teaching import SHAPE_CLASSES, shapes
from csvm.exceptions import DatasetError

__all__ = [
    "DatasetSpec",
    "available",
    "data_home",
    "fetch_command",
    "folders",
    "list_datasets",
    "locate",
    "offline_arrays",
    "offline_split",
    "spec",
]

DEFAULT_DATASET = "mnist-5k"
PROTOCOLS = (None, "thesis")
COLORS = ("stacked", "rgb", "gray")

DIGITS = tuple(str(d) for d in range(10))
FASHION = (
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
)
CIFAR = (
    "airplane",
    "automobile",
    "bird",
    "cat",
    "deer",
    "dog",
    "frog",
    "horse",
    "ship",
    "truck",
)
# IDX files by role; each may be gzipped or raw, with "-idx" or ".idx" in the name.
IDX_STEMS = {
    "train_images": "train-images-idx3-ubyte",
    "train_labels": "train-labels-idx1-ubyte",
    "test_images": "t10k-images-idx3-ubyte",
    "test_labels": "t10k-labels-idx1-ubyte",
}
CIFAR_REQUIRED = ("data_batch_1", "data_batch_2", "test_batch")
CIFAR_EXTRA = ("data_batch_3", "data_batch_4", "data_batch_5")


@dataclass(frozen=True)
class DatasetSpec:
    """What the registry knows about a dataset before any file is read.

    A built-in dataset names ``arrays``, the function that returns all its images
    (float32 ``(n, channels, height, width)`` in [0, 1]) and int64 labels; one read from
    files names the ``files`` it needs instead.
    """

    name: str
    description: str
    image_shape: tuple[int, int, int]
    classes: tuple[str, ...]
    files: tuple[str, ...] = ()
    arrays: Callable[[], tuple[np.ndarray, np.ndarray]] | None = None

    @property
    def offline(self) -> bool:
        """Whether the images ship with an installed package (no files, no network)."""
        return self.arrays is not None


DATASETS: dict[str, DatasetSpec] = {
    "shapes": DatasetSpec(
        "shapes",
        "Teaching set: a small bar, cross or corner at a random place in noise "
        "(6,000 images, made on the spot); works offline",
        (1, 28, 28),
        SHAPE_CLASSES,
        arrays=shapes,
    ),
    "mnist-5k": DatasetSpec(
        "mnist-5k",
        "5,000 real MNIST digits (500 per class) bundled with the package; works offline",
        (1, 28, 28),
        DIGITS,
        arrays=mnist_5k,
    ),
    "digits": DatasetSpec(
        "digits",
        "scikit-learn's 1,797 bundled 8×8 digits; works offline",
        (1, 8, 8),
        DIGITS,
        arrays=digits,
    ),
    "mnist": DatasetSpec(
        "mnist",
        "MNIST: 60,000 training and 10,000 test handwritten digits (IDX files)",
        (1, 28, 28),
        DIGITS,
        tuple(s + ".gz" for s in IDX_STEMS.values()),
    ),
    "fashion-mnist": DatasetSpec(
        "fashion-mnist",
        "Fashion-MNIST: 60,000 training and 10,000 test clothing images (IDX files)",
        (1, 28, 28),
        FASHION,
        tuple(s + ".gz" for s in IDX_STEMS.values()),
    ),
    "cifar10": DatasetSpec(
        "cifar10",
        "CIFAR-10: 32×32 colour images in 10 classes (python pickle batches)",
        (1, 96, 32),
        CIFAR,
        ("batches.meta", *CIFAR_REQUIRED),
    ),
}
#: The built-in datasets (their images ship with the package): those with ``arrays``.
OFFLINE = tuple(name for name, entry in DATASETS.items() if entry.offline)


def data_home(data_dir: str | os.PathLike | None = None) -> Path:
    """The folder searched for dataset files.

    Parameters
    ----------
    data_dir : path, optional
        Used when given; otherwise ``$CSVM_DATA_DIR``; otherwise the per-user cache
        folder ``platformdirs.user_cache_dir("csvm")``: ``$XDG_CACHE_HOME/csvm`` on
        Linux (``~/.cache/csvm`` when that is unset), ``~/Library/Caches/csvm`` on
        macOS, the local application data folder on Windows.

    Returns
    -------
    pathlib.Path
        The folder (it may not exist yet).
    """
    if data_dir is not None and str(data_dir) != "":
        return Path(data_dir).expanduser()
    if os.environ.get("CSVM_DATA_DIR"):
        return Path(os.environ["CSVM_DATA_DIR"]).expanduser()
    return Path(platformdirs.user_cache_dir("csvm"))


def spec(name: str) -> DatasetSpec:
    """The registry entry of ``name``, or a DatasetError listing the valid names.

    ``own-<16 hex>`` names a person's uploaded images (:mod:`csvm.data.own_images`)."""
    from csvm.data.own_images import is_own, own_meta

    if is_own(name):
        meta = own_meta(name)
        return DatasetSpec(
            name,
            f"Your own images: {len(meta['classes'])} classes, uploaded to this server",
            tuple(int(s) for s in meta["image_shape"]),
            tuple(str(c) for c in meta["classes"]),
        )
    if name not in DATASETS:
        raise DatasetError(f"Unknown dataset {name!r}: choose one of {', '.join(DATASETS)}.")
    return DATASETS[name]


def folders(name: str, root: Path) -> list[Path]:
    """The folders searched, most specific first."""
    if name == "cifar10":
        return [root / "cifar10" / "cifar-10-batches-py", root / "cifar-10-batches-py"]
    return [root / name, root]


def _idx_path(folder: Path, stem: str) -> Path | None:
    # Some mirrors (and the gzip headers of the originals) use "train-images.idx3-ubyte".
    dotted = stem.replace("-idx", ".idx")
    for candidate in (stem + ".gz", stem, dotted + ".gz", dotted):
        if (folder / candidate).is_file():
            return folder / candidate
    return None


def offline_arrays(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The images and labels of the built-in dataset ``name`` (its registry entry's
    ``arrays``)."""
    entry = spec(name)
    if entry.arrays is None:
        raise DatasetError(f"{name!r} is not a built-in dataset: it is read from files.")
    return entry.arrays()


@functools.lru_cache(maxsize=3)
def offline_split(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Train / validation / test indices: 70 / 10 / 20 %, stratified, seed 0 always."""
    return stratified_split(offline_arrays(name)[1])


def fetch_command(name: str, data_dir=None) -> str:
    """The shell command that downloads ``name`` ("" for the built-in datasets)."""
    if spec(name).offline:
        return ""
    extra = f" --data-dir {data_dir}" if data_dir is not None else ""
    return f"python -m csvm data fetch {name}{extra}"


def locate(name: str, data_dir=None) -> dict[str, Path]:
    """The files of ``name`` by role, or a DatasetError that says what is missing where."""
    entry = spec(name)
    searched = folders(name, data_home(data_dir))
    found_anything: list[str] = []
    for folder in searched:
        if name == "cifar10":
            files = {f: folder / f for f in (*CIFAR_REQUIRED, *CIFAR_EXTRA, "batches.meta")}
            files = {k: p for k, p in files.items() if p.is_file()}
            missing = [f for f in CIFAR_REQUIRED if f not in files]
        else:
            files = {role: _idx_path(folder, stem) for role, stem in IDX_STEMS.items()}
            missing = [IDX_STEMS[r] + "[.gz]" for r, p in files.items() if p is None]
            files = {k: p for k, p in files.items() if p is not None}
        if not missing:
            return files
        if files:
            found_anything.append(f"{folder} has {', '.join(p.name for p in files.values())}")
    partial = f" (Partly there: {'; '.join(found_anything)}.)" if found_anything else ""
    raise DatasetError(
        f"The {name} files are not on this machine: expected {', '.join(entry.files)} "
        f"(gzipped or not) in one of {', '.join(str(f) for f in searched)}.{partial} "
        f"Download them with `{fetch_command(name, data_dir)}`, or point CSVM_DATA_DIR "
        "(or data_dir) at a folder that holds them."
    )


def available(name: str, data_dir: str | os.PathLike | None = None) -> bool:
    """Whether ``name`` can be loaded now without a download.

    Parameters
    ----------
    name : str
        A key of :data:`DATASETS`.
    data_dir : path, optional
        See :func:`data_home`.

    Returns
    -------
    bool
        Always True for the offline datasets; for the others, whether every required
        file was found (not whether it is intact: that is checked on load).
    """
    from csvm.data.own_images import is_own

    if is_own(name):
        try:
            spec(name)
        except DatasetError:
            return False
        return True
    if spec(name).offline:
        return True
    try:
        locate(name, data_dir)
    except DatasetError:
        return False
    return True


def list_datasets(data_dir: str | os.PathLike | None = None) -> list[dict[str, Any]]:
    """Every registered dataset, with whether it is available and where.

    Parameters
    ----------
    data_dir : path, optional
        See :func:`data_home`.

    Returns
    -------
    list of dict
        Keys ``name``, ``description``, ``image_shape``, ``classes``, ``available``,
        ``location`` (the folder that holds it, "built in", or where a fetch would put
        it) and ``fetch_command`` (empty for the built-in datasets).
    """
    rows = []
    for name, entry in DATASETS.items():
        if entry.offline:
            ok, location = True, "built in"
        else:
            try:
                location = str(next(iter(locate(name, data_dir).values())).parent)
                ok = True
            except DatasetError:
                ok, location = False, str(folders(name, data_home(data_dir))[0])
        rows.append(
            {
                "name": name,
                "description": entry.description,
                "image_shape": entry.image_shape,
                "classes": list(entry.classes),
                "available": ok,
                "location": location,
                "fetch_command": fetch_command(name, data_dir),
            }
        )
    return rows
