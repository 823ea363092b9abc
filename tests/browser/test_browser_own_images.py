"""Your own images in a real browser (issue 23): a zip of class folders uploaded in the
sidebar becomes the session's dataset, a run trains on it, and a bad zip is named."""

import io
import zipfile

import pytest
from PIL import Image, ImageDraw

from tests._browser import playwright_api

PlaywrightTimeout = playwright_api().TimeoutError

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _shape_zip(tmp_path, n=16) -> str:
    """Circles and crosses, drawn at a few positions: two classes a K-CSVM can tell apart."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for i in range(n):
            for name in ("circles", "crosses"):
                img = Image.new("L", (56, 56), 0)
                d = ImageDraw.Draw(img)
                x, y = 10 + (i % 4) * 3, 10 + (i // 4) * 3
                if name == "circles":
                    d.ellipse((x, y, x + 30, y + 30), outline=255, width=4)
                else:
                    d.line((x, y, x + 30, y + 30), fill=255, width=4)
                    d.line((x, y + 30, x + 30, y), fill=255, width=4)
                out = io.BytesIO()
                img.save(out, "PNG")
                zf.writestr(f"shapes/{name}/{i}.png", out.getvalue())
    path = tmp_path / "shapes.zip"
    path.write_bytes(buf.getvalue())
    return str(path)


def test_own_images_become_the_dataset_of_a_run(server, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.set_default_timeout(60_000)
    page.goto(f"{server}/?baselines=svm&pace=live")
    page.get_by_text("Your own images").click()
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    uploader = (
        page.locator('[data-testid="stFileUploader"]')
        .filter(has_text="one folder of PNG/JPEG images per class")
        .locator('[data-testid="stFileUploaderDropzoneInput"]')
    )
    uploader.set_input_files(str(bad))
    page.get_by_text("bad.zip").wait_for()  # uploaded before the button reads it
    page.wait_for_timeout(1000)
    page.get_by_role("button", name="Use these images").click()
    page.get_by_text("This is not a zip file").wait_for()
    uploader.set_input_files(_shape_zip(tmp_path))
    page.get_by_text("shapes.zip").wait_for()
    # The file's name shows before the server holds the upload: on a loaded machine the
    # first click can still read the previous file, so it is clicked again if need be.
    done = page.get_by_text("Using your 32 images (circles: 16, crosses: 16)")
    for timeout in (15_000, 60_000):
        page.wait_for_timeout(1000)
        page.get_by_role("button", name="Use these images").click()
        try:
            done.wait_for(timeout=timeout)
            break
        except PlaywrightTimeout:
            continue
    done.wait_for()
    assert "dataset=own-" in page.url
    page.get_by_role("button", name="▶ Start").click()
    page.get_by_text("Comparison on the same split").wait_for(timeout=180_000)
    assert page.locator('[data-testid="stException"]').count() == 0
    # The classes are the folders (the confusion matrices' labels: Plotly draws them once its
    # script has loaded, which the page no longer needs before Start).
    page.get_by_text("circles (−1)").first.wait_for(timeout=30_000)
    page.close()
