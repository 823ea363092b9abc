"""Issue 19's ten-class MNIST target, on the validation split: a pooled stack of learned
filters per one-vs-one pair against the plain RBF SVM with the same recipe.

    python bench/bench_mnist10_layers.py --n-train 10000            # about 10 minutes
    python bench/bench_mnist10_layers.py                            # all 50,000 (an hour+)
    python bench/bench_mnist10_layers.py --plain 0.03               # the plain SVM only

Training images: MNIST training images 0-49,999 (or a stratified ``--n-train`` of them),
validation: images 50,000-59,999; the test set is never read.  Both models get
``reproduce mnist10``'s recipe: deskewed images, then virtual support vectors (4 one-pixel
shifts).  The stack (``--layers``, RBF ``--gamma``, zero-mean first filters, DFO2 λ 0.1,
``--n-iter`` relative steps of η 0.1, no C) learns its filters on a stratified
``--learn-on`` images (about a fifth per pair of the full set's), then every pair's SVM is
solved once on all its training images (``csvm.model.refit.refit_all``).  Prints
validation accuracy after each stage, seconds and peak memory.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench._data import SHARED  # noqa: E402


def _peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _say(stage: str, clf, Xv, yv, seconds: float) -> None:
    accuracy = 100 * np.mean(clf.predict(Xv) == yv)
    print(
        f"{stage}: val {accuracy:.2f} % ({seconds:.0f} s, {int(clf.n_support_.sum())} support "
        f"vectors, peak {_peak_gib():.2f} GiB)",
        flush=True,
    )


def _subsample(y: np.ndarray, n: int, seed: int) -> np.ndarray:
    from sklearn.model_selection import train_test_split

    if n >= len(y):
        return np.arange(len(y))
    keep, _ = train_test_split(np.arange(len(y)), train_size=n, stratify=y, random_state=seed)
    return np.sort(keep)


def main(argv: list[str]) -> int:
    from csvm import KernelCSVM
    from csvm.analysis.mnist10 import plain_svm
    from csvm.data import load_multiclass
    from csvm.data.deskew import deskew
    from csvm.model.refit import refit_all
    from csvm.model.virtual import SHIFTS_4, refit_virtual

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-train", type=int, default=None, help="default: all 50,000")
    parser.add_argument("--learn-on", type=int, default=10000)
    parser.add_argument("--layers", default="5x5x16-abs-max2")
    parser.add_argument("--gamma", type=float, default=0.2)
    parser.add_argument("--n-iter", type=int, default=15)
    parser.add_argument("--plain", type=float, default=None, metavar="GAMMA")
    args = parser.parse_args(argv)
    d = load_multiclass("mnist", protocol=None, data_dir=SHARED, n_train=args.n_train)
    X, y, Xv, yv = deskew(d.X_train), d.y_train, deskew(d.X_val), d.y_val
    print(f"train {len(y)} deskewed, validation {len(yv)}", flush=True)
    if args.plain is not None:
        clf = plain_svm({"kernel": "rbf", "gamma": args.plain, "C": None}, 2, X.shape[1:])
        t = time.perf_counter()
        clf.fit(X, y)
        _say(f"plain RBF γ {args.plain}", clf, Xv, yv, time.perf_counter() - t)
    else:
        clf = KernelCSVM(
            image_shape=X.shape[1:], layers=args.layers, kernel="rbf", gamma=args.gamma,
            regulariser="dfo2", lam=0.1, step="relative", eta=0.1, n_iter=args.n_iter, C=None,
            filter_init="zero-mean", multi_class="ovo", n_jobs=2, random_state=0,
        )  # fmt: skip
        learn = _subsample(y, args.learn_on, 0)
        t = time.perf_counter()
        clf.fit(X[learn], y[learn])
        _say(f"{args.layers} learned on {len(learn)}", clf, Xv, yv, time.perf_counter() - t)
        if len(learn) < len(y):
            t = time.perf_counter()
            refit_all(clf, X, y, n_jobs=2)
            _say(f"solved on all {len(y)}", clf, Xv, yv, time.perf_counter() - t)
    t = time.perf_counter()
    refit_virtual(clf, X, SHIFTS_4, n_jobs=2)
    _say("+ virtual SVs (4 shifts)", clf, Xv, yv, time.perf_counter() - t)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
