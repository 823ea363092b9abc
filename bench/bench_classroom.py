"""A simulated class against one :class:`csvm.jobs.JobPool`: does any run get lost?

Run from the repository root (about three minutes)::

    python -m bench.bench_classroom --out docs/bench_jobs.md

Thirty sessions, each a thread with its own owner id, act as browser tabs do on the Train
page: press Start (the classroom run: the K-CSVM, the plain SVM and the small CNN of
:class:`csvm.runs.config.RunConfig`'s defaults, three jobs), refresh once a second (a heartbeat
and a poll of the run's jobs) until the run ends, read it, wait, and press Start again.

* 20 "steady" sessions do just that;
* 5 "impatient" ones press Start again 1-3 s after each Start (Stop of the running run,
  then a new one), four times, before going steady;
* 5 "leaving" ones close their tab a few seconds after their first Start (stop polling).

It prints: runs and jobs completed, jobs lost (a job of a session still open that polls
as None, or ends other than "done" without its owner stopping it: must be 0), queue places
seen, the latency of a page refresh and of one poll (p50/p95), Stop latency (Stop to
"stopped" on the next refresh, p95), Start to the CSVM's first event (p50/p95), and the
server's resident memory at start, peak and end.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

COMMAND = "python -m bench.bench_classroom --out docs/bench_jobs.md"
FINAL = ("done", "error", "stopped")
MODELS = ("csvm", "svm", "cnn")


def rss_mb(pid: int | str = "self") -> float:
    """Resident memory of a process in MB (/proc; 0 where unavailable)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


@dataclass
class Tally:
    """Everything the sessions measured, shared under a lock."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    refresh_ms: list[float] = field(default_factory=list)
    poll_ms: list[float] = field(default_factory=list)
    stop_ms: list[float] = field(default_factory=list)
    first_event_s: list[float] = field(default_factory=list)
    places: list[int] = field(default_factory=list)
    phases: Counter = field(default_factory=Counter)
    runs_done: int = 0
    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> what we know
    lost: list[str] = field(default_factory=list)
    quota_refusals: int = 0


class Session(threading.Thread):
    """One browser tab."""

    def __init__(self, pool, kind: str, tally: Tally, until: float, seed: int, closing):
        super().__init__(name=f"session-{kind}-{seed}", daemon=True)
        self.pool, self.kind, self.tally, self.until = pool, kind, tally, until
        self.owner = uuid.uuid4().hex
        self.rng = random.Random(seed)
        self.left = False
        self.closing = closing  # set once the end-of-class check is over
        self.finished = threading.Event()  # this tab has stopped pressing Start
        self.group = ""

    def idle(self, seconds: float) -> None:
        """An open tab with no run going still sends its heartbeat each second."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.pool.heartbeat(self.owner)
            time.sleep(1.0)

    def start_run(self) -> dict[str, str] | None:
        from bench import bench_classroom as me
        from csvm.jobs import QuotaExceeded
        from csvm.runs.config import RunConfig

        group = self.group = uuid.uuid4().hex[:8]
        jobs = {}
        try:
            for model in MODELS:
                jobs[model] = self.pool.submit(
                    me.classroom_job,
                    {"config": RunConfig().to_dict(), "model": model},
                    name=f"{group}:{model}",
                    group=group,
                    owner=self.owner,
                )
        except QuotaExceeded:
            with self.tally.lock:
                self.tally.quota_refusals += 1
        now = time.perf_counter()
        with self.tally.lock:
            for model, job in jobs.items():
                self.tally.jobs[job] = {"owner": self, "model": model, "submitted": now}
        return jobs or None

    def refresh(self, jobs: dict[str, str]) -> dict[str, Any]:
        """What the page does each second: a heartbeat, then a poll of each job."""
        t0 = time.perf_counter()
        self.pool.heartbeat(self.owner)
        views = {}
        for model, job in jobs.items():
            p0 = time.perf_counter()
            views[model] = self.pool.poll(job, viewer=self.owner)
            with self.tally.lock:
                self.tally.poll_ms.append((time.perf_counter() - p0) * 1e3)
        now = time.perf_counter()
        with self.tally.lock:
            self.tally.refresh_ms.append((now - t0) * 1e3)
            for model, job in jobs.items():
                view, info = views[model], self.tally.jobs[job]
                if view is None:
                    if not info.get("cancelled"):
                        self.tally.lost.append(f"{job} polled as None")
                    continue
                if view.place:
                    self.tally.places.append(view.place)
                self.tally.phases[view.phase.split(" (")[0]] += 1
                if model == "csvm" and view.n_events and "first_event" not in info:
                    info["first_event"] = now - info["submitted"]
                    self.tally.first_event_s.append(info["first_event"])
                info["state"] = view.state
        return views

    def stop_run(self, jobs: dict[str, str]) -> None:
        """Stop, then the refresh that shows it; the latency is until all read "stopped"."""
        t0 = time.perf_counter()
        with self.tally.lock:
            for job in jobs.values():
                self.tally.jobs[job]["cancelled"] = True
        self.pool.cancel_owner(self.owner, group=self.group)
        while True:
            views = [self.pool.poll(j, viewer=self.owner) for j in jobs.values()]
            if all(v is None or v.state in FINAL for v in views):
                break
            time.sleep(0.01)
        with self.tally.lock:
            self.tally.stop_ms.append((time.perf_counter() - t0) * 1e3)

    def run(self) -> None:
        try:
            self.press_start_until_the_end()
        finally:
            self.finished.set()
        while not self.left and not self.closing.is_set():
            self.idle(1.0)  # still open while the results are checked

    def press_start_until_the_end(self) -> None:
        time.sleep(self.rng.uniform(0, 10))  # the class does not press Start in unison
        restarts = 4 if self.kind == "impatient" else 0
        while time.monotonic() < self.until:
            jobs = self.start_run()
            if jobs is None:
                self.idle(1.0)
                continue
            started = time.monotonic()
            while True:
                views = self.refresh(jobs)
                if all(v is None or v.state in FINAL for v in views.values()):
                    with self.tally.lock:
                        self.tally.runs_done += 1
                    break
                if self.kind == "leaving" and time.monotonic() - started > 3:
                    self.left = True  # the tab closes: no more polls or heartbeats
                    return
                if restarts and time.monotonic() - started > self.rng.uniform(1, 3):
                    restarts -= 1
                    self.stop_run(jobs)
                    break
                time.sleep(1.0)
            if not restarts:
                self.idle(self.rng.uniform(3, 10))  # reading the results


