"""A mischievous class against a real server (issue 37 rows 2 and 3), timed.

    nice -n 10 python bench/bench_flood.py flood --clients 2          # reruns flood
    nice -n 10 python bench/bench_flood.py flood --clients 2 --unlimited --fast-reruns
    nice -n 10 python bench/bench_flood.py share --hostile 24         # fresh cookies
    nice -n 10 python bench/bench_flood.py share --hostile 24 --per-address 0

``flood``: ``--clients`` websocket sessions from one address (127.0.0.2) each send
``--rate`` reruns a second that change a number input, for ``--seconds``.  Meanwhile a
victim on another address watches a live run (its fragment's ticks are timed), a fresh
page from a third address is loaded (timed), ``/_stcore/health`` is asked every half
second (timed), and the server's memory and log are read before and after.
``--unlimited`` turns the rerun limit off (``CSVM_RERUNS_PER_*=0``) and ``--fast-reruns``
puts Streamlit's ``runner.fastReruns`` back on: together, the server as it was.

``share``: ``--hostile`` sessions from one address (127.0.0.5), each with a fresh owner
cookie, press Start on a long run; then a new student from another address presses Start
and the seconds to its first step are timed (pace "live").  ``--per-address 0`` counts by
browser only (``CSVM_PER_ADDRESS_JOBS=0``): the fair share as it was.

Each mode starts its own ``streamlit run app.py`` (default port 8667) and prints one table
row; figures, not assertions (the behaviour is tests/app/test_hostile_clients.py's).
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from anywhere

from tests._ws_client import StreamlitClient, flood, http_get  # noqa: E402

LONG = "n_iter=1000&n_train=400&pace=live"
_STEP = re.compile(r"K-CSVM: step (\d+) of")


def _step(text: str) -> int:
    return max((int(s) for s in _STEP.findall(text)), default=0)


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@contextmanager
def server(port: int, env: dict[str, str], fast_reruns: bool):
    """``streamlit run app.py`` on ``port``; yields (url, process, log path)."""
    log_path = Path(tempfile.mkstemp(prefix="bench-flood-", suffix=".log")[1])
    args = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"]
    args += ["--server.port", str(port), "--server.address", "127.0.0.1"]
    if fast_reruns:
        args += ["--runner.fastReruns", "true"]
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            args,
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if http_get(url, "/_stcore/health", timeout=2)[0] == 200:
                    break
            except OSError:
                time.sleep(0.3)
        yield url, proc, log_path
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def _timed(fn, *args) -> float | str:
    started = time.perf_counter()
    try:
        fn(*args)
    except Exception as exc:  # noqa: BLE001 - a timeout is a result here
        return f"failed ({type(exc).__name__})"
    return time.perf_counter() - started


def _health(url: str) -> None:
    http_get(url, "/_stcore/health", source="127.0.0.7", timeout=90)


def _fresh_page(url: str) -> None:
    with StreamlitClient(url, source="127.0.0.4", page="train").open(timeout=90) as client:
        page = client.rerun(timeout=90)
        page.widget("button", "Start")  # the whole page was drawn (LookupError if not)


def _victim(url: str, stop: threading.Event, ticks: list[float]) -> None:
    """A student on another address watching a live run; each tick's seconds."""
    with StreamlitClient(url, source="127.0.0.3", page="train", query=LONG).open() as client:
        client.press("Start", client.rerun())
        while not stop.is_set():
            time.sleep(min(client.auto_reruns.values(), default=1.0))
            started = time.perf_counter()
            try:
                client.tick(timeout=90)
            except TimeoutError:
                ticks.append(float("inf"))
                return
            ticks.append(time.perf_counter() - started)


def run_flood(args: argparse.Namespace) -> None:
    env = {"CSVM_MAX_WORKERS": "2"}
    if args.unlimited:
        env |= {"CSVM_RERUNS_PER_SESSION": "0", "CSVM_RERUNS_PER_ADDRESS": "0"}
    with server(args.port, env, args.fast_reruns) as (url, proc, log_path):
        stop, victim_ticks = threading.Event(), []
        victim = threading.Thread(target=_victim, args=(url, stop, victim_ticks), daemon=True)
        victim.start()
        time.sleep(3)  # the victim's run is going
        rss_before = _rss_mb(proc.pid)
        flooders = [StreamlitClient(url, source="127.0.0.2", page="train").open()]
        flooders += [
            StreamlitClient(url, source="127.0.0.2", page="train").open()
            for _ in range(args.clients - 1)
        ]
        widgets = [c.rerun().widget("number_input", "Iterations").widget_id for c in flooders]
        flood_stop = threading.Event()
        threads = [
            threading.Thread(target=flood, args=(c, w, args.rate, flood_stop), daemon=True)
            for c, w in zip(flooders, widgets, strict=True)
        ]
        for t in threads:
            t.start()
        time.sleep(2)
        health: list = []
        fresh: list = []
        loader = threading.Thread(target=lambda: fresh.append(_timed(_fresh_page, url)))
        loader.start()
        deadline = time.monotonic() + args.seconds - 2
        while time.monotonic() < deadline:
            health.append(_timed(_health, url))
            time.sleep(0.5)
        loader.join(120)
        flood_stop.set()
        rss_after = _rss_mb(proc.pid)
        after = _timed(_health, url)  # the first health once the flood has stopped
        stop.set()
        victim.join(30)
        for client in flooders:
            client.close()
        log = log_path.read_text()
    _flood_row(args, health, fresh, victim_ticks, after, rss_before, rss_after, log)


