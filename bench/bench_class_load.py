"""A class without browsers: students press Start on the Classroom preset, timed (issue 34).

    nice -n 10 python bench/bench_class_load.py --students 60               # local pool
    nice -n 10 python bench/bench_class_load.py --students 60 --dask        # 2-worker cluster

Each student is a websocket session speaking Streamlit's protocol
(:class:`tests._ws_client.StreamlitClient`, no Chromium) that opens the Train page with the
first preset's settings in its URL ("Shapes: filters find the bars", pace "live"), and
presses Start at a random moment within ``--spread`` seconds; the seconds from Start to
the K-CSVM's result headline ("K-CSVM: 97.0 % test, ...") are timed.  A student whose
result has not come within ``--timeout`` counts as lost.

All students share one network address (127.0.0.9: a classroom behind one NAT), so the
server runs with the documented overrides for that case: ``CSVM_PER_ADDRESS_JOBS=0``
(jobs counted per browser, not per address) and ``CSVM_RERUNS_PER_ADDRESS=0`` (no rerun
limit per address; the one per session stays).  ``--dask`` starts a LocalCluster of two
worker processes with one thread each (scheduler on port 8786, no dashboard) and sets
``CSVM_DASK_SCHEDULER``.  Server CPU and memory are those of the ``streamlit run``
process and its children (the pool's workers), sampled every second with psutil.
Figures, not assertions.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from anywhere

import psutil  # noqa: E402

from bench.bench_flood import server  # noqa: E402
from tests._ws_client import StreamlitClient  # noqa: E402

PRESET = (
    "dataset=shapes&class_a=horizontal&class_b=vertical&n_train=100&gamma=1.0&eta=0.3&C=1.0"
    "&n_iter=40&n_filters=4&layers=5x5x4-abs-max24&filter_init=zero-mean&tune_baselines=true"
    "&pace=live"
)
_RESULT = re.compile(r"K-CSVM: [\d.]+ % test")
NAT = "127.0.0.9"


def _student(url: str, delay: float, timeout: float, out: list, errors: list) -> None:
    time.sleep(delay)
    try:
        with StreamlitClient(url, source=NAT, page="train", query=PRESET).open(timeout=120) as c:
            page = c.rerun(timeout=120)
            started = time.perf_counter()
            text = c.press("Start", page, timeout=120).texts()
            if "already has" in text or "your network address" in text:
                errors.append("refused")
                return
            c.watch(lambda t: _RESULT.search(t) is not None, timeout=timeout)
            out.append(time.perf_counter() - started)
    except Exception as exc:  # noqa: BLE001 - a lost student is a result here
        errors.append(type(exc).__name__)


def _sample(pid: int, stop: threading.Event, cpu: list, rss: list) -> None:
    """CPU % (of one core) and RSS (MB) of the server and its children, every second."""
    root = psutil.Process(pid)
    seen: dict[int, psutil.Process] = {}
    while not stop.wait(1.0):
        try:
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            return
        total_cpu, total_rss = 0.0, 0
        for p in procs:
            p = seen.setdefault(p.pid, p)
            try:
                total_cpu += p.cpu_percent(None)
                total_rss += p.memory_info().rss
            except psutil.Error:
                pass
        cpu.append(total_cpu)
        rss.append(total_rss / 2**20)


def _cluster(enabled: bool):
    if not enabled:
        return None
    from distributed import LocalCluster

    return LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        scheduler_port=8786,
        dashboard_address=None,
        env={"PYTHONPATH": str(ROOT)},
    )


def run(args: argparse.Namespace) -> dict:
    cluster = _cluster(args.dask)
    env = {
        "CSVM_PER_ADDRESS_JOBS": "0",
        "CSVM_RERUNS_PER_ADDRESS": "0",
        "CSVM_MAX_WORKERS": str(args.workers),
    }
    if cluster is not None:
        env["CSVM_DASK_SCHEDULER"] = cluster.scheduler_address
    try:
        with server(args.port, env, False) as (url, proc, _):
            times: list[float] = []
            errors: list[str] = []
            cpu: list[float] = []
            rss: list[float] = []
            stop = threading.Event()
            sampler = threading.Thread(target=_sample, args=(proc.pid, stop, cpu, rss))
            sampler.start()
            rng = random.Random(0)
            threads = [
                threading.Thread(
                    target=_student,
                    args=(url, rng.uniform(0, args.spread), args.timeout, times, errors),
                    daemon=True,
                )
                for _ in range(args.students)
            ]
            t0 = time.monotonic()
            for t in threads:
                t.start()
            for t in threads:
                t.join(args.spread + args.timeout + 300)
            wall = time.monotonic() - t0
            stop.set()
            sampler.join()
            load = os.getloadavg()
    finally:
        if cluster is not None:
            cluster.close()
    return {"times": times, "errors": errors, "cpu": cpu, "rss": rss, "load": load, "wall": wall}


def _q(values: list[float], q: float) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]:.1f}"


def report(args: argparse.Namespace, r: dict) -> None:
    where = "Dask, 2 workers × 1 thread" if args.dask else "local pool"
    lost = args.students - len(r["times"])
    why = f" ({', '.join(sorted(set(r['errors'])))})" if r["errors"] else ""
    print(
        "| where | students (Start within) | results / lost | Start → result p50 / p95 / max (s) "
        "| server CPU mean / max (% of a core) | server + workers RSS start → peak (MB) "
        "| load avg 1/5/15 | wall (s) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    cpu, rss = r["cpu"] or [0.0], r["rss"] or [0.0]
    print(
        f"| {where} (CSVM_MAX_WORKERS={args.workers}) | {args.students} ({args.spread:g} s) "
        f"| {len(r['times'])} / {lost}{why} "
        f"| {_q(r['times'], 0.5)} / {_q(r['times'], 0.95)} / {_q(r['times'], 1.0)} "
        f"| {statistics.mean(cpu):.0f} / {max(cpu):.0f} | {rss[0]:.0f} → {max(rss):.0f} "
        f"| {' / '.join(f'{x:.1f}' for x in r['load'])} | {r['wall']:.0f} |"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--spread", type=float, default=60.0, help="Start within (s)")
    parser.add_argument("--timeout", type=float, default=600.0, help="lost after (s)")
    parser.add_argument("--workers", type=int, default=2, help="CSVM_MAX_WORKERS")
    parser.add_argument("--dask", action="store_true", help="a 2-worker LocalCluster")
    parser.add_argument("--port", type=int, default=8691)
    args = parser.parse_args(argv)
    report(args, run(args))


if __name__ == "__main__":
    main()
