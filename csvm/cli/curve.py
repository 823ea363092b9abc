"""``csvm curve``: test accuracy of several methods against the number of training
images, each method tuned on a validation draw of its own (csvm.analysis.curves).

    csvm curve --dataset mnist --pair 3 5 --sizes 20,50,100,200,500 --seeds 3 \\
        --methods svm,kcsvm,layers,hog,mkl --out assets/runs/curve.json --plot pictures/
    csvm curve ... --scheduler tcp://host:8786     # the cells on a Dask cluster

A line per cell on stdout with a bar and the time left on stderr (weighted by what each
cell is expected to cost); then one row per method and size.  --out is checked writable
before the first cell and rewritten after every cell; --plot DIR writes DIR/curve.html.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from csvm.cli.args import (
    PROG,
    add_data_dir,
    command_parser,
    n_jobs,
    output_file,
    plot_dir,
    positive_int,
    report,
)
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


class _Pair(argparse.Action):
    """``--pair 3 5`` as train and sweep write it, or ``--pair 3,5`` as the curve's
    saved commands do: both give the two classes."""

    def __call__(self, parser, namespace, values, option_string=None):
        parts = [p.strip() for p in (values[0].split(",") if len(values) == 1 else values)]
        if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
            raise argparse.ArgumentError(
                self, f"{' '.join(values)!r}: give two different classes, e.g. 3 5 (or 3,5)"
            )
        setattr(namespace, self.dest, (parts[0], parts[1]))


def _parser(prog: str) -> argparse.ArgumentParser:
    from csvm.analysis.curves import METHODS

    parser = command_parser(prog, __doc__)
    parser.add_argument("--dataset", default="mnist-5k", help="dataset (default mnist-5k)")
    parser.add_argument(
        "--pair",
        action=_Pair,
        nargs="+",
        metavar="CLASS",
        default=("3", "5"),
        help="the two classes: 3 5, or 3,5 (default 3 5)",
    )
    parser.add_argument(
        "--sizes",
        type=_int_list,
        default=[20, 50, 100, 200],
        metavar="N,N,...",
        help="training images per cell, a comma list (default 20,50,100,200); a size "
        "above what the pair has trains on all of it, with a note",
    )
    parser.add_argument("--seeds", type=positive_int, default=3, help="draws per size")
    parser.add_argument(
        "--methods",
        type=_methods,
        default=["svm", "kcsvm", "layers", "hog"],
        metavar="M,M,...",
        help="a comma list of: " + ", ".join(METHODS) + " (default svm,kcsvm,layers,hog)",
    )
    add_data_dir(parser)
    parser.add_argument(
        "--n-jobs",
        "--jobs",
        type=n_jobs,
        default=1,
        help="cells at once (local threads; -1: every core; default 1)",
    )
    parser.add_argument(
        "--scheduler", default=None, metavar="tcp://HOST:PORT", help="run on a Dask cluster"
    )
    parser.add_argument(
        "--out", type=output_file, default=None, help="write the curve as JSON (after every cell)"
    )
    parser.add_argument(
        "--plot", type=plot_dir, default=None, metavar="DIR", help="write DIR/curve.html"
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep the cells --out already holds for the same dataset and pair; run the "
        "rest (needs --out)",
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
    """Write the record whole or not at all (a temporary file renamed over ``path``): a
    write that fails leaves the cells saved after the last cell as they were."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".curve-", suffix=".json", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _weights(args: argparse.Namespace, skip: list[tuple[str, int, int]]) -> list[float]:
    """What each cell still to run is expected to cost, in run order: the saved curves'
    measured seconds (csvm.analysis.curves.estimate_seconds) where every method has one,
    else the size squared (the kernels and SVMs grow about with n²)."""
    from csvm.analysis.curves import curve_cells, estimate_seconds, saved_curves

    done = set(skip)
    cells = curve_cells(args.methods, args.sizes, range(args.seeds), args.dataset)
    cells = [c for c in cells if c not in done]
    records = [r for _, r in saved_curves() if isinstance(r, dict)]
    seconds = [estimate_seconds([c], records) for c in cells]
    if cells and all(s is not None for s in seconds):
        return [float(s) for s in seconds]
    return [float(n) ** 2 for _, n, _ in cells]


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


def main_curve(argv: list[str], prog: str = f"{PROG} curve") -> int:
    """Run the curve's cells, print one row per method and size, and save the JSON; the
    exit status (:mod:`csvm.cli.args`)."""
    from csvm.analysis.reproduced import environment

    parser = _parser(prog)
    args = parser.parse_args(argv)
    if args.resume and not args.out:
        parser.error("--resume needs --out: the file whose saved cells it keeps")
    env = environment(["curve", *argv])
    try:
        done = _earlier_cells(args)
        if args.plot:
            from csvm.cli.plots import require_figures

            require_figures()
    except (CSVMError, ValueError) as err:
        return report(prog, err)
    try:
        return _run(args, env, done, prog)
    except (CSVMError, ValueError, OSError) as err:
        return report(prog, err)


def _run(
    args: argparse.Namespace, env: dict[str, Any], done: list[dict[str, Any]], prog: str
) -> int:
    """The cells still to run, with their lines and bar; then the rows, --out and --plot."""
    from csvm.analysis.curves import run_curve, summarise_curve
    from csvm.cli.progress import LineProgress
    from csvm.parallel import backend

    start = time.perf_counter()
    earlier = sum(c.get("seconds", 0.0) for c in done)
    skip = [(c["method"], c.get("size", c["n_train"]), c["seed"]) for c in done]
    bar = LineProgress(_weights(args, skip), unit="cells")
    failed: list[OSError] = []
    noted: set[int] = set()

    def on_cell(index: int, cell: dict[str, Any]) -> None:
        done.append(cell)
        if cell["n_train"] < cell["size"] and cell["size"] not in noted:
            noted.add(cell["size"])  # as train says it: the size trained is not the asked
            bar.remark(
                f"note: --sizes {cell['size']} asked for more training images than "
                f"{args.dataset} has for {' vs '.join(args.pair)}; that size trains on all "
                f"{cell['n_train']} of them."
            )
        bar.line(
            f"  [{len(done)}] {cell['method']:7} n={cell['n_train']:<5} seed {cell['seed']}: "
            f"{100 * cell['test_accuracy']:.2f} % ({cell['seconds']:.1f} s)",
            index=index,
        )
        if args.out and not failed:  # after every cell: an interrupted run keeps its cells
            try:
                seconds = earlier + time.perf_counter() - start
                _write(args.out, _record(args, env, done, seconds, False))
            except OSError as err:  # say it once, keep running: the cells are printed
                failed.append(err)
                print(f"{prog}: warning: cannot write {args.out}: {err}", file=sys.stderr)

    try:
        with backend(args.scheduler):
            run_curve(
                args.dataset,
                args.pair,
                args.methods,
                args.sizes,
                range(args.seeds),
                args.data_dir,
                args.n_jobs,
                on_cell,
                skip=skip,
            )
    finally:
        if bar.done:
            bar.close()
    rows = summarise_curve(done)
    _print_rows(rows)
    if args.out:
        _write(args.out, _record(args, env, done, earlier + time.perf_counter() - start, True))
        print(f"curve saved to {args.out}")
    if args.plot:
        from csvm.cli.plots import write_curve
        from csvm.figures.curves import curve_subtitle, curve_title

        title = curve_title(args.dataset, args.pair)
        subtitle = curve_subtitle([row["method"] for row in rows])
        for path in write_curve(args.plot, rows, title, subtitle):
            print(f"wrote {path}")
    return 0
