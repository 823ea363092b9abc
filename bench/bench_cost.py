"""Measure the cost model of :mod:`csvm.runs.cost`: time small runs, fit, write the coefficients.

Run from the repository root (a few minutes; prefix ``nice -n 10`` on a shared box)::

    python -m bench.bench_cost --out csvm/runs/cost_model.json

Each run is :func:`csvm.runs.targets.run_model` in this process with one BLAS thread, as
a worker runs it, timed in CPU seconds (``time.process_time``: what it takes on a core of
its own, whatever else the box is doing) from its "start" event (images loaded) to its
result.  Images are real MNIST 3 vs 5 (``shared/data``, else the built-in 5,000-digit
subset) and the 8x8 scikit-learn digits, so the feature-map size P and the pixel count D
vary too.  The coefficients are fitted per model by non-negative least squares on
relative error; the table printed shows every run's measured and fitted seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from typing import Any

import numpy as np

COMMAND = "python -m bench.bench_cost --out csvm/runs/cost_model.json"

# (N, n_filters, n_iter, filter_size) of the K-CSVM and L-CSVM runs on MNIST.
CSVM_RUNS = [
    (200, 1, 1, 5),
    (200, 1, 3, 5),
    (200, 4, 8, 5),
    (500, 1, 8, 5),
    (500, 4, 3, 7),
    (500, 2, 5, 9),
    (1000, 1, 3, 5),
    (1000, 2, 6, 5),
    (1000, 4, 2, 3),
    (1500, 1, 10, 5),
    (2000, 1, 3, 5),
    (2000, 2, 2, 5),
    (2000, 4, 6, 5),
    # Larger N pins down the N^2 terms (kernel, solve) that dominate full-size runs.
    (4000, 1, 6, 5),
    (6000, 1, 3, 5),
]
# (N, n_filters, n_iter, filter_size) on the 8x8 digits (P = 16 for a 5x5 filter).
DIGITS_RUNS = [(150, 1, 10, 5), (250, 4, 10, 3)]
# Configurations run with step="armijo" as well, for the solves per iteration.
ARMIJO_RUNS = [(500, 1, 4, 5), (1000, 1, 3, 5)]
SVM_SIZES = [200, 500, 1000, 1500, 2000, 4000, 6000]
# (N, epochs, hidden, n_filters)
CNN_RUNS = [
    (200, 2, 100, 1),
    (500, 5, 100, 1),
    (1000, 3, 100, 2),
    (2000, 2, 100, 1),
    (1000, 5, 0, 1),
    (2000, 3, 50, 4),
    (500, 2, 200, 2),
]


MODELS_WARMED = ("csvm", "svm", "cnn")


def _data_source() -> tuple[str, str | None]:
    from bench._data import SHARED

    if (SHARED / "mnist" / "train-images-idx3-ubyte.gz").exists():
        return "mnist", str(SHARED)
    return "mnist-5k", None


def time_run(config: dict[str, Any], model: str, data_dir: str | None) -> dict[str, Any]:
    """Seconds from a run's "start" event (images loaded) to its result, in this process."""
    from threadpoolctl import threadpool_limits

    from csvm.runs.targets import load_data, run_model

    data = load_data(config, data_dir)  # cached: the timed run finds it loaded
    started: list[float] = []
    iterations = [0]

    def emit(event: dict[str, Any]) -> None:
        if event.get("kind") == "start" and not started:
            started.append(time.process_time())
        elif isinstance(event.get("iteration"), int):
            iterations[0] = max(iterations[0], event["iteration"] + 1)

    with threadpool_limits(1):
        result = run_model(emit, config, model, data_dir)
    # CPU time, not wall time: on a shared box a run's wall time depends on everyone
    # else's load; its CPU time is what it takes on a core of its own, as a worker has.
    seconds = time.process_time() - started[0]
    # A run that diverged or converged early did fewer iterations than asked: the fit
    # counts the ones done.
    done = dict(config)
    if model == "csvm":
        done["n_iter"] = iterations[0]
    elif model == "cnn":
        done["cnn_epochs"] = iterations[0]
    return {
        "config": config,
        "done": done,
        "diverged": bool(result.get("diverged")),
        "job": model,
        "n_train": int(len(data.y_train)),
        "n_test": int(len(data.y_test)),
        "image_shape": tuple(int(v) for v in data.image_shape),
        "seconds": seconds,
    }


