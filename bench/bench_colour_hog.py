"""Colour for the learned HOG-like stack at data_batch_1's size (issue 35, addendum 4).

    OMP_NUM_THREADS=1 nice -n 10 python -m bench.bench_colour_hog --stage select
    OMP_NUM_THREADS=1 nice -n 10 python -m bench.bench_colour_hog --stage report
    OMP_NUM_THREADS=1 nice -n 10 python -m bench.bench_colour_hog --stage explore

The protocol is declared in docs/protocol_learned_hog.md (addendum 4, committed before any
run, amended before any result): ``select`` fits every learned candidate (stacked or rgb
input; ``hog`` or ``hog-colour`` start) and every HOG + RBF SVM configuration on 500 of
the selection pairs' ``data_batch_1`` images, scores them on 500 validation images of
``data_batch_2`` and applies the declared rule; ``report`` scores the chosen model, its
start, the chosen HOG baseline and HOG + RBF SVM with γ and C by 5-fold CV once on the
report pairs' test images (trained on all of their ``data_batch_1`` images), with exact
McNemar p-values.  Two worker processes share the fits.  Every number lands in
``bench/results/colour_hog_{select,report}.json``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench._data import SHARED  # noqa: E402
from csvm.analysis.reproduced import unpack_hex_correct  # noqa: E402
from csvm.analysis.stats import mcnemar_p  # noqa: E402
from csvm.data import load_pair  # noqa: E402
from csvm.model.hog import hog_features, scale_gamma  # noqa: E402
from csvm.model.kernelised import KernelCSVM  # noqa: E402
from csvm.model.layers import Network, parse_layers  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
N_VAL = 500
#: Training images of a selection fit (the amendment of addendum 4: the machine's load).
N_SELECT = 500
SELECT = [("deer", "horse"), ("ship", "truck")]
REPORT = [("airplane", "automobile"), ("cat", "dog")]
#: name -> (colour of the input, layers, filter_init); the order breaks ties.
CANDIDATES = {
    "S3": ("stacked", "3x3x8-relu-avg4-bn2-sqrt", "hog"),
    "R3": ("rgb", "3x3x8-relu-avg4-bn2-sqrt", "hog"),
    "O3": ("rgb", "3x3x24-relu-avg4-bn2-sqrt", "hog-colour"),
}
G_GRID, C_LEARNED = (0.5, 1.0, 2.0), 10.0
HOG_INPUTS, HOG_G, HOG_C = ("stacked", "rgb"), (0.5, 1.0, 2.0), (1.0, 10.0, 100.0)


def data(a: str, b: str, colour: str, n_train: int | None = None):
    """The pair's data_batch_1 images to train on (all, or a stratified draw of
    ``n_train``, seed 0), data_batch_2, test_batch."""
    return load_pair(
        "cifar10", a, b, protocol="thesis", data_dir=SHARED, n_train=n_train, color=colour
    )


def validation(d):
    pick = np.random.default_rng(10_000).permutation(len(d.y_val))[:N_VAL]
    return d.X_val[pick], d.y_val[pick]


def kcsvm(name: str, g: float, image_shape, learned: bool = True) -> KernelCSVM:
    """A learned candidate at γ = g / blocks (its start when not ``learned``)."""
    _, layers, init = CANDIDATES[name]
    _, h, w = Network(parse_layers(layers), tuple(image_shape)).output_shape
    return KernelCSVM(
        image_shape=tuple(image_shape), layers=layers, filter_init=init, kernel="rbf",
        gamma=g / (h * w), C=C_LEARNED, regulariser="dfo2", lam=0.1, step="relative",
        eta=0.1 if learned else 0.0, n_iter=10 if learned else 1, random_state=0,
    )  # fmt: skip


def hog_of(X: np.ndarray) -> np.ndarray:
    """HOG descriptors (9 orientations, 4 x 4 cells, 2 x 2 blocks, L2-Hys) as HOGSVC's: of
    the 96 x 32 plane of stacked images, of the strongest channel's gradient of rgb ones."""
    return hog_features(np.asarray(X, np.float64))


def hog_fit(H: np.ndarray, y: np.ndarray, g: float, C: float):
    """HOG + RBF SVM on descriptors: γ = g × the "scale" γ of the training descriptors."""
    from sklearn.svm import SVC

    return SVC(kernel="rbf", gamma=g * scale_gamma(H, "rbf"), C=C).fit(H, y)


