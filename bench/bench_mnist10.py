"""Benchmark 10-class MNIST: K-CSVM one-vs-one fit and predict seconds beside a plain SVC.

    python bench/bench_mnist10.py                  # 2,000 stratified training images
    python bench/bench_mnist10.py --n-train 5000 --old-path
    python bench/bench_mnist10.py --svc-60k 0.03   # baseline for reproduce mnist10
    python bench/bench_mnist10.py --svm-virtual 0.03  # the same, deskewed, with virtual SVs

Training images: a stratified, seeded subsample of MNIST training images 0-49,999 (table
3.1's split); test: all 10,000 test images.  The K-CSVM uses the thesis's table 4.1
configuration (poly 2, DFO1, lam 0.01, eta 0.1, 25 iterations, no C) for every pair.
Figures printed: fit and predict seconds, predict / fit, test accuracy, peak memory
(ru_maxrss) and, with --old-path, the per-sub-problem prediction path it replaced.
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-train", type=int, default=2000)
    parser.add_argument("--n-iter", type=int, default=25)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--old-path", action="store_true", help="also time the per-sub-problem predict path"
    )
    parser.add_argument(
        "--svc-60k",
        type=float,
        default=None,
        metavar="GAMMA",
        help="only a plain RBF SVC (no C) on all 60,000 training images: the pixel-space "
        "baseline of `python -m csvm reproduce mnist10`",
    )
    parser.add_argument(
        "--svm-virtual",
        type=float,
        default=None,
        metavar="GAMMA",
        help="only a plain RBF SVM (no C) per pair on all 60,000 training images, then its "
        "virtual support vectors (`reproduce mnist10`'s 8 shifts): the pixel-space baseline "
        "of the K-CSVM with virtual support vectors; deskewed as reproduce mnist10 does "
        "unless --no-deskew",
    )
    parser.add_argument("--no-deskew", action="store_true", help="--svm-virtual on raw images")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.svc_60k is not None:
        return _svc_60k(args.svc_60k)
    if args.svm_virtual is not None:
        return _svm_virtual(args.svm_virtual, args.n_jobs, not args.no_deskew)

    from sklearn.svm import SVC

    from csvm import KernelCSVM
    from csvm.cli.reproduce import THESIS
    from csvm.data import load_multiclass
    from csvm.model.multiclass import ovo_decision

    d = load_multiclass("mnist", protocol=None, data_dir=SHARED, n_train=args.n_train)
    print(f"{d.source}; {len(d.y_train)} training images, {len(d.y_test)} test images")
    rows = []

    t0 = time.perf_counter()
    svc = SVC(kernel="poly", degree=2, gamma=1.0, coef0=1.0, C=1e10)
    svc.fit(d.X_train.reshape(len(d.X_train), -1), d.y_train)
    fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = svc.predict(d.X_test.reshape(len(d.X_test), -1))
    rows.append(("SVC poly 2, no C", fit, time.perf_counter() - t0, np.mean(pred == d.y_test)))

    config = {**THESIS["table4.1"]["csvm"], "n_iter": args.n_iter}
    clf = KernelCSVM(
        image_shape=d.image_shape,
        filter_shape=(5, 5),
        multi_class="ovo",
        n_jobs=args.n_jobs,
        random_state=args.seed,
        **config,
    )
    t0 = time.perf_counter()
    clf.fit(d.X_train, d.y_train)
    fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = clf.predict(d.X_test)
    predict = time.perf_counter() - t0
    rows.append(("K-CSVM OvO (table 4.1 config)", fit, predict, np.mean(pred == d.y_test)))
    if args.old_path:
        X4 = np.ascontiguousarray(d.X_test, dtype=np.float32)
        t0 = time.perf_counter()
        old = np.column_stack([m.decision_function(X4) for m in clf.estimators_])
        old_pred = clf.classes_[np.argmax(ovo_decision(old, len(clf.classes_)), axis=1)]
        seconds = time.perf_counter() - t0
        rows.append(("K-CSVM, old per-pair predict", fit, seconds, np.mean(old_pred == d.y_test)))
        print(f"predictions equal to the old path's: {bool(np.all(old_pred == pred))}")

    print(
        f"support vectors per pair: {int(clf.n_support_.sum())} in all, "
        f"{clf.n_support_.min()}-{clf.n_support_.max()} per pair"
    )
    print("| model | fit s | predict s | predict / fit | test accuracy % |")
    print("|---|---|---|---|---|")
    for name, fit, predict, acc in rows:
        print(f"| {name} | {fit:.2f} | {predict:.2f} | {predict / fit:.2f} | {100 * acc:.2f} |")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory {peak:.0f} MiB")
    return 0


def _svc_60k(gamma: float) -> int:
    from sklearn.svm import SVC

    from csvm.analysis.mnist10 import load_mnist10

    X, y, X_test, y_test = load_mnist10(SHARED)
    t0 = time.perf_counter()
    svc = SVC(kernel="rbf", gamma=gamma, C=1e10).fit(X.reshape(len(X), -1), y)
    fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    acc = np.mean(svc.predict(X_test.reshape(len(X_test), -1)) == y_test)
    predict = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"SVC RBF gamma {gamma}, no C, {len(y)} training images: test {100 * acc:.2f} %, "
        f"fit {fit:.0f} s, predict {predict:.0f} s, {int(svc.n_support_.sum())} support "
        f"vectors, peak {peak:.0f} MiB"
    )
    return 0


def _svm_virtual(gamma: float, n_jobs: int, deskewed: bool) -> int:
    """A plain RBF SVM per pair (``mnist10.plain_svm``: a K-CSVM with a fixed 1x1 filter of
    weight 1, solved once), then the same virtual support vectors as reproduce mnist10's."""
    from csvm.analysis.mnist10 import MNIST10_VIRTUAL, VIRTUAL_SHIFTS, load_mnist10, plain_svm
    from csvm.data.deskew import deskew
    from csvm.model.virtual import refit_virtual

    X, y, X_test, y_test = load_mnist10(SHARED)
    if deskewed:
        X, X_test = deskew(X), deskew(X_test)
    svm = plain_svm({"kernel": "rbf", "gamma": gamma, "C": None}, n_jobs, X.shape[1:])
    t0 = time.perf_counter()
    svm.fit(X, y)
    fit = time.perf_counter() - t0
    first = np.mean(svm.predict(X_test) == y_test)
    n_first = int(svm.n_support_.sum())
    shifts = VIRTUAL_SHIFTS[MNIST10_VIRTUAL]
    t0 = time.perf_counter()
    refit_virtual(svm, X, shifts, n_jobs=n_jobs)
    refit = time.perf_counter() - t0
    t0 = time.perf_counter()
    virtual = np.mean(svm.predict(X_test) == y_test)
    predict = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"plain SVM RBF gamma {gamma}, no C, per pair, {len(y)} "
        f"{'deskewed' if deskewed else 'raw'} training images: test "
        f"{100 * first:.2f} % (fit {fit:.0f} s, {n_first} support vectors over the pairs); "
        f"+ virtual SVs ({len(shifts)} shifts): test {100 * virtual:.2f} % (refit {refit:.0f} "
        f"s, predict {predict:.0f} s, {int(svm.n_support_.sum())} support vectors); peak "
        f"{peak:.0f} MiB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