def classroom_job(emit, config: dict[str, Any], model: str) -> dict[str, Any]:
    """The job a Start submits (the explorer's own target), importable by the workers."""
    from csvm.runs.targets import run_model

    return run_model(emit, config, model)


def check_end_of_class(pool, tally: Tally) -> Counter:
    """Every job of a tab still open must have ended "done" (or been stopped by it) and
    still be on the server; returns the states of the closed tabs' jobs."""
    for job, info in tally.jobs.items():
        if info["owner"].left or info.get("cancelled"):
            continue
        view = pool.get(job)
        if view is None:
            tally.lost.append(f"{job} forgotten")
        elif view.state != "done":
            tally.lost.append(f"{job} ended {view.state}: {view.error.splitlines()[:1]}")
    left_jobs = [j for j, i in tally.jobs.items() if i["owner"].left]
    return Counter(
        (pool.get(j).state if pool.get(j) is not None else "forgotten") for j in left_jobs
    )


def run(sessions: int, seconds: float, lease: float, budget: str) -> dict[str, Any]:
    """Run the class; returns the figures."""
    from bench.bench_jobs import wait_for_spares
    from csvm.jobs import JobPool, PoolSettings

    budget_bytes = PoolSettings.from_env({"CSVM_FINISHED_BYTES": budget}).finished_bytes_budget
    settings = PoolSettings.from_env(lease_seconds=lease, finished_bytes_budget=budget_bytes)
    pool = JobPool(
        settings=settings,
        preload=("numpy", "sklearn.svm", "csvm.runs.targets", "explorer.worker_preload"),
    )
    memory = {"start": rss_mb()}
    peak = [memory["start"]]
    done = threading.Event()

    def watch_memory() -> None:
        while not done.wait(0.5):
            peak.append(rss_mb())

    threading.Thread(target=watch_memory, daemon=True).start()
    # The fork server and the spares start, as on a server that has been up a while.
    wait_for_spares(pool, settings.max_workers)
    tally = Tally()
    until = time.monotonic() + seconds
    kinds = ["impatient"] * 5 + ["leaving"] * 5
    kinds += ["steady"] * max(0, sessions - len(kinds))
    closing = threading.Event()
    threads = [Session(pool, k, tally, until, i, closing) for i, k in enumerate(kinds[:sessions])]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.finished.wait(seconds + 120)
    wall = time.perf_counter() - t0
    left_states = check_end_of_class(pool, tally)
    stats = pool.stats()
    final = Counter(
        (pool.get(j).state if pool.get(j) is not None else "forgotten") for j in tally.jobs
    )
    closing.set()
    for t in threads:
        t.join(5)
    pool.shutdown()
    done.set()
    memory["peak"] = max(peak)
    memory["end"] = rss_mb()

    return figures(
        tally, kinds[:sessions], seconds, wall, settings, final, left_states, stats, memory
    )


