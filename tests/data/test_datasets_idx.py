"""IDX reads are bounded by the header (a gzip bomb costs the declared size, not what it
inflates to), and a file the system will not let us read says why instead of "corrupt"."""

import builtins
import errno
import gzip
import os
import re
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from csvm.data import load_pair
from csvm.data.idx import MAX_IDX_BYTES, read_idx
from csvm.exceptions import DatasetError
from tests._dataset_files import idx_bytes, idx_header, isolate, write_cifar, write_idx

MiB = 1 << 20


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    isolate(monkeypatch, tmp_path)


def _gzip_bomb(path: Path, shape: tuple[int, ...], gigabytes: int) -> None:
    """A valid IDX header for ``shape`` followed by ``gigabytes`` GiB of zeros, gzipped.

    Written as concatenated gzip members (valid gzip, read as one stream): one member
    of 64 MiB of zeros is compressed once and repeated, so building a 2 GiB bomb costs a
    fraction of a second and never holds more than 64 MiB.
    """
    zeros = gzip.compress(bytes(64 * MiB), compresslevel=9, mtime=0)
    with open(path, "wb") as fh:
        fh.write(gzip.compress(idx_header(shape), mtime=0))
        for _ in range(gigabytes * 16):
            fh.write(zeros)


def test_gzip_bomb_is_refused_fast_and_in_bounded_memory(tmp_path):
    folder = tmp_path / "mnist"
    write_idx(folder, gz=True)
    bomb = folder / "train-images-idx3-ubyte.gz"
    _gzip_bomb(bomb, (60_000, 28, 28), gigabytes=2)
    assert bomb.stat().st_size < 3 * MiB  # 2 GiB once inflated
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(DatasetError, match=r"train-images-idx3-ubyte\.gz is too long"):
            load_pair("mnist", 3, 5, data_dir=tmp_path)
    finally:
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    print(
        f"\n2 GiB gzip bomb ({bomb.stat().st_size / MiB:.1f} MiB file): refused in "
        f"{seconds:.2f} s, peak traced memory {peak / MiB:.0f} MiB"
    )
    # The declared payload is 47 MB; reading the whole inflated stream would be 2 GiB.
    assert peak < 100 * MiB


@pytest.mark.parametrize(
    "shape, message",
    [
        ((2**32 - 1, 28, 28), "declares shape .*3,367,254,359,280 bytes.* refused before"),
        ((200_000, 28, 28), "declares shape .*156,800,000 bytes"),
        ((60_000, 280, 28), r"holds \(280, 28\) images, expected 28×28"),
    ],
)
@pytest.mark.parametrize("gz", [True, False])
def test_absurd_headers_are_refused_before_the_payload(tmp_path, monkeypatch, shape, message, gz):
    # Only the header is written: any attempt to read a payload would find it truncated,
    # so the message proves the header alone decided.
    folder = tmp_path / "mnist"
    write_idx(folder, gz=gz, **{"train-images-idx3-ubyte": idx_header(shape)})
    with pytest.raises(DatasetError, match="train-images-idx3-ubyte") as info:
        load_pair("mnist", 3, 5, data_dir=tmp_path)
    assert re.search(message, str(info.value)), str(info.value)


def test_size_limit_and_dimension_count(tmp_path):
    path = tmp_path / "x-idx1-ubyte"
    path.write_bytes(idx_bytes(np.arange(100)))
    assert read_idx(path, 1).tolist() == list(range(100))
    assert not read_idx(path, 1).flags.writeable  # shared by the cache: read-only
    with pytest.raises(DatasetError, match="more than the 99 an IDX file here may hold"):
        read_idx(path, 1, max_bytes=99)
    with pytest.raises(DatasetError, match="has 1 dimensions, expected 3"):
        read_idx(path, 3)
    assert MAX_IDX_BYTES >= 60_000 * 28 * 28  # MNIST's training images fit


@pytest.mark.parametrize("gz", [True, False])
def test_longer_than_the_header_says(tmp_path, gz):
    data = idx_bytes(np.zeros(10)) + b"\x01"
    path = tmp_path / ("labels-idx1-ubyte" + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(data) if gz else data)
    with pytest.raises(DatasetError, match="labels-idx1-ubyte.* is too long.*promises 10 bytes"):
        read_idx(path, 1)


# -- the operating system says no ---------------------------------------------------------
def _refuse(monkeypatch, target: Path, exc: OSError) -> None:
    """Make ``open`` (and so gzip.open) raise ``exc`` for ``target`` only."""
    real_open = builtins.open

    def fake_open(file, *args, **kwargs):
        if isinstance(file, str | os.PathLike) and Path(file) == target:
            raise exc
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)


@pytest.mark.parametrize("dataset", ["mnist-gz", "mnist-raw", "cifar10"])
def test_permission_denied_says_so_and_names_the_file(tmp_path, monkeypatch, dataset):
    if dataset == "cifar10":
        write_cifar(tmp_path / "cifar-10-batches-py")
        target = tmp_path / "cifar-10-batches-py" / "test_batch"
    else:
        gz = dataset == "mnist-gz"
        write_idx(tmp_path / "mnist", gz=gz)
        target = tmp_path / "mnist" / ("t10k-labels-idx1-ubyte" + (".gz" if gz else ""))
    name = "cifar10" if dataset == "cifar10" else "mnist"
    _refuse(monkeypatch, target, PermissionError(errno.EACCES, "Permission denied", str(target)))
    with pytest.raises(DatasetError, match="permission denied") as info:
        load_pair(name, 0, 1, data_dir=tmp_path)
    assert str(target) in str(info.value) and "corrupt" not in str(info.value)


def test_chmod_000_file_says_permission_denied(tmp_path):
    write_idx(tmp_path / "mnist", gz=True)
    target = tmp_path / "mnist" / "train-images-idx3-ubyte.gz"
    target.chmod(0)
    try:
        if os.access(target, os.R_OK):
            pytest.skip(
                "this user (root?) can read a file with mode 000; the monkeypatched "
                "test above covers the message"
            )
        with pytest.raises(DatasetError, match=f"{target}: permission denied"):
            load_pair("mnist", 3, 5, data_dir=tmp_path)
    finally:
        target.chmod(0o644)


def test_other_os_errors_say_what_happened(tmp_path, monkeypatch):
    write_idx(tmp_path / "mnist", gz=False)
    target = tmp_path / "mnist" / "train-labels-idx1-ubyte"
    _refuse(monkeypatch, target, OSError(errno.EIO, "Input/output error"))
    with pytest.raises(DatasetError, match="cannot be read: Input/output error \\(EIO\\)") as info:
        load_pair("mnist", 3, 5, data_dir=tmp_path)
    assert str(target) in str(info.value) and "corrupt" not in str(info.value)
