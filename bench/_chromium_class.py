"""A class of real Chromium sessions against one fresh ``streamlit run app.py`` server.

Used by ``python -m bench.bench_classroom --chromium 15 20``.  Each session is a browser
context of its own (its own cookies: a student's laptop), opens the Train page with
settings of its own in the link, waits for the page, presses Start and waits for the
comparison table.  Sessions arrive over ``ramp`` seconds, as a class does.

Counted per session:

* **blank**: the page never drew its Start button, or showed a frontend exception;
* **lost**: Start was pressed but no comparison table came within ``patience`` seconds;
* **reset**: a setting the link gave (training images, seed) is not what the page shows
  when the run ends (the URL the page writes back mirrors its settings);
* **result**: seconds from pressing Start to the comparison table.

The server's resident memory (the server and its workers, summed) is sampled each second,
and the CPU seconds of the server (its workers included) and of Chromium are counted.

All the students' pages run here, on the server's own cores, where in a class each renders
on its own laptop; Chromium's processes are therefore reniced to 15 each second, so that
they take the cores only when the server leaves them idle.  The result times still include
the pages' rendering on cores the server shares.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import subprocess
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlparse

from tests._browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, streamlit_server

RESULTS = "Comparison on the same split"
FULL_PANEL = "Download run"
#: The server's process id while a class runs (for a stack dump when a page is lost).
SERVER_PID: list[int] = []
#: Frontend errors a blank page showed in earlier probes.
FATAL = ("cannot be called on an ElementNode", "Unexpected Application Error")


@dataclass
class Session:
    index: int
    blank: bool = False
    lost: bool = False
    reset: list[str] = field(default_factory=list)
    result_s: float | None = None
    partial: bool = False  # the results table came, the full panel (export) did not
    errors: list[str] = field(default_factory=list)


def _processes(column: str) -> tuple[dict[int, list[int]], dict[int, int]]:
    """Every process's children, and one ``ps`` column (``ni``, ``rss``) per process."""
    out = subprocess.run(
        ["ps", "-e", "-o", f"pid=,ppid=,{column}="], capture_output=True, text=True, check=False
    ).stdout
    children: dict[int, list[int]] = {}
    values: dict[int, int] = {}
    for line in out.splitlines():
        p, pp, v = line.split()
        children.setdefault(int(pp), []).append(int(p))
        values[int(p)] = int(v) if v.lstrip("-").isdigit() else 0
    return children, values


def _descendants(children: dict[int, list[int]], roots: list[int]) -> list[int]:
    todo, seen = list(roots), []
    while todo:
        p = todo.pop()
        seen.append(p)
        todo += children.get(p, [])
    return seen


