"""IDX files (MNIST, Fashion-MNIST): read, check and write.

An IDX file is a 4-byte magic number (0, 0, 0x08 for unsigned bytes, the number of
dimensions), one big-endian 4-byte size per dimension, then the bytes in C order.

The reader trusts nothing it has not checked: it reads the header first, refuses a
declared size above :data:`MAX_IDX_BYTES` or dimensions of the wrong shape, then streams
at most the declared size plus one byte.  A gzip "bomb" (a small file that inflates to
gigabytes) therefore costs the declared size at most, never what the file inflates to.
"""

from __future__ import annotations

import functools
import gzip
import math
import os
import zlib
from pathlib import Path
from typing import BinaryIO

import numpy as np

from csvm.data._files import file_key, os_error
from csvm.data.registry import IDX_STEMS
from csvm.exceptions import DatasetError

__all__ = [
    "clear_cache",
    "idx_arrays",
    "read_idx",
    "write_idx",
]

# The largest payload accepted: MNIST's training images are 47,040,000 bytes, so 10^8
# leaves room without letting a corrupt header ask for gigabytes.
MAX_IDX_BYTES = 10**8
# Payload bytes decompressed per step: bounds the temporary buffer gzip allocates.
_CHUNK = 1 << 20


def read_idx(
    path: Path,
    expected_ndim: int,
    item_shape: tuple[int, ...] | None = None,
    max_bytes: int = MAX_IDX_BYTES,
) -> np.ndarray:
    """The uint8 array held by the IDX file ``path`` (gzipped when its name ends in .gz).

    Parameters
    ----------
    path : pathlib.Path
        The file.
    expected_ndim : int
        The number of dimensions it must have (3 for images, 1 for labels).
    item_shape : tuple of int, optional
        When given, every dimension after the first must equal it, e.g. ``(28, 28)``.
    max_bytes : int, default=MAX_IDX_BYTES
        The largest payload the header may declare.

    Returns
    -------
    numpy.ndarray of uint8
        Read-only (it is cached and shared), shaped as the header says.

    Raises
    ------
    DatasetError
        The file cannot be read (permission denied, I/O error...), is not an IDX file of
        unsigned bytes, declares the wrong or an absurd shape, is not valid gzip, or
        holds fewer or more bytes than its header promises.  Checked before the
        payload is read wherever the header is enough to tell.
    """
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as fh:
            return _read_stream(fh, path, expected_ndim, item_shape, max_bytes)
    # BadGzipFile is an OSError, but it means the content is wrong: test it first.
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise DatasetError(f"{path} is corrupt: it cannot be decompressed ({exc}).") from None
    except OSError as exc:
        raise os_error(path, exc) from None


def _read_header(fh: BinaryIO, path: Path, expected_ndim: int) -> tuple[int, ...]:
    magic = fh.read(4)
    if len(magic) < 4 or magic[:3] != b"\x00\x00\x08":
        raise DatasetError(
            f"{path} is not an IDX file of unsigned bytes: bad magic number "
            f"0x{magic.hex() or '(empty file)'} (expected 0x0000080{expected_ndim})."
        )
    ndim = magic[3]
    if ndim != expected_ndim:
        raise DatasetError(f"{path} has {ndim} dimensions, expected {expected_ndim}.")
    dims = fh.read(4 * ndim)
    if len(dims) < 4 * ndim:
        raise DatasetError(f"{path} is truncated: its header is incomplete.")
    return tuple(int.from_bytes(dims[4 * i : 4 * i + 4], "big") for i in range(ndim))


def _read_stream(
    fh: BinaryIO,
    path: Path,
    expected_ndim: int,
    item_shape: tuple[int, ...] | None,
    max_bytes: int,
) -> np.ndarray:
    shape = _read_header(fh, path, expected_ndim)
    if item_shape is not None and shape[1:] != tuple(item_shape):
        expected = "×".join(map(str, item_shape))
        raise DatasetError(f"{path} holds {shape[1:]} images, expected {expected}.")
    size = math.prod(shape)  # a Python int: 4-byte dimensions cannot overflow it
    if size > max_bytes:
        raise DatasetError(
            f"{path} is corrupt: its header declares shape {shape}, {size:,} bytes of "
            f"data, more than the {max_bytes:,} an IDX file here may hold. It was "
            "refused before reading; fetch the dataset again."
        )
    out = np.empty(size, dtype=np.uint8)
    view = memoryview(out)
    got = 0
    # Fill the array in bounded steps: gzip's readinto decompresses into a temporary
    # of the requested size, so one call for 47 MB would briefly cost twice that.
    while got < size:
        n = fh.readinto(view[got : got + _CHUNK])
        if not n:
            break
        got += n
    if got < size:
        raise DatasetError(
            f"{path} is truncated: its header promises {size} bytes of data for shape "
            f"{shape}, the file holds {got}."
        )
    if fh.read(1):
        raise DatasetError(
            f"{path} is too long: its header promises {size} bytes of data for shape "
            f"{shape}, the file holds more (reading stopped there)."
        )
    out.flags.writeable = False
    return out.reshape(shape)


def write_idx(path: Path, array: np.ndarray) -> None:
    """Write ``array`` as an uncompressed IDX file of unsigned bytes, atomically."""
    header = bytes([0, 0, 8, array.ndim]) + b"".join(int(s).to_bytes(4, "big") for s in array.shape)
    tmp = path.with_name(path.name + ".part")
    tmp.write_bytes(header + np.ascontiguousarray(array, dtype=np.uint8).tobytes())
    os.replace(tmp, path)


def _read_idx_pair(images_path: Path, labels_path: Path, n_classes: int):
    images = read_idx(images_path, 3, item_shape=(28, 28))
    labels = read_idx(labels_path, 1)
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

    ``files`` maps each role of :data:`~csvm.data.registry.IDX_STEMS` to its path.
    """
    keys = tuple(file_key(files[r]) for r in IDX_STEMS)
    return _idx_cached(keys, n_classes)


def clear_cache() -> None:
    """Forget the decoded IDX arrays."""
    _idx_cached.cache_clear()
