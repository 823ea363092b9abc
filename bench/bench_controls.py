"""The teacher's controls on a loaded machine, in a real browser (issue 23): Pause, Stop
after a reload, a shared link opened in a second browser, and the first load.

    python -m bench.bench_controls [--load 8] [--repeats 3]

`streamlit run app.py` headless on a free port, Playwright driving Debian's Chromium, and
``--load`` processes that spin on the CPU at normal priority (with the server, the worker
and Chromium that makes a load average of about ``load + 2`` on two cores). Each repeat:

* **first load**: a new browser context opens the Train page; seconds until the Start
  button and the example images are on screen;
* **Pause**: Start a 400-step K-CSVM at the default pace, wait for three steps, press Pause;
  seconds from the browser's click event to the first frame with "paused at step" in the
  headline, the step shown at the click and the step the page froze on, and whether it
  moved in the 3 s after;
* **shared link**: the run's URL in a second context (a second browser); seconds until its
  headline, then the first figure of the run (the filter), are drawn;
* **Stop after a reload**: the owner reloads, presses Stop; seconds from the click event
  to "stopping" or "stopped" in the headline.

Prints each figure, medians and worst, and the load average. Times are not asserted
anywhere (tests check behaviour, never wall-clock time).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests._browser import CHROMIUM, CHROMIUM_ARGS, streamlit_server  # noqa: E402

RUN = "/?n_iter=400&n_train=none&baselines=-"
# The browser's own click event and the first frame painted once the headline matches.
WATCH = """(pattern) => {
    window.__clicked = null; window.__painted = null;
    const re = new RegExp(pattern, 'i');
    document.addEventListener('click', () => { window.__clicked ??= performance.now(); }, true);
    new MutationObserver(() => {
        const h = document.querySelector('[data-testid="stMainBlockContainer"] h3');
        if (window.__painted === null && window.__clicked !== null && h && re.test(h.innerText))
            requestAnimationFrame(() => { window.__painted ??= performance.now(); });
    }).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""
STEP = """() => { const m = document.body.innerText.match(/step (\\d+) of 400/);
                  return m ? Number(m[1]) : -1; }"""


def _spin() -> None:
    while True:
        pass


def _timed_click(page, locator, pattern: str) -> float:
    """Seconds from the click event to the first frame whose headline matches."""
    page.evaluate(WATCH, pattern)
    locator.click()
    page.wait_for_function("() => window.__painted !== null", timeout=60_000)
    return page.evaluate("(window.__painted - window.__clicked) / 1000")


def one_round(browser, url: str) -> dict[str, float]:
    out: dict[str, float] = {}
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.set_default_timeout(90_000)
    started = time.monotonic()
    page.goto(url + RUN)
    page.get_by_text("Example training images").wait_for()
    page.get_by_role("button", name="▶ Start").wait_for()
    out["first load"] = time.monotonic() - started
    page.get_by_role("button", name="▶ Start").click()
    page.wait_for_function(f"() => ({STEP})() >= 3")
    at_click = page.evaluate(STEP)
    out["Pause"] = _timed_click(page, page.locator(".st-key-pause button").first, "paused at")
    frozen = page.evaluate(STEP)
    page.wait_for_timeout(3000)
    out["Pause: steps after the click"] = frozen - at_click
    out["Pause: moved while paused"] = page.evaluate(STEP) - frozen
    page.locator(".st-key-pause button").first.click()  # Resume
    page.wait_for_function(f"() => ({STEP})() > {frozen}")
    other = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
    started = time.monotonic()
    other.goto(page.url)
    other.wait_for_function(
        """() => /K-CSVM/.test((document.querySelector('h3') || {}).innerText || '')""",
        timeout=90_000,
    )
    out["shared link: headline"] = time.monotonic() - started
    other.wait_for_function(
        "() => document.querySelector('.st-key-filter_view svg.csvm-figure') !== null",
        timeout=90_000,
    )
    out["shared link: the filter drawn"] = time.monotonic() - started
    other.context.close()
    page.reload()
    page.wait_for_function(f"() => ({STEP})() >= 0")
    stop = page.locator(".st-key-stop button").first
    page.wait_for_function(
        """() => { const b = document.querySelector('.st-key-stop button');
                   return b && !b.disabled; }"""
    )
    out["Stop after a reload"] = _timed_click(page, stop, "stopping|stopped")
    ctx.close()
    return out


def arguments(doc: str) -> argparse.Namespace:
    """``--load`` and ``--repeats``, the loaded-browser benches' two options."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--load", type=int, default=8, help="CPU-spinning processes")
    parser.add_argument("--repeats", type=int, default=3)
    return parser.parse_args()


@contextmanager
def loaded_browser(load: int):
    """A server and a Chromium, then ``load`` processes spinning on the CPU until the
    block ends: yields ``(url, browser)``."""
    from playwright.sync_api import sync_playwright

    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(load)]
    with streamlit_server() as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for s in spinners:
            s.start()
        try:
            yield url, browser
        finally:
            for s in spinners:
                s.terminate()
            browser.close()


def main() -> None:
    args = arguments(__doc__)
    rounds = []
    loads = []
    with loaded_browser(args.load) as (url, browser):
        for _ in range(args.repeats):
            rounds.append(one_round(browser, url))
            loads.append(os.getloadavg()[0])
    print(f"python -m bench.bench_controls --load {args.load} --repeats {args.repeats}")
    for name in rounds[0]:
        values = [r[name] for r in rounds]
        unit = "" if re.search("steps|moved", name) else " s"
        print(
            f"{name}: "
            + " ".join(f"{v:.2f}" for v in values)
            + f"{unit}; median {np.median(values):.2f}, worst {max(values):.2f}"
        )
    print("load average after each round: " + " ".join(f"{x:.1f}" for x in loads))


if __name__ == "__main__":
    main()
