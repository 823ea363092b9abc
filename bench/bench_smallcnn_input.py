"""SmallCNN's defaults on input they were not made for, and the price of judging the final
weights (issue 36, SmallCNN defaults).

    python bench/bench_smallcnn_input.py

1. Three classes of scikit-learn's 8x8 digits (537 images; a quarter held out), the
   default network (500 sigmoid units, lr 0.1, 10 epochs), seeds 0-4: test accuracy at
   several input scales (raw 0-16 down to [0, 1]) and whether fit warned.
2. The same on [0, 1] pixels at lr 0.1 and 0.03.
3. The thesis's network on MNIST-5k's 3s and 5s (700 images): seconds of a 10-epoch fit
   and of the one extra forward pass that judges the final weights.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from csvm import CSVMWarning, SmallCNN  # noqa: E402

SEEDS = range(5)


def _fit(X, y, **params) -> tuple[SmallCNN, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = SmallCNN(**params).fit(X, y)
    kinds = []
    for w in caught:
        if issubclass(w.category, CSVMWarning):
            kinds.append("scale" if "expects images" in str(w.message) else "nothing learned")
    return clf, kinds


def scales() -> None:
    X, y = load_digits(return_X_y=True)
    keep = y < 3
    Xtr, Xte, ytr, yte = train_test_split(X[keep], y[keep], random_state=0)
    print(f"## digits 0-2: {len(ytr)} train, {len(yte)} test, default SmallCNN (lr 0.1)")
    print("| input | max | test accuracy %, seeds 0-4 | warned |")
    print("|---|---|---|---|")
    for label, factor in [
        ("raw", 1.0),
        ("/16 x 8", 0.5),
        ("/16 x 4", 0.25),
        ("/16 x 2", 1 / 8),
        ("/16", 1 / 16),
    ]:
        accs, warned = [], []
        for seed in SEEDS:
            clf, kinds = _fit(Xtr * factor, ytr, random_state=seed)
            accs.append(f"{100 * clf.score(Xte * factor, yte):.1f}")
            warned.append("+".join(kinds) or "-")
        print(f"| {label} | {16 * factor:g} | {', '.join(accs)} | {', '.join(warned)} |")
    print("\n## the same on [0, 1] pixels by learning rate")
    print("| lr | test accuracy %, seeds 0-4 | warned |")
    print("|---|---|---|")
    for lr in (0.1, 0.03):
        accs, warned = [], []
        for seed in SEEDS:
            clf, kinds = _fit(Xtr / 16, ytr, lr=lr, random_state=seed)
            accs.append(f"{100 * clf.score(Xte / 16, yte):.1f}")
            warned.append("+".join(kinds) or "-")
        print(f"| {lr:g} | {', '.join(accs)} | {', '.join(warned)} |")


def final_pass() -> None:
    from csvm.data import load_pair

    data = load_pair("mnist-5k", 3, 5)
    X4 = data.X_train.reshape(-1, 1, 28, 28).astype(np.float32)
    fits, passes = [], []
    for seed in range(3):
        t0 = time.perf_counter()
        clf = SmallCNN(image_shape=(28, 28), random_state=seed).fit(data.X_train, data.y_train)
        fits.append(time.perf_counter() - t0)
        _, y_index = np.unique(data.y_train, return_inverse=True)
        t0 = time.perf_counter()
        clf._accuracy(X4, y_index)
        passes.append(time.perf_counter() - t0)
    fit, extra = float(np.median(fits)), float(np.median(passes))
    print(f"\n## MNIST-5k 3 vs 5, {len(data.y_train)} images, the thesis's network, 10 epochs")
    print(
        f"fit {fit:.2f} s (median of 3); the final forward pass {extra:.3f} s "
        f"= {100 * extra / fit:.1f} % of the fit"
    )


if __name__ == "__main__":
    scales()
    final_pass()
