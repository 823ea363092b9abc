"""Downloads: :func:`fetch` puts verified dataset files in the data folder, and
:func:`main_data` is the ``python -m csvm data list|fetch`` command line.

Files come through `pooch <https://www.fatiando.org/pooch/>`_: each is streamed to a
temporary file in the destination folder, its md5 checked against :data:`REGISTRY`, and
only then moved into place, so a file that exists under its final name is always a
verified one.  Failed transfers are retried (``retries``), then the next mirror of
:data:`MIRRORS` is tried.  ``file://`` mirrors work too: a classroom can serve the files
from a shared folder with no internet (``--mirror file:///srv/datasets/mnist/``).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import os
import sys
import tarfile
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlparse
from urllib.request import url2pathname

import numpy as np

from csvm.data._files import os_error
from csvm.data.idx import write_idx
from csvm.data.protocols import clear_cache
from csvm.data.registry import (
    CIFAR_EXTRA,
    CIFAR_REQUIRED,
    DATASETS,
    data_home,
    list_datasets,
    spec,
)
from csvm.exceptions import DatasetError

__all__ = [
    "fetch",
    "main_data",
    "mirror_url",
]

# The pooch registry: file name -> "md5:<hash>".  These are the published md5s of the
# canonical files (the same ones torchvision checks); MNIST's equal those of the
# byte-exact copies described in the project's shared/data/README.md.
REGISTRY: dict[str, dict[str, str]] = {
    "mnist": {
        "train-images-idx3-ubyte.gz": "md5:f68b3c2dcbeaaa9fbdd348bbdeb94873",
        "train-labels-idx1-ubyte.gz": "md5:d53e105ee54ea40749a09fcbcd1e9432",
        "t10k-images-idx3-ubyte.gz": "md5:9fb629c4189551a2d022fa330f9573f3",
        "t10k-labels-idx1-ubyte.gz": "md5:ec29112dd5afa0611ce80d1b7f02629c",
    },
    "fashion-mnist": {
        "train-images-idx3-ubyte.gz": "md5:8d4fb7e6c68d591d4c3dfef9ec88bf0d",
        "train-labels-idx1-ubyte.gz": "md5:25c81989df183df01b3e8a0aad5dffbe",
        "t10k-images-idx3-ubyte.gz": "md5:bef4ecab320f06d8554ea6380940ec79",
        "t10k-labels-idx1-ubyte.gz": "md5:bb300cfdad3c16e7a12a480ee83cd310",
    },
    "cifar10": {"cifar-10-python.tar.gz": "md5:c58f30108f718f92721af3b95e74349a"},
}
# Base URLs tried in order; a file's URL is the base followed by its registry name.
MIRRORS: dict[str, tuple[str, ...]] = {
    "mnist": (
        "https://ossci-datasets.s3.amazonaws.com/mnist/",
        "https://storage.googleapis.com/cvdf-datasets/mnist/",
        "http://yann.lecun.com/exdb/mnist/",
    ),
    "fashion-mnist": ("http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",),
    "cifar10": ("https://www.cs.toronto.edu/~kriz/",),
}
# Extra attempts per mirror after a failed transfer or a wrong hash (pooch waits 1 s,
# then 2 s... between them): enough for a dropped connection, not for a dead host.
RETRIES = 2
# md5 of the uncompressed MNIST files: checks an OpenML download, which has no .gz to hash.
_MNIST_RAW_MD5 = {
    "train-images-idx3-ubyte": "6bbc9ace898e44ae57da46a324031adb",
    "train-labels-idx1-ubyte": "a25bea736e30d166cdddb491f175f624",
    "t10k-images-idx3-ubyte": "2646ac647ad5339dbf082846283269ea",
    "t10k-labels-idx1-ubyte": "27ae3e4e09519cfbb04c329615203637",
}
_OPENML = {"mnist": "mnist_784", "fashion-mnist": "Fashion-MNIST"}
_CHUNK = 1 << 16


def _pooch():
    try:
        import pooch
    except ImportError:
        raise DatasetError(
            "Downloading needs the pooch package: pip install 'pooch>=1.8,<2'."
        ) from None
    return pooch


def _md5(path: Path) -> str:
    return _pooch().file_hash(str(path), alg="md5")


# -- transfers ----------------------------------------------------------------------------
class _Progress:
    """A progress "bar" for pooch: one line per file on ``out``.  On a terminal the line is
    rewritten in place; into a file or pipe (a CI log) a whole line is written at each
    quarter, since ``\\r`` there makes one endless line of every percent."""

    def __init__(self, url: str, out: IO[str]):
        self.url, self.out = url, out
        self._total, self.done, self.shown = 0, 0, None
        self.quarter, self.written = 0, None  # the last whole line's quarter and text
        try:
            self._tty = out.isatty()
        except (AttributeError, ValueError):  # no isatty, or a closed stream
            self._tty = False

    @property
    def total(self) -> int:
        return self._total

    @total.setter
    def total(self, value: int) -> None:
        # Set once per attempt (pooch retries reuse this object): start counting afresh.
        self._total, self.done, self.shown = value, 0, None
        self.quarter, self.written = 0, None

    def update(self, n: int) -> None:
        self.done += n
        if self.total:
            percent = 100 * min(self.done, self.total) // self.total
            progress = f"{percent:3d} %"
        else:
            percent, progress = None, f"{self.done >> 20} MB"
        # Only when the shown figure changes: a line per percent, not per chunk.
        if progress == self.shown:
            return
        self.shown = progress
        if self._tty:
            print(f"\r  {self.url}: {progress}", end="", file=self.out, flush=True)
        elif percent is not None and percent // 25 > self.quarter:
            self.quarter = percent // 25
            self._write_line()

    def _write_line(self) -> None:
        print(f"  {self.url}: {self.shown}", file=self.out, flush=True)
        self.written = self.shown

    def reset(self) -> None:
        # pooch calls reset() then update(total) to fill the bar; with no known total
        # there is nothing to fill, so keep the byte count shown.
        if self.total:
            self.done = 0

    def close(self) -> None:
        if self._tty:
            print(file=self.out)
        elif self.shown != self.written:
            # The last figure, when no quarter's line said it (a size in MB, say).
            self._write_line()


def _copy_file_url(url: str, output_file: str | IO[bytes], progress: _Progress) -> None:
    """The ``file://`` transfer pooch lacks: copy a local file in chunks."""
    source = Path(url2pathname(urlparse(url).path))
    progress.total = source.stat().st_size
    with contextlib.ExitStack() as stack:
        src = stack.enter_context(open(source, "rb"))
        if isinstance(output_file, str | os.PathLike):
            output_file = stack.enter_context(open(output_file, "wb"))
        while chunk := src.read(_CHUNK):
            output_file.write(chunk)
            progress.update(len(chunk))
    progress.close()


