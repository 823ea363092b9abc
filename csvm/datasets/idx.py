"""IDX files (MNIST, Fashion-MNIST): read, check and write.

An IDX file is a 4-byte magic number (0, 0, 0x08 for unsigned bytes, the number of
dimensions), one big-endian 4-byte size per dimension, then the bytes in C order.
"""

from __future__ import annotations

import functools
import gzip
import os
import zlib
from pathlib import Path

import numpy as np

from csvm.datasets._files import file_key
from csvm.datasets.registry import IDX_STEMS
from csvm.exceptions import DatasetError


def read_idx(path: Path, expected_ndim: int) -> np.ndarray:
    """The uint8 array held by the IDX file ``path`` (gzipped when its name ends in .gz).

    Raises
    ------
    DatasetError
        The file cannot be read, is not an IDX file of unsigned bytes, has another
        number of dimensions, or holds fewer or more bytes than its header promises.
    """
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


def write_idx(path: Path, array: np.ndarray) -> None:
    """Write ``array`` as an uncompressed IDX file of unsigned bytes, atomically."""
    header = bytes([0, 0, 8, array.ndim]) + b"".join(int(s).to_bytes(4, "big") for s in array.shape)
    tmp = path.with_name(path.name + ".part")
    tmp.write_bytes(header + np.ascontiguousarray(array, dtype=np.uint8).tobytes())
    os.replace(tmp, path)


def _read_idx_pair(images_path: Path, labels_path: Path, n_classes: int):
    images = read_idx(images_path, 3)
    labels = read_idx(labels_path, 1)
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


def idx_arrays(files: dict[str, Path], n_classes: int = 10):
    """Training images, labels, test images, labels (uint8, int64) of an IDX dataset.

    ``files`` maps each role of :data:`~csvm.datasets.registry.IDX_STEMS` to its path.
    """
    keys = tuple(file_key(files[r]) for r in IDX_STEMS)
    return _idx_cached(keys, n_classes)


def clear_cache() -> None:
    """Forget the decoded IDX arrays."""
    _idx_cached.cache_clear()
