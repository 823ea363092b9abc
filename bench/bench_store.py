"""What the run store costs: a checkpoint per step, a whole save, a board, a get.

    nice -n 10 python -m bench.bench_store            # SQLite, and PostgreSQL if it can start
    python -m bench.bench_store --runs 2000 --steps 100

SQLite is a new file in a temporary folder; PostgreSQL a throwaway server started by
``tests/_postgres.py`` (fsync off there, so its figures are the client's and the server's
work, not a disk's flushes; SQLite runs as it ships, WAL with ``synchronous=NORMAL``, which
does not flush on commit either).  A checkpoint carries the run's whole history so far and
two 5 × 5 filters, as the Train page's would; a save carries a Train run's results (2,000
test predictions, 25 history rows, the filters).  Figures are per call, median and 95th
percentile, in milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable

import numpy as np

from csvm.runs.config import RunConfig
from csvm.store import open_store
from tests._postgres import fresh_schema, throwaway_postgres, why_no_postgres

CONFIG = RunConfig().replace(eta=0.5)


def _times(calls: int, work: Callable[[int], object]) -> tuple[float, float]:
    seconds = []
    for k in range(calls):
        start = time.perf_counter()
        work(k)
        seconds.append(time.perf_counter() - start)
    seconds.sort()
    return 1000 * statistics.median(seconds), 1000 * seconds[int(0.95 * (len(seconds) - 1))]


def _result(rng: np.random.Generator, steps: int = 25) -> dict:
    return {
        "csvm": {
            "test_accuracy": 0.93,
            "n_test": 2000,
            "test_predictions": rng.choice([-1, 1], 2000).astype(np.int8),
            "history": [{"step": k, "objective": 1.0 / k} for k in range(1, steps + 1)],
            "filters": rng.normal(size=(2, 5, 5)),
        },
        "svm": {"test_accuracy": 0.9, "n_test": 2000},
    }


def measure(url: str, runs: int, steps: int) -> dict[str, tuple[float, float]]:
    """Per-call milliseconds of each operation on a new store at ``url``."""
    rng = np.random.default_rng(0)
    out = {}
    with open_store(url) as store:
        history: list[dict] = []

        def checkpoint(k: int) -> None:
            history.append({"step": k + 1, "objective": 1.0 / (k + 1), "filter_norm": 0.5})
            store.checkpoint(
                "live", CONFIG, step=k + 1, history=history, filters=np.ones((2, 5, 5))
            )

        out[f"checkpoint (history 1-{steps} steps)"] = _times(steps, checkpoint)
        out["save (a whole Train run)"] = _times(
            runs,
            lambda k: store.save(f"r{k}", CONFIG, _result(rng), class_code="7b", name=f"run {k}"),
        )
        out[f"list_runs, board of {runs} (limit 200)"] = _times(20, lambda k: store.list_runs("7b"))
        out["get (a whole run)"] = _times(100, lambda k: store.get(f"r{k % runs}"))
        out["heartbeat (forced)"] = _times(100, lambda k: store.heartbeat(force=True))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=500, help="runs saved (default 500)")
    parser.add_argument("--steps", type=int, default=100, help="checkpoints (default 100)")
    args = parser.parse_args(argv)
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        results["SQLite"] = measure(f"sqlite:///{folder}/runs.sqlite", args.runs, args.steps)
    reason = why_no_postgres()
    if reason is None:
        with throwaway_postgres() as server, fresh_schema(server) as url:
            results["PostgreSQL"] = measure(url, args.runs, args.steps)
    else:
        print(f"PostgreSQL skipped: {reason}")
    print("| operation | " + " | ".join(f"{b} median / p95 (ms)" for b in results) + " |")
    print("|---|" + "---|" * len(results))
    for name in next(iter(results.values())):
        cells = " | ".join(f"{r[name][0]:.2f} / {r[name][1]:.2f}" for r in results.values())
        print(f"| {name} | {cells} |")


if __name__ == "__main__":
    main()
