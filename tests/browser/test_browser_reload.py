"""Reload a run: the Train page's Download, uploaded in another browser, shows the same
run (its settings, headline, comparison and filter) and nothing trains again."""

import os
import re

import pytest

from tests._browser import ARTIFACTS, CHROMIUM

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM), reason="needs Debian's Chromium: apt-get install -y chromium"
    ),
]
_HEADLINE = re.compile(r"K-CSVM: [\d.]+\s% test")


def test_a_downloaded_run_uploaded_in_another_browser_is_shown_again(server, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.set_default_timeout(120_000)
    page.goto(f"{server}/?n_iter=3&n_train=60&seed=4&baselines=svm&pace=live")
    page.get_by_role("button", name="▶ Start").click()
    page.get_by_text("Comparison on the same split").wait_for()
    headline = page.locator("h2").filter(has_text=_HEADLINE).first.inner_text()
    with page.expect_download() as download:
        page.get_by_role("button", name=re.compile("Download run")).click()
    path = tmp_path / "run.zip"
    download.value.save_as(path)
    page.close()

    other = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    other.set_default_timeout(120_000)
    other.goto(server)  # the default settings: another seed and size
    other.get_by_text("Example training images").wait_for()
    other.get_by_text("Reload a run").click()
    uploader = other.locator('[data-testid="stFileUploader"]').filter(
        has_text="The zip a run's Download gave"
    )  # the sidebar also has the "Your own images" uploader
    uploader.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(path))
    # Shown on upload, with no second click.
    other.get_by_text("Comparison on the same split").wait_for()
    assert other.locator("h2").filter(has_text=_HEADLINE).first.inner_text() == headline
    assert other.locator('[data-testid="stException"]').count() == 0
    assert "seed=4" in other.url and "n_train=60" in other.url  # its settings are back
    # Its filter; the change before it is not in the export, and says so (no grid of 0s).
    assert other.locator(".st-key-filter_view svg.csvm-figure").count() == 1
    assert other.get_by_text("Last change: not kept").count() == 1
    other.screenshot(path=str(ARTIFACTS / "reloaded-run-1280x720.png"))
    other.close()