def _downloader(url: str, out: IO[str]):
    """A pooch downloader for ``url``: HTTP(S) through pooch, ``file://`` by copying."""
    scheme = urlparse(url).scheme
    progress = _Progress(url, out)
    if scheme == "file":
        return lambda url, output_file, pooch, check_only=False: _copy_file_url(
            url, output_file, progress
        )
    if scheme in ("http", "https"):
        return _pooch().HTTPDownloader(progressbar=progress, chunk_size=_CHUNK, timeout=60)
    raise ValueError(f"unsupported URL scheme {scheme!r} (use https://, http:// or file://)")


@contextlib.contextmanager
def _quiet_pooch() -> Iterator[None]:
    # pooch logs every download at INFO on stderr; fetch prints its own lines to ``out``.
    logger = _pooch().get_logger()
    level = logger.level
    logger.setLevel("WARNING")
    try:
        yield
    finally:
        logger.setLevel(level)


def _download(
    filename: str, known_hash: str, folder: Path, mirrors: Sequence[str], retries: int, out
) -> None:
    """Put the verified ``folder/filename`` in place from the first mirror that works."""
    pooch = _pooch()
    failures = []
    for base in mirrors:
        base = base if base.endswith("/") else base + "/"
        url = base + filename
        store = pooch.create(
            path=folder,
            base_url=base,
            registry={filename: known_hash},
            retry_if_failed=retries,
        )
        try:
            store.fetch(filename, downloader=_downloader(url, out))
            return
        # ValueError: a wrong hash (the download was deleted) or an unsupported URL;
        # OSError covers requests' errors, an HTTP error status and missing files.
        except (ValueError, OSError) as exc:
            failures.append(f"{url}: {str(exc).rstrip('.')}")
    raise DatasetError(
        f"Could not download {filename}: " + "; ".join(failures) + ". Check the network "
        "and run the fetch again; offline, fetch from a local copy with --mirror DIR (a "
        f"folder holding the files, md5s checked), or copy the file to {folder} by hand."
    )


