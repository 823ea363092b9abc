"""Wiering & Schomaker's Iris comparison: standard SVM against the two-layer SVM.

    python bench/bench_mlsvm_iris.py                 # 100 reported splits, 20 for selection
    python bench/bench_mlsvm_iris.py --splits 1000   # the chapter ran 4000 for Iris

Protocol (the chapter's, as far as it is stated): random 90 % / 10 % splits of the 150
Iris flowers, test error averaged over the splits with its standard error.  The chapter
chose its metaparameters first (grid search for the SVM, particle swarm optimisation with
100,000 runs for the ML-SVM) and then ran fresh random splits.  Here both models are chosen
by grid search on ``--select`` random splits drawn with a different seed (1000) from the
reported ones (seed 0); no reported split's test error is looked at while choosing.  (Both
selections still see the same 150 flowers, as the chapter's did, which makes both figures
slightly optimistic alike.)  Inputs are min-max scaled on each training split.
Reported: the chapter's SVMLight SVM 3.5 ± 0.2 % error (accuracy 96.5), ML-SVM 1.6 ± 0.1 %
(98.4), and its stacking variant (pre-trained hidden SVMs, no min-max) 2.3 %.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_iris
from sklearn.model_selection import ShuffleSplit
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from csvm import MultiLayerSVM  # noqa: E402

SVM_GRID = {"C": [1, 3, 10, 30, 100, 300], "gamma": [0.1, 0.3, 1, 3, 10]}
MLSVM_GRID = {"C": [1, 10], "mu": [0.1, 0.3]}
STACK_GRID = {"C": [1, 10]}
REPORTED = {"SVM": (3.5, 0.2), "ML-SVM": (1.6, 0.1), "stacking": (2.3, None)}


def make(name: str, params: dict, seed: int):
    if name == "SVM":
        return make_pipeline(MinMaxScaler(), SVC(**params))
    if name == "stacking":
        model = MultiLayerSVM(n_epochs=0, random_state=seed, **params)
    else:
        model = MultiLayerSVM(random_state=seed, **params)
    return make_pipeline(MinMaxScaler(), model)


def errors(name: str, params: dict, X, y, splits) -> np.ndarray:
    out = []
    for s, (train, test) in enumerate(splits):
        model = make(name, params, s).fit(X[train], y[train])
        out.append(1.0 - model.score(X[test], y[test]))
    return 100.0 * np.array(out)


def select(name: str, grid: dict, X, y, splits) -> tuple[dict, float]:
    best, best_err = {}, np.inf
    for values in itertools.product(*grid.values()):
        params = dict(zip(grid, values, strict=True))
        err = float(errors(name, params, X, y, splits).mean())
        if err < best_err:
            best, best_err = params, err
    return best, best_err


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--splits", type=int, default=100, help="reported random splits")
    parser.add_argument("--select", type=int, default=20, help="selection splits (seed 1000)")
    args = parser.parse_args()
    X, y = load_iris(return_X_y=True)
    sel = list(ShuffleSplit(args.select, test_size=0.1, random_state=1000).split(X))
    rep = list(ShuffleSplit(args.splits, test_size=0.1, random_state=0).split(X))
    rows = []
    for name, grid in (("SVM", SVM_GRID), ("stacking", STACK_GRID), ("ML-SVM", MLSVM_GRID)):
        t0 = time.perf_counter()
        params, sel_err = select(name, grid, X, y, sel)
        err = errors(name, params, X, y, rep)
        seconds = time.perf_counter() - t0
        rows.append(
            (name, params, sel_err, err.mean(), err.std(ddof=1) / np.sqrt(len(err)), seconds)
        )
        print(
            f"  {name}: chosen {params} (selection error {sel_err:.2f} %), {seconds:.0f} s",
            flush=True,
        )
    print(f"\nIris, {args.splits} random 90/10 splits (seed 0); test error % ± standard error")
    print(f"{'model':<10} {'measured':>16} {'chapter':>14}  chosen")
    for name, params, _, mean, se, _ in rows:
        rep_mean, rep_se = REPORTED[name]
        chapter = f"{rep_mean:.1f}" + (f" ± {rep_se:.1f}" if rep_se is not None else "")
        print(f"{name:<10} {mean:>9.2f} ± {se:.2f} {chapter:>14}  {params}")
    svm = next(r for r in rows if r[0] == "SVM")
    ml = next(r for r in rows if r[0] == "ML-SVM")
    diff = svm[3] - ml[3]
    se = np.hypot(svm[4], ml[4])
    print(f"\nSVM minus ML-SVM: {diff:+.2f} ± {se:.2f} points (unpaired standard error)")


if __name__ == "__main__":
    main()
