"""One-pixel shifts within each colour plane for CIFAR-10's stack beside HOG (issue 35,
addendum 10 of docs/protocol_learned_hog.md).

    OMP_NUM_THREADS=1 nice -n 5 python -m bench.bench_hog_planes --stage select
    OMP_NUM_THREADS=1 nice -n 5 python -m bench.bench_hog_planes --stage gate

``select`` fits addendum 8's model (the curves' ``hogprod3`` at C 10) on all of each
selection pair's ``data_batch_1`` images (deer v horse, ship v truck) and scores three
sets of virtual support vectors on addendum 4's 500 validation images: the mirror only,
the mirror and the two horizontal one-pixel shifts, the mirror and the four axis shifts
moved plane by plane (:func:`csvm.model.virtual.shift_images` with ``planes=3``).  The
most validation images right over both pairs wins; ties to the earlier candidate.  No
test image is read (``bench/results/hog_planes_select.json``).

``gate`` fits "mirror" and the chosen candidate on each report pair and scores them on all
of the pair's ``data_batch_2`` images.  Only if the chosen candidate gets at least 72 % of
cat v dog's right, and more than "mirror", are the test images scored, in the same run
(``bench/results/hog_planes_gate.json``).
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
from csvm.analysis.reproduced import pack_correct  # noqa: E402
from csvm.analysis.stats import mcnemar_correct  # noqa: E402
from csvm.model.virtual import SHIFTS_4, add_virtual  # noqa: E402
from csvm.runs.cifar_hog_study import _fitted  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
SELECT = [("deer", "horse"), ("ship", "truck")]
#: name -> the one-pixel shifts beside the mirror, in tie-break order.
CANDIDATES = {"mirror": (), "mirror+2": ((0, -1), (0, 1)), "mirror+4": SHIFTS_4}
GATE_PAIR, GATE_ACCURACY = "cat v dog", 0.72
PLANES = 3  # R, G, B stacked into one 96 x 32 image


def _virtual(base, d, name: str):
    start = time.perf_counter()
    clf = add_virtual(copy.deepcopy(base), d.X_train, d.y_train, CANDIDATES[name],
                      mirror=True, planes=PLANES)  # fmt: skip
    return clf, time.perf_counter() - start


def _select_pair(pair: tuple[str, str]) -> dict:
    d = colour.data(*pair, "stacked")
    Xv, yv = colour.validation(d)
    start = time.perf_counter()
    base = _fitted("none", d)
    row = {"pair": " v ".join(pair), "n_train": int(len(d.y_train)), "n_validation": len(yv),
           "fit_seconds": round(time.perf_counter() - start, 1), "candidates": {}}  # fmt: skip
    for name in CANDIDATES:
        clf, took = _virtual(base, d, name)
        row["candidates"][name] = {"right": int(np.sum(clf.predict(Xv) == yv)),
                                   "n_support": int(np.sum(clf.n_support_)),
                                   "seconds": round(took, 1)}  # fmt: skip
    print(row, flush=True)
    return row


def select() -> dict:
    with multiprocessing.get_context("fork").Pool(2) as pool:
        rows = pool.map(_select_pair, SELECT)
    totals = {k: sum(r["candidates"][k]["right"] for r in rows) for k in CANDIDATES}
    best = max(totals.values())
    chosen = next(k for k in CANDIDATES if totals[k] == best)
    payload = {"rows": rows, "totals": totals, "chosen": chosen}
    (RESULTS / "hog_planes_select.json").write_text(json.dumps(payload, indent=1))
    return payload


def _gate_pair(task: tuple[tuple[str, str], str]) -> dict:
    """The "mirror" and chosen models on one report pair, fitted, and the validation
    images each gets right (every data_batch_2 image of the pair)."""
    pair, chosen = task
    d = colour.data(*pair, "stacked")
    base = _fitted("none", d)
    models = {name: _virtual(base, d, name)[0] for name in dict.fromkeys(("mirror", chosen))}
    right = {k: m.predict(d.X_val) == d.y_val for k, m in models.items()}
    print(" v ".join(pair), {k: round(float(v.mean()), 4) for k, v in right.items()}, flush=True)
    return {"pair": " v ".join(pair), "models": models, "validation": right}


def gate() -> dict:
    chosen = json.loads((RESULTS / "hog_planes_select.json").read_text())["chosen"]
    if chosen == "mirror":
        raise SystemExit("Addendum 10: 'mirror' won the selection; addendum 8 stands.")
    with multiprocessing.get_context("fork").Pool(2) as pool:
        rows = pool.map(_gate_pair, [(p, chosen) for p in colour.REPORT])
    on_gate = next(r["validation"] for r in rows if r["pair"] == GATE_PAIR)
    passed = bool(on_gate[chosen].mean() >= GATE_ACCURACY
                  and on_gate[chosen].sum() > on_gate["mirror"].sum())  # fmt: skip
    out = {"chosen": chosen, "gate": {"pair": GATE_PAIR, "accuracy": GATE_ACCURACY,
                                      "passed": passed}, "rows": []}  # fmt: skip
    for r in rows:
        line = {"pair": r["pair"],
                "validation": {k: {"accuracy": float(v.mean()), "right": int(v.sum()),
                                   "n": len(v)} for k, v in r["validation"].items()}}  # fmt: skip
        if passed:  # the only place a test image is read
            d = colour.data(*r["pair"].split(" v "), "stacked")
            test = {k: m.predict(d.X_test) == d.y_test for k, m in r["models"].items()}
            m = mcnemar_correct(test[chosen], test["mirror"])
            line["test"] = {k: {"accuracy": float(v.mean()), "correct": pack_correct(v)}
                            for k, v in test.items()}  # fmt: skip
            line["chosen_minus_mirror"] = {"points": m.diff_points, "only_chosen": m.b,
                                           "only_mirror": m.c, "p": m.p_value}  # fmt: skip
        out["rows"].append(line)
        print(line, flush=True)
    (RESULTS / "hog_planes_gate.json").write_text(json.dumps(out, indent=1))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", choices=["select", "gate"], required=True)
    args = parser.parse_args(argv)
    if args.stage == "select":
        payload = select()
        print("validation images right:", payload["totals"], "chosen:", payload["chosen"])
    else:
        payload = gate()
        print("gate passed:", payload["gate"]["passed"])


if __name__ == "__main__":
    main()