def mirror_url(mirror: str) -> str:
    """A mirror as a base URL: a URL as given, a local folder as its ``file://`` URL.

    Examples
    --------
    >>> mirror_url("https://example.org/mnist/")
    'https://example.org/mnist/'
    >>> mirror_url("/srv/datasets/mnist")  # doctest: +SKIP
    'file:///srv/datasets/mnist/'
    """
    if "://" in mirror:
        return mirror
    folder = Path(mirror).expanduser()
    if not folder.is_dir():
        raise DatasetError(
            f"--mirror {mirror}: no such folder. Give a folder that holds the dataset's "
            "files, or a URL (https://, http:// or file://)."
        )
    return folder.resolve().as_uri() + "/"


def _writable(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatasetError(
            f"Cannot create the data folder {folder}: {exc.strerror or exc}. Choose another "
            "one with --data-dir (or CSVM_DATA_DIR)."
        ) from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise DatasetError(
            f"Cannot write to the data folder {folder}: permission denied. Choose another "
            "one with --data-dir (or CSVM_DATA_DIR)."
        )


def _fetch_files(
    name: str, folder: Path, mirrors: Sequence[str], retries: int, out: IO[str]
) -> None:
    _writable(folder)
    for filename, known_hash in REGISTRY[name].items():
        target = folder / filename
        if target.is_file() and _md5(target) == known_hash.split(":", 1)[1]:
            print(f"  {filename}: already here and intact", file=out)
            continue
        _download(filename, known_hash, folder, mirrors, retries, out)


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
    # BadGzipFile is an OSError, but it means the archive is bad: test it first.
    except (tarfile.TarError, gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise DatasetError(f"{archive} is corrupt: {exc}.") from None
    except OSError as exc:
        raise os_error(Path(exc.filename or archive), exc) from None


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
    mirrors: Sequence[str] | None = None,
    retries: int = RETRIES,
) -> Path:
    """Download a dataset into the data folder, verifying every file.

    Parameters
    ----------
    name : str
        "mnist", "fashion-mnist" or "cifar10" (the built-in datasets need nothing).
    data_dir : path, optional
        Destination root; see :func:`~csvm.data.data_home`.
    source : {"canonical", "openml"}, default="canonical"
        "canonical": the original files, checked against the md5s of :data:`REGISTRY`.
        "openml": MNIST / Fashion-MNIST through :func:`sklearn.datasets.fetch_openml`,
        written as IDX files.
    out : text stream, optional
        Where progress lines go (standard error by default).
    mirrors : sequence of str, optional
        Base URLs (``https://``, ``http://`` or ``file://``) tried in order instead of
        :data:`MIRRORS`; each file's URL is the base followed by its name.
    retries : int, default=RETRIES
        Extra attempts per mirror after a failed transfer or a wrong hash.

    Returns
    -------
    pathlib.Path
        The folder that now holds the files.

    Raises
    ------
    DatasetError
        Unknown dataset or source; no mirror gave a file with the right hash (the
        message lists each URL and what went wrong); the folder is not writable.
    """
    out = sys.stderr if out is None else out
    entry = spec(name)
    root = data_home(data_dir)
    if entry.offline:
        print(f"{name} is built in: nothing to fetch.", file=out)
        return root
    if source not in ("canonical", "openml"):
        raise DatasetError(f"Unknown source {source!r}: use 'canonical' or 'openml'.")
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise DatasetError(f"retries={retries!r}: use a whole number, 0 or more.")
    if source == "openml":
        if name not in _OPENML:
            raise DatasetError(f"{name} is not fetched from OpenML: use source='canonical'.")
        _fetch_openml(name, root / name, out)
        clear_cache()
        return root / name
    mirrors = tuple(MIRRORS[name] if mirrors is None else map(mirror_url, mirrors))
    if not mirrors:
        raise DatasetError("mirrors is empty: give at least one base URL, or None.")
    with _quiet_pooch():
        if name == "cifar10":
            _fetch_files(name, root, mirrors, retries, out)
            archive = root / next(iter(REGISTRY[name]))
            _extract_cifar(archive, root / "cifar10")
            archive.unlink()
            where = root / "cifar10" / "cifar-10-batches-py"
        else:
            where = root / name
            _fetch_files(name, where, mirrors, retries, out)
    clear_cache()
    return where


# -- command line -------------------------------------------------------------------------
def main_data(argv: list[str] | None = None, prog: str = "python -m csvm data") -> int:
    """``python -m csvm data list|fetch NAME [--data-dir D] [--source S] [--mirror URL]``.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after ``data`` (default: ``sys.argv[2:]``).
    prog : str, default="python -m csvm data"
        The command as the user typed it, for the usage lines ("csvm data" from the
        console script).

    Returns
    -------
    int
        The exit status: 0 on success, 2 when a fetch failed (a folder that cannot hold
        the files, a source that lacks them) or ``--data-dir`` is a file, as every
        command's bad input (1 is "training diverged").
    """
    parser = argparse.ArgumentParser(
        prog=prog,
        description="List the datasets and where they are, or download one.",
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--data-dir",
        default=None,
        help=f"data folder (default: $CSVM_DATA_DIR, else {data_home(None)})",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", parents=[common], help="show every dataset and where it is")
    get = sub.add_parser("fetch", parents=[common], help="download a dataset and verify it")
    get.add_argument("name", choices=[n for n, entry in DATASETS.items() if not entry.offline])
    get.add_argument(
        "--source",
        choices=["canonical", "openml"],
        default="canonical",
        help="original files with md5 checks (default) or OpenML via scikit-learn",
    )
    get.add_argument(
        "--mirror",
        action="append",
        default=None,
        metavar="DIR|URL",
        help="a folder holding the files, or a base URL (https://, http:// or file://), "
        "to fetch from instead of the usual mirrors; repeat to try several in order",
    )
    args = parser.parse_args(sys.argv[2:] if argv is None else argv)
    if args.command == "list":
        return _print_list(args.data_dir, prog)
    try:
        where = fetch(args.name, args.data_dir, source=args.source, mirrors=args.mirror)
    except DatasetError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2  # data that cannot be had: bad input, as the command's help says
    print(f"{args.name} is in {where}")
    return 0


def _print_list(data_dir: Any, prog: str) -> int:
    home = data_home(data_dir)
    if home.exists() and not home.is_dir():
        print(
            f"{prog}: error: the data folder {home} is a file, not a folder: give a folder "
            "with --data-dir (or CSVM_DATA_DIR)",
            file=sys.stderr,
        )
        return 2
    # A folder not yet made is normal before the first fetch, and also what a mistyped
    # --data-dir looks like: say which, so that "missing" below is not a mystery.
    made = "" if home.is_dir() else " (does not exist yet: 'fetch' creates it)"
    print(f"data folder: {home}{made}")
    for row in list_datasets(data_dir):
        state = "available" if row["available"] else "missing"
        print(f"{row['name']:14} {state:10} {row['location']}")
        if not row["available"]:
            print(f"{'':14} fetch with: {row['fetch_command']}")
    return 0
