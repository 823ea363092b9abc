"""Issue 19's ten-class MNIST target, on the validation split: a pooled stack of learned
filters per one-vs-one pair against the plain RBF SVM with the same recipe.

    python bench/bench_mnist10_layers.py --n-train 10000            # about 6 minutes
    python bench/bench_mnist10_layers.py                            # all 50,000
    python bench/bench_mnist10_layers.py --plain 0.03               # the plain SVM only
    python bench/bench_mnist10_layers.py --test                     # all 60,000, test once

Training images: MNIST training images 0-49,999 (or a stratified ``--n-train`` of them),
validation: images 50,000-59,999; the test set is never read.  Both models get
``reproduce mnist10``'s recipe: deskewed images, then virtual support vectors (4 one-pixel
shifts).  The stack (``--layers``, RBF ``--gamma``, zero-mean first filters, DFO2 λ 0.1,
``--n-iter`` relative steps of η 0.1, no C) learns its filters on a stratified
``--learn-on`` images (about a fifth per pair of the full set's), then every pair's SVM is
solved once on all its training images (``csvm.model.refit.refit_all``).  Prints
validation accuracy after each stage, seconds and peak memory.

``--test`` (once the recipe is chosen on validation): all 60,000 training images, the
10,000 test images, the stack and the plain RBF SVM (γ 0.03, ``reproduce mnist10``'s
baseline) with the same recipe, an exact McNemar test between them; each model's test
predictions are kept in ``bench/results/mnist10_layers.json``.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench._cache import pack_correct, save_cache  # noqa: E402
from bench._data import SHARED  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "mnist10_layers.json"


def _peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _say(stage: str, clf, X_eval, y_eval, seconds: float, split: str) -> np.ndarray:
    """Print the stage's accuracy on the evaluation split; return which images were right."""
    right = clf.predict(X_eval) == y_eval
    print(
        f"{stage}: {split} {100 * right.mean():.2f} % ({seconds:.0f} s, "
        f"{int(clf.n_support_.sum())} support vectors, peak {_peak_gib():.2f} GiB)",
        flush=True,
    )
    return right


def _stack(args, X, y, X_eval, y_eval, split: str) -> tuple[np.ndarray, float]:
    """The stack learned on a subsample, solved on all, then virtual SVs: which evaluation
    images it gets right, and its fit seconds."""
    from csvm import KernelCSVM
    from csvm.data.protocols import stratified_subsample
    from csvm.model.refit import refit_all
    from csvm.model.virtual import SHIFTS_4, refit_virtual

    clf = KernelCSVM(
        image_shape=X.shape[1:], layers=args.layers, kernel="rbf", gamma=args.gamma,
        regulariser="dfo2", lam=0.1, step="relative", eta=0.1, n_iter=args.n_iter, C=None,
        filter_init="zero-mean", multi_class="ovo", n_jobs=2, random_state=0,
    )  # fmt: skip
    learn = stratified_subsample(y, args.learn_on, 0)
    learn = np.arange(len(y)) if learn is None else learn
    t = time.perf_counter()
    clf.fit(X[learn], y[learn])
    fit = time.perf_counter() - t
    _say(f"{args.layers} learned on {len(learn)}", clf, X_eval, y_eval, fit, split)
    if len(learn) < len(y):
        t = time.perf_counter()
        refit_all(clf, X, y, n_jobs=2)
        fit += time.perf_counter() - t
        _say(f"solved on all {len(y)}", clf, X_eval, y_eval, time.perf_counter() - t, split)
    t = time.perf_counter()
    refit_virtual(clf, X, SHIFTS_4, n_jobs=2)
    fit += time.perf_counter() - t
    right = _say("+ virtual SVs (4 shifts)", clf, X_eval, y_eval, time.perf_counter() - t, split)
    return right, fit


def _plain(gamma: float, X, y, X_eval, y_eval, split: str) -> tuple[np.ndarray, float]:
    """The plain RBF SVM per pair with the same virtual SVs (reproduce mnist10's baseline)."""
    from csvm.analysis.mnist10 import plain_svm
    from csvm.model.virtual import SHIFTS_4, refit_virtual

    clf = plain_svm({"kernel": "rbf", "gamma": gamma, "C": None}, 2, X.shape[1:])
    t = time.perf_counter()
    clf.fit(X, y)
    _say(f"plain RBF γ {gamma}", clf, X_eval, y_eval, time.perf_counter() - t, split)
    refit_virtual(clf, X, SHIFTS_4, n_jobs=2)
    fit = time.perf_counter() - t
    return _say("+ virtual SVs (4 shifts)", clf, X_eval, y_eval, fit, split), fit


def _test(args) -> int:
    from csvm.analysis.mnist10 import load_mnist10
    from csvm.analysis.stats import mcnemar_correct
    from csvm.data.deskew import deskew

    X, y, X_test, y_test = load_mnist10(SHARED)
    X, X_test = deskew(X), deskew(X_test)
    print(f"train {len(y)} deskewed, test {len(y_test)}", flush=True)
    stack, stack_fit = _stack(args, X, y, X_test, y_test, "test")
    plain, plain_fit = _plain(0.03, X, y, X_test, y_test, "test")
    m = mcnemar_correct(stack, plain)
    b, c = m.b, m.c
    print(
        f"stack {100 * stack.mean():.2f} % (fit {stack_fit:.0f} s) vs plain "
        f"{100 * plain.mean():.2f} % (fit {plain_fit:.0f} s): {b} images only the stack gets "
        f"right, {c} only the plain SVM; McNemar p = {m.p_value:.3g}"
    )
    record = {
        "settings": vars(args),
        "stack": {"test_accuracy": float(stack.mean()), "fit_seconds": stack_fit,
                  "correct": pack_correct(stack)},
        "plain": {"test_accuracy": float(plain.mean()), "fit_seconds": plain_fit,
                  "correct": pack_correct(plain), "gamma": 0.03},
        "mcnemar": {"stack_only": b, "plain_only": c, "p": m.p_value},
        "peak_gib": _peak_gib(),
    }  # fmt: skip
    save_cache(RESULTS, record)
    return 0


def main(argv: list[str]) -> int:
    from csvm.data import load_multiclass
    from csvm.data.deskew import deskew

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-train", type=int, default=None, help="default: all 50,000")
    parser.add_argument("--learn-on", type=int, default=10000)
    parser.add_argument("--layers", default="5x5x16-abs-max2")
    parser.add_argument("--gamma", type=float, default=0.2)
    parser.add_argument("--n-iter", type=int, default=30)
    parser.add_argument("--plain", type=float, default=None, metavar="GAMMA")
    parser.add_argument("--test", action="store_true", help="all 60,000; the test set, once")
    args = parser.parse_args(argv)
    if args.test:
        return _test(args)
    d = load_multiclass("mnist", protocol=None, data_dir=SHARED, n_train=args.n_train)
    X, y, Xv, yv = deskew(d.X_train), d.y_train, deskew(d.X_val), d.y_val
    print(f"train {len(y)} deskewed, validation {len(yv)}", flush=True)
    if args.plain is not None:
        _plain(args.plain, X, y, Xv, yv, "val")
    else:
        _stack(args, X, y, Xv, yv, "val")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
