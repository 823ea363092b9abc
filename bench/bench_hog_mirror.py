"""Mirrored virtual support vectors for the stack beside HOG (issue 35, addendum 8).

    OMP_NUM_THREADS=1 nice -n 5 python -m bench.bench_hog_mirror --stage select
    OMP_NUM_THREADS=1 nice -n 5 python -m bench.bench_hog_mirror --stage report
    OMP_NUM_THREADS=1 nice -n 5 python -m bench.bench_hog_mirror --stage select-shifts

``select`` fits addendum 7's CIFAR-10 model (``hogprod3``, g 2, C 10) on all of each
selection pair's ``data_batch_1`` images (deer v horse, ship v truck) and scores it on
addendum 4's 500 validation images as it is ("none") and after
:func:`csvm.model.virtual.refit_virtual` with ``mirror=True`` ("mirror"), beside the
same-recipe HOG baseline (HOGSVC rbf, C 10, γ "scale" fixed at its first fit's value)
with and without mirrored support vectors.  Rule: "mirror" is adopted if it gets more
validation images right than "none" over both pairs.  No test image is read
(``bench/results/hog_mirror_select.json``).

``report`` (only once "mirror" is adopted) does the same on airplane v automobile and
cat v dog, scored once on ``test_batch``, and compares "mirror" with the same-recipe HOG
baseline and addendum 4's saved HOG baselines (``bench/results/hog_mirror_report.json``).

``select-shifts`` (addendum 9) scores the MNIST curves' ``hogprod`` (g 0.5, C 10) on
addendum 6's selection draws' validation images without virtual support vectors and with
the 4 and the 8 one-pixel shifts (``bench/results/hog_shifts_select.json``).
"""

from __future__ import annotations

import argparse
import copy
import json
import multiprocessing
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench import bench_colour_hog as colour  # noqa: E402
from bench.bench_hog_product import model  # noqa: E402
from bench.bench_learned_hog import selection_draws  # noqa: E402
from csvm.analysis.curves import PRODUCT_STACKS  # noqa: E402
from csvm.analysis.stats import mcnemar_p  # noqa: E402
from csvm.model.virtual import SHIFT_SETS, refit_virtual  # noqa: E402
from csvm.runs.cifar_hog_study import fit_models  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
SELECT = [("deer", "horse"), ("ship", "truck")]
TARGETS = {"airplane v automobile": 0.93, "cat v dog": 0.72}


def _pair(task: tuple[tuple[str, str], str]) -> dict:
    """Every model of the addendum on one pair, scored on validation or test images
    (the four models of :func:`csvm.runs.cifar_hog_study.fit_models`)."""
    (a, b), stage = task
    d = colour.data(a, b, "stacked")
    X, y = colour.validation(d) if stage == "select" else (d.X_test, d.y_test)
    models, took = fit_models(d)
    seconds = {"fit": took["none"], "mirror": took["mirror"] - took["none"]}
    n_support = {k: int(np.sum(models[k].n_support_)) for k in ("none", "mirror")}
    right = {k: models[k].predict(X) == y for k in ("none", "mirror", "hog", "hog_mirror")}
    row = {"pair": f"{a} v {b}", "stage": stage, "n_train": int(len(d.y_train)),
           "n_scored": int(len(y)), "n_support": n_support,
           "seconds": {k: round(v, 1) for k, v in seconds.items()},
           "accuracy": {k: float(v.mean()) for k, v in right.items()},
           "right": {k: int(v.sum()) for k, v in right.items()},
           "bits": {k: np.packbits(v).tobytes().hex() for k, v in right.items()}}  # fmt: skip
    print({k: v for k, v in row.items() if k != "bits"}, flush=True)
    return row


def _run(pairs, stage: str) -> list[dict]:
    with multiprocessing.get_context("fork").Pool(2) as pool:
        return pool.map(_pair, [(p, stage) for p in pairs])


def select() -> dict:
    rows = _run(SELECT, "select")
    totals = {k: sum(r["right"][k] for r in rows) for k in ("none", "mirror")}
    payload = {"rows": rows, "totals": totals, "adopted": totals["mirror"] > totals["none"]}
    (RESULTS / "hog_mirror_select.json").write_text(json.dumps(payload, indent=1))
    return payload


def _compare(mine: np.ndarray, theirs: np.ndarray) -> dict:
    b, c = int(np.sum(mine & ~theirs)), int(np.sum(~mine & theirs))
    return {"points": 100 * (mine.mean() - theirs.mean()), "only_mine": b,
            "only_theirs": c, "p": mcnemar_p(b, c)}  # fmt: skip


def report() -> list[dict]:
    chosen = json.loads((RESULTS / "hog_mirror_select.json").read_text())
    if not chosen["adopted"]:
        raise SystemExit("Addendum 8: 'mirror' was not adopted on validation; no report.")
    saved = json.loads((RESULTS / "colour_hog_report.json").read_text())["rows"]
    rows = _run(colour.REPORT, "report")
    for row in rows:
        n = row["n_scored"]
        ours = {k: colour._right({"bits": v, "n_test": n}) for k, v in row["bits"].items()}
        others = {r["role"]: colour._right(r) for r in saved if r["pair"] == row["pair"]}
        theirs = {"none": ours["none"], "hog_mirror": ours["hog_mirror"], "hog": ours["hog"],
                  "addendum4_hog": others["hog"], "addendum4_hog_cv": others["hog_cv"]}  # fmt: skip
        row["mirror_minus"] = {k: _compare(ours["mirror"], v) for k, v in theirs.items()}
        row["target"] = TARGETS[row["pair"]]
        print(row["pair"], row["accuracy"], row["mirror_minus"], flush=True)
    (RESULTS / "hog_mirror_report.json").write_text(json.dumps({"rows": rows}, indent=1))
    return rows


def select_shifts() -> dict:
    """Addendum 9: none, 4 or 8 shifted copies for the MNIST curves' stack beside HOG."""
    layers, g, _ = PRODUCT_STACKS["hogprod"]
    rows = []
    for where, d, Xv, yv in selection_draws():
        if where["dataset"] != "mnist":
            continue
        clf = model(layers, True, g, d.image_shape, where["seed"]).fit(d.X_train, d.y_train)
        for name in ("none", "4", "8"):
            t = time.perf_counter()
            v = clf if name == "none" else refit_virtual(copy.deepcopy(clf), d.X_train,
                                                         SHIFT_SETS[name])  # fmt: skip
            rows.append({**where, "shifts": name, "right": int(np.sum(v.predict(Xv) == yv)),
                         "n_validation": int(len(yv)),
                         "seconds": round(time.perf_counter() - t, 1)})  # fmt: skip
            print(rows[-1], flush=True)
    totals = {k: sum(r["right"] for r in rows if r["shifts"] == k) for k in ("none", "4", "8")}
    payload = {"rows": rows, "totals": totals, "chosen": max(totals, key=totals.get)}
    (RESULTS / "hog_shifts_select.json").write_text(json.dumps(payload, indent=1))
    return payload


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", choices=["select", "report", "select-shifts"], required=True)
    args = parser.parse_args(argv)
    if args.stage == "select":
        payload = select()
        print("validation images right:", payload["totals"], "adopted:", payload["adopted"])
    elif args.stage == "select-shifts":
        payload = select_shifts()
        print("validation images right:", payload["totals"], "chosen:", payload["chosen"])
    else:
        report()


if __name__ == "__main__":
    main()
