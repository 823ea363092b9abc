"""K-CSVM fits against one plain SVC fit, timed in the same process (issue 38).

    python bench/bench_warm_start.py                # table 4.1: SVC, K-CSVM warm, K-CSVM LIBSVM
    python bench/bench_warm_start.py --rounds 5     # more interleaved rounds (medians)
    python bench/bench_warm_start.py --profile warm  # where one fit's time goes (cProfile)
    python bench/bench_warm_start.py --all-train    # also all 11,552 3s/5s, 25 Armijo steps
    python bench/bench_warm_start.py --stack-pair 3,5  # one pair of the MNIST 10-class stack

Table 4.1 is the thesis's configuration exactly as ``python -m csvm reproduce table4.1``
builds it (3 v 5, the 1,895 training images of the thesis protocol, poly-2, DFO1, lam 0.01,
constant eta 0.1, 25 iterations, no C, seed 0); the plain SVC is the reproduction's plain
SVM (poly-2 on the raw pixels, no C).  Each round fits the SVC, then the K-CSVM with each
solver, so load from other processes falls on all of them alike; the ratio printed is the
median over rounds of (K-CSVM seconds / SVC seconds) within a round, in wall-clock and in
CPU seconds of the process (with one BLAS thread, ``OPENBLAS_NUM_THREADS=1``, the CPU
ratio is what an idle core would give: other processes' load does not enter it).  The
objective curves of the two solvers are compared iteration by iteration (max relative
difference).

``--all-train``: a fresh process fits the K-CSVM (warm solver) on all 11,552 3s and 5s of
the MNIST training set with Armijo steps, reads its peak resident memory, then fits the
plain SVC on the same images; on a commit before the warm solver it runs LIBSVM's path.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def _has_solver() -> bool:
    from csvm import KernelCSVM

    return "solver" in KernelCSVM().get_params()


def _table41():
    """The reproduction's data, K-CSVM configuration and plain SVM."""
    from csvm.cli.reproduce import THESIS, _config
    from csvm.data import load_pair

    spec = THESIS["table4.1"]
    data = load_pair("mnist", *spec["pair"], protocol="thesis", data_dir=SHARED)
    config = _config(
        {
            **spec["csvm"],
            "filter_size": 5,
            "dataset": "mnist",
            "class_a": spec["pair"][0],
            "class_b": spec["pair"][1],
            "protocol": "thesis",
            "n_train": None,
            "seed": 0,
        }
    )
    return data, config


def _svc():
    from csvm.model.plain_svm import make_plain_svm

    return make_plain_svm(kernel="poly", degree=2, gamma=1.0, coef0=1.0, C=None)


def _kcsvm(config, data, solver: str | None):
    clf = config.build_estimator(data.image_shape)
    if solver is not None:
        clf.set_params(solver=solver)
    return clf


def _split(history) -> dict[str, float]:
    return {
        k: float(sum(e["timings"].get(k, 0.0) for e in history))
        for k in ("kernel", "svm", "gradient")
    }


def _load() -> str:
    return "/".join(f"{v:.1f}" for v in os.getloadavg())


def table41(rounds: int) -> dict:
    data, config = _table41()
    solvers = ["warm", "libsvm"] if _has_solver() else [None]
    seconds: dict[str, list[float]] = {"svc": [], **{str(s): [] for s in solvers}}
    cpu: dict[str, list[float]] = {"svc": [], **{str(s): [] for s in solvers}}
    ratios: dict[str, list[float]] = {str(s): [] for s in solvers}
    cpu_ratios: dict[str, list[float]] = {str(s): [] for s in solvers}
    fitted = {}
    load_before = _load()
    for _ in range(rounds):
        t0, c0 = time.perf_counter(), time.process_time()
        svc = _svc().fit(data.X_train, data.y_train)
        svc_s, svc_c = time.perf_counter() - t0, time.process_time() - c0
        seconds["svc"].append(svc_s)
        cpu["svc"].append(svc_c)
        for solver in solvers:
            clf = _kcsvm(config, data, solver)
            t0, c0 = time.perf_counter(), time.process_time()
            clf.fit(data.X_train, data.y_train)
            took, took_c = time.perf_counter() - t0, time.process_time() - c0
            seconds[str(solver)].append(took)
            cpu[str(solver)].append(took_c)
            ratios[str(solver)].append(took / svc_s)
            cpu_ratios[str(solver)].append(took_c / svc_c)
            fitted[str(solver)] = clf
    out = {
        "n_train": int(len(data.y_train)),
        "n_test": int(len(data.y_test)),
        "load_before": load_before,
        "load_after": _load(),
        "svc_accuracy": float(svc.score(data.X_test, data.y_test)),
        "seconds": seconds,
        "cpu_seconds": cpu,
        "models": {},
    }
    for name, clf in fitted.items():
        T = np.array([e["objective"] for e in clf.history_])
        out["models"][name] = {
            "accuracy": float(clf.score(data.X_test, data.y_test)),
            "median_seconds": statistics.median(seconds[name]),
            "median_ratio": statistics.median(ratios[name]),
            "ratios": ratios[name],
            "median_cpu_ratio": statistics.median(cpu_ratios[name]),
            "split": _split(clf.history_),
            "split_seconds": seconds[name][-1],  # the split is the last round's fit
            "objective": T.tolist(),
            "svm_iterations": [int(e["svm_iterations"]) for e in clf.history_],
        }
    if {"warm", "libsvm"} <= set(fitted):
        T_w = np.array(out["models"]["warm"]["objective"])
        T_l = np.array(out["models"]["libsvm"]["objective"])
        out["objective_max_rel_diff"] = float(np.max(np.abs(T_w - T_l) / np.abs(T_l)))
    return out