def _save(name: str, payload) -> None:
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"colour_hog_{name}.json").write_text(json.dumps(payload, indent=1))


def _select_task(task: tuple) -> list[dict]:
    """One learned fit, or every HOG configuration of one input, on one selection pair."""
    (a, b), kind, arg = task
    where = {"pair": f"{a} v {b}"}
    if kind == "hog":
        d = data(a, b, arg, N_SELECT)
        Xv, yv = validation(d)
        H, Hv = hog_of(d.X_train), hog_of(Xv)
        rows = []
        for g in HOG_G:
            for C in HOG_C:
                acc = float(np.mean(hog_fit(H, d.y_train, g, C).predict(Hv) == yv))
                rows.append({**where, "candidate": f"HOG {arg}", "g": g, "C": C, "validation": acc})
        return rows
    name, g = arg
    d = data(a, b, CANDIDATES[name][0], N_SELECT)
    Xv, yv = validation(d)
    t = time.perf_counter()
    clf = kcsvm(name, g, d.image_shape).fit(d.X_train, d.y_train)
    acc = float(np.mean(clf.predict(Xv) == yv))
    return [{**where, "candidate": name, "g": g, "C": C_LEARNED, "validation": acc,
             "n_train": int(len(d.y_train)), "seconds": time.perf_counter() - t}]  # fmt: skip


def select(jobs: int = 2) -> dict:
    tasks = [(p, "hog", colour) for p in SELECT for colour in HOG_INPUTS]
    tasks += [(p, "learned", (n, g)) for n in CANDIDATES for g in G_GRID for p in SELECT]
    rows = []
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        for got in pool.imap_unordered(_select_task, tasks):
            rows += got
            for row in got:
                print(row, flush=True)
            _save("select", {"rows": rows})
    chosen = {"learned": choose(rows, list(CANDIDATES), G_GRID, (C_LEARNED,)),
              "hog": choose(rows, [f"HOG {c}" for c in HOG_INPUTS], HOG_G, HOG_C)}  # fmt: skip
    print("chosen", chosen, flush=True)
    _save("select", {"rows": rows, "chosen": chosen})
    return chosen


def choose(rows, names, g_grid, c_grid) -> dict:
    """The declared rule: the highest mean validation accuracy over the selection pairs;
    ties to the first name, then smaller g, then smaller C."""
    best, best_score = None, -1.0
    for name in names:
        for g in g_grid:
            for C in c_grid:
                s = [r["validation"] for r in rows
                     if r["candidate"] == name and r["g"] == g and r["C"] == C]  # fmt: skip
                if len(s) == len(SELECT) and np.mean(s) > best_score:
                    best, best_score = {"candidate": name, "g": g, "C": C}, float(np.mean(s))
    return {**best, "validation": best_score}


def hog_rbf_cv(H, y, H_test, seed: int = 0) -> tuple[np.ndarray, dict]:
    """HOG + RBF SVM with γ and C by 5-fold stratified CV on the training descriptors.

    GridSearchCV's search (the same folds, grid, mean fold accuracy and ties to the first
    point in its order, C outer, γ inner) on RBF kernels precomputed from one BLAS product
    of squared distances: LIBSVM's own RBF on 5,796-value descriptors took ~20 min of a
    loaded core per pair (the first report run was stopped in this step for it)."""
    from sklearn.metrics.pairwise import euclidean_distances
    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import SVC

    scale = scale_gamma(H, "rbf")
    D = euclidean_distances(H, squared=True)
    folds = list(StratifiedKFold(5, shuffle=True, random_state=seed).split(H, y))
    best, best_score = None, -1.0
    for C in HOG_C:
        for m in (0.25, 0.5, 1, 2, 4):
            K = np.exp(-m * scale * D)
            scores = []
            for tr, te in folds:
                svc = SVC(kernel="precomputed", C=C).fit(K[np.ix_(tr, tr)], y[tr])
                scores.append(np.mean(svc.predict(K[np.ix_(te, tr)]) == y[te]))
            if float(np.mean(scores)) > best_score:
                best, best_score = (C, m), float(np.mean(scores))
    C, m = best
    clf = SVC(kernel="precomputed", C=C).fit(np.exp(-m * scale * D), y)
    K_test = np.exp(-m * scale * euclidean_distances(H_test, H, squared=True))
    return clf.predict(K_test), {"gamma_over_scale": m, "C": C, "cv": best_score}


