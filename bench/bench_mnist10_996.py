"""Issue 35's ten-class MNIST target (99.6 %), screened on the validation split.

    python bench/bench_mnist10_996.py --cand A          # about 6 minutes on a quiet machine
    python bench/bench_mnist10_996.py --cand B --gammas 1 --shifts 4,8
    python bench/bench_mnist10_996.py --overlap A E   # the saved screens' errors, together

Protocol: docs/protocol_mnist10_996.md (declared before any run).  Trains on a stratified
``--n-train`` of MNIST training images 0-49,999, validates on images 50,000-59,999 (the
test set is never read); every image deskewed.  The candidate's stack learns its filters
on the training images; then, with the filters fixed, each SVM γ multiplier (the pairs'
SVMs solved again at that γ, ``csvm.model.refit.refit_all``) and each set of virtual
support-vector shifts (``csvm.model.virtual.refit_virtual``) is scored on validation.
Each result is written as it comes to ``bench/results/mnist10_996_<cand>.json``.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench._cache import pack_correct, save_cache  # noqa: E402
from bench._data import SHARED  # noqa: E402
from bench.bench_mnist10_moment_look import PREPARATIONS  # noqa: E402
from csvm.data.moment import moment_normalise  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def _peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _set_gamma(clf, gamma: float):
    """A copy of the fitted stack whose pairs' RBF γ is ``gamma`` (filters kept)."""
    out = copy.deepcopy(clf)
    out.gamma = gamma
    for model in out.estimators_:
        model.kernel_params = dataclasses.replace(model.kernel_params, gamma=gamma)
    return out


def _score(clf, Xv, yv) -> np.ndarray:
    return clf.predict(Xv) == yv


def _score_moved(clf, Xv, yv, shifts) -> np.ndarray:
    """Right or wrong with test-time shifts (csvm.model.virtual.predict_shifted)."""
    from csvm.model.virtual import predict_shifted

    return predict_shifted(clf, Xv, shifts) == yv


def overlap(names: list[str]) -> int:
    """How far any arbitration between screened candidates could go: the validation images
    each candidate's chosen row (most right) gets wrong, and those all of them get wrong
    (no model is fitted and no test image read: the saved screens' bits only)."""
    from bench._cache import load_cache, unpack_correct

    wrong = {}
    for name in names:
        rows = load_cache(RESULTS / f"mnist10_996_{name}.json")["rows"]
        best = max(rows, key=lambda r: r["val_accuracy"])
        wrong[name] = ~unpack_correct(best["correct"], 10_000)
        print(f"{name} ({best['shifts']} shifts, γ×{best['gamma_mult']:g}): "
              f"{int(wrong[name].sum())} of 10,000 validation images wrong")  # fmt: skip
    every = np.logical_and.reduce(list(wrong.values()))
    print(f"wrong for all of {', '.join(names)}: {int(every.sum())} (a perfect arbiter's "
          f"{100 - every.mean() * 100:.2f} %); wrong for any: "
          f"{int(np.logical_or.reduce(list(wrong.values())).sum())}")  # fmt: skip
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--overlap"]:
        return overlap(argv[1:] or ["A", "E"])
    from csvm.analysis.mnist10_996 import (
        CANDIDATES,
        SHIFT_SETS,
        candidate_config,
        candidate_estimator,
    )
    from csvm.data import load_multiclass
    from csvm.data.deskew import deskew
    from csvm.model.refit import refit_all
    from csvm.model.virtual import refit_virtual

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cand", choices=sorted(CANDIDATES), required=True)
    parser.add_argument("--n-train", type=int, default=10000)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--gammas", default="1,0.5,2", help="γ multipliers, comma list")
    parser.add_argument("--shifts", default=",".join(SHIFT_SETS), help="comma list")
    parser.add_argument("--prepare", default="deskew", choices=sorted(PREPARATIONS))
    parser.add_argument("--test-shifts", default="", help="test-time shift sets, comma list")
    parser.add_argument("--name", default=None, help="the results file's name (--cand's)")
    args = parser.parse_args(argv)
    d = load_multiclass("mnist", protocol=None, data_dir=SHARED, n_train=args.n_train)
    how = PREPARATIONS[args.prepare]

    def prepare(Z):
        return deskew(Z) if how is None else moment_normalise(Z, *how)

    X, y, Xv, yv = prepare(d.X_train), d.y_train, prepare(d.X_val), d.y_val
    config = candidate_config(args.cand, X.shape[1:])
    print(f"{args.cand}: train {len(y)}, val {len(yv)}; {config}", flush=True)
    clf = candidate_estimator(
        args.cand, X.shape[1:], multi_class="ovo", n_jobs=args.n_jobs, random_state=0
    )
    t = time.perf_counter()
    clf.fit(X, y)
    learn = time.perf_counter() - t
    out = RESULTS / f"mnist10_996_{args.name or args.cand}.json"
    record = {"candidate": args.name or args.cand, "config": config, "n_train": len(y),
              "prepare": args.prepare, "rows": []}  # fmt: skip
    record["learn_seconds"] = learn
    for mult in (float(g) for g in args.gammas.split(",")):
        t = time.perf_counter()
        base = clf if mult == 1 else refit_all(_set_gamma(clf, mult * config["gamma"]), X, y)
        first = _score(base, Xv, yv)
        print(f"γ×{mult:g}: first fit val {100 * first.mean():.2f} % "
              f"({time.perf_counter() - t:.0f} s)", flush=True)  # fmt: skip
        for name in args.shifts.split(","):
            t = time.perf_counter()
            v = refit_virtual(copy.deepcopy(base), X, SHIFT_SETS[name], n_jobs=args.n_jobs)
            right = _score(v, Xv, yv)
            seconds = time.perf_counter() - t
            for test_name in filter(None, args.test_shifts.split(",")):
                moved = _score_moved(v, Xv, yv, SHIFT_SETS[test_name])
                print(f"    + test-time {test_name}: val {100 * moved.mean():.2f} % "
                      f"({int(moved.sum())} right)", flush=True)  # fmt: skip
                record["rows"].append(
                    {"candidate": record["candidate"], "gamma_mult": mult, "shifts": name,
                     "test_shifts": test_name, "n_right": int(moved.sum()),
                     "val_accuracy": float(moved.mean()), "correct": pack_correct(moved)}
                )  # fmt: skip
            print(
                f"  + virtual {name}: val {100 * right.mean():.2f} % ({int(right.sum())} "
                f"right, {seconds:.0f} s, {int(v.n_support_.sum())} SVs, peak "
                f"{_peak_gib():.2f} GiB)",
                flush=True,
            )
            record["rows"].append(
                {"candidate": args.cand, "gamma_mult": mult, "shifts": name,
                 "n_right": int(right.sum()), "val_accuracy": float(right.mean()),
                 "first_fit_val_accuracy": float(first.mean()), "virtual_seconds": seconds,
                 "correct": pack_correct(right)}
            )  # fmt: skip
            save_cache(out, record)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