def _print_table41(out: dict) -> None:
    svc_med = statistics.median(out["seconds"]["svc"])
    print(
        f"Table 4.1 ({out['n_train']} train / {out['n_test']} test), "
        f"{len(out['seconds']['svc'])} rounds, load {out['load_before']} -> {out['load_after']}"
    )
    print(
        "| model | seconds (each round) | median s | × one SVC fit | CPU s, × one SVC fit "
        "| test accuracy % | split |"
    )
    print("|---|---|---|---|---|---|---|")
    each = ", ".join(f"{s:.2f}" for s in out["seconds"]["svc"])
    svc_cpu = statistics.median(out["cpu_seconds"]["svc"])
    print(f"| SVC poly d=2, no C | {each} | {svc_med:.2f} | 1 | {svc_cpu:.2f}, 1 | "
          f"{100 * out['svc_accuracy']:.2f} | |")  # fmt: skip
    for name, m in out["models"].items():
        label = {"warm": "K-CSVM, warm solver", "libsvm": "K-CSVM, LIBSVM"}.get(name, "K-CSVM")
        each = ", ".join(f"{s:.2f}" for s in out["seconds"][name])
        total = m["median_seconds"]
        split = ", ".join(f"{k} {v / m['split_seconds'] * 100:.0f}%" for k, v in m["split"].items())
        cpu_s = statistics.median(out["cpu_seconds"][name])
        print(
            f"| {label} | {each} | {total:.2f} | {m['median_ratio']:.1f} "
            f"| {cpu_s:.2f}, {m['median_cpu_ratio']:.1f} | {100 * m['accuracy']:.2f} | {split} |"
        )
    if "objective_max_rel_diff" in out:
        print(
            "objective curve, warm vs LIBSVM: max relative difference "
            f"{out['objective_max_rel_diff']:.2e} over {len(out['models']['warm']['objective'])} "
            "iterations"
        )
        print(f"SVM iterations per solve, warm: {out['models']['warm']['svm_iterations']}")


def _all_train(queue, solver) -> None:
    # A fresh process: ru_maxrss is then the K-CSVM fit's own peak.
    from bench._data import mnist_pair
    from csvm import KernelCSVM

    Xtr, ytr, Xte, yte = mnist_pair(all_train=True)
    params = dict(
        image_shape=(28, 28), filter_shape=(5, 5), kernel="poly", degree=2, regulariser="dfo1",
        lam=0.01, eta=0.1, step="armijo", n_iter=25, C=None, random_state=0,
    )  # fmt: skip
    if solver is not None:
        params["solver"] = solver
    clf = KernelCSVM(**params)
    t0, c0 = time.perf_counter(), time.process_time()
    clf.fit(Xtr, ytr)
    took, took_c = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    acc = clf.score(Xte, yte)
    t0, c0 = time.perf_counter(), time.process_time()
    svc = _svc().fit(Xtr, ytr)
    svc_s, svc_c = time.perf_counter() - t0, time.process_time() - c0
    queue.put(
        {
            "n_train": int(len(ytr)),
            "seconds": took,
            "svc_seconds": svc_s,
            "ratio": took / svc_s,
            "cpu_seconds": took_c,
            "svc_cpu_seconds": svc_c,
            "cpu_ratio": took_c / svc_c,
            "peak_mib": peak,
            "accuracy": float(acc),
            "svc_accuracy": float(svc.score(Xte, yte)),
            "split": _split(clf.history_),
            "objective": [float(e["objective"]) for e in clf.history_],
        }
    )


