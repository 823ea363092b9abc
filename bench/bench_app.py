"""Benchmark the explorer: Start-to-first-live-point in a real browser, and page refreshes
while ten jobs share the 2-core machine.

    python bench/bench_app.py

1. `streamlit run app.py` headless, Playwright driving Debian's Chromium: press Start on the
   default preset and time until the objective chart shows its first point (5 runs).
2. In-process (Streamlit's AppTest, the same script runs a browser triggers): ten runs
   started at once on a pool of two workers; every page refresh is timed while they train,
   and the queue places the page reports are collected.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests._browser import CHROMIUM, CHROMIUM_ARGS, objective_points_at_least, streamlit_server  # noqa: E402

FIRST_POINT = objective_points_at_least(1)


def start_to_first_point(repeats: int = 5) -> list[float]:
    from playwright.sync_api import sync_playwright

    with streamlit_server() as url:
        times = []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for _ in range(repeats):
                page = browser.new_page()
                page.goto(url)
                page.get_by_role("button", name="▶ Start").wait_for(timeout=60_000)
                time.sleep(5.0)  # a user reads the page first; the idle workers warm up meanwhile
                t0 = time.perf_counter()
                page.get_by_role("button", name="▶ Start").click()
                page.wait_for_function(FIRST_POINT, timeout=60_000)
                times.append(time.perf_counter() - t0)
                page.close()
            browser.close()
        return times


def ten_jobs() -> dict:
    from streamlit.testing.v1 import AppTest

    from explorer.pool import get_pool

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for key, value in {"n_iter": "25", "n_train": "700", "baselines": "-"}.items():
        at.query_params[key] = value
    at.run()
    t0 = time.perf_counter()
    for _ in range(10):
        at.button(key="start").click().run()
    pool = get_pool()
    ids = [j.id for j in pool.jobs()][-10:]
    refresh, places = [], set()
    while True:
        views = [pool.get(i) for i in ids]
        places |= {v.place for v in views if v.place}
        if all(v.state in ("done", "error", "stopped") for v in views):
            break
        t = time.perf_counter()
        at.run()
        refresh.append(time.perf_counter() - t)
        time.sleep(0.2)
    views = [pool.get(i) for i in ids]
    return {
        "wall": time.perf_counter() - t0,
        "states": [v.state for v in views],
        "refresh": np.array(refresh),
        "max_place": max(places or {0}),
        "pool_workers": pool.max_workers,
    }


def main() -> None:
    times = np.array(start_to_first_point())
    print(
        f"Start → first live point (default preset, {len(times)} runs): median "
        f"{np.median(times):.2f} s, max {times.max():.2f} s"
    )
    os.environ.setdefault("CSVM_POOL_WORKERS", "2")
    r = ten_jobs()
    errors = sum(s == "error" for s in r["states"])
    print(
        f"Ten jobs at once on {r['pool_workers']} workers: {r['states'].count('done')} done, "
        f"{errors} errors, largest queue place shown {r['max_place']}, all finished in "
        f"{r['wall']:.1f} s"
    )
    print(
        f"Page refreshes while they ran: {len(r['refresh'])}, p50 "
        f"{1000 * np.median(r['refresh']):.0f} ms, p95 "
        f"{1000 * np.percentile(r['refresh'], 95):.0f} ms, max "
        f"{1000 * r['refresh'].max():.0f} ms"
    )
    print("command: python bench/bench_app.py")


if __name__ == "__main__":
    main()
