"""``csvm sweep``: the Sweep page's grid from the command line.

    csvm sweep --x lam=0.01,0.1,1 --y eta=0.01,0.1,1 --dataset mnist \\
        --protocol thesis --pair 3 5 --n-iter 25 --out table4_2.csv --plot pictures/
    csvm sweep --x degree=1,2,3,4,5 --y seed=0,1,2,3,4 ... --scheduler tcp://host:8786

Every cell trains one CSVM with the base settings (every ``RunConfig`` setting is a flag)
and the cell's two values, and is scored on the validation split, as on the Sweep page.
The table of validation accuracies goes to stdout; a line per cell and a bar with the
time left to stderr; one row per cell to the CSV file (checked writable before the first
cell); the heatmap to DIR/sweep.html with --plot.  With a ``seed`` axis the other axis's
values also get mean ± std.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import time
from typing import Any

import numpy as np

from csvm.cli.args import (
    PROG,
    add_data_dir,
    command_parser,
    n_jobs,
    output_file,
    plot_dir,
    report,
    say_unused,
)
from csvm.exceptions import CSVMError
from csvm.runs.flags import add_cli_arguments, add_preset_argument, from_cli
from csvm.runs.sweeps import SWEEP_PARAMS, parse_values, run_sweep, sweep_configs, sweep_rows

__all__ = ["main_sweep", "parse_axis", "sweep_table", "write_csv"]


def parse_axis(text: str) -> tuple[str, list]:
    """``"lam=0.001,0.01,0.1"`` -> ``("lam", [0.001, 0.01, 0.1])``.

    Raises
    ------
    ValueError
        Naming the setting or value that is wrong and the settings that can be swept.
    """
    name, sep, values = str(text).partition("=")
    name = name.strip().replace("-", "_")
    if not sep:
        raise ValueError(
            f"{text!r}: write an axis as NAME=V1,V2,... with NAME one of {', '.join(SWEEP_PARAMS)}."
        )
    return name, parse_values(name, values)


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.2f}"


def sweep_table(
    x: tuple[str, list], y: tuple[str, list], results: list[dict[str, Any] | None]
) -> list[str]:
    """Markdown table of validation accuracy (%), rows y, columns x; the best cell bold,
    † for a diverged cell.  With a seed axis, one more line per value of the other axis
    gives its mean ± std over the seeds."""
    (x_name, xs), (y_name, ys) = x, y
    flat = [np.nan if r is None else r["val_accuracy"] for r in results]
    acc = np.array(flat, dtype=float).reshape(len(ys), len(xs))
    best = int(np.nanargmax(acc)) if np.isfinite(acc).any() else -1
    lines = [
        f"| {y_name} \\ {x_name} | " + " | ".join(str(v) for v in xs) + " |",
        "|---" * (len(xs) + 1) + "|",
    ]
    for i, yv in enumerate(ys):
        cells = []
        for j in range(len(xs)):
            k = i * len(xs) + j
            text = "–" if np.isnan(acc[i, j]) else f"{100 * acc[i, j]:.2f}"
            text = f"**{text}**" if k == best else text
            cells.append(text + (" †" if results[k] and results[k]["diverged"] else ""))
        lines.append(f"| {yv} | " + " | ".join(cells) + " |")
    if "seed" in (x_name, y_name) and x_name != y_name:
        # Seeds along one axis: each value of the other axis's spread over them.
        name, values, runs = (x_name, xs, acc.T) if y_name == "seed" else (y_name, ys, acc)
        lines.append("")
        for value, row in zip(values, runs, strict=True):
            lines.append(
                f"{name} = {value}: {100 * np.nanmean(row):.2f} ± {100 * np.nanstd(row):.2f} % "
                f"over {int(np.isfinite(row).sum())} seeds"
            )
    return lines


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = command_parser(prog, __doc__)
    names = ", ".join(SWEEP_PARAMS)
    parser.add_argument(
        "--x", required=True, metavar="NAME=V1,V2,...", help=f"the columns; NAME one of {names}"
    )
    parser.add_argument("--y", required=True, metavar="NAME=V1,V2,...", help="the rows (as --x)")
    parser.add_argument(
        "--pair", nargs=2, metavar=("CLASS_A", "CLASS_B"), help="shorthand for --class-a/-b"
    )
    add_data_dir(parser)
    parser.add_argument(
        "--n-jobs", type=n_jobs, default=-1, help="cells at once (local threads; -1: every core)"
    )
    parser.add_argument(
        "--scheduler", default=None, metavar="tcp://HOST:PORT", help="run on a Dask cluster"
    )
    parser.add_argument(
        "--out", type=output_file, default=None, metavar="FILE.csv", help="one row per cell"
    )
    parser.add_argument(
        "--plot", type=plot_dir, default=None, metavar="DIR", help="write DIR/sweep.html"
    )
    add_preset_argument(parser)
    add_cli_arguments(parser, skip=("baselines", "classes", "multi_class"))
    return parser


def write_csv(path: str, rows: list[dict[str, Any]]) -> None:
    """Write ``rows`` to ``path`` whole or not at all: into a temporary file beside it,
    then renamed over it, so a failed write leaves any earlier file as it was."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".sweep-", suffix=".csv", dir=folder)
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main_sweep(argv: list[str], prog: str = f"{PROG} sweep") -> int:
    """Run a sweep from the command line; return the exit status (:mod:`csvm.cli.args`)."""
    args = _parser(prog).parse_args(argv)
    try:
        x, y = parse_axis(args.x), parse_axis(args.y)
        base = from_cli(args)
        if args.pair:
            base = base.replace(class_a=args.pair[0], class_b=args.pair[1])
        say_unused(args, base)
        cells = sweep_configs(base.to_dict(), x[0], x[1], y[0], y[1])
        if args.plot:
            from csvm.cli.plots import require_figures

            require_figures()
    except ValueError as exc:
        return report(prog, exc)
    from csvm.cli.progress import LineProgress
    from csvm.parallel import backend

    start = time.perf_counter()
    bar = LineProgress([1.0] * len(cells), unit="cells", out=sys.stderr)

    def progress(i: int, result: dict[str, Any]) -> None:
        c = cells[i]
        bar.line(
            f"cell {i + 1}/{len(cells)} {x[0]}={c[x[0]]} {y[0]}={c[y[0]]}: validation "
            f"{_pct(result['val_accuracy'])} % in {result['seconds']:.1f} s",
            index=i,
        )

    try:
        with backend(args.scheduler):
            results = run_sweep(
                cells, n_jobs=args.n_jobs, data_dir=args.data_dir, on_result=progress
            )
    except (CSVMError, ValueError) as exc:
        return report(prog, exc)
    finally:
        if bar.done:
            bar.close()
    print("\n".join(sweep_table(x, y, results)))
    print(
        f"\nvalidation accuracy %; † diverged (scored at its best state); "
        f"{len(cells)} cells in {time.perf_counter() - start:.0f} s"
    )
    return _save(args, cells, results, x, y, prog)


def _save(args, cells, results, x, y, prog: str) -> int:
    """Write --out and --plot after the table is printed: a failed write loses no result."""
    try:
        if args.out:
            write_csv(args.out, sweep_rows(cells, results, x[0], y[0]))
            print(f"wrote {args.out}")
        if args.plot:
            from csvm.cli.plots import write_sweep

            for path in write_sweep(args.plot, x, y, results):
                print(f"wrote {path}")
    except OSError as exc:
        return report(prog, exc)
    return 0
