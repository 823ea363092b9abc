"""A selection on selection pairs, then a gate on the report pairs' validation images
before any test image: the two stages that addenda 10 and 11 of
docs/protocol_learned_hog.md share (``bench_hog_planes``, ``bench_hog_dictionary``).

Each bench gives its candidates as ``build(base, data, name) -> (model, seconds)`` on
addendum 8's fitted model; this module fits that base on each pair, runs the pairs two at
a time, picks the candidate by the declared rule, and reads test images only past the
gate.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["gate", "main", "select"]

#: A candidate built on the fitted base model: (its model, seconds).
Build = Callable[[Any, Any, str], tuple[Any, float]]


def _two_at_a_time(work: Callable[[Any], dict], tasks: list) -> list[dict]:
    with multiprocessing.get_context("fork").Pool(2) as pool:
        return pool.map(work, tasks)


def _selection_row(pair: tuple[str, str], names: list[str], build: Build) -> dict:
    """Addendum 8's model fitted on the pair, then every candidate, each scored on
    addendum 4's 500 validation images."""
    from bench import bench_colour_hog as colour
    from csvm.runs.cifar_hog_study import fitted_model

    d = colour.data(*pair, "stacked")
    Xv, yv = colour.validation(d)
    start = time.perf_counter()
    base = fitted_model("none", d)
    row = {"pair": " v ".join(pair), "n_train": int(len(d.y_train)), "n_validation": len(yv),
           "fit_seconds": round(time.perf_counter() - start, 1), "candidates": {}}  # fmt: skip
    for name in names:
        clf, took = build(base, d, name)
        row["candidates"][name] = {"right": int(np.sum(clf.predict(Xv) == yv)),
                                   "n_support": int(np.sum(clf.n_support_)),
                                   "seconds": round(took, 1)}  # fmt: skip
        print(row["pair"], name, row["candidates"][name], flush=True)
    return row


def select(
    build: Build, pairs: list[tuple[str, str]], candidates: Iterable[str], path: Path
) -> dict:
    """Every selection pair's row, the validation images right per candidate summed over
    the pairs, and the chosen one (the most; ties to the earlier candidate), written to
    ``path``."""
    names = list(candidates)
    rows = _two_at_a_time(partial(_selection_row, names=names, build=build), pairs)
    totals = {k: sum(r["candidates"][k]["right"] for r in rows) for k in names}
    best = max(totals.values())
    chosen = next(k for k in names if totals[k] == best)
    payload = {"rows": rows, "totals": totals, "chosen": chosen}
    path.write_text(json.dumps(payload, indent=1))
    return payload


def _gate_row(task: tuple[tuple[str, str], list[str]], build: Build) -> dict:
    """The named models fitted on one report pair, and which of the pair's data_batch_2
    images each gets right."""
    from bench import bench_colour_hog as colour
    from csvm.runs.cifar_hog_study import fitted_model

    pair, names = task
    d = colour.data(*pair, "stacked")
    base = fitted_model("none", d)
    models = {name: build(base, d, name)[0] for name in names}
    right = {k: m.predict(d.X_val) == d.y_val for k, m in models.items()}
    name = " v ".join(pair)
    print(name, {k: round(float(v.mean()), 4) for k, v in right.items()}, flush=True)
    return {"pair": name, "models": models, "validation": right}


def gate(
    build: Build,
    pairs: list[tuple[str, str]],
    chosen: str,
    baseline: str,
    on: tuple[str, float],
    test_line: Callable[[str, dict, str], dict],
    path: Path,
) -> dict:
    """The gate: ``baseline`` and ``chosen`` fitted on each report pair and scored on all
    of its validation images.  Passed when ``chosen`` gets at least ``on``'s accuracy of
    ``on``'s pair's validation images right and more than ``baseline``; only then is
    ``test_line(pair, models, chosen)`` asked for each pair (the only place a test image
    is read).  Written to ``path``."""
    names = list(dict.fromkeys((baseline, chosen)))
    rows = _two_at_a_time(partial(_gate_row, build=build), [(p, names) for p in pairs])
    pair_name, accuracy = on
    right = next(r["validation"] for r in rows if r["pair"] == pair_name)
    passed = bool(right[chosen].mean() >= accuracy and right[chosen].sum() > right[baseline].sum())
    out = {"chosen": chosen, "gate": {"pair": pair_name, "accuracy": accuracy, "passed": passed},
           "rows": []}  # fmt: skip
    for r in rows:
        line = {"pair": r["pair"],
                "validation": {k: {"accuracy": float(v.mean()), "right": int(v.sum()),
                                   "n": len(v)} for k, v in r["validation"].items()}}  # fmt: skip
        if passed:
            line.update(test_line(r["pair"], r["models"], chosen))
        out["rows"].append(line)
        print({k: v for k, v in line.items() if k != "test"}, flush=True)
    path.write_text(json.dumps(out, indent=1))
    return out


def main(
    description: str,
    select_stage: Callable[[], dict],
    gate_stage: Callable[[], dict],
    argv: list[str] | None = None,
) -> None:
    """``--stage select`` or ``--stage gate``, each printing what it decided."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--stage", choices=["select", "gate"], required=True)
    args = parser.parse_args(argv)
    if args.stage == "select":
        payload = select_stage()
        print("validation images right:", payload["totals"], "chosen:", payload["chosen"])
    else:
        print("gate passed:", gate_stage()["gate"]["passed"])
