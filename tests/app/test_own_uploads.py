"""Your own images on a class's server (issue 37, rows 4, 6, 7, 13 and 14), in AppTest.

- 4: uploads stop at the server's quota with a message, and go once their session ends;
- 6: a run keeps its images when its owner replaces them and a client clears the caches;
- 7: hostile class folder names are text in every figure, never HTML;
- 13: a reload (F5) finds the browser's upload again; another browser gets a true hint;
- 14: the server's upload limit, the help and the library's limit agree.

Every AppTest session has the same id ("test session id") and none is connected, so
:func:`explorer.own_data.sweep` is given ``alive`` explicitly.
"""

from __future__ import annotations

import io
import re
import zipfile

import numpy as np
import pytest
import tomllib
from PIL import Image
from streamlit.runtime import caching
from streamlit.testing.v1 import AppTest

from csvm.data.own_images import MAX_ZIP_BYTES, own_usage, read_image_zip, remove_own
from csvm.runs.config import RunConfig
from csvm.runs.targets import load_data
from explorer import own_data
from tests._apptest import ROOT, open_app, query, specs, wait_for_results

LINK = "<a href=https:evil.example>CLICK"
BIG = '<span style="font-size:90px">big'


@pytest.fixture
def own_dir(tmp_path, monkeypatch):
    """A folder of uploads of the test's own, for tests that start no worker (the pool's
    warm workers keep the folder they were started with)."""
    monkeypatch.setenv("CSVM_OWN_DIR", str(tmp_path / "own"))
    return tmp_path / "own"


def _zip(names=("cats", "dogs"), n=10, side=32, seed=0) -> bytes:
    """``n`` PNGs per class folder: a bright square whose place tells the class."""
    rng = np.random.default_rng(seed)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for k, name in enumerate(names):
            for i in range(n):
                a = rng.integers(0, 60, (side, side), dtype=np.uint8)
                a[4 + 12 * k : 14 + 12 * k, 4:14] = 255
                png = io.BytesIO()
                Image.fromarray(a).save(png, "PNG")
                zf.writestr(f"{name}/{i}.png", png.getvalue())
    return out.getvalue()


def _upload(at, blob: bytes, name="images.zip"):
    at.file_uploader(key="own_file").set_value((name, blob, "application/zip"))
    at.run()
    return at.button(key="own_go").click().run()


def _url(at) -> dict[str, str]:
    return {k: query(at, k) for k in at.query_params}


# -- row 14 ---------------------------------------------------------------------------------
def test_the_upload_limit_the_help_and_the_library_agree():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] * 2**20 == MAX_ZIP_BYTES
    at = open_app()
    help_text = at.get("file_uploader")
    (box,) = [u for u in help_text if u.label.startswith("A zip with one folder")]
    assert f"{MAX_ZIP_BYTES // 2**20} MB in all" in box.proto.help
    readme = (ROOT / "README.md").read_text()
    assert f"≤ {MAX_ZIP_BYTES // 2**20} MB" in readme


def test_a_six_megabyte_zip_is_taken():
    rng = np.random.default_rng(0)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:  # noise PNGs: about 6 MB that do not shrink
        for k, name in enumerate(("noise", "more noise")):
            for i in range(10):
                png = io.BytesIO()
                Image.fromarray(rng.integers(0, 256, (550, 550), dtype=np.uint8)).save(png, "PNG")
                zf.writestr(f"{name}/{i}.png", png.getvalue())
    blob = out.getvalue()
    assert 5.5 * 2**20 < len(blob) < MAX_ZIP_BYTES
    assert read_image_zip(blob).counts() == {"more noise": 10, "noise": 10}


# -- row 4 ----------------------------------------------------------------------------------
def test_fresh_sessions_stop_at_the_server_quota(own_dir, monkeypatch):
    first = _upload(open_app(), _zip(seed=0))
    assert not first.exception and first.session_state["own_dataset"]
    ((_, size),) = own_usage().values()
    monkeypatch.setenv("CSVM_UPLOAD_QUOTA_MB", str(2.5 * size / 2**20))  # room for two
    second = _upload(open_app(), _zip(seed=1))
    assert second.session_state["own_dataset"] and not second.error
    third = _upload(open_app(), _zip(seed=2))
    assert not third.exception
    assert "own_dataset" not in third.session_state
    problem = third.session_state["own_problem"]
    assert "(CSVM_UPLOAD_QUOTA_MB)" in problem and "try again in a few minutes" in problem
    assert [e for e in third.error if "CSVM" in e.value]  # shown, escaped
    assert len(own_usage()) == 2


def test_an_upload_goes_once_its_session_has_ended(own_dir, monkeypatch):
    monkeypatch.setenv("CSVM_UPLOAD_GRACE_SECONDS", "0")
    at = _upload(open_app(), _zip())
    name = at.session_state["own_dataset"]
    at.run()  # a later script run of the session holds it
    assert own_data.sweep(alive=lambda session: True) == []
    assert name in own_usage()
    assert own_data.sweep(alive=lambda session: False) == [name]
    assert own_usage() == {}


