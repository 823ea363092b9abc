"""Benchmark of :class:`csvm.jobs.JobPool`: ten SVC fits submitted at once to two workers.

Run from the repository root::

    python -m bench.bench_jobs --out docs/bench_jobs.md

It reports whether every job finished without error, the largest queue place seen, the
latency of ``pool.poll`` (what the app's polling fragment pays) while the jobs run, the
time from submit to start and to end of each job, and the total wall time.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from typing import Any

import numpy as np

COMMAND = "python -m bench.bench_jobs --out docs/bench_jobs.md"


def fit_svc(emit, n: int = 2500, d: int = 40, seed: int = 0) -> dict[str, Any]:
    """Job target: fit an RBF SVC on a random, partly separable problem.

    Parameters
    ----------
    emit : callable
        Sends an event dict to the parent.
    n, d : int
        Samples and features; ``n`` sets the fit time (about 1-3 s on one core).
    seed : int
        Seed of the data.

    Returns
    -------
    dict
        Fit seconds, support-vector count and training accuracy.
    """
    from sklearn.svm import SVC

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    # Labels from a noisy linear rule, so the solver has real work but converges.
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.standard_normal(n) > 0).astype(int)
    emit({"stage": "data", "n": n})
    t0 = time.perf_counter()
    clf = SVC(kernel="rbf", C=10.0, gamma="scale").fit(X, y)
    seconds = time.perf_counter() - t0
    emit({"stage": "fitted", "seconds": seconds})
    return {"seconds": seconds, "n_sv": int(clf.n_support_.sum()), "acc": clf.score(X, y)}


def wait_for_spares(pool, n: int, timeout: float = 60.0) -> None:
    """Wait until ``pool`` has ``n`` warm spare workers (and a second for them to settle)."""
    deadline = time.monotonic() + timeout
    while pool.stats()["workers"]["spares"] < n and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)


def run(n_jobs: int = 10, max_workers: int = 2, poll_every: float = 0.05) -> dict[str, Any]:
    """Submit ``n_jobs`` fits at once and poll them all until they end.

    Parameters
    ----------
    n_jobs : int
        Jobs submitted at once.
    max_workers : int
        Pool size.
    poll_every : float
        Seconds between polling rounds (the app polls about once a second; this is
        denser so the latency sample is large).

    Returns
    -------
    dict
        Measured figures (see the module docstring).
    """
    # Import the target through its module name, not ``__main__``, so spawned workers
    # find it by the same name whichever way this file was started.
    from bench import bench_jobs as module
    from csvm.jobs import JobPool

    pool = JobPool(max_workers=max_workers, lease_seconds=180.0)
    try:
        # Let the warm spare workers start (the fork server imports the libraries once),
        # as on a server that has been up a while; the cold start is measured first.
        wait_for_spares(pool, max_workers)
        t0 = time.perf_counter()
        ids = [
            pool.submit(module.fit_svc, {"n": 3200 + 400 * (i % 5), "seed": i}, name=f"fit{i}")
            for i in range(n_jobs)
        ]
        submit_ms = (time.perf_counter() - t0) * 1e3
        latencies: list[float] = []
        max_place = 0
        max_running = 0
        views = {}
        while True:
            for job_id in ids:
                p0 = time.perf_counter()
                view = pool.poll(job_id)
                latencies.append((time.perf_counter() - p0) * 1e3)
                views[job_id] = view
                max_place = max(max_place, view.place or 0)
            max_running = max(max_running, sum(v.state == "running" for v in views.values()))
            if all(v.state in ("done", "error", "stopped") for v in views.values()):
                break
            time.sleep(poll_every)
        wall = time.perf_counter() - t0
    finally:
        pool.shutdown()
    final = list(views.values())
    lat = np.array(latencies)
    waits = [v.started_at - v.submitted_at for v in final if v.started_at]
    fits = [v.result["seconds"] for v in final if v.state == "done"]
    first_event = [
        v.finished_at - v.started_at - v.result["seconds"] for v in final if v.state == "done"
    ]
    return {
        "n_jobs": n_jobs,
        "max_workers": max_workers,
        "done": sum(v.state == "done" for v in final),
        "errors": sum(v.state == "error" for v in final),
        "errors_text": [v.error.splitlines()[0] for v in final if v.state == "error"],
        "max_place": max_place,
        "max_running": max_running,
        "events_per_job": sorted({len(v.events) for v in final}),
        "submit_ms": submit_ms,
        "polls": len(lat),
        "poll_p50": float(np.percentile(lat, 50)),
        "poll_p95": float(np.percentile(lat, 95)),
        "poll_max": float(lat.max()),
        "fit_min": min(fits, default=float("nan")),
        "fit_max": max(fits, default=float("nan")),
        "fit_sum": sum(fits),
        "overhead_mean": float(np.mean(first_event)) if first_event else float("nan"),
        "wait_max": max(waits, default=float("nan")),
        "wall": wall,
    }


def chatty(emit, n_events: int = 300) -> dict[str, Any]:
    """Image-sized events at full speed: how long the worker's emit() calls take in all."""
    t0 = time.perf_counter()
    for i in range(n_events):
        emit({"i": i, "image": np.full((28, 28), float(i))})
    return {"emit_seconds": time.perf_counter() - t0}


