"""``python -m csvm curve``: test accuracy of several methods against the number of training
images, each method tuned on a validation draw of its own (csvm.analysis.curves).

    python -m csvm curve --dataset mnist --pair 3,5 --sizes 20,50,100,200,500 --seeds 3 \
        --methods svm,kcsvm,layers,hog,mkl --out assets/runs/curve.json
    python -m csvm curve ... --scheduler tcp://host:8786     # the cells on a Dask cluster
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from csvm.cli.args import output_file, positive_int
from csvm.exceptions import CSVMError

__all__ = ["main_curve"]


def _int_list(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma list of whole numbers") from None
    if not values or min(values) < 2:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give sizes of 2 images or more, e.g. 20,50,100"
        )
    return sorted(set(values))


def _methods(text: str) -> list[str]:
    from csvm.analysis.curves import METHODS

    names = [v.strip() for v in text.split(",") if v.strip()]
    unknown = [n for n in names if n not in METHODS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown method {unknown[0] if unknown else text!r}: choose from {', '.join(METHODS)}"
        )
    return names


def _pair(text: str) -> tuple[str, str]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise argparse.ArgumentTypeError(f"{text!r}: give two different classes, e.g. 3,5")
    return parts[0], parts[1]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m csvm curve", description=__doc__)
    parser.add_argument("--dataset", default="mnist-5k", help="dataset (default mnist-5k)")
    parser.add_argument("--pair", type=_pair, default=("3", "5"), help="two classes, e.g. 3,5")
    parser.add_argument("--sizes", type=_int_list, default=[20, 50, 100, 200])
    parser.add_argument("--seeds", type=positive_int, default=3, help="draws per size")
    parser.add_argument("--methods", type=_methods, default=["svm", "kcsvm", "layers", "hog"])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--jobs", type=positive_int, default=1, help="local threads")
    parser.add_argument(
        "--scheduler", default=None, metavar="tcp://HOST:PORT", help="run on a Dask cluster"
    )
    parser.add_argument(
        "--out", type=output_file, default=None, help="write the curve as JSON (after every cell)"
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep the cells --out already holds for the same dataset and pair; run the rest",
    )
    return parser


def _earlier_cells(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The cells of an earlier run of the same curve in ``--out`` (with ``--resume``)."""
    if not (args.resume and args.out and Path(args.out).exists()):
        return []
    from csvm.analysis.curves import CurveFileError, load_curve

    try:
        record = load_curve(args.out)
    except CurveFileError as err:
        raise CSVMError(f"--resume cannot use {args.out}: {err}") from None
    if record["dataset"] != args.dataset or record["pair"] != list(args.pair):
        raise CSVMError(
            f"--resume: {args.out} holds a curve of {record['dataset']} {record['pair']}, not "
            f"{args.dataset} {list(args.pair)}: give another --out."
        )
    wanted = {(m, n, s) for m in args.methods for n in args.sizes for s in range(args.seeds)}
    return [
        c
        for c in record["cells"]
        if (c["method"], c.get("size", c["n_train"]), c["seed"]) in wanted
    ]


def _record(args, env, cells, seconds: float, complete: bool) -> dict[str, Any]:
    from csvm.analysis.curves import METHODS, summarise_curve

    return {
        "kind": "curve",
        **env,
        "dataset": args.dataset,
        "pair": list(args.pair),
        "methods": {m: METHODS[m][0] for m in args.methods},
        "sizes": args.sizes,
        "seeds": args.seeds,
        "seconds": seconds,
        "complete": complete,
        "rows": summarise_curve(cells),
        "cells": cells,
    }


def _write(path: str, record: dict[str, Any]) -> None:
    Path(path).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")


def _print_rows(rows: list[dict[str, Any]]) -> None:
    from csvm.analysis.stats import format_p

    print(f"{'n':>6}  {'method':38} {'accuracy':>9}  {'95 % interval':>15}  gain over SVM")
    for r in rows:
        low, high = r["interval"]
        gain = ""
        if "gain_over_svm" in r:
            gain = f"{100 * r['gain_over_svm']:+.2f} pts (McNemar p {format_p(r['mcnemar_p'])})"
        print(
            f"{r['n_train']:>6}  {r['label']:38} {100 * r['accuracy']:8.2f}%  "
            f"{100 * low:6.2f}–{100 * high:6.2f} %  {gain}"
        )


def main_curve(argv: list[str]) -> int:
    """Run the curve's cells, print one row per method and size, and save the JSON."""
    from csvm.analysis.curves import run_curve, summarise_curve
    from csvm.analysis.reproduced import environment
    from csvm.parallel import backend

    args = _parser().parse_args(argv)
    env = environment(["curve", *argv])
    start = time.perf_counter()
    try:
        done = _earlier_cells(args)
    except CSVMError as err:
        print(f"error: {err}")
        return 1
    earlier = sum(c.get("seconds", 0.0) for c in done)

    def on_cell(index: int, cell: dict[str, Any]) -> None:
        done.append(cell)
        print(
            f"  [{len(done)}] {cell['method']:7} n={cell['n_train']:<5} seed {cell['seed']}: "
            f"{100 * cell['test_accuracy']:.2f} % ({cell['seconds']:.1f} s)",
            flush=True,
        )
        if args.out:  # after every cell: an interrupted run keeps what it measured
            _write(args.out, _record(args, env, done, earlier + time.perf_counter() - start, False))

    skip = [(c["method"], c.get("size", c["n_train"]), c["seed"]) for c in done]
    try:
        with backend(args.scheduler):
            run_curve(
                args.dataset,
                args.pair,
                args.methods,
                args.sizes,
                range(args.seeds),
                args.data_dir,
                args.jobs,
                on_cell,
                skip=skip,
            )
    except CSVMError as err:
        print(f"error: {err}")
        return 1
    _print_rows(summarise_curve(done))
    if args.out:
        _write(args.out, _record(args, env, done, earlier + time.perf_counter() - start, True))
        print(f"curve saved to {args.out}")
    return 0
