"""Why the learned HOG-like stack hardly moved its filters, and the step's selection (issue 35).

    OMP_NUM_THREADS=1 nice -n 5 python -m bench.bench_learned_hog_step --stage diagnose
    OMP_NUM_THREADS=1 nice -n 5 python -m bench.bench_learned_hog_step --stage movement
    OMP_NUM_THREADS=1 nice -n 5 python -m bench.bench_learned_hog_step --stage cifar
    OMP_NUM_THREADS=1 nice -n 5 python -m bench.bench_learned_hog_step --stage select
    OMP_NUM_THREADS=1 nice -n 15 python -m bench.bench_learned_hog_step --stage cifar-select

``diagnose`` (a selection pair, CIFAR-10 deer v horse, seed 0, at the HOG start of
``3x3x8-relu-avg4-bn2-sqrt``, γ = 1 / blocks, C 10): the share of ``|dT/dθ|²`` in the
filters' means, T along minus the gradient at steps of a fraction of the filter's norm,
central differences of T against the gradient, the top Hessian eigenvector by power
iteration on gradient differences, and the curvature along the means and along the rest.
``movement`` replays ten relative steps (η 0.1, halved when T rises) from the HOG start on
the same pair with the whole gradient (the rule before the fix) and with each filter's mean
kept (after): T, η and the cosine of the filters to their start at every step.
``cifar`` refits the first selection's CIFAR-10 choice (``3x3x8-relu-avg4-bn2-sqrt``,
g 1, C 10, η 0.1, 10 iterations) with the fixed step on deer v horse, seed 0, and scores it
on the first selection's 500 validation images (exploratory: no setting is chosen on it).
``select`` scores the candidates of docs/protocol_learned_hog.md (addendum 2) on the MNIST
selection pairs' validation images and applies its rule; ``cifar-select`` does the same
for addendum 3's CIFAR-10 grid on deer v horse, seed 0.  Numbers land in
``bench/results/learned_hog_step_{diagnose,movement,cifar,select,cifar_select}.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench.bench_learned_hog import data, n_blocks, validation  # noqa: E402
from csvm.model.init_filters import first_filters  # noqa: E402
from csvm.model.kernel_state import outer_objective  # noqa: E402
from csvm.model.kernelised import KernelCSVM  # noqa: E402
from csvm.model.layers import Network, keep_means, parse_layers  # noqa: E402
from csvm.model.solve_settings import SolveSettings  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
PAIRS, SEEDS = [("2", "7"), ("6", "8")], (0, 1)
#: name -> (activation, eta, n_iter); the order breaks ties.
CANDIDATES = {
    f"{act} eta {eta} x{n}": (act, eta, n)
    for act in ("relu", "abs")
    for eta in (0.1, 0.3)
    for n in (10, 20)
}
G, C = 0.5, 10.0
#: Addendum 3's CIFAR-10 grid: name -> (layers, g); the order breaks ties (the MNIST setting first).
CIFAR_CANDIDATES = {
    f"{f}x{f} {act} g {g}": (f"{f}x{f}x8-{act}-avg4-bn2-sqrt", g)
    for f in (5, 3)
    for act in ("relu", "abs")
    for g in (0.5, 1.0)
}


def _save(name: str, payload) -> None:
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"learned_hog_step_{name}.json").write_text(json.dumps(payload, indent=1))


def _problem():
    layers = "3x3x8-relu-avg4-bn2-sqrt"
    d = data("cifar10", "deer", "horse", 0)
    X4 = d.X_train.reshape(len(d.X_train), 1, *d.image_shape[-2:]).astype(np.float64)
    y = np.where(d.y_train == d.y_train.max(), 1, -1)
    net = Network(parse_layers(layers), X4.shape[1:])
    theta = first_filters("hog", np.random.default_rng(0), net.filter_shapes[0]).ravel()
    settings = SolveSettings.from_keywords(
        kernel="rbf", gamma=1.0 / n_blocks(layers, d.image_shape), C=C,
        regulariser="dfo2", lam=0.1, svm_tol=1e-6,
    )  # fmt: skip
    return theta, net.filter_shapes[0], lambda t: outer_objective(X4, y, t, settings, layers=layers)


def diagnose() -> dict:
    theta, shape, F = _problem()
    T, g = F(theta)
    norm, out = float(np.linalg.norm(theta)), {"T": T, "filter_norm": float(np.linalg.norm(theta))}
    shape_part = keep_means(g.reshape(shape)).ravel()
    means = g - shape_part
    out["grad_norm"] = float(np.linalg.norm(g))
    out["cos_grad_theta"] = float(g @ theta / np.linalg.norm(g) / norm)
    out["mean_share_of_grad2"] = float(means @ means / (g @ g))
    u = -g / np.linalg.norm(g)
    out["scan"] = [{"t": t, "dT": F(theta + t * norm * u)[0] - T,
                    "linear": -t * norm * float(np.linalg.norm(g))}
                   for t in (0.0125, 0.025, 0.05, 0.1, 0.2)]  # fmt: skip
    h = 1e-4 * norm
    rng = np.random.default_rng(1)
    for name, d in (("minus_grad", u), ("random", rng.standard_normal(theta.shape))):
        d = d / np.linalg.norm(d)
        fd = (F(theta + h * d)[0] - F(theta - h * d)[0]) / (2 * h)
        out[f"fd_{name}"] = {"central_difference": fd, "analytic": float(g @ d)}
    d = keep_means(rng.standard_normal(shape)).ravel()
    d /= np.linalg.norm(d)
    fd = (F(theta + h * d)[0] - F(theta - h * d)[0]) / (2 * h)
    out["fd_random_keeping_means"] = {"central_difference": fd, "analytic": float(g @ d)}
    m = means / np.linalg.norm(means)  # one-sided slopes along the means: a kink?
    out["one_sided_along_means"] = {"forward": (F(theta + h * m)[0] - T) / h,
                                    "backward": (T - F(theta - h * m)[0]) / h,
                                    "analytic": float(g @ m)}  # fmt: skip
    h, v, power = 1e-3 * norm, u, []
    for _ in range(4):
        Hv = (F(theta + h * v)[1] - F(theta - h * v)[1]) / (2 * h)
        rayleigh, v = float(v @ Hv), Hv / np.linalg.norm(Hv)
        power.append({"rayleigh": rayleigh, "mean_share": float(np.sum((v - keep_means(
            v.reshape(shape)).ravel()) ** 2))})  # fmt: skip
    out["power_iteration"] = power
    for name, w in (("means", means), ("shape", shape_part)):
        w = w / np.linalg.norm(w)
        Hw = (F(theta + h * w)[1] - F(theta - h * w)[1]) / (2 * h)
        out[f"along_{name}"] = {"slope": float(-g @ w), "curvature": float(w @ Hw)}
    print(json.dumps(out, indent=1), flush=True)
    _save("diagnose", out)
    return out


def movement() -> dict:
    theta0, shape, F = _problem()
    out = {}
    for rule in ("whole gradient", "means kept"):
        theta, eta, (T, g), steps = theta0.copy(), 0.1, F(theta0), []
        T0 = T
        for _ in range(10):
            d = keep_means(g.reshape(shape)).ravel() if rule == "means kept" else g
            new = theta - eta * np.linalg.norm(theta) / np.linalg.norm(d) * d
            T_new, g_new = F(new)
            cos = float(new @ theta0 / np.linalg.norm(new) / np.linalg.norm(theta0))
            steps.append({"eta": eta, "T": T_new, "rose": bool(T_new > T), "cos_to_start": cos})
            eta = eta / 2 if T_new > T else eta
            theta, T, g = new, T_new, g_new
        out[rule] = {"T0": T0, "steps": steps}
        print(rule, json.dumps(steps), flush=True)
    _save("movement", out)
    return out


def cifar() -> dict:
    from bench.bench_learned_hog import kcsvm

    d = data("cifar10", "deer", "horse", 0)
    Xv, yv = validation(d, 0)
    clf = kcsvm("3x3x8-relu-avg4-bn2-sqrt", True, 1.0, 10.0, d.image_shape, 0)
    clf.fit(d.X_train, d.y_train)
    h = clf.history_
    out = {"validation": float(np.mean(clf.predict(Xv) == yv)),
           "T": [e["objective"] for e in h], "eta": [e["eta"] for e in h]}  # fmt: skip
    print(out, flush=True)
    _save("cifar", out)
    return out


def select() -> dict:
    rows = []
    for a, b in PAIRS:
        for seed in SEEDS:
            d = data("mnist", a, b, seed)
            Xv, yv = validation(d, seed)
            for name, (act, eta, n_iter) in CANDIDATES.items():
                layers = f"5x5x8-{act}-avg4-bn2-sqrt"
                t = time.perf_counter()
                clf = KernelCSVM(
                    image_shape=tuple(d.image_shape), layers=layers, filter_init="hog",
                    kernel="rbf", gamma=G / n_blocks(layers, d.image_shape), C=C,
                    regulariser="dfo2", lam=0.1, step="relative", eta=eta, n_iter=n_iter,
                    random_state=seed,
                ).fit(d.X_train, d.y_train)  # fmt: skip
                h = clf.history_
                rows.append({"pair": f"{a} v {b}", "seed": seed, "candidate": name,
                             "validation": float(np.mean(clf.predict(Xv) == yv)),
                             "T": [h[0]["objective"], h[-1]["objective"]],
                             "eta_last": h[-1]["eta"],
                             "seconds": time.perf_counter() - t})  # fmt: skip
                print(rows[-1], flush=True)
    scores = {n: float(np.mean([r["validation"] for r in rows if r["candidate"] == n]))
              for n in CANDIDATES}  # fmt: skip
    chosen = max(CANDIDATES, key=lambda n: (scores[n], -list(CANDIDATES).index(n)))
    out = {"rows": rows, "mean_validation": scores, "chosen": chosen}
    print(scores, "chosen", chosen, flush=True)
    _save("select", out)
    return out


def cifar_select() -> dict:
    d = data("cifar10", "deer", "horse", 0)
    Xv, yv = validation(d, 0)
    rows = []
    for name, (layers, g) in CIFAR_CANDIDATES.items():
        t = time.perf_counter()
        clf = KernelCSVM(
            image_shape=tuple(d.image_shape), layers=layers, filter_init="hog", kernel="rbf",
            gamma=g / n_blocks(layers, d.image_shape), C=C, regulariser="dfo2", lam=0.1,
            step="relative", eta=0.1, n_iter=10, random_state=0,
        ).fit(d.X_train, d.y_train)  # fmt: skip
        h = clf.history_
        rows.append({"candidate": name, "layers": layers, "g": g,
                     "validation": float(np.mean(clf.predict(Xv) == yv)),
                     "T": [h[0]["objective"], h[-1]["objective"]],
                     "seconds": time.perf_counter() - t})  # fmt: skip
        print(rows[-1], flush=True)
    order = list(CIFAR_CANDIDATES)
    best = max(rows, key=lambda r: (r["validation"], -order.index(r["candidate"])))
    out = {"pair": "deer v horse", "seed": 0, "C": C, "rows": rows, "chosen": best["candidate"]}
    print("chosen", best["candidate"], flush=True)
    _save("cifar_select", out)
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    stages = {
        "diagnose": diagnose,
        "movement": movement,
        "cifar": cifar,
        "select": select,
        "cifar-select": cifar_select,
    }
    parser.add_argument("--stage", choices=tuple(stages), required=True)
    stages[parser.parse_args().stage]()
