"""Pause on the Classroom presets on a loaded machine, in a real browser (issue 33).

    python -m bench.bench_pause [--load 8] [--repeats 3]
    CSVM_BENCH_PRESET="two layers" python -m bench.bench_pause   # the presets whose name has it

For each Classroom preset (the teaching set's and the two digit presets) at the default
pace of one step a second: `streamlit run app.py` headless on a free port, Playwright
driving Debian's Chromium, ``--load`` processes spinning on the CPU.  Each repeat presses
Start, records when each step appears (the pacing), presses Pause after step 2 and
measures:

* **Pause**: seconds from the browser's click event to the first frame whose headline says
  "paused at";
* **steps late**: the step the page froze on minus the step shown at the click;
* **moved while paused**: steps the page moved in the 3 s after;
* **pacing**: the seconds between successive steps before the click (mean and worst);
* **reload**: the page reloaded while paused: whether it still says "paused at" the same
  step 3 s later.

Prints each figure, medians and worst, and the load average. Times are not asserted
anywhere (tests check behaviour, never wall-clock time).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_controls import _timed_click, arguments, loaded_browser  # noqa: E402

#: The step the headline shows ("step 3 of 40"), -1 before the first.
STEP = """() => { const h = document.querySelector('[data-testid="stMainBlockContainer"] h3');
                  const m = h && h.innerText.match(/step (\\d+) of (\\d+)/);
                  return m ? Number(m[1]) : -1; }"""
HEADLINE = """() => !!document.querySelector('[data-testid="stMainBlockContainer"] h3')"""
PAUSED = """() => { const h = document.querySelector('[data-testid="stMainBlockContainer"] h3');
                    return !!h && /paused at/i.test(h.innerText); }"""


def preset_urls() -> dict[str, str]:
    """The Classroom presets' URLs (their settings as query parameters), by name."""
    from csvm.runs.config import parse
    from csvm.runs.presets import load_presets
    from csvm.runs.query import to_query

    out = {}
    for preset in load_presets():
        config, problems = parse(preset["config"])
        if config.dataset in ("shapes", "mnist-5k") and not problems:
            query = "&".join(f"{k}={v}" for k, v in to_query(config).items())
            out[preset["name"]] = "/?" + query
    only = os.environ.get("CSVM_BENCH_PRESET", "")
    return {name: url for name, url in out.items() if only.lower() in name.lower()}


def _step_times(page, until: int, timeout: float = 60.0) -> list[float]:
    """Seconds at which steps 1..``until`` first appear, polled every 50 ms."""
    seen: dict[int, float] = {}
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        step = page.evaluate(STEP)
        if step > 0 and step not in seen:
            seen[step] = time.monotonic()
        if step >= until:
            break
        page.wait_for_timeout(50)
    return [seen[k] for k in sorted(seen)]


def one_round(browser, url: str) -> dict[str, float]:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    out: dict[str, float] = {}
    page = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    page.set_default_timeout(90_000)
    page.goto(url)
    page.get_by_role("button", name="▶ Start").click()
    times = _step_times(page, 3)
    gaps = np.diff(times) if len(times) > 1 else np.array([np.nan])
    out["pacing: mean s between steps"] = float(np.mean(gaps))
    out["pacing: worst s between steps"] = float(np.max(gaps))
    at_click = page.evaluate(STEP)
    try:
        pause = page.locator(".st-key-pause button").first
        out["Pause"] = _timed_click(page, pause, "paused at")
    except PlaywrightTimeout:  # the click was lost: the page never said "paused"
        out["Pause"] = float("nan")
        page.screenshot(path=str(ROOT / "test-artifacts" / f"lost-pause-{time.time():.0f}.png"))
    frozen = page.evaluate(STEP)
    page.wait_for_timeout(3000)
    out["Pause: steps late"] = frozen - at_click
    out["Pause: moved while paused"] = page.evaluate(STEP) - frozen
    page.reload()
    page.wait_for_function(HEADLINE)
    page.wait_for_timeout(3000)
    still = page.evaluate(PAUSED) and page.evaluate(STEP) == frozen
    out["reload: still paused at the step (1 = yes)"] = float(still)
    page.context.close()
    return out


def main() -> None:
    args = arguments(__doc__)
    results: dict[str, list[dict[str, float]]] = {}
    loads = []
    with loaded_browser(args.load) as (url, browser):
        for _ in range(args.repeats):
            for name, query in preset_urls().items():
                results.setdefault(name, []).append(one_round(browser, url + query))
                loads.append(os.getloadavg()[0])
    print(f"python -m bench.bench_pause --load {args.load} --repeats {args.repeats}")
    for name, rounds in results.items():
        print(f"\n{name}")
        for figure in rounds[0]:
            values = [r[figure] for r in rounds]
            known = [v for v in values if not np.isnan(v)]
            lost = len(values) - len(known)
            summary = f"; median {np.median(known):.2f}, worst {max(known):.2f}" if known else ""
            print(
                f"  {figure}: "
                + " ".join(f"{v:.2f}" for v in values)
                + summary
                + (f"; {lost} lost" if lost else "")
            )
    print("\nload average after each round: " + " ".join(f"{x:.1f}" for x in loads))


if __name__ == "__main__":
    main()