def _report_task(task: tuple) -> dict:
    """One role's test predictions on one report pair: right / wrong per test image."""
    (a, b), role, chosen = task
    pick = chosen["hog"] if role.startswith("hog") else chosen["learned"]
    colour = "stacked" if role == "hog_cv" else None
    if role.startswith("hog"):
        colour = colour or pick["candidate"].split()[-1]
    else:
        colour = CANDIDATES[pick["candidate"]][0]
    d = data(a, b, colour)
    t, extra = time.perf_counter(), {}
    if role == "hog_cv":
        pred, extra = hog_rbf_cv(hog_of(d.X_train), d.y_train, hog_of(d.X_test))
    elif role == "hog":
        H = hog_of(d.X_train)
        pred = hog_fit(H, d.y_train, pick["g"], pick["C"]).predict(hog_of(d.X_test))
    else:
        clf = kcsvm(pick["candidate"], pick["g"], d.image_shape, learned=role == "chosen")
        pred = clf.fit(d.X_train, d.y_train).predict(d.X_test)
    right = pred == d.y_test
    return {"pair": f"{a} v {b}", "role": role, "accuracy": float(right.mean()),
            "bits": np.packbits(right).tobytes().hex(), "n_test": int(len(d.y_test)),
            "n_train": int(len(d.y_train)), "seconds": time.perf_counter() - t,
            **extra}  # fmt: skip


def _right(row) -> np.ndarray:
    return unpack_hex_correct(row["bits"], row["n_test"])


def report(jobs: int = 2) -> list[dict]:
    """Every role on every report pair, resuming a stopped run (its rows are kept)."""
    chosen = json.loads((RESULTS / "colour_hog_select.json").read_text())["chosen"]
    path = RESULTS / "colour_hog_report.json"
    rows = json.loads(path.read_text())["rows"] if path.exists() else []
    done = {(r["pair"], r["role"]) for r in rows}
    roles = ("chosen", "start", "hog", "hog_cv")
    tasks = [(p, role, chosen) for role in roles for p in REPORT]
    tasks = [t for t in tasks if (f"{t[0][0]} v {t[0][1]}", t[1]) not in done]
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        for row in pool.imap_unordered(_report_task, tasks):
            rows.append(row)
            print({k: v for k, v in row.items() if k != "bits"}, flush=True)
            _save("report", {"chosen": chosen, "rows": rows})
    summary = summarise(rows)
    _save("report", {"chosen": chosen, "rows": rows, "summary": summary})
    return summary


def _explore_task(task: tuple) -> dict:
    (a, b), learned = task
    d = data(a, b, "rgb")
    Xv, yv = validation(d)
    t = time.perf_counter()
    clf = kcsvm("O3", 2.0, d.image_shape, learned=learned).fit(d.X_train, d.y_train)
    return {"pair": f"{a} v {b}", "learned": learned, "n_train": int(len(d.y_train)),
            "validation": float(np.mean(clf.predict(Xv) == yv)),
            "seconds": time.perf_counter() - t}  # fmt: skip


def explore(jobs: int = 2) -> list[dict]:
    """Exploratory, after the report, selection pairs only: the chosen model learned and at
    its start, trained on all of the pair's data_batch_1 images (the report's size)."""
    tasks = [(p, learned) for learned in (True, False) for p in SELECT]
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        rows = list(pool.imap(_explore_task, tasks))
    for row in rows:
        print(row, flush=True)
    _save("explore", {"rows": rows})
    return rows


def summarise(rows) -> list[dict]:
    """Per report pair: accuracies in %, the chosen model minus each other role in points,
    and exact McNemar p on the discordant test images."""
    out = []
    for a, b in REPORT:
        by = {r["role"]: r for r in rows if r["pair"] == f"{a} v {b}"}
        line = {"pair": f"{a} v {b}", **{k: 100 * r["accuracy"] for k, r in by.items()}}
        for other in ("hog", "hog_cv", "start"):
            if "chosen" in by and other in by:
                mine, theirs = _right(by["chosen"]), _right(by[other])
                b_, c_ = int(np.sum(mine & ~theirs)), int(np.sum(~mine & theirs))
                line[f"minus_{other}"] = line["chosen"] - line[other]
                line[f"b_c_{other}"] = [b_, c_]
                line[f"p_{other}"] = mcnemar_p(b_, c_)
        out.append(line)
        print(line, flush=True)
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", choices=("select", "report", "explore"), required=True)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    {"select": select, "report": report, "explore": explore}[args.stage](args.jobs)
