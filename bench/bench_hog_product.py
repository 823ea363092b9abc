"""Selection of the learned stack beside HOG (issue 35, docs/protocol_learned_hog.md addendum 6).

    OMP_NUM_THREADS=1 nice -n 5 python -m bench.bench_hog_product --stage select
    OMP_NUM_THREADS=1 nice -n 10 python -m bench.bench_hog_product --stage cifar-report

Scores :class:`csvm.model.hog_product.HOGProductCSVM` at each g of the addendum's grid (γ =
g / (the stack's blocks + HOG's blocks), C 10) on the selection pairs' validation images —
MNIST 2 v 7 and 6 v 8 (seeds 0, 1) with the 5 × 5 stack, CIFAR-10 deer v horse (seed 0)
with the 3 × 3 stack — learned and at its start, beside HOGSVC rbf at C 10, and applies the
rule: per dataset the learned model's g with the highest mean validation accuracy, ties to
the smaller g.  No test image is read.  Numbers land in ``bench/results/hog_product_select.json``.

``cifar-report`` (addendum 7) trains the chosen CIFAR-10 model on all of airplane v
automobile's and cat v dog's ``data_batch_1`` images, C chosen on addendum 4's 500
validation images, scores it and its start once on ``test_batch`` and compares them with
addendum 4's saved HOG baselines on the same test images
(``bench/results/hog_product_cifar_report.json``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench import bench_colour_hog as colour  # noqa: E402
from bench.bench_learned_hog import kcsvm, selection_draws  # noqa: E402
from csvm.analysis.curves import PRODUCT_STACKS  # noqa: E402
from csvm.analysis.stats import mcnemar_p  # noqa: E402
from csvm.model.hog import HOGSVC  # noqa: E402
from csvm.model.hog_product import HOGProductCSVM  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
LAYERS = {"mnist": "5x5x8-relu-avg4-bn2-sqrt", "cifar10": "3x3x8-relu-avg4-bn2-sqrt"}
G_GRID = {"mnist": (0.25, 0.5, 1.0), "cifar10": (0.5, 1.0, 2.0)}
C = 10.0


def model(layers: str, learned: bool, g: float, image_shape, seed: int) -> HOGProductCSVM:
    """The stack beside HOG at g (C 10; its start when not ``learned``)."""
    return kcsvm(layers, learned, g, C, image_shape, seed, beside_hog=True)


def choose(rows: list[dict]) -> dict[str, float]:
    """Per dataset, the learned model's g with the highest mean validation accuracy."""
    chosen = {}
    for dataset, grid in G_GRID.items():
        means = [
            np.mean([r["validation"] for r in rows if r["dataset"] == dataset
                     and r["candidate"] == "learned" and r["g"] == g])
            for g in grid
        ]  # fmt: skip
        chosen[dataset] = grid[int(np.argmax(means))]  # argmax: the first (smaller g) of ties
    return chosen


def select() -> dict:
    rows = []
    for where, d, Xv, yv in selection_draws():
        layers, seed = LAYERS[where["dataset"]], where["seed"]
        for learned in (True, False):
            for g in G_GRID[where["dataset"]]:
                t = time.perf_counter()
                clf = model(layers, learned, g, d.image_shape, seed)
                acc = float(np.mean(clf.fit(d.X_train, d.y_train).predict(Xv) == yv))
                rows.append({**where, "candidate": "learned" if learned else "start", "g": g,
                             "validation": acc,
                             "seconds": round(time.perf_counter() - t, 1)})  # fmt: skip
                print(rows[-1], flush=True)
        hog = HOGSVC(image_shape=d.image_shape, hog_kernel="rbf", product=False, C=C)
        acc = float(np.mean(hog.fit(d.X_train, d.y_train).predict(Xv) == yv))
        rows.append({**where, "candidate": "HOGSVC rbf", "validation": acc})
        print(rows[-1], flush=True)
    payload = {"rows": rows, "chosen_g": choose(rows)}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "hog_product_select.json").write_text(json.dumps(payload, indent=1))
    return payload["chosen_g"]


def _cifar_pair(pair: tuple[str, str]) -> dict:
    """The chosen CIFAR-10 model on one report pair: C on validation, then the test once."""
    layers, g, _ = PRODUCT_STACKS["hogprod3"]
    d = colour.data(*pair, "stacked")
    Xv, yv = colour.validation(d)
    rows, fits = [], {}
    for C in (1.0, 10.0, 100.0):
        t = time.perf_counter()
        clf = model(layers, True, g, d.image_shape, 0).set_params(C=C).fit(d.X_train, d.y_train)
        fits[C] = clf
        rows.append({"C": C, "validation": float(np.mean(clf.predict(Xv) == yv)),
                     "seconds": round(time.perf_counter() - t, 1)})  # fmt: skip
        print(pair, rows[-1], flush=True)
    C = max(rows, key=lambda r: r["validation"])["C"]  # the first (smaller C) of ties
    start = model(layers, False, g, d.image_shape, 0).set_params(C=C).fit(d.X_train, d.y_train)
    right = {"chosen": fits[C].predict(d.X_test) == d.y_test,
             "start": start.predict(d.X_test) == d.y_test}  # fmt: skip
    return {"pair": f"{pair[0]} v {pair[1]}", "n_train": int(len(d.y_train)), "C": C,
            "validation": rows, "n_test": int(len(d.y_test)),
            **{f"{k}_bits": np.packbits(v).tobytes().hex() for k, v in right.items()},
            **{k: float(v.mean()) for k, v in right.items()}}  # fmt: skip


def cifar_report() -> list[dict]:
    """Addendum 7: both report pairs (two processes), against addendum 4's HOG baselines."""
    import multiprocessing

    saved = json.loads((RESULTS / "colour_hog_report.json").read_text())["rows"]
    with multiprocessing.get_context("fork").Pool(2) as pool:
        rows = pool.map(_cifar_pair, colour.REPORT)
    targets = {"airplane v automobile": 0.93, "cat v dog": 0.72}
    for row in rows:
        mine = colour._right({"bits": row["chosen_bits"], "n_test": row["n_test"]})
        others = {r["role"]: r for r in saved if r["pair"] == row["pair"]}
        others["start"] = {"bits": row["start_bits"], "n_test": row["n_test"]}
        for role in ("start", "hog", "hog_cv"):
            theirs = colour._right(others[role])
            b, c = int(np.sum(mine & ~theirs)), int(np.sum(~mine & theirs))
            row[f"minus_{role}"] = {"points": 100 * (mine.mean() - theirs.mean()),
                                    "only_mine": b, "only_theirs": c,
                                    "p": mcnemar_p(b, c)}  # fmt: skip
        row["target"] = targets[row["pair"]]
        print({k: v for k, v in row.items() if not k.endswith("_bits")}, flush=True)
    (RESULTS / "hog_product_cifar_report.json").write_text(json.dumps({"rows": rows}, indent=1))
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", choices=["select", "cifar-report"], required=True)
    args = parser.parse_args(argv)
    if args.stage == "select":
        print("chosen g:", select())
    else:
        cifar_report()


if __name__ == "__main__":
    main()