def emit_cost(n_events: int = 300) -> float:
    """Seconds a worker spends in emit() for ``n_events`` image events (a thread in the
    child writes the pipe, so emit() should not wait for the parent to read)."""
    from csvm.jobs import JobPool, PoolSettings

    pool = JobPool(settings=PoolSettings(max_workers=1), preload=())
    try:
        job = pool.submit(chatty, {"n_events": n_events})
        while pool.poll(job).state not in ("done", "error", "stopped"):
            time.sleep(0.05)
        view = pool.poll(job)
        if view.state != "done":
            raise RuntimeError(f"the chatty job ended {view.state}: {view.error}")
        return float(view.result["emit_seconds"])
    finally:
        pool.shutdown()


def cold_start(max_workers: int = 2) -> float:
    """Seconds from creating a pool to a tiny job's result, nothing started yet (in a fresh
    process: the fork server too)."""
    from bench import bench_jobs as module
    from csvm.jobs import JobPool

    pool = JobPool(max_workers=max_workers)
    try:
        t0 = time.perf_counter()
        job = pool.submit(module.fit_svc, {"n": 50})
        while pool.poll(job).state not in ("done", "error", "stopped"):
            time.sleep(0.01)
        return time.perf_counter() - t0
    finally:
        pool.shutdown()


def worker_start(method: str, n: int = 3) -> list[float]:
    """Seconds from starting a worker process to its "ready" message (libraries imported).

    ``method`` is "forkserver" (forked from a server that imported them once) or "spawn"
    (a new interpreter that imports them itself).
    """
    import multiprocessing as mp
    import pickle

    from csvm.jobs.process import Worker

    ctx = mp.get_context(method)
    preload = ("numpy", "sklearn.svm", "csvm.runs.targets")
    times = []
    for _ in range(n + 1):  # the first fork-server start is the cold start: not counted
        t0 = time.perf_counter()
        worker = Worker(ctx, preload)
        while True:
            if worker.outbox.poll(60):
                kind, payload = pickle.loads(worker.outbox.recv_bytes())
                if kind == "phase" and payload["phase"] == "ready":
                    break
        times.append(time.perf_counter() - t0)
        worker.stop()
    return times[1:]


def report(r: dict[str, Any], cold: float) -> str:
    """Markdown text of the figures."""
    import sklearn

    rows = [
        ("jobs submitted at once / workers", f"{r['n_jobs']} / {r['max_workers']}"),
        ("jobs done / errors", f"{r['done']} / {r['errors']}"),
        ("largest queue place seen", f"{r['max_place']}"),
        ("most jobs running at once", f"{r['max_running']}"),
        ("events per job", ", ".join(map(str, r["events_per_job"]))),
        ("submit() of all jobs", f"{r['submit_ms']:.1f} ms"),
        ("poll() calls measured", f"{r['polls']}"),
        (
            "poll() latency p50 / p95 / max",
            (f"{r['poll_p50']:.2f} / {r['poll_p95']:.2f} / {r['poll_max']:.1f} ms"),
        ),
        ("one fit inside a worker: min / max", f"{r['fit_min']:.2f} / {r['fit_max']:.2f} s"),
        ("sum of fit times (serial work)", f"{r['fit_sum']:.1f} s"),
        ("start to result minus fit time (mean)", f"{r['overhead_mean']:.2f} s"),
        ("longest wait in the queue", f"{r['wait_max']:.1f} s"),
        ("total wall time, submit to last result", f"{r['wall']:.1f} s"),
        ("cold server: new pool (and fork server) to first tiny result", f"{cold:.1f} s"),
        ("300 image events: seconds inside the worker's emit()", f"{r['emit_seconds']:.3f} s"),
        (
            "worker start to ready, fork server / spawn (median of 3)",
            f"{np.median(r['start_fork']) * 1e3:.0f} ms / {np.median(r['start_spawn']):.2f} s",
        ),
    ]
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [
        "# JobPool benchmark",
        "",
        f"Command: `{COMMAND}`",
        "",
        (
            f"Machine: {os.cpu_count()} cores, {platform.system()} {platform.machine()}, "
            f"Python {platform.python_version()}, numpy {np.__version__}, "
            f"scikit-learn {sklearn.__version__}; run at {stamp}."
        ),
        "",
        "| figure | value |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in rows],
        "",
    ]
    if r["errors_text"]:
        lines += ["Errors:", "", *[f"- {e}" for e in r["errors_text"]], ""]
    return "\n".join(lines)


NOTES_HEADING = "## Notes"


def write_keeping_notes(path: str, text: str) -> None:
    """Write the table to ``path``, keeping a hand-written "## Notes" section already there."""
    notes = ""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            old = fh.read()
        if NOTES_HEADING in old:
            notes = "\n" + old[old.index(NOTES_HEADING) :]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text + notes)


def main(argv: list[str] | None = None) -> None:
    """Command line: run the benchmark, print the table, optionally write it to a file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", help="also write the Markdown table to this file")
    args = parser.parse_args(argv)
    # Cold first: the fork server starts (and imports the libraries) with the first pool.
    cold = cold_start(max_workers=args.workers)
    r = run(n_jobs=args.jobs, max_workers=args.workers)
    r["start_fork"] = worker_start("forkserver")
    r["start_spawn"] = worker_start("spawn")
    r["emit_seconds"] = emit_cost()
    text = report(r, cold)
    print(text)
    if args.out:
        write_keeping_notes(args.out, text)
    if r["done"] != r["n_jobs"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