def _configs(dataset: str, quick: bool) -> list[tuple[str, dict[str, Any]]]:
    """(job, config) of every timed run."""
    base = {"dataset": dataset, "class_a": "3", "class_b": "5", "protocol": None, "seed": 0}
    # The classroom eta (0.1) diverges at once on the digits' 0-16 pixel scale.
    digits = {**base, "dataset": "digits", "eta": 0.001}
    runs: list[tuple[str, dict[str, Any]]] = []
    step = 3 if quick else 1
    for model in ("kcsvm", "lcsvm"):
        for n, f, it, p in CSVM_RUNS[::step]:
            cfg = {"n_train": n, "n_filters": f, "n_iter": it, "filter_size": p}
            runs.append(("csvm", {**base, "model": model, **cfg}))
        for n, f, it, p in DIGITS_RUNS:
            cfg = {"n_train": n, "n_filters": f, "n_iter": it, "filter_size": p}
            runs.append(("csvm", {**digits, "model": model, **cfg}))
    for n, f, it, p in ARMIJO_RUNS:
        cfg = {"n_train": n, "n_filters": f, "n_iter": it, "filter_size": p}
        runs.append(("csvm", {**base, "model": "kcsvm", "step": "constant", **cfg}))
        runs.append(("csvm", {**base, "model": "kcsvm", "step": "armijo", **cfg}))
    for n in SVM_SIZES[::step]:
        runs.append(("svm", {**base, "n_train": n}))
    runs += [("svm", {**digits, "n_train": n}) for n in (120, 250)]
    for n, e, h, f in CNN_RUNS[::step]:
        cfg = {"n_train": n, "cnn_epochs": e, "cnn_hidden": h, "n_filters": f}
        runs.append(("cnn", {**base, **cfg}))
    runs.append(("cnn", {**digits, "n_train": 250, "cnn_epochs": 5}))
    return runs


def _name(job: str, config: dict[str, Any]) -> str:
    return config.get("model", "kcsvm") if job == "csvm" else job


def fit(measured: list[dict[str, Any]]) -> dict[str, Any]:
    """Coefficients per model (NNLS on relative error) and the Armijo solves per iteration."""
    from scipy.optimize import nnls

    from csvm.runs.cost import COLUMNS, features

    pairs = {}
    for r in measured:
        c = r["config"]
        if c.get("step") in ("constant", "armijo") and c.get("model") == "kcsvm":
            key = (c["n_train"], c["n_filters"], c["n_iter"], c["filter_size"])
            pairs.setdefault(key, {})[c["step"]] = r["seconds"]
    ratios = [p["armijo"] / p["constant"] for p in pairs.values() if len(p) == 2]
    # An Armijo iteration does at least the work of a constant-step one: a ratio measured
    # below 1 is noise.
    armijo = max(1.0, float(np.mean(ratios))) if ratios else 2.0
    coefficients = {}
    for name in COLUMNS:
        rows = [
            r
            for r in measured
            if _name(r["job"], r["config"]) == name and r["config"].get("step") != "armijo"
        ]
        X = np.array(
            [features(name, r["done"], r["n_train"], r["image_shape"], r["n_test"]) for r in rows]
        )
        t = np.array([r["seconds"] for r in rows])
        # Relative error: divide each row by its time; scale columns for conditioning.
        A = X / t[:, None]
        scale = np.abs(A).max(axis=0)
        scale[scale == 0] = 1.0
        beta, _ = nnls(A / scale, np.ones(len(t)))
        coefficients[name] = (beta / scale).tolist()
    return {"coefficients": coefficients, "armijo_solves": armijo}