def figures(tally, kinds, seconds, wall, settings, final, left_states, stats, memory):
    """The figures of a finished class, as :func:`report` reads them."""

    def pct(values, q):
        return float(np.percentile(values, q)) if values else float("nan")

    return {
        "sessions": len(kinds),
        "kinds": Counter(kinds),
        "seconds": seconds,
        "wall": wall,
        "workers": settings.max_workers,
        "lease": settings.lease_seconds,
        "budget_mb": settings.finished_bytes_budget / 2**20,
        "runs_done": tally.runs_done,
        "jobs": len(tally.jobs),
        "final": final,
        "left_states": left_states,
        "lost": tally.lost,
        "quota_refusals": tally.quota_refusals,
        "place_max": max(tally.places, default=0),
        "place_p50": pct(tally.places, 50),
        "phases": tally.phases,
        "refresh_p50": pct(tally.refresh_ms, 50),
        "refresh_p95": pct(tally.refresh_ms, 95),
        "poll_p50": pct(tally.poll_ms, 50),
        "poll_p95": pct(tally.poll_ms, 95),
        "polls": len(tally.poll_ms),
        "stop_p50": pct(tally.stop_ms, 50),
        "stop_p95": pct(tally.stop_ms, 95),
        "stops": len(tally.stop_ms),
        "first_p50": pct(tally.first_event_s, 50),
        "first_p95": pct(tally.first_event_s, 95),
        "evicted": stats["evicted"],
        "finished_mb": stats["finished_bytes"] / 2**20,
        "memory": memory,
    }


def report(r: dict[str, Any]) -> str:
    """Markdown table of the figures."""
    kinds = ", ".join(f"{n} {k}" for k, n in r["kinds"].items())
    final = ", ".join(f"{k} {n}" for k, n in sorted(r["final"].items()))
    left = ", ".join(f"{k} {n}" for k, n in sorted(r["left_states"].items()))
    phases = ", ".join(f"{k} {n}" for k, n in r["phases"].most_common())
    m = r["memory"]
    rows = [
        ("sessions", f"{r['sessions']} ({kinds})"),
        ("activity / wall time", f"{r['seconds']:.0f} s / {r['wall']:.0f} s"),
        (
            "workers / lease / finished-job budget",
            f"{r['workers']} / {r['lease']:.0f} s / {r['budget_mb']:.0f} MB",
        ),
        ("runs completed (3 jobs each)", f"{r['runs_done']}"),
        ("jobs submitted; their final states", f"{r['jobs']}; {final}"),
        ("**jobs lost**", f"**{len(r['lost'])}**"),
        ("jobs of closed tabs", left or "none"),
        ("Start refused by the per-session cap", f"{r['quota_refusals']}"),
        ("queue place seen: p50 / max", f"{r['place_p50']:.0f} / {r['place_max']}"),
        ("phases seen by polls", phases),
        (
            "page refresh (heartbeat + 3 polls) p50 / p95",
            f"{r['refresh_p50']:.2f} / {r['refresh_p95']:.2f} ms",
        ),
        (
            "one poll p50 / p95",
            f"{r['poll_p50']:.2f} / {r['poll_p95']:.2f} ms ({r['polls']} polls)",
        ),
        (
            "Stop to all 3 jobs 'stopped' p50 / p95",
            f"{r['stop_p50']:.1f} / {r['stop_p95']:.1f} ms ({r['stops']} stops)",
        ),
        (
            "Start to the CSVM's first event p50 / p95",
            f"{r['first_p50']:.1f} / {r['first_p95']:.1f} s",
        ),
        (
            "finished jobs forgotten (budget); kept at end",
            f"{r['evicted']}; {r['finished_mb']:.1f} MB",
        ),
        (
            "server RSS start / peak / end",
            f"{m['start']:.0f} / {m['peak']:.0f} / {m['end']:.0f} MB",
        ),
    ]
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [
        "# Classroom benchmark",
        "",
        f"Command: `{COMMAND}`",
        "",
        f"Machine: {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} at the end; "
        f"run at {stamp}.",
        "",
        "| figure | value |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in rows],
        "",
    ]
    if r["lost"]:
        lines += ["Lost:", "", *[f"- {e}" for e in r["lost"][:20]], ""]
    return "\n".join(lines)


SECTION = "# Classroom benchmark"


def write_section(path: str, text: str) -> None:
    """Put the table in ``path`` as its own section, replacing an earlier one."""
    old = ""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            old = fh.read()
    if SECTION in old:
        head, rest = old.split(SECTION, 1)
        # The section ends where the next top-level heading starts.
        tail = rest.split("\n# ", 1)[1] if "\n# " in rest else ""
        old = head.rstrip() + ("\n\n# " + tail if tail else "")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(old.rstrip() + "\n\n" + text if old.strip() else text)


def main(argv: list[str] | None = None) -> None:
    """Command line: run the class, print the table, optionally add it to a file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=150.0, help="activity before the end")
    parser.add_argument("--lease", type=float, default=30.0)
    parser.add_argument("--budget", default="16M", help="finished-job byte budget")
    parser.add_argument("--out", help="also write the table to this Markdown file")
    parser.add_argument(
        "--chromium",
        type=int,
        nargs="+",
        metavar="N",
        help="instead: N real Chromium sessions against a fresh `streamlit run app.py` "
        "(one class per N), see bench/_chromium_class.py",
    )
    args = parser.parse_args(argv)
    if args.chromium:
        from bench._chromium_class import run_class, table

        rows = []
        for n in args.chromium:
            rows.append(run_class(n))
            print(rows[-1], flush=True)
        print(table(rows))
        return
    r = run(args.sessions, args.seconds, args.lease, args.budget)
    text = report(r)
    print(text)
    if args.out:
        write_section(args.out, text)
    if r["lost"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
