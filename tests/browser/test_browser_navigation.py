"""The first paint of a fresh server lists the app's pages and nothing else.

Streamlit's first script run on a fresh server still goes through its old ``pages/``
discovery; the app hides that menu and draws its own links (``explorer/app.py``), so a
class never sees helper modules listed as pages, not even for a frame.
"""

from __future__ import annotations

import os
import time

import pytest

from explorer.app import PAGES
from tests._browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, streamlit_server

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM),
        reason="Debian's chromium is not installed (apt-get install chromium)",
    ),
]

_NAV_TEXTS = """() => Array.from(document.querySelectorAll(
  '[data-testid="stSidebar"] a, [data-testid="stSidebarNav"] a'
)).map(a => a.innerText.trim().split('\\n').pop().trim())
 .filter(t => t.length > 0)"""


@pytest.mark.parametrize("path", ["", "sweep"])
def test_first_paint_lists_only_the_pages(path):
    """Sample the sidebar every 100 ms from the first paint of a fresh server (the only
    time Streamlit's old discovery runs) until the page has settled."""
    from playwright.sync_api import sync_playwright

    titles = {title for _, title, _ in PAGES}
    ARTIFACTS.mkdir(exist_ok=True)
    with open(ARTIFACTS / f"streamlit-first-paint-{path or 'root'}.log", "w") as log:
        with streamlit_server(log) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.goto(f"{url}/{path}", wait_until="commit")
            samples: list[list[str]] = []
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                samples.append(page.evaluate(_NAV_TEXTS))
                if set(samples[-1]) == titles and len(samples) > 20:
                    break
                page.wait_for_timeout(100)
            page.screenshot(path=str(ARTIFACTS / f"first-paint-{path or 'root'}.png"))
            browser.close()
    seen = [s for s in samples if s]
    assert seen, "the sidebar never showed a page link"
    strangers = {t for s in seen for t in s} - titles
    assert not strangers, f"the sidebar listed {sorted(strangers)} as pages"
    assert set(seen[-1]) == titles
