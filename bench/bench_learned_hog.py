"""Learned HOG-like features against HOG + RBF SVM at 500 training images (issue 35).

    OMP_NUM_THREADS=1 nice -n 5 python -m bench.bench_learned_hog --stage select
    OMP_NUM_THREADS=1 nice -n 5 python -m bench.bench_learned_hog --stage report

The protocol is declared in docs/protocol_learned_hog.md (committed before any run):
``select`` scores every candidate on the selection pairs' validation images only and
applies the declared rule; ``report`` reads the selection's choice and scores it once on
the report pairs' test images, beside its learned / unlearned counterpart and HOG + RBF
SVM with γ and C by 5-fold CV on the training images, with pooled McNemar p-values.
Every number lands in ``bench/results/learned_hog_{select,report}.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench._data import SHARED  # noqa: E402
from csvm.analysis.mnist10_996 import n_blocks as study_blocks  # noqa: E402
from csvm.analysis.stats import mcnemar_p  # noqa: E402
from csvm.data import load_pair  # noqa: E402
from csvm.model.hog import HOGSVC, hog_features, scale_gamma  # noqa: E402
from csvm.model.hog_product import HOGProductCSVM  # noqa: E402
from csvm.model.kernelised import KernelCSVM  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
N_TRAIN, N_VAL = 500, 500
SELECT = {"mnist": [("2", "7"), ("6", "8")], "cifar10": [("deer", "horse")]}
SELECT_SEEDS = {"mnist": (0, 1), "cifar10": (0,)}
REPORT = [("mnist", "3", "5"), ("mnist", "4", "9"), ("cifar10", "airplane", "automobile")]
REPORT_SEEDS = (0, 1, 2)
#: name -> (layers, learned); the order breaks ties.
CANDIDATES = {
    "L3": ("3x3x8-relu-avg4-bn2-sqrt", True),
    "L5": ("5x5x8-relu-avg4-bn2-sqrt", True),
    "H3": ("3x3x8-relu-avg4-bn2-sqrt", False),
    "H5": ("5x5x8-relu-avg4-bn2-sqrt", False),
}
G_GRID, C_GRID = (0.25, 0.5, 1.0), (1.0, 10.0)
HOG_KERNELS, HOG_C = ("rbf", "chi2", "intersection"), (1.0, 10.0, 100.0)


def n_blocks(layers: str, image_shape, beside_hog: bool = False) -> int:
    """Blocks (positions) of the last layer's maps, and HOG's blocks ``beside_hog``:
    γ = g / n_blocks."""
    return study_blocks(layers, tuple(image_shape), beside_hog)


def kcsvm(
    layers: str, learned: bool, g: float, C: float, image_shape, seed: int,
    beside_hog: bool = False,
) -> KernelCSVM:  # fmt: skip
    """The K-CSVM-family candidate at one grid point (``beside_hog``: a stack beside HOG,
    :class:`csvm.model.hog_product.HOGProductCSVM`)."""
    cls = HOGProductCSVM if beside_hog else KernelCSVM
    return cls(
        image_shape=tuple(image_shape), layers=layers, filter_init="hog", kernel="rbf",
        gamma=g / n_blocks(layers, image_shape, beside_hog), C=C, regulariser="dfo2",
        lam=0.1, step="relative", eta=0.1 if learned else 0.0, n_iter=10 if learned else 1,
        random_state=seed,
    )  # fmt: skip


def data(dataset: str, a: str, b: str, seed: int):
    return load_pair(dataset, a, b, data_dir=SHARED, n_train=N_TRAIN, random_state=seed)


def validation(d, seed: int):
    pick = np.random.default_rng(10_000 + seed).permutation(len(d.y_val))[:N_VAL]
    return d.X_val[pick], d.y_val[pick]


def _save(name: str, payload) -> None:
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"learned_hog_{name}.json").write_text(json.dumps(payload, indent=1))


def selection_draws():
    """Each selection pair and seed: where it is (for a result row), its data, and its
    validation images."""
    for dataset, pairs in SELECT.items():
        for a, b in pairs:
            for seed in SELECT_SEEDS[dataset]:
                d = data(dataset, a, b, seed)
                Xv, yv = validation(d, seed)
                yield {"dataset": dataset, "pair": f"{a} v {b}", "seed": seed}, d, Xv, yv


def select() -> dict:
    rows = []
    for where, d, Xv, yv in selection_draws():
        for name, (layers, learned) in CANDIDATES.items():
            for g in G_GRID:
                for C in C_GRID:
                    t = time.perf_counter()
                    clf = kcsvm(layers, learned, g, C, d.image_shape, where["seed"])
                    clf.fit(d.X_train, d.y_train)
                    acc = float(np.mean(clf.predict(Xv) == yv))
                    rows.append({**where, "candidate": name, "g": g, "C": C,
                                 "validation": acc,
                                 "seconds": time.perf_counter() - t})  # fmt: skip
                    print(rows[-1], flush=True)
        for kind in HOG_KERNELS:
            for C in HOG_C:
                clf = HOGSVC(image_shape=d.image_shape, hog_kernel=kind, product=False, C=C)
                acc = float(np.mean(clf.fit(d.X_train, d.y_train).predict(Xv) == yv))
                rows.append({**where, "candidate": f"HOGSVC {kind}", "C": C,
                             "validation": acc})  # fmt: skip
                print(rows[-1], flush=True)
        _save("select", {"rows": rows})
    choice = choose(rows)
    _save("select", {"rows": rows, "chosen": choice})
    return choice


def choose(rows) -> dict:
    """The declared rule: per dataset, the K-CSVM-family point of highest mean validation
    accuracy; ties to the first in candidate, g, C order."""
    chosen = {}
    for dataset in SELECT:
        best, best_score = None, -1.0
        for name in CANDIDATES:
            for g in G_GRID:
                for C in C_GRID:
                    s = [r["validation"] for r in rows if r["dataset"] == dataset and
                         r["candidate"] == name and r["g"] == g and r["C"] == C]  # fmt: skip
                    if s and np.mean(s) > best_score:
                        best, best_score = {"candidate": name, "g": g, "C": C}, float(np.mean(s))
        chosen[dataset] = {**best, "validation": best_score}
        print(dataset, "chosen", chosen[dataset], flush=True)
    return chosen


def hog_rbf_cv(d, seed: int) -> tuple[np.ndarray, dict]:
    """HOG + RBF SVM with γ and C by 5-fold CV on the training images: test right/wrong."""
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.svm import SVC

    shape = d.image_shape[-2:]
    H = hog_features(d.X_train.reshape(len(d.X_train), 1, *shape))
    H_test = hog_features(d.X_test.reshape(len(d.X_test), 1, *shape))
    scale = scale_gamma(H, "rbf")
    grid = {"gamma": [m * scale for m in (0.25, 0.5, 1, 2, 4)], "C": list(HOG_C)}
    cv = StratifiedKFold(5, shuffle=True, random_state=seed)
    search = GridSearchCV(SVC(kernel="rbf"), grid, cv=cv).fit(H, d.y_train)
    params = {"gamma_over_scale": search.best_params_["gamma"] / scale,
              "C": search.best_params_["C"], "cv": float(search.best_score_)}  # fmt: skip
    return search.predict(H_test) == d.y_test, params


def report() -> dict:
    chosen = json.loads((RESULTS / "learned_hog_select.json").read_text())["chosen"]
    rows = []
    for dataset, a, b in REPORT:
        pick = chosen[dataset]
        layers, learned = CANDIDATES[pick["candidate"]]
        for seed in REPORT_SEEDS:
            d = data(dataset, a, b, seed)
            right = {}
            for role, lrn in (("chosen", learned), ("counterpart", not learned)):
                clf = kcsvm(layers, lrn, pick["g"], pick["C"], d.image_shape, seed)
                right[role] = clf.fit(d.X_train, d.y_train).predict(d.X_test) == d.y_test
            right["hog_rbf"], params = hog_rbf_cv(d, seed)
            rows.append({"dataset": dataset, "pair": f"{a} v {b}", "seed": seed,
                         "learned": learned, "hog_params": params,
                         **{k: float(v.mean()) for k, v in right.items()},
                         "bits": {k: np.packbits(v).tobytes().hex() for k, v in right.items()},
                         "n_test": int(len(d.y_test))})  # fmt: skip
            print({k: v for k, v in rows[-1].items() if k != "bits"}, flush=True)
            _save("report", {"chosen": chosen, "rows": rows})
    summary = summarise(rows)
    _save("report", {"chosen": chosen, "rows": rows, "summary": summary})
    return summary


def _right(row, role) -> np.ndarray:
    return np.unpackbits(np.frombuffer(bytes.fromhex(row["bits"][role]), np.uint8))[
        : row["n_test"]
    ].astype(bool)


def summarise(rows) -> list[dict]:
    """Per report pair and over the MNIST pairs: mean differences in points and McNemar
    p-values on the discordant counts pooled over the seeds."""
    groups = {r["pair"]: [x for x in rows if x["pair"] == r["pair"]] for r in rows}
    groups["MNIST pairs"] = [r for r in rows if r["dataset"] == "mnist"]
    out = []
    for name, group in groups.items():
        line = {"pair": name, "draws": len(group)}
        for role in ("chosen", "counterpart", "hog_rbf"):
            line[role] = 100 * float(np.mean([r[role] for r in group]))
        for other in ("hog_rbf", "counterpart"):
            b = sum(int(np.sum(_right(r, "chosen") & ~_right(r, other))) for r in group)
            c = sum(int(np.sum(~_right(r, "chosen") & _right(r, other))) for r in group)
            line[f"minus_{other}"] = line["chosen"] - line[other]
            line[f"b_c_{other}"] = [b, c]
            line[f"p_{other}"] = mcnemar_p(b, c)
        out.append(line)
        print(line, flush=True)
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", choices=("select", "report"), required=True)
    args = parser.parse_args()
    select() if args.stage == "select" else report()
