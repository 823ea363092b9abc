"""Benchmark the filter lab (csvm.analysis.lab): how fast it answers and what classic filters score.

    python bench/bench_lab.py            # everything (about 2 minutes on 2 cores)
    python bench/bench_lab.py --quick    # the classroom split only
    python bench/bench_lab.py --blas-threads 2   # as a bare process would run

Every figure is taken with one BLAS thread by default, as the explorer's worker processes
run their jobs (csvm.jobs): on a shared 2-core machine, two OpenBLAS threads per process
make the small float64 products of the gradient 10-50 times slower, not faster.

Prints, measured here:

* seconds to re-solve the SVM at a fixed 5x5 filter (median of repeats) on the classroom
  split (mnist-5k 3 vs 5, 600 training images) and on the thesis's table 4.1 split
  (MNIST 3 vs 5, 1,895 training images; needs shared/data/mnist);
* seconds for a 21-point 1-D landscape and a 15x15 2-D landscape (target: <= 30 s on the
  classroom split);
* test accuracy, T(f) and support vectors of every classic filter against the plain SVM
  on raw pixels and a learned K-CSVM filter (table 4.1 settings, seed 0) on MNIST 3 vs 5.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench._data import SHARED, mnist_pair  # noqa: E402
from csvm import KernelCSVM  # noqa: E402
from csvm.analysis.lab import (  # noqa: E402
    FILTER_NAMES,
    classic_filter,
    solve_fixed_filter,
    solve_raw_pixels,
)
from csvm.analysis.landscape import (  # noqa: E402
    landscape_1d,
    landscape_2d,
    landscape_directions,
    nonconvex_points,
)
from csvm.cli.reproduce import THESIS  # noqa: E402
from csvm.data import load_pair  # noqa: E402

CONFIG = THESIS["table4.1"]["csvm"]
SETTINGS = {
    "kernel": CONFIG["kernel"],
    "degree": CONFIG["degree"],
    "gamma": 1.0,
    "coef0": 1.0,
    "C": CONFIG["C"],
    "regulariser": CONFIG["regulariser"],
    "lam": CONFIG["lam"],
}
ETA = CONFIG["eta"]


def _median_seconds(fn, repeats: int) -> tuple[float, float]:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), max(times)


def bench_speed(name: str, X, y, Xt, yt, landscape_2d_too: bool) -> None:
    f = classic_filter("random", 5, seed=0)
    median, worst = _median_seconds(
        lambda: solve_fixed_filter(X, y, f, X_test=Xt, y_test=yt, **SETTINGS), 7
    )
    r = solve_fixed_filter(X, y, f, X_test=Xt, y_test=yt, **SETTINGS)
    split = ", ".join(f"{k} {1000 * v:.0f} ms" for k, v in r.seconds.items())
    print(f"\n== {name}: {len(X)} train / {len(Xt)} test images ==")
    print(
        f"re-solve (SVM + T + gradient + test accuracy): median {median:.3f} s, max {worst:.3f} s"
    )
    print(f"  one solve split: {split}")
    d1, d2 = landscape_directions(r.gradient, step=ETA)
    line = landscape_1d(X, y, f, d1, **SETTINGS)
    bends = nonconvex_points(line.ts, line.objectives)
    print(
        f"1-D landscape, {len(line.ts)} points: {line.seconds:.2f} s "
        f"({1000 * line.seconds / len(line.ts):.0f} ms/point); T from "
        f"{line.objectives.min():.4g} to {line.objectives.max():.4g}; "
        f"bends downwards at t = {', '.join(f'{t:g}' for t in line.ts[bends]) or 'nowhere'}"
    )
    if landscape_2d_too:
        plane = landscape_2d(X, y, f, d1, d2, **SETTINGS)
        n = plane.objectives.size
        print(
            f"2-D landscape, {plane.objectives.shape[0]}x{plane.objectives.shape[1]}: "
            f"{plane.seconds:.2f} s ({1000 * plane.seconds / n:.0f} ms/point; target <= 30 s)"
        )


def bench_accuracy(name: str, X, y, Xt, yt) -> None:
    print(f"\n== 5x5 filters held fixed, {name} (poly d=2, DFO1 lam 0.01, no C) ==")
    print(f"{'filter':<22}{'test acc %':>11}{'train acc %':>12}{'T(f)':>11}{'n_SV':>6}")
    raw = solve_raw_pixels(
        X,
        y,
        X_test=Xt,
        y_test=yt,
        **{k: v for k, v in SETTINGS.items() if k not in ("regulariser", "lam")},
    )

    def row(label, r):
        print(
            f"{label:<22}{100 * r.test_accuracy:>11.2f}{100 * r.train_accuracy:>12.2f}"
            f"{r.objective:>11.4g}{r.n_support:>6}"
        )

    row("raw pixels (plain SVM)", raw)
    for filt in FILTER_NAMES:
        row(
            filt,
            solve_fixed_filter(X, y, classic_filter(filt, 5), X_test=Xt, y_test=yt, **SETTINGS),
        )
    t0 = time.perf_counter()
    clf = KernelCSVM(image_shape=(28, 28), filter_shape=(5, 5), random_state=0, **CONFIG).fit(X, y)
    seconds = time.perf_counter() - t0
    learned = solve_fixed_filter(X, y, clf.filters_[0], X_test=Xt, y_test=yt, **SETTINGS)
    row(f"learned ({CONFIG['n_iter']} it, {seconds:.1f} s)", learned)
    print(f"  (KernelCSVM.score of the same run: {100 * clf.score(Xt, yt):.2f} %)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the classroom split only")
    parser.add_argument("--blas-threads", type=int, default=1, help="BLAS threads (default 1)")
    args = parser.parse_args(argv)
    with threadpool_limits(args.blas_threads):
        return _main(args)


def _main(args: argparse.Namespace) -> int:
    print(f"BLAS threads: {args.blas_threads}")
    d = load_pair("mnist-5k", "3", "5", n_train=600, random_state=0)
    classroom = (d.X_train, d.y_train, d.X_test, d.y_test)
    bench_speed("classroom split (mnist-5k 3 vs 5)", *classroom, landscape_2d_too=True)
    have_mnist = (SHARED / "mnist").is_dir()
    if not args.quick and have_mnist:
        thesis = mnist_pair()
        bench_speed("thesis table 4.1 split (MNIST 3 vs 5)", *thesis, landscape_2d_too=False)
        bench_accuracy("MNIST 3 vs 5, thesis table 4.1 split", *thesis)
    else:
        if not have_mnist:
            print(f"\n(no MNIST files at {SHARED}/mnist: thesis split skipped)")
        bench_accuracy("classroom split", *classroom)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
