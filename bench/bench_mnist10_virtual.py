"""Choosing the virtual support vectors of ``reproduce mnist10`` on the validation split.

    python bench/bench_mnist10_virtual.py            # 50,000 training images (~15 min)
    python bench/bench_mnist10_virtual.py --n-train 10000   # a stratified 10,000 (~2 min)
    python bench/bench_mnist10_virtual.py --deskew --shifts 4   # deskewed images first

Fits the K-CSVM of ``csvm.analysis.mnist10.MNIST10_CONFIG`` (10 classes, one-vs-one) on MNIST
training images 0-49,999 (or a stratified subsample), scores it on the 10,000 validation
images 50,000-59,999 (never the test set), then solves every pair's SVM again on its
support vectors plus their shifts (``csvm.model.virtual.refit_virtual``) for each set of shifts,
starting from the same first fit each time.  With ``--deskew`` every image, training and
validation, is deskewed first (``csvm.data.deskew``).  Prints validation accuracy, seconds,
support vectors and peak memory.
"""

from __future__ import annotations

import argparse
import copy
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench._data import SHARED  # noqa: E402

#: The candidate shift sets: one pixel in 4 or 8 directions, and 8 plus two-pixel moves.
CANDIDATES = ("4", "8", "8+2px")


def _shifts(name: str):
    from csvm.model.virtual import SHIFTS_4, SHIFTS_8

    two_pixel = ((-2, 0), (2, 0), (0, -2), (0, 2))
    return {"4": SHIFTS_4, "8": SHIFTS_8, "8+2px": SHIFTS_8 + two_pixel}[name]


def _peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def main(argv: list[str]) -> int:
    from csvm import KernelCSVM
    from csvm.analysis.mnist10 import MNIST10_CONFIG
    from csvm.data import load_multiclass
    from csvm.data.deskew import deskew
    from csvm.model.virtual import refit_virtual

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-train", type=int, default=None, help="default: all 50,000")
    parser.add_argument("--deskew", action="store_true")
    parser.add_argument("--shifts", default=",".join(CANDIDATES), help="comma list")
    args = parser.parse_args(argv)
    d = load_multiclass("mnist", protocol=None, data_dir=SHARED, n_train=args.n_train)
    X, y, Xv, yv = d.X_train, d.y_train, d.X_val, d.y_val
    if args.deskew:
        X, Xv = deskew(X), deskew(Xv)
    print(f"train {len(y)}, validation {len(yv)}", flush=True)
    clf = KernelCSVM(
        image_shape=(1, 28, 28),
        filter_shape=(5, 5),
        multi_class="ovo",
        n_jobs=2,
        random_state=0,
        **MNIST10_CONFIG,
    )
    t = time.perf_counter()
    clf.fit(X, y)
    fit = time.perf_counter() - t
    accuracy = 100 * np.mean(clf.predict(Xv) == yv)
    print(
        f"K-CSVM first fit: val {accuracy:.2f} % fit {fit:.0f} s nSV {clf.n_support_.sum()} "
        f"peak {_peak_gib():.2f} GiB",
        flush=True,
    )
    for name in args.shifts.split(","):
        model = copy.deepcopy(clf)
        t = time.perf_counter()
        refit_virtual(model, X, _shifts(name), n_jobs=2)
        refit = time.perf_counter() - t
        t = time.perf_counter()
        accuracy = 100 * np.mean(model.predict(Xv) == yv)
        predict = time.perf_counter() - t
        print(
            f"+ virtual SVs, shifts {name}: val {accuracy:.2f} % refit {refit:.0f} s predict "
            f"{predict:.0f} s nSV {model.n_support_.sum()} peak {_peak_gib():.2f} GiB",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
