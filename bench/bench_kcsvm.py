"""Benchmark K-CSVM on the thesis's table 4.1 protocol (MNIST 3 vs 5), printing figures.

    python bench/bench_kcsvm.py            # everything (about 5 minutes on 2 cores)
    python bench/bench_kcsvm.py --quick    # one seed, no full-training-set run

Figures: test accuracy (mean +- std over seeds), seconds, the per-iteration split between
kernel, SVM solve and gradient, and peak memory (ru_maxrss of a fresh process per run).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import queue as queue_module
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere


def _run(config: dict, queue) -> None:
    # A fresh process per run, so ru_maxrss is that run's peak memory.
    from sklearn.svm import SVC

    from bench._data import mnist_pair
    from csvm import KernelCSVM

    Xtr, ytr, Xte, yte = mnist_pair(all_train=config.pop("all_train", False))
    kind = config.pop("kind")
    t0 = time.perf_counter()
    if kind == "svc":
        gamma = config.get("gamma")
        clf = (
            SVC(kernel="rbf", gamma=gamma, C=1e10)
            if gamma
            else SVC(kernel="poly", degree=2, gamma=1.0, coef0=1.0, C=1e10)
        )
        clf.fit(Xtr.reshape(len(Xtr), -1), ytr)
        seconds = time.perf_counter() - t0
        acc = clf.score(Xte.reshape(len(Xte), -1), yte)
        split = {}
        n_iter = 0
    else:
        clf = KernelCSVM(image_shape=(28, 28), filter_shape=(5, 5), **config)
        clf.fit(Xtr, ytr)
        seconds = time.perf_counter() - t0
        acc = clf.score(Xte, yte)
        split = {
            k: float(sum(e["timings"].get(k, 0.0) for e in clf.history_))
            for k in ("kernel", "svm", "gradient")
        }
        n_iter = len(clf.history_)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB
    queue.put(
        {
            "accuracy": acc,
            "seconds": seconds,
            "split": split,
            "n_iter": n_iter,
            "n_train": len(Xtr),
            "n_test": len(Xte),
            "peak_mib": peak,
        }
    )


def run(config: dict) -> dict:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_run, args=(dict(config), queue))
    proc.start()
    while True:
        try:
            result = queue.get(timeout=1.0)
            break
        except queue_module.Empty:
            if not proc.is_alive():
                raise RuntimeError(f"benchmark process died (exit code {proc.exitcode})") from None
    proc.join()
    return result


def _row(name: str, results: list[dict]) -> str:
    acc = np.array([r["accuracy"] for r in results]) * 100
    sec = np.array([r["seconds"] for r in results])
    r0 = results[0]
    split = ""
    if r0["split"]:
        total = sum(sum(r["split"].values()) for r in results)
        parts = {k: sum(r["split"][k] for r in results) for k in r0["split"]}
        other = sec.sum() - total
        split = ", ".join(f"{k} {v / sec.sum() * 100:.0f}%" for k, v in parts.items())
        split += f", other {other / sec.sum() * 100:.0f}%"
        split += f"; {sec.mean() / r0['n_iter'] * 1000:.0f} ms/iteration"
    return (
        f"| {name} | {r0['n_train']} / {r0['n_test']} | {acc.mean():.2f} ± {acc.std():.2f} "
        f"| {sec.mean():.2f} | {split} | {max(r['peak_mib'] for r in results):.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    seeds = range(1 if args.quick else args.seeds)
    from csvm.cli.reproduce import THESIS

    # The thesis's constant step, whatever KernelCSVM's default.
    thesis = {"kind": "kcsvm", "step": "constant", **THESIS["table4.1"]["csvm"]}
    rows = [
        "| model | train / test | test accuracy % | seconds | time split | peak MiB |",
        "|---|---|---|---|---|---|",
    ]
    rows.append(_row("SVC poly d=2 (no C)", [run({"kind": "svc"})]))
    print(rows[-1], flush=True)
    rows.append(
        _row(
            "K-CSVM poly d=2, DFO1, λ 0.01, η 0.1, 25 it",
            [run({**thesis, "random_state": s}) for s in seeds],
        )
    )
    print(rows[-1], flush=True)
    for gamma in (0.01, 0.03):
        rbf = {
            **thesis,
            "kernel": "rbf",
            "gamma": gamma,
            "step": "armijo",
            "eta": 1.0,
            "regulariser": "dfo2",
            "lam": 0.1,
        }
        rows.append(_row(f"SVC RBF γ {gamma} (no C)", [run({"kind": "svc", "gamma": gamma})]))
        print(rows[-1], flush=True)
        rows.append(
            _row(
                f"K-CSVM RBF γ {gamma}, Armijo, DFO2 λ 0.1, 25 it",
                [run({**rbf, "random_state": s}) for s in seeds],
            )
        )
        print(rows[-1], flush=True)
    if not args.quick:
        full = {**thesis, "step": "armijo", "all_train": True, "random_state": 0}
        rows.append(_row("K-CSVM poly d=2, Armijo, all 11,552 train", [run(full)]))
        print(rows[-1], flush=True)
    print()
    print("\n".join(rows))
    print(
        json.dumps({"command": "python bench/bench_kcsvm.py" + (" --quick" if args.quick else "")})
    )


if __name__ == "__main__":
    main()