# -- rows 7 and 6: a run on hostile class names ----------------------------------------------
# Plotly's tag parser (plotly.js svg_text_utils): a tag it renders.
_TAG = re.compile(r"<(/?)([^ >]*)(\s+(.*))?>")


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _no_hostile_markup(at) -> None:
    for spec in specs(at):
        for text in _strings(spec):
            for match in _TAG.finditer(text):
                assert match.group(2).lower() in ("br", "extra", "b") and not match.group(3), text
    for m in at.markdown:
        if m.proto.allow_html:
            assert "<a href" not in m.value and "<span style" not in m.value, m.value[:200]


@pytest.fixture(scope="module")
def hostile_run():
    """A finished run on two classes named LINK and BIG (one module-wide run), its uploads
    in the server's usual folder (the one its workers read) and removed afterwards."""
    at = open_app({"pace": "live", "n_iter": "1", "baselines": "svm"})
    at = _upload(at, _zip((LINK, BIG)))
    name = at.session_state["own_dataset"]
    at.button(key="start").click().run()
    yield wait_for_results(at), name
    for upload in {name, at.session_state.get("own_dataset")}:
        remove_own(upload)


def test_hostile_class_names_are_text_in_every_figure(hostile_run):
    at, name = hostile_run
    assert not at.exception
    confusion = [s for s in specs(at) if "test confusion" in s["layout"]["title"]["text"]]
    assert len(confusion) == 2
    ticks = confusion[0]["layout"]["xaxis"]["ticktext"]
    assert "&lt;a href=https:evil.example&gt;CLICK (−1)" in " ".join(ticks).replace("<br>", " ")
    _no_hostile_markup(at)


def test_a_run_keeps_its_images_when_they_are_replaced(hostile_run, monkeypatch):
    at, name = hostile_run
    monkeypatch.setenv("CSVM_UPLOAD_GRACE_SECONDS", "0")
    at = _upload(at, _zip(("cats", "dogs"), seed=5))
    replacement = at.session_state["own_dataset"]
    assert replacement != name and name in own_usage()  # its run still shows it
    for _ in range(2):  # a client's clear_cache message, then the pages again
        caching.cache_data.clear()
        caching.cache_resource.clear()
        at.run()
        assert not at.exception and not [e for e in at.error if "no longer" in e.value]
    viewer = wait_for_results(open_app(_url(at) | {"pace": "live"}))  # the run's link
    assert not viewer.exception and not [e for e in viewer.error if "no longer" in e.value]
    run = viewer.session_state["runs"][viewer.session_state["current_run"]]
    assert run.config.dataset == name
    # Nobody's session is connected now: the run's jobs alone keep its images.  (Asked,
    # not swept: this folder is the machine's, other uploads may lie in it.)
    assert name in own_data.in_use(alive=lambda session: False)
    config = RunConfig(dataset=name, class_a=run.config.class_a, class_b=run.config.class_b)
    assert len(load_data(config).y_test) > 0


# -- row 13 ---------------------------------------------------------------------------------
def _browser(owner: str, url: dict[str, str] | None = None) -> AppTest:
    """A new session of the browser ``owner`` (its cookie's id) opening ``url``."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["owner"] = owner
    for key, value in (url or {}).items():
        at.query_params[key] = value
    return at.run()


def test_a_reload_finds_the_browsers_upload_and_another_browser_a_true_hint(own_dir):
    first = _upload(_browser("alice-browser"), _zip())
    name = first.session_state["own_dataset"]
    url = _url(first)
    assert url["dataset"] == name

    reloaded = _browser("alice-browser", url)  # F5: a new session, the same browser and URL
    assert not reloaded.exception and not reloaded.warning
    assert reloaded.session_state["own_dataset"] == name
    assert reloaded.session_state["run_config"].dataset == name
    assert reloaded.session_state["own_summary"].endswith(f"as the dataset {name}.")
    assert any(c.value.startswith("Using your 20 images") for c in reloaded.caption)

    other = _browser("bob-browser", url)  # the same link in another browser
    assert not other.exception and "own_dataset" not in other.session_state
    assert other.session_state["run_config"].dataset == "mnist-5k"
    (warning,) = [w.value for w in other.warning if "uploaded images" in w.value]
    assert "data fetch" not in warning and "Your own images" in warning


# -- also seen: widget values a browser cannot type ------------------------------------------
@pytest.mark.parametrize(
    ("key", "value", "label"),
    [("w_lam", float("nan"), "λ"), ("w_eta", float("inf"), "η"), ("w_seed", -(2**62), "Seed")],
)
def test_values_a_number_box_cannot_hold_are_refused_by_name(key, value, label):
    at = open_app()
    before = at.session_state["run_config"]
    at.number_input(key=key).set_value(value).run()
    assert not at.exception
    errors = [e.value for e in at.sidebar.error]
    assert any(e.startswith(f"{label} is empty or was not a finite number") for e in errors)
    assert at.button(key="start").disabled
    assert at.session_state["run_config"] == before  # nothing was silently replaced