def _fmt(value) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def _flood_row(args, health, fresh, ticks, after, rss_before, rss_after, log) -> None:
    ok = [h for h in health if isinstance(h, float)]
    races = log.count("changed size during iteration") + log.count("keys changed during")
    limited = "off" if args.unlimited else "on"
    fast = "on" if args.fast_reruns else "off"
    print(
        "| flooders × rate | limit | fastReruns | health median / max (s) | fresh page (s) "
        "| victim tick median / max (s) | health after | server RSS (MB) | races in log |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    print(
        f"| {args.clients} × {args.rate:g}/s, {args.seconds:g} s | {limited} | {fast} "
        f"| {_fmt(statistics.median(ok)) if ok else '-'} / {_fmt(max(ok)) if ok else '-'}"
        f"{'' if len(ok) == len(health) else f' ({len(health) - len(ok)} failed)'} "
        f"| {_fmt(fresh[0]) if fresh else 'not loaded'} "
        f"| {_fmt(statistics.median(ticks)) if ticks else '-'} / {_fmt(max(ticks, default=0))} "
        f"({len(ticks)} ticks) | {_fmt(after)} | {rss_before:.0f} → {rss_after:.0f} | {races} |"
    )


def _hostile(url: str, index: int) -> tuple[StreamlitClient, str]:
    client = StreamlitClient(url, source="127.0.0.5", page="train", query=LONG).open()
    text = client.press("Start", client.rerun()).texts()
    if "your network address already have" in text:
        return client, "refused (address)"
    if "already has" in text:
        return client, "refused (browser)"
    return client, "started"


def run_share(args: argparse.Namespace) -> None:
    env = {"CSVM_MAX_JOB_SECONDS": "900"}
    if args.per_address is not None:
        env["CSVM_PER_ADDRESS_JOBS"] = str(args.per_address)
    with server(args.port, env, fast_reruns=False) as (url, proc, _):
        hostile = [_hostile(url, i) for i in range(args.hostile)]
        outcomes = [o for _, o in hostile]
        time.sleep(args.settle)  # the hostile runs share the workers for a while
        load = os.getloadavg()[0]
        stopped = sum(
            1 for p in Path("/proc").iterdir() if p.name.isdigit() and _stopped(p, proc.pid)
        )
        with StreamlitClient(url, source="127.0.0.6", page="train", query=LONG).open() as s:
            started = time.perf_counter()
            s.press("Start", s.rerun())
            try:
                s.watch(lambda t: _step(t) >= 1, timeout=args.timeout)
                first = time.perf_counter() - started
            except TimeoutError:
                first = f"> {args.timeout:g}"
        for client, _ in hostile:
            client.close()
    per = "browser only" if args.per_address == 0 else f"address ({args.per_address or 'default'})"
    print(
        "| hostile sessions | counted by | started / refused | workers frozen before "
        "| new student's first step (s) | load |"
    )
    print("|---|---|---|---|---|---|")
    print(
        f"| {args.hostile} | {per} | {outcomes.count('started')} / "
        f"{len(outcomes) - outcomes.count('started')} | {stopped} | {_fmt(first)} | {load:.1f} |"
    )


def _stopped(entry: Path, session: int) -> bool:
    try:
        fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return False
    return int(fields[3]) == session and fields[0] == "T"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8667)
    sub = parser.add_subparsers(dest="mode", required=True)
    f = sub.add_parser("flood", help="websocket sessions sending reruns fast")
    f.add_argument("--clients", type=int, default=2)
    f.add_argument("--rate", type=float, default=200.0, help="reruns a second per client")
    f.add_argument("--seconds", type=float, default=20.0)
    f.add_argument("--unlimited", action="store_true", help="no rerun limit")
    f.add_argument("--fast-reruns", action="store_true", help="runner.fastReruns on")
    s = sub.add_parser("share", help="many fresh cookies from one address, then a newcomer")
    s.add_argument("--hostile", type=int, default=24)
    s.add_argument("--per-address", type=int, default=None, help="CSVM_PER_ADDRESS_JOBS")
    s.add_argument("--settle", type=float, default=10.0, help="seconds before the newcomer")
    s.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args(argv)
    (run_flood if args.mode == "flood" else run_share)(args)


if __name__ == "__main__":
    main()
