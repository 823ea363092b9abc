"""Every page passes axe-core's WCAG 2.1 A/AA rules and its best practices, at first paint
and after a run.

axe-core comes from npm (``package.json`` at the repository root; ``npm ci`` installs it
into ``node_modules/``, as ``.ci/run`` does).  One server and one Chromium visit every page
of :data:`explorer.app.PAGES` (so a page added there is checked too), inject
``axe.min.js`` and run it; then the Train page runs its default preset and every page is
checked again, now with a finished run in the session (results, Compare's table, …).
"""

from __future__ import annotations

import json
import os
import re

import pytest

from explorer.app import DEFAULT_PAGE, PAGES
from tests._browser import ARTIFACTS, CHROMIUM, ROOT, RUNNING, url_path

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM), reason="needs Debian's Chromium: apt-get install -y chromium"
    ),
    pytest.mark.skipif(
        not AXE.exists(), reason="needs axe-core from npm: run `npm ci` at the repository root"
    ),
]

#: WCAG 2.0 and 2.1, levels A and AA (what the issue measured), and axe-core's best
#: practices: one h1 a page, headings in order, no empty table header.
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
_RUN_AXE = """async (tags) => {
  const r = await axe.run(document, {runOnly: {type: 'tag', values: tags}});
  return r.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => ({target: n.target.join(' '), summary: n.failureSummary})),
  }));
}"""
_FINISHED = re.compile(r"% test")


def _settle(page) -> None:
    """Wait until the page's script run has ended and its figures are drawn."""
    page.locator(
        '[data-testid="stMainBlockContainer"] [data-testid="stElementContainer"]:visible'
    ).first.wait_for()
    # A page that hands over to the app (explorer.app.ensure_app) runs twice: quiet for
    # three looks in a row, not just between the two runs.
    quiet, looks = 0, 0
    while quiet < 3:
        page.wait_for_timeout(700)
        quiet = 0 if page.locator(RUNNING).count() else quiet + 1
        looks += 1
        assert looks < 200, f"{page.url} still running its script after {looks} looks"


def _violations(page) -> list[dict]:
    page.add_script_tag(path=str(AXE))
    return page.evaluate(_RUN_AXE, TAGS)


def _report(found: dict[str, list[dict]]) -> str:
    lines = []
    for where, violations in found.items():
        for v in violations:
            lines.append(f"{where}: {v['id']} ({v['impact']}): {v['help']}")
            for n in v["nodes"][:8]:
                summary = " ".join(n["summary"].split())[:300]
                lines.append(f"    {n['target']}: {summary}")
    return "\n".join(lines)


def _check_every_page(page, server: str, when: str, found: dict[str, list[dict]]) -> None:
    for script, title, _ in PAGES:
        page.goto(f"{server}/{url_path(script)}")
        _settle(page)
        found[f"{title} ({when})"] = _violations(page)


@pytest.mark.timeout(900)
def test_every_page_passes_axe_before_and_after_a_run(server, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.set_default_timeout(60_000)
    found: dict[str, list[dict]] = {}
    _check_every_page(page, server, "first paint", found)

    page.goto(f"{server}/?pace=live")
    _settle(page)
    page.get_by_role("button", name="▶ Start").click()
    page.locator('[data-testid="stMainBlockContainer"] h2').filter(
        has_text=_FINISHED
    ).first.wait_for(timeout=300_000)
    _settle(page)
    found["Train (after a run)"] = _violations(page)
    page.screenshot(path=str(ARTIFACTS / "a11y-train-after-run.png"))
    # The other pages with a finished run in the session (Compare lists it, …); the link
    # keeps the session, a fresh goto would not.
    for script, title, _ in PAGES:
        if script == DEFAULT_PAGE:
            continue
        page.locator('[data-testid="stSidebar"] a', has_text=title).first.click()
        page.wait_for_url(re.compile(f"/{url_path(script)}(\\?|$)"))
        _settle(page)
        found[f"{title} (after a run)"] = _violations(page)
    page.close()

    ARTIFACTS.mkdir(exist_ok=True)
    counts = {where: sum(len(v["nodes"]) for v in vs) for where, vs in found.items()}
    (ARTIFACTS / "a11y-axe.json").write_text(
        json.dumps({"counts": counts, "found": found}, indent=1)
    )
    failing = {where: vs for where, vs in found.items() if vs}
    assert not failing, "axe-core found WCAG 2.1 A/AA violations:\n" + _report(failing)
