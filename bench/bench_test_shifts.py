"""Test-time shifts: what they cost at prediction, one moved copy at a time or two at once.

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python bench/bench_test_shifts.py

``csvm.model.virtual.shifted_decision`` sums an estimator's decisions on each image and
its moved copies (``reproduce mnist10-996`` uses the eight one-pixel moves).  This fits
candidate H's stack beside HOG (docs/protocol_mnist10_996.md) one-vs-one on 2,000
moment-normalised MNIST training images, then times its plain decision and the summed
decision over 2,000 validation images with ``n_jobs`` None (one copy at a time) and 2,
and checks both sums are the same bits.  Prints the seconds of each (best of 2).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench._data import SHARED  # noqa: E402
from bench._timing import best_of  # noqa: E402


def main() -> int:
    from csvm.analysis.mnist10_996 import candidate_estimator
    from csvm.data import load_multiclass
    from csvm.data.moment import moment_normalise
    from csvm.model.virtual import SHIFT_SETS, shifted_decision

    d = load_multiclass("mnist", protocol=None, data_dir=SHARED, n_train=10000)
    X, y = moment_normalise(d.X_train[:2000]), d.y_train[:2000]
    Xv = moment_normalise(d.X_val[:2000])
    clf = candidate_estimator("H", X.shape[1:], multi_class="ovo", n_jobs=2, random_state=0)
    clf.fit(X, y)
    plain, _ = best_of(lambda: clf.decision_function(Xv), repeats=2)
    print(f"plain decision, 2,000 images: {plain:.2f} s", flush=True)
    shifts = SHIFT_SETS["8"]
    results = {}
    for n_jobs in (None, 2):
        seconds, results[n_jobs] = best_of(
            lambda n_jobs=n_jobs: shifted_decision(clf, Xv, shifts, n_jobs=n_jobs), repeats=2
        )
        print(
            f"test-time shifts 8, n_jobs {n_jobs}: {seconds:.2f} s "
            f"({seconds / plain:.1f} x the plain decision)",
            flush=True,
        )
    same = np.array_equal(results[None], results[2])
    print(f"the two sums are the same bits: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