def all_train(solver) -> dict:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    load_before = _load()
    proc = ctx.Process(target=_all_train, args=(queue, solver))
    proc.start()
    result = queue.get()
    proc.join()
    result["load_before"], result["load_after"] = load_before, _load()
    return result


def stack_pair(a: int, b: int, rounds: int) -> None:
    """One one-vs-one pair of ``reproduce mnist10-stack``'s learning: the pair's images among
    the stratified 10,000 it learns on (about 2,000, deskewed), its stack configuration,
    fitted with each solver in turn; wall and CPU seconds and the pair's test accuracy."""
    from csvm import KernelCSVM
    from csvm.analysis.mnist10 import MNIST10_STACK_CONFIG, MNIST10_STACK_LEARN_ON, load_mnist10
    from csvm.data.deskew import deskew
    from csvm.data.protocols import stratified_subsample

    X, y, X_test, y_test = load_mnist10(str(SHARED), None, 0)
    keep = stratified_subsample(y, MNIST10_STACK_LEARN_ON, 0)
    X, y = X[keep], y[keep]
    pick, test = np.isin(y, (a, b)), np.isin(y_test, (a, b))
    X, y = deskew(X[pick]), np.where(y[pick] == b, 1, -1)
    X_test, y_test = deskew(X_test[test]), np.where(y_test[test] == b, 1, -1)
    print(f"MNIST {a} v {b}: {len(y)} training images, {len(y_test)} test; load {_load()}")
    print("| solver | wall s (each round) | CPU s (each round) | test accuracy % | final T |")
    print("|---|---|---|---|---|")
    runs: dict[str, list[tuple[float, float]]] = {"warm": [], "libsvm": []}
    scores = {}
    for _ in range(rounds):
        for solver in runs:
            clf = KernelCSVM(
                image_shape=X.shape[1:], random_state=0, solver=solver, **MNIST10_STACK_CONFIG
            )
            t0, c0 = time.perf_counter(), time.process_time()
            clf.fit(X, y)
            runs[solver].append((time.perf_counter() - t0, time.process_time() - c0))
            scores[solver] = (clf.score(X_test, y_test), clf.history_[-1]["objective"])
    for solver, times in runs.items():
        wall = ", ".join(f"{w:.1f}" for w, _ in times)
        cpu = ", ".join(f"{c:.1f}" for _, c in times)
        acc, T = scores[solver]
        print(f"| {solver} | {wall} | {cpu} | {100 * acc:.2f} | {T:.6g} |")
    print(f"load after {_load()}")


def profile(solver: str) -> None:
    import cProfile
    import pstats

    data, config = _table41()
    clf = _kcsvm(config, data, solver if _has_solver() else None)
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    clf.fit(data.X_train, data.y_train)
    prof.disable()
    took = time.perf_counter() - t0
    split = _split(clf.history_)
    print(f"one K-CSVM fit ({solver}): {took:.2f} s, load {_load()}; "
          + ", ".join(f"{k} {v:.2f} s" for k, v in split.items()))  # fmt: skip
    pstats.Stats(prof).sort_stats("tottime").print_stats(15)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", choices=["warm", "libsvm"])
    parser.add_argument("--all-train", action="store_true")
    parser.add_argument("--stack-pair", metavar="A,B", help="one pair of the MNIST stack")
    args = parser.parse_args()
    from threadpoolctl import threadpool_info

    blas = [f"{i['internal_api']} {i['num_threads']} threads" for i in threadpool_info()]
    print(f"{os.cpu_count()} cores; BLAS: {', '.join(blas)}")
    if args.profile:
        profile(args.profile)
        return
    if args.stack_pair:
        a, b = (int(c) for c in args.stack_pair.split(","))
        stack_pair(a, b, args.rounds)
        return
    out = table41(args.rounds)
    _print_table41(out)
    if args.all_train:
        big = all_train("warm" if _has_solver() else None)
        print(
            f"All {big['n_train']} 3s/5s, 25 Armijo iterations: K-CSVM {big['seconds']:.1f} s, "
            f"SVC {big['svc_seconds']:.1f} s, × {big['ratio']:.1f} (CPU {big['cpu_seconds']:.1f} s "
            f"/ {big['svc_cpu_seconds']:.1f} s, × {big['cpu_ratio']:.1f}); "
            f"peak {big['peak_mib']:.0f} MiB; test accuracy {100 * big['accuracy']:.2f} % (SVC "
            f"{100 * big['svc_accuracy']:.2f} %); load {big['load_before']} -> "
            f"{big['load_after']}"
        )
        out["all_train"] = big
    print(json.dumps({"command": " ".join(["python", "bench/bench_warm_start.py", *sys.argv[1:]])}))


if __name__ == "__main__":
    main()
