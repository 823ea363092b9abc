"""Which stages of the learned HOG-like stack matter, and does learning move them? (issue 35)

    OMP_NUM_THREADS=1 nice -n 5 python -m bench.bench_learned_hog_ablation

Exploratory, on a **selection** pair only (docs/protocol_learned_hog.md: CIFAR-10 deer v
horse, training seed 0, 500 images), scored on every one of its validation images; no
report pair is touched and nothing here is a reported result.  Each variant of the stack is
fitted learned (10 relative steps) and at its start (eta 0), on γ = g / (mean squared
distance between the start's descriptors of the training images), g in {0.5, 1, 2}, C 10;
the best g of each is shown (the same optimism for every row), with the cosine of the
learned layer-1 filters to their start.  Results: ``bench/results/learned_hog_ablation.json``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench.bench_learned_hog import RESULTS, data  # noqa: E402
from csvm.model.kernelised import KernelCSVM  # noqa: E402

#: name -> (layers, filter_init, eta, n_iter of the learned fit)
VARIANTS = {
    "full (relu, bn2, sqrt)": ("3x3x8-relu-avg4-bn2-sqrt", "hog", 0.1, 10),
    "no sqrt": ("3x3x8-relu-avg4-bn2", "hog", 0.1, 10),
    "no block norm": ("3x3x8-relu-avg4-sqrt", "hog", 0.1, 10),
    "neither": ("3x3x8-relu-avg4", "hog", 0.1, 10),
    "abs (unsigned)": ("3x3x8-abs-avg4-bn2-sqrt", "hog", 0.1, 10),
    "full, zero-mean random start": ("3x3x8-relu-avg4-bn2-sqrt", "zero-mean", 0.1, 10),
    "full, eta 0.3, 20 iterations": ("3x3x8-relu-avg4-bn2-sqrt", "hog", 0.3, 20),
    "abs, eta 0.3, 20 iterations": ("3x3x8-abs-avg4-bn2-sqrt", "hog", 0.3, 20),
}
G_GRID, C = (0.5, 1.0, 2.0), 10.0


def kcsvm(
    d, layers: str, init: str, gamma: float, learned: bool, eta: float = 0.1, n_iter: int = 10
) -> KernelCSVM:
    return KernelCSVM(
        image_shape=d.image_shape, layers=layers, filter_init=init, kernel="rbf",
        gamma=gamma, C=C, regulariser="dfo2", lam=0.1, step="relative",
        eta=eta if learned else 0.0, n_iter=n_iter if learned else 1, random_state=0,
    ).fit(d.X_train, d.y_train)  # fmt: skip


def start_of(d, layers: str, init: str) -> tuple[np.ndarray, float]:
    """The start's layer-1 filters (what the estimator draws) and the mean squared
    distance between its descriptors of the training images."""
    probe = kcsvm(d, layers, init, 1.0, learned=False)
    F = probe.feature_maps(d.X_train).reshape(len(d.X_train), -1).astype(np.float64)
    sq = np.einsum("ij,ij->i", F, F)
    return probe.layer_filters_[0][0], float(np.mean(sq[:, None] + sq[None, :] - 2 * F @ F.T))


def main(only: list[str] | None = None) -> list[dict]:
    d = data("cifar10", "deer", "horse", 0)
    path = RESULTS / "learned_hog_ablation.json"
    rows = json.loads(path.read_text())["rows"] if only and path.exists() else []
    for name, (layers, init, eta, n_iter) in VARIANTS.items():
        if only and name not in only:
            continue
        start, d2 = start_of(d, layers, init)
        # A step variant shares its start with the row above it: learned fits only.
        for learned in (True,) if eta != 0.1 else (True, False):
            best = None
            for g in G_GRID:
                t = time.perf_counter()
                clf = kcsvm(d, layers, init, g / d2, learned, eta, n_iter)
                acc = float(np.mean(clf.predict(d.X_val) == d.y_val))
                first = clf.layer_filters_[0][0]
                cos = float(first.ravel() @ start.ravel())
                cos /= float(np.linalg.norm(first) * np.linalg.norm(start))
                row = {"variant": name, "layers": layers, "init": init, "learned": learned,
                       "g": g, "validation": acc, "cosine_to_start": cos,
                       "seconds": time.perf_counter() - t}  # fmt: skip
                rows.append(row)
                print(row, flush=True)
                best = row if best is None or acc > best["validation"] else best
            print("best", best, flush=True)
        path.write_text(json.dumps({"n_validation": int(len(d.y_val)), "rows": rows}, indent=1))
    return rows


if __name__ == "__main__":
    main([a for a in sys.argv[1:]] or None)  # variant names: only those, added to the file
