"""Restart without loss, with real ``streamlit run`` servers and Chromium: a server
SIGKILLed mid-run and started again on the same SQLite store shows the run it was training
as "interrupted at step k" and the one it had finished as it was; two servers on one
PostgreSQL store open each other's runs from their links and list them on their boards."""

from __future__ import annotations

import os
import re
import signal
import time

import pytest

from csvm.store import open_store
from tests._browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS
from tests._postgres import fresh_schema, throwaway_postgres, why_no_postgres
from tests._servers import serving, start, stop

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM), reason="needs Debian's Chromium: apt-get install -y chromium"
    ),
]
#: This module's ports (the range this work may use: 8681-8690).
RESTART_PORT, FIRST_PORT, SECOND_PORT = 8681, 8682, 8683
SMALL = "n_iter=2&n_train=200&baselines=svm&pace=live"
# Long enough to be cut off: a thousand steps on 600 images.
LONG = "n_iter=1000&n_train=600&baselines=svm&pace=live"
_HEADLINE = re.compile(r"K-CSVM: [\d.]+\s% test")


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _page(context):
    page = context.new_page()
    page.set_default_timeout(120_000)
    return page


def _start(page, url: str, query: str, name: str) -> str:
    """Open the Train page, type a display name, press Start; the run's id."""
    page.goto(f"{url}/?{query}")
    box = page.get_by_role("textbox", name="Your name on the Class board")
    box.fill(name)
    box.press("Enter")
    page.wait_for_timeout(800)  # the name's rerun starts ...
    # ... and must end before the click: a Start pressed while the rerun redrew the page
    # was lost once on a loaded machine (no run, the URL never named one).
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached", timeout=60_000)
    page.get_by_role("button", name="▶ Start").click()
    page.wait_for_url(re.compile(r"[?&]run=\w+"))
    return re.search(r"[?&]run=(\w+)", page.url).group(1)


def _finished(page, url: str, name: str) -> tuple[str, str, str]:
    """A small run trained to its end: its id, link and headline."""
    run_id = _start(page, url, SMALL, name)
    page.get_by_text("Comparison on the same split").wait_for()
    headline = page.locator("h2").filter(has_text=_HEADLINE).first.inner_text()
    return run_id, page.url, headline


def _stored(store_url: str, run_id: str, ready, seconds: float = 90):
    """The stored run once ``ready(run)`` holds (read by a store of the test's own)."""
    with open_store(store_url, server_id="test-reader") as store:
        deadline = time.time() + seconds
        while time.time() < deadline:
            run = store.get(run_id)
            if run is not None and ready(run):
                return run
            time.sleep(0.3)
    raise AssertionError(f"run {run_id} did not reach the state wanted in {seconds} s")


def test_a_server_killed_mid_run_restarts_without_losing_a_run(browser, tmp_path):
    store_url = f"sqlite:///{tmp_path}/runs.sqlite"
    env = {"CSVM_RUN_STORE": store_url}
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    server = start(RESTART_PORT, env, "restart-1")
    url = f"http://127.0.0.1:{RESTART_PORT}"
    try:
        page = _page(context)
        done_id, done_link, headline = _finished(page, url, "Ada")
        _stored(store_url, done_id, lambda r: r.status == "done")
        cut_id = _start(page, url, LONG, "Bob")
        cut_link = page.url
        _stored(store_url, cut_id, lambda r: r.status == "running" and r.step >= 2)
    finally:
        stop(server, signal.SIGKILL)  # the whole process group: server and workers
    left = _stored(store_url, cut_id, lambda r: True)
    assert left.status == "running"  # nobody marked it: the server died at once
    k = left.step
    with serving(RESTART_PORT, env, "restart-2") as url:
        page = _page(context)  # the same browser: its owner cookie
        page.goto(cut_link)
        page.get_by_text(f"This run was interrupted at step {k}").wait_for()
        page.locator("h2").filter(has_text=f"interrupted at step {k}: the server").wait_for()
        assert _stored(store_url, cut_id, lambda r: True).status == "interrupted"
        page.screenshot(path=str(ARTIFACTS / "restart-interrupted-run.png"))
        page.goto(done_link)
        page.get_by_text("Comparison on the same split").wait_for()
        assert page.locator("h2").filter(has_text=_HEADLINE).first.inner_text() == headline
        assert page.get_by_text("Shared view").count() == 0  # still the owner's own
        assert "jobs=store" in page.url  # its link now names the store
        page.goto(f"{url}/class_board")
        page.get_by_text(f"interrupted at step {k}").wait_for()
        names = page.locator("[class*='st-key-board_name_']").all_inner_texts()
        assert {"Bob · yours", "Ada · yours"} <= {n.strip() for n in names}
        assert page.locator('[data-testid="stException"]').count() == 0
    context.close()


def test_two_servers_on_one_postgresql_store_open_each_others_runs(browser):
    reason = why_no_postgres()
    if reason is not None:
        pytest.skip(f"no PostgreSQL: {reason}")
    with throwaway_postgres() as server_url, fresh_schema(server_url) as store_url:
        env = {"CSVM_RUN_STORE": store_url}
        with (
            serving(FIRST_PORT, env, "two-1") as first,
            serving(SECOND_PORT, env, "two-2") as second,
        ):
            owner = browser.new_context(viewport={"width": 1280, "height": 800})
            run_id, link, headline = _finished(_page(owner), first, "Cy <b>2</b>")
            _stored(store_url, run_id, lambda r: r.status == "done")
            owner.close()
            # Another browser, on the other server.
            viewer = _page(browser.new_context(viewport={"width": 1280, "height": 800}))
            viewer.goto(link.replace(first, second))
            viewer.get_by_text("Comparison on the same split").wait_for()
            assert viewer.locator("h2").filter(has_text=_HEADLINE).first.inner_text() == headline
            assert viewer.get_by_text("Shared view").count() == 1
            viewer.goto(f"{second}/class_board")
            viewer.get_by_text("Cy <b>2</b>", exact=True).wait_for()
            assert viewer.locator('[data-testid="stException"]').count() == 0
