"""The correlation at the heart of every CSVM: one einsum per filter tap against one BLAS
product of the patches (``csvm.model.conv``, used from four filters on), and what it does
to a pooled stack's fit and prediction.

    python bench/bench_conv.py

Prints the best of three timings of ``correlate`` for MNIST- and CIFAR-shaped images in
float32 and float64, with both paths forced, and one fit (5 relative steps) and one
prediction of the 16-filter pooled stack on 2,000 MNIST-shaped random images.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench._timing import best_of  # noqa: E402


def _correlate_table() -> None:
    from csvm.model import conv

    rng = np.random.default_rng(0)
    print("| images | filters | dtype | per tap s | one product s | speed-up |")
    print("|---|---|---|---|---|---|")
    cases = [((2000, 1, 28, 28), (16, 1, 5, 5)), ((2000, 1, 28, 28), (4, 1, 5, 5)),
             ((1000, 1, 96, 32), (16, 1, 5, 5)), ((1000, 3, 32, 32), (16, 3, 5, 5))]  # fmt: skip
    for x_shape, f_shape in cases:
        for dtype in (np.float32, np.float64):
            X = rng.random(x_shape).astype(dtype)
            f = rng.standard_normal(f_shape).astype(np.float32)
            conv._GEMM_MIN_FILTERS = 10**9
            tap = best_of(lambda X=X, f=f: conv.correlate(X, f))[0]
            conv._GEMM_MIN_FILTERS = 1
            gemm = best_of(lambda X=X, f=f: conv.correlate(X, f))[0]
            print(
                f"| {x_shape} | {f_shape} | {np.dtype(dtype).name} | {tap:.3f} | {gemm:.3f} "
                f"| {tap / gemm:.1f}x |"
            )
    conv._GEMM_MIN_FILTERS = 4


def _stack_fit() -> None:
    from csvm import KernelCSVM
    from csvm.model import conv

    rng = np.random.default_rng(1)
    X = rng.random((2000, 28, 28)).astype(np.float32)
    y = np.repeat([0, 1], 1000)
    X[y == 1, 10:18, 10:18] += 0.5
    for name, threshold in (("per tap", 10**9), ("one product", 4)):
        conv._GEMM_MIN_FILTERS = threshold
        clf = KernelCSVM(
            layers="5x5x16-abs-max2", kernel="rbf", gamma=0.2, regulariser="dfo2", lam=0.1,
            step="relative", eta=0.1, n_iter=5, C=None, filter_init="zero-mean", random_state=0,
        )  # fmt: skip
        t = time.perf_counter()
        clf.fit(X, y)
        fit = time.perf_counter() - t
        t = time.perf_counter()
        clf.predict(X)
        print(
            f"16-filter pooled stack, 2,000 images, 5 steps ({name}): fit {fit:.2f} s, "
            f"predict {time.perf_counter() - t:.2f} s"
        )
    conv._GEMM_MIN_FILTERS = 4


if __name__ == "__main__":
    _correlate_table()
    _stack_fit()
