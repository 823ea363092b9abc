"""Benchmark reading a "Reload a run" bundle (issue 37): normal, at its bound, and hostile.

    python bench/bench_reload_bundle.py [--repeats 3]

Prints a markdown table: for each bundle its zip size, the seconds :func:`load_bundle`
takes to read it (median of ``--repeats``; hostile ones must be refused, quickly), the
peak of Python allocations while reading (tracemalloc) and the outcome.  The bundles:

* a normal export: the Train page's default settings (50 images, 10 steps, plain SVM);
* the largest history a bundle may hold: a one-vs-one run on all 10 classes whose
  ``history.csv`` fills the 5 MB a member may inflate to (a real 1-iteration export's
  45 steps repeated for as many iterations as fit, its settings saying so);
* the issue's hostile ones: ``history.csv`` of 30,000 and of 400,000 columns by 2 rows.

Then ``history_csv`` (run on every page run of a finished run, for its Download button)
on a 2-row history of many columns: the implementation before issue 37 (a list of
columns, quadratic) at 3,000 and 10,000 columns, and the current one (a dict) at 30,000
and 400,000.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import statistics
import sys
import time
import tracemalloc
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from csvm.runs.bundle import load_bundle, rescore  # noqa: E402
from csvm.runs.config import RunConfig  # noqa: E402
from csvm.runs.persistence import (  # noqa: E402
    MAX_IMPORT_BYTES,
    BundleError,
    export_run,
    history_csv,
)
from csvm.runs.targets import load_data, run_model  # noqa: E402


def _export(config: RunConfig) -> bytes:
    results = {m: run_model(lambda e: None, config, m) for m in ("csvm", "svm")}
    data = load_data(config)
    return export_run(config, results, test_set=(data.X_test, data.y_test))


def _rezip(data: bytes, **members: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", 8) as dst:
        for name in src.namelist():
            dst.writestr(name, members.get(name, src.read(name)))
    return out.getvalue()


def _at_byte_bound() -> tuple[bytes, int]:
    """A 10-class one-vs-one export whose history.csv is as large as a member may be
    (5 MB): its settings' iterations raised until every step fills it."""
    small = RunConfig(classes="all", n_filters=1, n_iter=1, n_train=100, baselines=())
    data = _export(small)
    members = zipfile.ZipFile(io.BytesIO(data))
    head, *rows = members.read("history.csv").decode().splitlines()
    at = head.split(",").index("iteration")
    per_iteration = sum(len(r) + 1 for r in rows) + 3 * len(rows)  # longer iteration numbers
    n_iter = min(1000, (MAX_IMPORT_BYTES - len(head) - 1) // per_iteration)
    out = [head]
    for it in range(n_iter):  # the 1-iteration run's step of each sub-problem, repeated
        for row in rows:
            cells = row.split(",")
            cells[at] = str(it)
            out.append(",".join(cells))
    config = {**json.loads(members.read("config.json")), "n_iter": n_iter}
    history = ("\n".join(out) + "\n").encode()
    assert len(history) <= MAX_IMPORT_BYTES, len(history)
    return _rezip(
        data, **{"history.csv": history, "config.json": json.dumps(config).encode()}
    ), n_iter


def _wide(data: bytes, columns: int) -> bytes:
    header = ",".join(f"c{i}" for i in range(columns))
    body = "\n".join([header, ",".join("1" * columns), ",".join("2" * columns)]) + "\n"
    return _rezip(data, **{"history.csv": body.encode()})


def _load(data: bytes) -> str:
    try:
        return f"read: {len(load_bundle(data).history):,} steps"
    except BundleError as exc:
        return "refused: " + str(exc)[:70] + "…"


def _read(data: bytes, repeats: int) -> tuple[float, float, str]:
    """Median seconds (untraced), peak MB of allocations (one traced read), the outcome."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        outcome = _load(data)
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    _load(data)
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return statistics.median(times), peak, outcome


def _page_export(data: bytes) -> float:
    """Seconds of the Download button's export_run for the run reloaded from ``data``
    (paid on the click since issue 37; on every page run of its owner and of each viewer
    of its link before)."""
    bundle = load_bundle(data)
    results = {
        m: None if r is None else {**r, "history": bundle.history, "filters": bundle.filters}
        for m, r in bundle.results.items()
    }
    start = time.perf_counter()
    export_run(bundle.config, results)
    return time.perf_counter() - start


def _old_history_csv(history) -> str:
    """history_csv before issue 37: ``key not in columns`` on a list."""
    columns: list[str] = []
    for record in history:
        for key, value in record.items():
            if key not in columns and not isinstance(value, dict | list | tuple):
                columns.append(key)
    out = io.StringIO()
    writer = csv.DictWriter(out, columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(history)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    normal = _export(RunConfig())
    largest, n_iter = _at_byte_bound()
    bundles = {
        "normal export (default settings, 10 steps)": normal,
        f"history.csv at the 5 MB bound (10 classes OvO, {n_iter} iterations)": largest,
        "history.csv 30,000 columns × 2 rows": _wide(normal, 30_000),
        "history.csv 400,000 columns × 2 rows": _wide(normal, 400_000),
    }
    print("| bundle | zip | load_bundle (median) | peak allocations | outcome |")
    print("|---|---|---|---|---|")
    for name, data in bundles.items():
        seconds, peak, outcome = _read(data, args.repeats)
        print(
            f"| {name} | {len(data) / 1e3:.1f} kB | {seconds:.4f} s | {peak:.1f} MB | {outcome} |"
        )
    data = load_data(RunConfig())
    start = time.perf_counter()
    rescore(load_bundle(normal), data)
    print(f"\nload_bundle + rescore of the normal export: {time.perf_counter() - start:.4f} s")
    print(f"export_run of the normal run (Download click): {_page_export(normal):.4f} s")
    print(f"export_run of the 5 MB-bound run (Download click): {_page_export(largest):.4f} s")
    print("\n| history_csv, 2 rows | columns | seconds |\n|---|---|---|")
    for label, function, sizes in (
        ("before issue 37 (list)", _old_history_csv, (3_000, 10_000)),
        ("now (dict)", history_csv, (30_000, 400_000)),
    ):
        for n in sizes:
            wide = [{f"c{i}": i for i in range(n)}] * 2
            start = time.perf_counter()
            function(wide)
            print(f"| {label} | {n:,} | {time.perf_counter() - start:.3f} |")


if __name__ == "__main__":
    main()