def report(measured: list[dict[str, Any]], model: dict[str, Any]) -> str:
    from csvm.runs.cost import COLUMNS, estimate_breakdown

    lines = [
        "| job | dataset | N | settings | measured CPU s | model s | ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    ratios = []
    for r in measured:
        c = r["config"]
        est = estimate_breakdown(
            {**r["done"], "baselines": [r["job"]] if r["job"] != "csvm" else []},
            r["n_train"],
            r["image_shape"],
            r["n_test"],
            model=model,
        )[r["job"]]
        ratio = est / r["seconds"]
        ratios.append(ratio)
        if r["job"] == "csvm":
            what = f"{c['model']} F={c['n_filters']} it={r['done']['n_iter']} p={c['filter_size']}"
            what += " armijo" if c.get("step") == "armijo" else ""
        elif r["job"] == "cnn":
            what = f"E={c['cnn_epochs']} h={c.get('cnn_hidden', 100)} F={c.get('n_filters', 1)}"
        else:
            what = ""
        lines.append(
            f"| {r['job']} | {c['dataset']} | {r['n_train']} | {what} | "
            f"{r['seconds']:.2f} | {est:.2f} | {ratio:.2f} |"
        )
    lines += ["", "Coefficients (seconds per operation):", ""]
    for name, columns in COLUMNS.items():
        terms = ", ".join(
            f"{col}: {v:.3g}" for col, v in zip(columns, model["coefficients"][name], strict=True)
        )
        lines.append(f"- {name}: {terms}")
    lines.append(f"- Armijo: {model['armijo_solves']:.2f} x the time of a constant-step iteration")
    r = np.array(ratios)
    lines += [
        "",
        f"model / measured over {len(r)} runs: min {r.min():.2f}, median {np.median(r):.2f}, "
        f"max {r.max():.2f}",
    ]
    return "\n".join(lines)


#: The two-layer classroom stack, timed against the one-layer model's estimate to set
#: ``csvm.runs.cost._STACK_OP_COST`` (``--stack``).
STACK = "5x5x8-abs-max2,3x3x8-abs-max2"
STACK_RUNS = [(50, 15), (200, 10), (500, 6), (1000, 3)]  # (N, n_iter)


def stack_factor(data_dir: str | None, dataset: str) -> None:
    """Time the stack on a few sizes and print the factor on its multiply-adds that makes
    the estimate match (the geometric mean of measured / estimated, times the factor the
    estimate used)."""
    from csvm.runs import cost

    base = {"dataset": dataset, "class_a": "3", "class_b": "5", "protocol": None, "seed": 0}
    base |= {"model": "kcsvm", "layers": STACK, "n_filters": 2, "baselines": []}
    time_run({**base, "n_train": 50, "n_iter": 1}, "csvm", data_dir)  # warm, not timed
    ratios = []
    print("| N | iterations | measured CPU s | estimate s | measured / estimate |")
    print("|---|---|---|---|---|")
    for n, iterations in STACK_RUNS:
        r = time_run({**base, "n_train": n, "n_iter": iterations}, "csvm", data_dir)
        est = cost.estimate_breakdown(
            {**r["done"], "baselines": []}, r["n_train"], r["image_shape"], r["n_test"]
        )["csvm"]
        ratios.append(r["seconds"] / est)
        print(
            f"| {r['n_train']} | {r['done']['n_iter']} | {r['seconds']:.2f} | {est:.2f} | "
            f"{ratios[-1]:.2f} |"
        )
    factor = cost._STACK_OP_COST * float(np.exp(np.mean(np.log(ratios))))
    print(f"\n_STACK_OP_COST now {cost._STACK_OP_COST:g}; matching the runs above: {factor:.2f}")


def main(argv: list[str] | None = None) -> None:
    """Command line: time the runs, fit, print, and write the coefficients."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the fitted model to this JSON file")
    parser.add_argument("--quick", action="store_true", help="every third run only")
    parser.add_argument(
        "--stack", action="store_true", help="only the two-layer stack's factor (a minute)"
    )
    args = parser.parse_args(argv)
    dataset, data_dir = _data_source()
    if args.stack:
        stack_factor(data_dir, dataset)
        return
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    configs = _configs(dataset, args.quick)
    for job in MODELS_WARMED:  # first calls import and allocate lazily: not timed
        time_run({**configs[0][1], "n_train": 100, "n_iter": 1}, job, data_dir)
    measured = []
    for job, config in configs:
        r = time_run(config, job, data_dir if config["dataset"] == dataset else None)
        measured.append(r)
        flag = " (diverged)" if r["diverged"] else ""
        print(
            f"{job:5s} {config.get('model', ''):6s} N={r['n_train']:5d} {r['seconds']:7.2f} s{flag}"
        )
    model = fit(measured)
    load_after = os.getloadavg()
    model.update(
        {
            "command": COMMAND,
            "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": f"{os.cpu_count()} cores, {platform.system()} {platform.machine()}, "
            f"Python {platform.python_version()}, numpy {np.__version__}",
            "load_average": [round(load_before[0], 2), round(load_after[0], 2)],
            "bench_seconds": round(time.perf_counter() - t0, 1),
            "runs": [
                {k: r[k] for k in ("job", "n_train", "n_test", "image_shape", "seconds")}
                | {"config": r["config"], "done": r["done"]}
                for r in measured
            ],
        }
    )
    print()
    print(report(measured, model))
    print(f"\nload average {load_before[0]:.2f} before, {load_after[0]:.2f} after")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(model, fh, indent=1)
            fh.write("\n")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
