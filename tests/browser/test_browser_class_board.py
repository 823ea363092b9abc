"""The Class board in Chromium: hostile display names read as typed (no link, no bold, no
90 px text), teacher actions only with the key, the best four projected side by side."""

from __future__ import annotations

import os

import pytest

from csvm.store import open_store
from tests._browser import ARTIFACTS, CHROMIUM
from tests._servers import serving
from tests._stored_runs import save_run

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM), reason="needs Debian's Chromium: apt-get install -y chromium"
    ),
]
PORT = 8685
KEY = "correct horse battery"
HOSTILE = ("<a href=x>CLICK</a>", "**bold**", '<span style="font-size:90px">big</span>')


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """A server whose store holds the three hostile names and a fourth run; its URL and
    the runs' ids by name."""
    url = f"sqlite:///{tmp_path_factory.mktemp('board')}/runs.sqlite"
    with open_store(url, server_id="test-seed") as store:
        ids = {
            name: save_run(store, name, accuracy=acc)
            for name, acc in zip((*HOSTILE, "Dee"), (0.90, 0.97, 0.80, 0.85), strict=True)
        }
    with serving(PORT, {"CSVM_RUN_STORE": url, "CSVM_TEACHER_KEY": KEY}, "class-board") as base:
        yield base, ids


def test_the_class_board_in_a_browser(board, browser):
    base, ids = board
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(120_000)
    page.goto(f"{base}/class_board")
    page.get_by_role("heading", name="Class board").wait_for()
    names = page.locator("[class*='st-key-board_name_']")
    # All four rows: on a loaded machine the first was read before the last was drawn.
    names.nth(3).wait_for()
    assert sorted(n.strip() for n in names.all_inner_texts()) == sorted((*HOSTILE, "Dee"))
    main = page.locator("[data-testid='stMain']")
    # As text: no link to "x", no bold, no 90 px span anywhere on the board.
    assert main.locator("a[href='x']").count() == 0
    assert main.locator("[style*='90px']").count() == 0
    assert names.locator("strong, b").count() == 0
    page.get_by_role("button", name="Open").nth(3).wait_for()
    page.wait_for_timeout(1000)  # the thumbnails' pictures
    page.screenshot(path=str(ARTIFACTS / "class-board-1280x800.png"))
    # Teacher actions: none without the key, a refusal for a wrong one.
    assert page.get_by_role("button", name="Hide").count() == 0
    page.get_by_text("Teacher", exact=True).click()
    key = page.get_by_label("Teacher key")
    key.fill("guess")
    key.press("Enter")
    page.get_by_text("That is not the teacher key.").wait_for()
    assert page.get_by_role("button", name="Hide").count() == 0
    key.fill(KEY)
    key.press("Enter")
    page.get_by_role("button", name="Hide").first.wait_for()
    page.locator(f".st-key-board_hide_{ids['Dee']} button").first.click()
    page.locator(f".st-key-board_name_{ids['Dee']}").wait_for(state="detached")
    assert names.count() == 3
    # The best four (three with Dee hidden), side by side, in projector mode.
    page.get_by_role("button", name="Project the best four").click()
    best = page.locator("[class*='st-key-board_best_thumb_']")
    # The button comes after the best four: when it is there, all of them are (the
    # first alone was counted once, on a loaded machine, before the others arrived).
    page.get_by_role("button", name="Back to the whole board").wait_for()
    assert best.count() == 3
    boxes = [b.bounding_box() for b in best.all()]
    lefts = [box["x"] for box in boxes]
    assert lefts == sorted(lefts) and len(set(lefts)) == 3  # side by side, in one row
    assert max(box["y"] for box in boxes) < min(box["y"] + box["height"] for box in boxes)
    headings = page.locator("[data-testid='stMain'] h2").all_inner_texts()
    assert [h.strip() for h in headings] == [HOSTILE[1], HOSTILE[0], HOSTILE[2]]
    assert page.get_by_role("switch", name="Projector mode").is_checked()
    assert page.get_by_text("95 % interval").count() == 3
    assert page.locator('[data-testid="stException"]').count() == 0
    page.screenshot(path=str(ARTIFACTS / "class-board-best-four-1280x800.png"))
    page.close()
