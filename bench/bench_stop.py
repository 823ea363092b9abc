"""Stop latency in a real browser: press Stop on a long live run and time until the page
says "stopped at step".

    python bench/bench_stop.py [--repeats 5]

`streamlit run app.py` headless on a free port, Playwright driving Debian's Chromium. Each
repeat opens the page on a 400-iteration K-CSVM on every 3 and 5 of the bundled mnist-5k at
the live pace, presses Start, waits for two objective points, presses Stop and times until
the headline says "stopped at step", two ways: from Playwright's click call (which first waits
until the button is stable, so it includes the browser being busy before the press lands),
and from the browser's own click event to the first frame painted with the text (what a
user who pressed sees). Prints each latency, the medians and the worst, and the load
average (the target is <= 1 s on a loaded 2-core machine).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests._browser import CHROMIUM, CHROMIUM_ARGS, objective_points_at_least, streamlit_server  # noqa: E402

LONG_RUN = "?n_iter=400&n_train=none&baselines=-&pace=live"
WATCH = """() => {
    window.__clicked = null; window.__painted = null;
    document.addEventListener('click', () => { window.__clicked ??= performance.now(); }, true);
    new MutationObserver(() => {
        if (window.__painted === null && document.body.innerText.includes('stopped at step'))
            requestAnimationFrame(() => { window.__painted ??= performance.now(); });
    }).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""
POINTS = objective_points_at_least(2)


def stop_latencies(repeats: int) -> tuple[list[float], list[float]]:
    """Seconds to "stopped at step" on screen, from the click call and from the browser's
    click event, one of each per repeat."""
    from playwright.sync_api import sync_playwright

    calls, events = [], []
    with streamlit_server() as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for _ in range(repeats):
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(90_000)
            page.goto(url + LONG_RUN)
            page.get_by_role("button", name="▶ Start").click()
            page.wait_for_function(POINTS)
            page.evaluate(WATCH)
            clicked = time.monotonic()
            page.get_by_role("button", name="■ Stop").click()
            page.get_by_text(re.compile("stopped at step")).first.wait_for()
            calls.append(time.monotonic() - clicked)
            page.wait_for_function("() => window.__painted !== null")
            events.append(page.evaluate("(window.__painted - window.__clicked) / 1000"))
            page.close()
        browser.close()
    return calls, events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    before = os.getloadavg()[0]
    calls, events = stop_latencies(args.repeats)
    load = f"load average {before:.1f} before, {os.getloadavg()[0]:.1f} after"
    for name, times in (("click call", calls), ("browser click event", events)):
        print(
            f"Stop -> 'stopped at step', from the {name}: "
            + " ".join(f"{t:.2f}" for t in times)
            + f" s; median {np.median(times):.2f}, worst {max(times):.2f}"
        )
    print(load)


if __name__ == "__main__":
    main()