def _tree_cpu_s(pid: int) -> float:
    """CPU seconds of ``pid`` and its descendants, those that ended and were waited for
    included (``cutime``/``cstime``)."""
    children, _ = _processes("ni")
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for p in _descendants(children, [pid]):
        try:
            with open(f"/proc/{p}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            total += sum(int(fields[i]) for i in (11, 12, 13, 14)) / tick
        except (FileNotFoundError, ProcessLookupError, IndexError):
            pass
    return total


def _renice_tree(pid: int, niceness: int, spare: int) -> None:
    """Lower the priority of ``pid``'s descendants (Chromium raises its own browser and
    GPU processes to -8 at start, so a ``nice`` wrapper is not enough); ``spare`` and its
    descendants (the server) are left alone."""
    children, nice = _processes("ni")
    roots = [c for c in children.get(pid, []) if c != spare]
    for p in _descendants(children, roots):
        if nice.get(p) != niceness:
            try:
                os.setpriority(os.PRIO_PROCESS, p, niceness)
            except OSError:
                pass


def _tree_rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and all its descendants, in MB."""
    children, rss = _processes("rss")
    return sum(rss.get(p, 0) for p in _descendants(children, [pid])) / 1024


def _link(url: str, index: int) -> tuple[str, dict[str, str]]:
    """Each student's own settings: a seed and a training size of their own."""
    # Never the defaults (seed 0, 50 images): the page leaves defaults out of its URL.
    settings = {"seed": str(index + 1), "n_train": str(60 + 10 * (index % 6))}
    return url + "/?" + "&".join(f"{k}={v}" for k, v in settings.items()), settings


async def _student(browser, url: str, index: int, patience: float) -> Session:
    s = Session(index)
    context = await browser.new_context(viewport={"width": 1280, "height": 720})
    page = await context.new_page()
    page.on("pageerror", lambda e: s.errors.append(str(e)[:200]))
    link, settings = _link(url, index)
    try:
        await page.goto(link, timeout=120_000)
        start = page.get_by_role("button", name="▶ Start")
        try:
            await start.wait_for(timeout=180_000)
        except Exception:  # noqa: BLE001 - a page that never draws is what we count
            s.blank = True
            return s
        await page.wait_for_timeout(2000)  # a student reads before pressing Start
        t0 = time.monotonic()
        # Streamlit writes the URL after a click: do not wait for it as a navigation.
        await start.click(no_wait_after=True, timeout=180_000)
        try:
            await page.get_by_text(RESULTS).first.wait_for(timeout=patience * 1000)
            s.result_s = time.monotonic() - t0
            try:  # the whole results panel (its export button), not only the table
                await page.get_by_text(FULL_PANEL).first.wait_for(timeout=60_000)
            except Exception:  # noqa: BLE001
                s.partial = True
                main = page.locator("[data-testid='stMain']")
                body = await main.inner_text()
                s.errors.append("partial: " + " | ".join(body.split("\n")[-30:])[:1500])
                await page.screenshot(path=str(ARTIFACTS / f"class-partial-{index}.png"))
        except Exception:  # noqa: BLE001
            s.lost = True
            # What the page said when it gave up, and what the server's threads were doing.
            main = page.locator("[data-testid='stMain']")
            body = await (main.inner_text() if await main.count() else page.inner_text("body"))
            s.errors.append("lost: " + " | ".join(body.split("\n")[:40])[:1500])
            if SERVER_PID and shutil.which("py-spy"):
                dump = subprocess.run(
                    ["py-spy", "dump", "--pid", str(SERVER_PID[0])],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                (ARTIFACTS / f"class-lost-{index}-server.txt").write_text(dump.stdout)
            ARTIFACTS.mkdir(exist_ok=True)
            await page.screenshot(path=str(ARTIFACTS / f"class-lost-{index}.png"))
        query = parse_qs(urlparse(page.url).query)
        s.reset = [k for k, v in settings.items() if query.get(k, [None])[-1] != v]
    except Exception as exc:  # noqa: BLE001 - a session that broke is counted, not fatal
        s.lost = True
        s.errors.append(f"session {index}: {type(exc).__name__}: {str(exc)[:200]}")
    finally:
        s.blank = s.blank or any(f in e for e in s.errors for f in FATAL)
        await context.close()
    return s


async def _class(url: str, n: int, ramp: float, patience: float) -> list[Session]:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)

        async def arrive(i: int) -> Session:
            await asyncio.sleep(ramp * i / max(n - 1, 1))
            return await _student(browser, url, i, patience)

        sessions = await asyncio.gather(*(arrive(i) for i in range(n)))
        await browser.close()
    return list(sessions)


def run_class(n: int, ramp: float = 20.0, patience: float = 400.0) -> dict:
    """``n`` Chromium sessions against a fresh server; the figures of the table."""
    pid: list[int] = []
    peak = [0.0]
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / f"class-server-{n}.log", "w")  # noqa: SIM115 - closed below
    with log, streamlit_server(log=log, pid=pid) as url:
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(1.0):
                peak[0] = max(peak[0], _tree_rss_mb(pid[0]))
                _renice_tree(os.getpid(), 15, spare=pid[0])  # the pages, not the server

        SERVER_PID[:] = pid
        start_rss = _tree_rss_mb(pid[0])
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        t0 = time.monotonic()
        server_before, all_before = _tree_cpu_s(pid[0]), _tree_cpu_s(os.getpid())
        sessions = asyncio.run(_class(url, n, ramp, patience))
        wall = time.monotonic() - t0
        cpu = {"server": _tree_cpu_s(pid[0]) - server_before}
        # Everything this process started (Chromium among it) less the server.
        cpu["clients"] = _tree_cpu_s(os.getpid()) - all_before - cpu["server"]
        stop.set()
        end_rss = _tree_rss_mb(pid[0])
    times = sorted(s.result_s for s in sessions if s.result_s is not None)
    q = statistics.quantiles(times, n=20, method="inclusive") if len(times) >= 2 else times * 19

    return {
        "sessions": n,
        "blank": sum(s.blank for s in sessions),
        "lost": sum(s.lost and not s.blank for s in sessions),
        "reset": sum(bool(s.reset) for s in sessions),
        "partial": sum(s.partial for s in sessions),
        "p50": statistics.median(times) if times else float("nan"),
        "p95": q[18] if times else float("nan"),
        "max": max(times) if times else float("nan"),
        "rss_start": start_rss,
        "rss_peak": peak[0],
        "rss_end": end_rss,
        "wall": wall,
        "cpu_server": cpu["server"],
        "cpu_clients": cpu["clients"],
        "errors": sorted({e for s in sessions for e in s.errors})[:8],
        "resets": [s.reset for s in sessions if s.reset],
    }


def table(rows: list[dict]) -> str:
    """The Markdown table of :func:`run_class` results."""
    lines = [
        "| sessions | blank pages | lost results | only the table | reset settings | result p50 "
        "| result p95 "
        "| slowest | server memory start → peak → end | CPU: server (workers incl.) / pages |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['sessions']} | {r['blank']} | {r['lost']} | {r['partial']} | {r['reset']} "
            f"| {r['p50']:.1f} s "
            f"| {r['p95']:.1f} s | {r['max']:.1f} s | {r['rss_start']:.0f} → "
            f"{r['rss_peak']:.0f} → {r['rss_end']:.0f} MB | {r['cpu_server']:.0f} s / "
            f"{r['cpu_clients']:.0f} s |"
        )
    return "\n".join(lines)
