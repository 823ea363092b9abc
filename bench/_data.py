"""Data for the benchmarks: the thesis's MNIST 3-vs-5 protocol from real IDX files."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def _idx(path: Path) -> np.ndarray:
    with gzip.open(path, "rb") as fh:
        data = fh.read()
    ndim = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def mnist_pair(a: int = 3, b: int = 5, first: int = 10_000, all_train: bool = False):
    """Train: classes a, b among the first ``first`` training images (all of them when
    ``all_train``); test: every a and b of the test set.  Labels +1 for b, -1 for a."""
    try:
        from csvm.data import load_pair

        if not all_train:
            d = load_pair("mnist", a, b, protocol="thesis", data_dir=SHARED)
            return d.X_train, d.y_train, d.X_test, d.y_test
    except ImportError:
        pass
    root = SHARED / "mnist"
    Xtr = _idx(root / "train-images-idx3-ubyte.gz")
    ytr = _idx(root / "train-labels-idx1-ubyte.gz")
    Xte = _idx(root / "t10k-images-idx3-ubyte.gz")
    yte = _idx(root / "t10k-labels-idx1-ubyte.gz")
    if not all_train:
        Xtr, ytr = Xtr[:first], ytr[:first]

    def pick(X, y):
        m = (y == a) | (y == b)
        return (X[m, None].astype(np.float32) / 255.0), np.where(y[m] == b, 1, -1)

    return (*pick(Xtr, ytr), *pick(Xte, yte))
