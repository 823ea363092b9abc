"""The classroom preset as a class sees it: Start -> first visible frame, and Start -> the
comparison table at the default pace (1 s per step), in Chromium.

    python bench/bench_classroom_pace.py [--repeats 3]

`streamlit run app.py` headless on a free port, Playwright driving Debian's Chromium. Each
repeat opens the page with the default settings, lets the spare workers warm up for 5 s (a
teacher talks), presses Start and times the first objective point on screen and the
comparison table. Prints each time, the medians and the load average.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests._browser import CHROMIUM, CHROMIUM_ARGS, objective_points_at_least, streamlit_server  # noqa: E402

FIRST_POINT = objective_points_at_least(1)


def paced_runs(repeats: int) -> tuple[list[float], list[float]]:
    """Seconds from Start to the first frame and to the comparison table, per repeat."""
    from playwright.sync_api import sync_playwright

    first, end = [], []
    with streamlit_server() as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for _ in range(repeats):
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.set_default_timeout(120_000)
            page.goto(url)
            page.get_by_role("button", name="▶ Start").wait_for()
            time.sleep(5.0)
            t0 = time.monotonic()
            page.get_by_role("button", name="▶ Start").click()
            page.wait_for_function(FIRST_POINT)
            first.append(time.monotonic() - t0)
            page.get_by_text("Comparison on the same split").wait_for()
            end.append(time.monotonic() - t0)
            page.close()
        browser.close()
    return first, end


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    before = os.getloadavg()[0]
    first, end = paced_runs(args.repeats)
    for name, times in (("first visible frame", first), ("comparison table", end)):
        print(
            f"Start -> {name}: "
            + " ".join(f"{t:.2f}" for t in times)
            + f" s; median {np.median(times):.2f}"
        )
    print(f"load average {before:.1f} before, {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()
