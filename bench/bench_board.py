"""What the app's side of the run store costs: a Class board drawn from the store, and a
stored run made ready to be shown again (read, checked against the export schema and
rescored against this server's test images).

    nice -n 10 python -m bench.bench_board             # SQLite, and PostgreSQL if it can start
    python -m bench.bench_board --runs 500 --repeat 20

The runs are real: one small Train run (200 images, 2 steps, the CSVM and a plain SVM) is
trained here and stored ``--runs`` times under other names, as the app stores it.  The
board's figure is ``explorer.class_board.board_runs``' query (at most 200 runs) plus the
thumbnails of the 30 rows drawn (:func:`explorer.class_board.thumbnail_rgb`); a restore's
is ``RunStore.get`` plus :func:`explorer.run_store.bundle_of` (what
:func:`explorer.run_store.restore` does before it hands the replay to the worker pool).
Per call, median and 95th percentile, in milliseconds.
"""

from __future__ import annotations

import argparse
import tempfile

from bench.bench_store import _times
from csvm.runs.targets import load_data
from csvm.store import open_store
from explorer.class_board import thumbnail_rgb
from explorer.run_store import bundle_of
from tests._postgres import fresh_schema, throwaway_postgres, why_no_postgres
from tests._stored_runs import SMALL, save_run


def measure(url: str, runs: int, repeat: int) -> dict[str, tuple[float, float]]:
    """The board's and a restore's cost on the store at ``url`` holding ``runs`` runs."""
    with open_store(url, server_id="bench-board") as store:
        ids = [save_run(store, f"student {k}") for k in range(runs)]
        pair = load_data(SMALL)

        def board(_: int) -> None:
            rows = store.list_runs(None, limit=200)
            for row in rows[:30]:
                if row.thumbnail is not None:
                    thumbnail_rgb(row.thumbnail)

        def restore(k: int) -> None:
            bundle_of(store.get(ids[k % len(ids)]), pair)

        return {"board (list + 30 thumbnails)": _times(repeat, board),
                "restore (get + check + rescore)": _times(repeat, restore)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    figures = {}
    with tempfile.TemporaryDirectory() as folder:
        figures["SQLite"] = measure(f"sqlite:///{folder}/runs.sqlite", args.runs, args.repeat)
    reason = why_no_postgres()
    if reason is None:
        with throwaway_postgres() as server, fresh_schema(server) as url:
            figures["PostgreSQL"] = measure(url, args.runs, args.repeat)
    else:
        print(f"PostgreSQL skipped: {reason}")
    print(f"{args.runs} runs stored; per call, ms (median / p95)")
    print("| operation | " + " | ".join(figures) + " |")
    print("|---|" + "---|" * len(figures))
    for op in next(iter(figures.values())):
        cells = " | ".join(f"{f[op][0]:.2f} / {f[op][1]:.2f}" for f in figures.values())
        print(f"| {op} | {cells} |")


if __name__ == "__main__":
    main()
