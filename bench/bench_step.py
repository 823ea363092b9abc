"""Step rules of the K-CSVM against the training-set size: print a table of measured figures.

    python bench/bench_step.py              # MNIST 3 v 5 at 600, 1,895 and 11,552 images,
                                            # CIFAR-10 airplane v automobile (~30 minutes)
    python bench/bench_step.py --quick      # no 11,552 and no CIFAR-10 rows (~1 minute)
    python bench/bench_step.py --scales     # T and |dT/df| at the first filter, per N

Data: the thesis protocols on the real files in ../shared/data (MNIST: the 3s and 5s among
the first 10,000 training images, 1,895, or a stratified 600 of them, or all 11,552 of the
training set; test: all 1,902 of the test set.  CIFAR-10: data_batch_1, 1,979 images, RGB
planes stacked to 96x32; test_batch, 2,000).  Models: the thesis's table 4.1 recipe (poly
d=2, DFO1 lam 0.01, no C) and table 4.4 recipe (poly d=3, DFO2 lam 0.1, C = 1e-11 on the
last iteration), each with the step rule and eta of the row; seed 0.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench._data import SHARED, mnist_pair  # noqa: E402
from csvm import DivergenceError, KernelCSVM  # noqa: E402

RECIPES = {
    "mnist": {"kernel": "poly", "degree": 2, "regulariser": "dfo1", "lam": 0.01, "C": None},
    "cifar10": {
        "kernel": "poly",
        "degree": 3,
        "regulariser": "dfo2",
        "lam": 0.1,
        "C": 1e-11,
        "C_last_only": True,
    },
}
#: (step rule, eta) rows: the thesis's constant step, the relative step at the default
#: eta and at half and twice it, and Armijo (eta: its first trial step).
RULES = [("constant", 0.1), ("relative", 0.05), ("relative", 0.1), ("relative", 0.2)]
ARMIJO = {"mnist": ("armijo", 0.1), "cifar10": ("armijo", 1e4)}


def load(dataset: str, n: int | None):
    """Train and test arrays of one row's data."""
    if dataset == "mnist" and n == 11_552:
        X, y, Xt, yt = mnist_pair(all_train=True)
        return X, y, Xt, yt, "MNIST 3 v 5"
    from csvm.data import load_pair

    if dataset == "mnist":
        d = load_pair("mnist", 3, 5, protocol="thesis", data_dir=SHARED, n_train=n)
        name = "MNIST 3 v 5"
    else:
        d = load_pair("cifar10", "airplane", "automobile", protocol="thesis", data_dir=SHARED)
        name = "CIFAR-10 airplane v automobile"
    return d.X_train, d.y_train, d.X_test, d.y_test, name


def run(data, dataset: str, rule: str, eta: float, n_iter: int) -> dict:
    """Fit one K-CSVM and measure it."""
    X, y, Xt, yt, _ = data
    clf = KernelCSVM(
        image_shape=X.shape[1:],
        filter_shape=(5, 5),
        step=rule,
        eta=eta,
        n_iter=n_iter,
        random_state=0,
        **RECIPES[dataset],
    )
    diverged = "no"
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # bound hits are counted from the events below
        try:
            clf.fit(X, y)
        except DivergenceError as exc:
            event = clf.history_[-1]
            before, after = event.get("filter_norm_before"), event.get("filter_norm_after")
            norms = f", norm {before:.3g} → {after:.3g}" if before and after else ""
            diverged = f"yes: {exc.cause} at iteration {event['iteration']}{norms}"
    seconds = time.perf_counter() - t0
    steps = [e for e in clf.history_ if e["kind"] == "iteration"]
    return {
        "first_norm": steps[0]["filter_norm"],
        "final_norm": float(np.linalg.norm(clf.filters_)),
        "diverged": diverged,
        "accuracy": clf.score(Xt, yt),
        "seconds": seconds,
        "iterations": len(steps),
        "hit_bound": sum(e["svm_hit_max_iter"] for e in steps),
        "last_eta": steps[-1]["eta"],
    }


def scales(sizes) -> None:
    """T, its gradient and the thesis's first constant step at the random first filter."""
    print(
        "| data | N | T(f0) | sum alpha | support vectors | ‖f0‖ | ‖dT/df‖ | 0.1 ‖dT/df‖ / ‖f0‖ |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for dataset, n in sizes:
        data = load(dataset, n)
        X, y = data[0], data[1]
        seen = []
        clf = KernelCSVM(
            image_shape=X.shape[1:],
            filter_shape=(5, 5),
            eta=0.0,
            n_iter=2,
            random_state=0,
            **RECIPES[dataset],
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf.fit(X, y, callback=seen.append)
        e = seen[0]
        g = float(np.linalg.norm(e["gradient"]))
        print(
            f"| {data[4]} | {len(y)} | {e['objective']:.3g} | {e['sum_alpha']:.3g} "
            f"| {e['n_support']} | {e['filter_norm']:.3g} | {g:.3g} "
            f"| {0.1 * g / e['filter_norm']:.3g} |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="600 and 1,895 MNIST images only")
    parser.add_argument("--n-iter", type=int, default=25)
    parser.add_argument("--scales", action="store_true", help="only the first-filter table")
    args = parser.parse_args()
    sizes = [("mnist", 600), ("mnist", None)]
    if not args.quick:
        sizes += [("mnist", 11_552), ("cifar10", None)]
    if args.scales:
        scales(sizes)
        return
    print(
        "| data | N | step rule | eta | iterations | filter norm first → final | diverged? "
        "| test accuracy % | seconds |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for dataset, n in sizes:
        data = load(dataset, n)
        for rule, eta in [*RULES, ARMIJO[dataset]]:
            r = run(data, dataset, rule, eta, args.n_iter)
            eta_text = f"{eta:g}" + (f" (last {r['last_eta']:.3g})" if r["last_eta"] != eta else "")
            bound = f", {r['hit_bound']} solves at svm_max_iter" if r["hit_bound"] else ""
            print(
                f"| {data[4]} | {len(data[1])} | {rule} | {eta_text} | {r['iterations']}{bound} "
                f"| {r['first_norm']:.3g} → {r['final_norm']:.3g} | {r['diverged']} "
                f"| {100 * r['accuracy']:.2f} | {r['seconds']:.1f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
