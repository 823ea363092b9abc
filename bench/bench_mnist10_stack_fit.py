"""The MNIST ten-class stack's fit alone, in wall-clock and CPU seconds (issue 38).

    OPENBLAS_NUM_THREADS=1 python bench/bench_mnist10_stack_fit.py --data-dir DIR [--n-jobs 2]

Runs what ``python -m csvm reproduce mnist10-stack`` fits, phase by phase, without the
predictions and the baseline: deskewing the 60,000 training images, learning the filters
on the stratified 10,000 (45 pairs), solving every pair's SVM on all images
(:func:`csvm.model.refit.refit_all`) and the 4-shift virtual support vectors.  Each phase
prints its wall seconds and the process's CPU seconds (all threads): on a shared machine
the wall time is what the load left, and CPU / n_jobs is what idle cores would take if the
pairs kept them busy.  The peak resident memory closes the report.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere


def _phase(name: str, fn, totals: list[float]):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    totals[0] += wall
    totals[1] += cpu
    print(f"| {name} | {wall:.0f} | {cpu:.0f} |", flush=True)
    return result


def main() -> None:
    from csvm.analysis.mnist10 import (
        MNIST10_STACK_CONFIG,
        MNIST10_STACK_LEARN_ON,
        VIRTUAL_SHIFTS,
        _fit_first,
        load_mnist10,
    )
    from csvm.data.deskew import deskew
    from csvm.data.protocols import stratified_subsample
    from csvm.model.refit import refit_all
    from csvm.model.virtual import refit_virtual

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    X, y, _, _ = load_mnist10(args.data_dir, None, 0)
    print(f"load {os.getloadavg()[0]:.1f}; n_jobs {args.n_jobs}")
    print("| phase | wall s | CPU s |\n|---|---|---|")
    totals = [0.0, 0.0]
    X = _phase("deskew 60,000 images", lambda: deskew(X), totals)
    keep = stratified_subsample(y, MNIST10_STACK_LEARN_ON, 0)
    clf, _ = _phase(
        "learn the filters on 10,000 (45 pairs)",
        lambda: _fit_first(X[keep], y[keep], MNIST10_STACK_CONFIG, args.n_jobs, 0),
        totals,
    )
    _phase("solve every pair on all 60,000", lambda: refit_all(clf, X, y, args.n_jobs), totals)
    _phase(
        "4-shift virtual support vectors",
        lambda: refit_virtual(clf, X, VIRTUAL_SHIFTS["4"], n_jobs=args.n_jobs),
        totals,
    )
    print(f"| **fit** | **{totals[0]:.0f}** | **{totals[1]:.0f}** |")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"peak resident memory {peak:.2f} GiB; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
