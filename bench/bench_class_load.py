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
limit per address; the one per session stays).  ``--dask`` starts ``dask scheduler``
(port 8786, no dashboard) and two ``dask worker --nthreads 1`` processes, and sets
``CSVM_DASK_SCHEDULER``.  Server CPU and memory are those of the ``streamlit run``
process and its children (the pool's workers), sampled every second with psutil; the
peaks of the server process alone and of its children (with their largest number) are
printed under the table, so that a memory peak can be told apart: many worker processes
(running, warm, frozen for a fair share) or the server's own records and sessions.

Identical Train jobs are computed once (:mod:`csvm.jobs.shared`): the class's first Start
computes the three jobs (and the ablation that follows), later students watch them or get
the finished results.
``CSVM_SHARED_RESULTS=0`` keeps no finished result (only running work is shared).
Figures, not assertions.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import re
import socket
import statistics
import subprocess
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
_RESULT = re.compile(r"K-CSVM: [\d.]+\s% test")
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


def _sample(pid: int, stop: threading.Event, cpu: list, rss: list, split: list) -> None:
    """CPU % (of one core) and RSS (MB) of the server and its children, every second;
    ``split`` gets (server RSS MB, children RSS MB, number of children) per sample."""
    root = psutil.Process(pid)
    seen: dict[int, psutil.Process] = {}
    while not stop.wait(1.0):
        try:
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            return
        total_cpu, total_rss, own = 0.0, 0, 0
        for p in procs:
            p = seen.setdefault(p.pid, p)
            try:
                total_cpu += p.cpu_percent(None)
                size = p.memory_info().rss
            except psutil.Error:
                continue
            total_rss += size
            own = size if p.pid == pid else own
        cpu.append(total_cpu)
        rss.append(total_rss / 2**20)
        split.append((own / 2**20, (total_rss - own) / 2**20, len(procs) - 1))


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@contextlib.contextmanager
def _cluster(enabled: bool, port: int = 8786, preload: bool = True):
    """``dask scheduler`` and two ``dask worker --nthreads 1``, as the README starts them;
    yields the scheduler's address (None when not ``enabled``).

    Processes of their own, not a LocalCluster in this one: here the scheduler shared a
    GIL with the sixty students' websocket threads, and every event a cluster job sends
    passes through it.
    """
    if not enabled:
        yield None
        return
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    address = f"tcp://127.0.0.1:{port}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    procs = [
        subprocess.Popen(
            ["dask", "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
            **quiet,
        )
    ]
    try:
        deadline = time.monotonic() + 60
        while not _listening(port):
            if time.monotonic() > deadline or procs[0].poll() is not None:
                raise RuntimeError("the dask scheduler did not start")
            time.sleep(0.2)
        worker = ["dask", "worker", address, "--nthreads", "1", "--no-dashboard"]
        if preload:
            worker += ["--preload", "csvm.jobs.dask_preload"]
        procs += [subprocess.Popen([*worker, "--name", f"w{i}"], **quiet) for i in (1, 2)]
        from distributed import Client

        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=120)
        yield address
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            proc.wait(30)


def run(args: argparse.Namespace) -> dict:
    env = {
        "CSVM_PER_ADDRESS_JOBS": "0",
        "CSVM_RERUNS_PER_ADDRESS": "0",
        "CSVM_MAX_WORKERS": str(args.workers),
    }
    with _cluster(args.dask, preload=not args.cold_workers) as scheduler:
        if scheduler is not None:
            env["CSVM_DASK_SCHEDULER"] = scheduler
        with server(args.port, env, False) as (url, proc, _):
            times: list[float] = []
            errors: list[str] = []
            cpu: list[float] = []
            rss: list[float] = []
            split: list[tuple[float, float, int]] = []
            stop = threading.Event()
            sampler = threading.Thread(target=_sample, args=(proc.pid, stop, cpu, rss, split))
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
    return {
        "times": times,
        "errors": errors,
        "cpu": cpu,
        "rss": rss,
        "split": split,
        "load": load,
        "wall": wall,
    }


def _q(values: list[float], q: float) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]:.1f}"


def report(args: argparse.Namespace, r: dict) -> None:
    where = "Dask (scheduler + 2 workers × 1 thread)" if args.dask else "local pool"
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
    split = r["split"] or [(0.0, 0.0, 0)]
    print(
        f"\npeaks: server process {max(s[0] for s in split):.0f} MB, its children "
        f"{max(s[1] for s in split):.0f} MB, at most {max(s[2] for s in split)} children "
        f"(workers, warm spares, the fork server and the resource tracker)"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--spread", type=float, default=60.0, help="Start within (s)")
    parser.add_argument("--timeout", type=float, default=600.0, help="lost after (s)")
    parser.add_argument("--workers", type=int, default=2, help="CSVM_MAX_WORKERS")
    parser.add_argument(
        "--dask", action="store_true", help="a scheduler and 2 workers, processes of their own"
    )
    parser.add_argument(
        "--cold-workers",
        action="store_true",
        help="start the Dask workers without --preload csvm.jobs.dask_preload (as before)",
    )
    parser.add_argument("--port", type=int, default=8691)
    args = parser.parse_args(argv)
    report(args, run(args))


if __name__ == "__main__":
    main()
