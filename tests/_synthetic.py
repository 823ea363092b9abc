"""Small synthetic image sets the estimator tests share."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def square_blobs(
    n_per_class: int = 30,
    classes: Sequence = (0, 1),
    size: int = 10,
    seed: int = 0,
    dtype: type = np.float64,
    shuffle: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Noisy ``size`` × ``size`` images in which each class has a bright 3 × 3 square at
    its own place; with ``shuffle`` the classes' rows are interleaved (so a sub-problem's
    rows differ from the training set's)."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for k, c in enumerate(classes):
        imgs = rng.random((n_per_class, size, size)) * 0.6
        r, col = 1 + 3 * (k % 2), 1 + 3 * (k // 2)
        imgs[:, r : r + 3, col : col + 3] += 0.4
        X.append(imgs)
        y += [c] * n_per_class
    X, y = np.concatenate(X).astype(dtype), np.array(y)
    if shuffle:
        order = rng.permutation(len(y))
        X, y = X[order], y[order]
    return X, y


def without_timings(history: list[dict]) -> list[dict]:
    """A fit's events without their wall-clock fields, for comparing two fits."""
    return [{k: v for k, v in e.items() if k not in ("seconds", "timings")} for e in history]


def small_kcsvm(**kw):
    """A K-CSVM for :func:`square_blobs`' 10 x 10 images: one 3 x 3 filter, RBF γ 0.1, three
    steps, seed 0; ``kw`` replaces any of these."""
    from csvm import KernelCSVM

    params = dict(
        image_shape=(10, 10), filter_shape=(3, 3), kernel="rbf", gamma=0.1, n_iter=3,
        random_state=0,
    )  # fmt: skip
    return KernelCSVM(**{**params, **kw})
