"""Choosing the configuration of ``reproduce mnist10`` on the validation split.

    python bench/bench_mnist10_select.py 10000 svc:0.02:10 svc:0.03:1e10 \\
        krbf:0.01:0.1:10:1 krbf:0.03:0.1:10:1 kpoly:2:10 krbf:0.02:0.1:20:1 krbf:0.03:0.1:10:2

Trains on a stratified subsample (first argument) of MNIST training images 0-49,999 and
scores on the first 3,000 validation images (50,000-52,999), never the test set, 10
classes one-vs-one.  Each further argument is one model:

* ``svc:GAMMA:C`` plain RBF SVC on pixels;
* ``krbf:GAMMA:LAM:N_ITER:N_FILTERS[:C]`` K-CSVM, RBF, DFO2, Armijo steps from eta 1;
* ``kpoly:DEGREE:N_ITER`` K-CSVM, the thesis's table 4.1 settings.

Prints validation accuracy, fit and predict seconds, support vectors and filter norm.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench._data import SHARED  # noqa: E402


def main(argv: list[str]) -> int:
    from sklearn.svm import SVC

    from csvm import KernelCSVM
    from csvm.data import load_multiclass

    n_train, models = int(argv[0]), argv[1:]
    d = load_multiclass("mnist", protocol=None, data_dir=SHARED, n_train=n_train)
    Xv, yv = d.X_val[:3000], d.y_val[:3000]
    print(f"train {len(d.y_train)}, validation {len(yv)}", flush=True)

    def report(name, clf, X, X_val):
        t = time.perf_counter()
        clf.fit(X, d.y_train)
        fit = time.perf_counter() - t
        t = time.perf_counter()
        acc = np.mean(clf.predict(X_val) == yv)
        predict = time.perf_counter() - t
        extra = ""
        if isinstance(clf, KernelCSVM):
            norm = np.mean([np.linalg.norm(m.filters) for m in clf.estimators_])
            extra = f" nSV {int(clf.n_support_.sum())} |f| {norm:.2f}"
        print(f"{name}: val {100 * acc:.2f} % fit {fit:.0f} s predict {predict:.1f} s{extra}")

    flat, flat_val = d.X_train.reshape(len(d.X_train), -1), Xv.reshape(len(Xv), -1)
    common = {"image_shape": (1, 28, 28), "filter_shape": (5, 5), "n_jobs": 2, "random_state": 0}
    for spec in models:
        kind, *a = spec.split(":")
        if kind == "svc":
            clf = SVC(kernel="rbf", gamma=float(a[0]), C=float(a[1]))
            report(f"SVC rbf g{a[0]} C{a[1]}", clf, flat, flat_val)
        elif kind == "krbf":
            C = None if len(a) < 5 else float(a[4])
            clf = KernelCSVM(
                kernel="rbf",
                gamma=float(a[0]),
                regulariser="dfo2",
                lam=float(a[1]),
                step="armijo",
                eta=1.0,
                n_iter=int(a[2]),
                n_filters=int(a[3]),
                C=C,
                **common,
            )
            report(f"K-CSVM rbf g{a[0]} dfo2 lam{a[1]} it{a[2]} nf{a[3]} C{C}", clf, d.X_train, Xv)
        elif kind == "kpoly":
            clf = KernelCSVM(
                kernel="poly", degree=int(a[0]), regulariser="dfo1", lam=0.01, eta=0.1,
                n_iter=int(a[1]), **common,
            )  # fmt: skip
            report(f"K-CSVM poly{a[0]} it{a[1]}", clf, d.X_train, Xv)
        else:
            print(f"unknown model {spec!r}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
