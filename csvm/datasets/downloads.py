"""Downloads: ``fetch`` puts verified dataset files in the data folder; ``main_data`` is
the ``python -m csvm data list|fetch`` command line.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tarfile
import tempfile
import urllib.request
import zlib
from pathlib import Path
from typing import IO

import numpy as np

from csvm.datasets.idx import write_idx
from csvm.datasets.protocols import clear_cache
from csvm.datasets.registry import (
    CIFAR_EXTRA,
    CIFAR_REQUIRED,
    DATASETS,
    OFFLINE,
    data_home,
    list_datasets,
    spec,
)
from csvm.exceptions import DatasetError

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
        write_idx(folder / stem, array)
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
    entry = spec(name)
    root = data_home(data_dir)
    if entry.offline:
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
    wanted = {f"cifar-10-batches-py/{f}" for f in (*CIFAR_REQUIRED, *CIFAR_EXTRA)}
    wanted |= {"cifar-10-batches-py/batches.meta"}
    try:
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers() if m.name in wanted and m.isfile()]
            if not all(
                f"cifar-10-batches-py/{f}" in {m.name for m in members} for f in CIFAR_REQUIRED
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
    get.add_argument("name", choices=[n for n in DATASETS if n not in OFFLINE])
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
