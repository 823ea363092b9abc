"""Benchmark the SVM playground: how long a redraw takes, and SMO's steps against LIBSVM's.

    python bench/bench_playground.py            # 20 repeats (about a minute on 2 cores)
    python bench/bench_playground.py --repeats 5

Prints, measured here with one BLAS thread:

* the seconds of one uncached redraw after a setting changed (median of ``--repeats``):
  draw the data set, run SMO to tol 1e-3 keeping every step, evaluate f on the 81x81 grid,
  build the decision figure and serialise it to JSON (what Streamlit sends), for 100 and
  400 points and each kernel; the solve alone is a column of its own;
* SMO's pair updates to tol 1e-3 (csvm.model.smo.SMO.n_iter_) against LIBSVM's
  iterations (scikit-learn's SVC.n_iter_, same tol, shrinking on as by default), and the
  largest difference of their decision values on the training points.

Data: moons with noise 0.15 (seed 0) for poly and RBF, two blobs with overlap 0.3 for the
linear kernel; C = 1, gamma = 1, poly degree 3 with coef0 1.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

from csvm.figures.playground import decision_figure  # noqa: E402
from explorer import playground as pg  # noqa: E402

CASES = {
    "linear": pg.Settings(data="blobs", kernel="linear"),
    "poly": pg.Settings(data="moons", kernel="poly", degree=3, coef0=1.0, gamma=1.0),
    "rbf": pg.Settings(data="moons", kernel="rbf", gamma=1.0),
}


def redraw(settings: pg.Settings) -> tuple[float, float, int]:
    """One uncached redraw; returns (total seconds, solve seconds, SMO steps)."""
    start = time.perf_counter()
    X, y = pg.make_data(settings, ())
    t0 = time.perf_counter()
    steps = pg.record_steps(settings, X, y)
    solve = time.perf_counter() - t0
    alpha, b = steps.alpha_at(steps.total), float(steps.b[-1])
    axis = pg.grid_axis()
    F = pg.decision_grid(settings, X, y, alpha, b, axis)
    yf = y * pg.decision_values(settings, X, y, alpha, b, X)
    fig = decision_figure(X, y, axis, F, alpha, yf, settings.c_value, click_axis=pg.click_axis())
    fig.to_json()
    return time.perf_counter() - start, solve, steps.total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    print(
        "| kernel | points | redraw median (s) | of which SMO solve (s) | SMO steps "
        "| LIBSVM iterations | max abs diff of f |"
    )
    print("|---|---|---|---|---|---|---|")
    for kernel, base in CASES.items():
        for n in (100, 400):
            settings = replace(base, n=n)
            runs = [redraw(settings) for _ in range(args.repeats)]
            total = statistics.median(r[0] for r in runs)
            solve = statistics.median(r[1] for r in runs)
            X, y = pg.make_data(settings, ())
            ours = pg.estimator(settings).fit(X, y)
            svc = SVC(
                kernel=kernel,
                C=1.0,
                gamma=settings.gamma,
                degree=settings.degree,
                coef0=settings.coef0,
                tol=pg.TOL,
            ).fit(X, y)
            diff = np.max(np.abs(ours.decision_function(X) - svc.decision_function(X)))
            print(
                f"| {kernel} | {n} | {total:.3f} | {solve:.3f} | {ours.n_iter_} "
                f"| {int(svc.n_iter_[0])} | {diff:.1e} |"
            )


if __name__ == "__main__":
    with threadpool_limits(1):
        main()
