"""CIFAR-10 python batches: a restricted unpickler, batch and class-name readers, colour.

A batch is a protocol-2 pickle of a dict with ``data`` (n × 3072 uint8: 1024 red,
1024 green, 1024 blue values, each plane row-major) and ``labels`` (n integers 0..9).
"""

from __future__ import annotations

import functools
import pickle
from pathlib import Path
from typing import IO, Any

import numpy as np

from csvm.data._files import file_key, os_error
from csvm.data.registry import CIFAR
from csvm.exceptions import DatasetError

__all__ = [
    "cifar_batch",
    "cifar_classes",
    "cifar_float",
    "clear_cache",
    "read_batch",
    "unpickle",
]


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


def unpickle(path: Path) -> dict[str, Any]:
    """The dict pickled in ``path``, loaded with :class:`_BatchUnpickler`, str keys."""
    try:
        with open(path, "rb") as fh:
            obj = _BatchUnpickler(fh, path).load()
    except DatasetError:
        raise
    except OSError as exc:  # the system refused (permission, I/O): not the file's fault
        raise os_error(path, exc) from None
    except Exception as exc:  # noqa: BLE001 - any unpickling failure means a bad file
        raise DatasetError(f"{path} is corrupt: {type(exc).__name__}: {exc}.") from None
    if not isinstance(obj, dict):
        raise DatasetError(
            f"{path} is not a CIFAR-10 batch: it holds a {type(obj).__name__}, not a dict."
        )
    # encoding="bytes" gives b"data" for the original Python 2 files; re-saved ones may
    # have str keys.  Accept both.
    return {k.decode("latin1") if isinstance(k, bytes) else k: v for k, v in obj.items()}


def read_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Images ``(n, 3, 32, 32)`` uint8 and labels int64 of one batch file, checked."""
    batch = unpickle(path)
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
    return read_batch(Path(key[0]))


def cifar_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """:func:`read_batch`, cached on the file's path, mtime and size."""
    return _batch_cached(file_key(path))


@functools.lru_cache(maxsize=4)
def _meta_cached(key: tuple[str, int, int]) -> tuple[str, ...]:
    path = Path(key[0])
    meta = unpickle(path)
    names = meta.get("label_names")
    if not isinstance(names, list) or len(names) != 10:
        raise DatasetError(f"{path} is corrupt: 'label_names' is not a list of 10 names.")
    return tuple(n.decode("latin1") if isinstance(n, bytes) else str(n) for n in names)


def cifar_classes(files: dict[str, Path]) -> tuple[str, ...]:
    """The class names from ``batches.meta`` when it is among ``files``, else the usual."""
    if "batches.meta" in files:
        return _meta_cached(file_key(files["batches.meta"]))
    return CIFAR


def cifar_float(raw: np.ndarray, color: str) -> np.ndarray:
    """uint8 ``(n, 3, 32, 32)`` images as float32 in [0, 1] in the ``color`` layout."""
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


def clear_cache() -> None:
    """Forget the decoded batches and class names."""
    _batch_cached.cache_clear()
    _meta_cached.cache_clear()
