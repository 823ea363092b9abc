"""Reload a run through the Train page (AppTest, no browser; issue 37): a crafted bundle
gets a named refusal and no exception box, the app's own one-vs-one export is shown again
with its 3×3 confusion, and a forged accuracy is replaced by what the predictions give."""

from __future__ import annotations

import io
import json
import re
import zipfile

import pytest

from csvm.runs.config import RunConfig
from csvm.runs.persistence import export_run
from csvm.runs.targets import load_data, run_model
from tests._apptest import ROOT, open_app, titled, wait_for_results
from tests.app.test_app_multiclass import _filters_drawn

OVO = RunConfig(classes="0,1,2", n_filters=1, n_iter=1, n_train=60, baselines=("svm",))


@pytest.fixture(scope="module")
def ovo_export() -> tuple[dict, bytes]:
    results = {m: run_model(lambda e: None, OVO, m) for m in ("csvm", "svm")}
    data = load_data(OVO)
    return results, export_run(OVO, results, test_set=(data.X_test, data.y_test))


def _replaced(data: bytes, name: str, content: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for member in src.namelist():
            dst.writestr(member, content if member == name else src.read(member))
    return out.getvalue()


def _upload(at, content: bytes):
    (uploader,) = [u for u in at.get("file_uploader") if u.label == "The zip a run's Download gave"]
    uploader.set_value(("run.zip", content, "application/zip"))
    at.run()  # shown on upload: its button sat below a 720 px fold (48 s to find)
    return at


def _text(element) -> str:
    """An element's text without the markdown escapes the page adds (md_escape)."""
    return re.sub(r"\\(.)", r"\1", element.value)


def _headline(at) -> str:
    """The run's headline, its no-break spaces (a number kept with its %) read as spaces."""
    return next(m.value for m in at.markdown if m.value.startswith("## ")).replace("\u00a0", " ")


def test_a_crafted_bundle_is_refused_by_name_and_the_export_is_shown(ovo_export):
    results, data = ovo_export
    lines = zipfile.ZipFile(io.BytesIO(data)).read("history.csv").decode().splitlines()
    head = lines[0].split(",")
    cells = lines[1].split(",")
    cells[head.index("objective")] = "abc"
    crafted = _replaced(data, "history.csv", "\n".join([lines[0], ",".join(cells)]).encode())
    at = _upload(open_app({"pace": "live"}), crafted)
    assert not at.exception
    (error,) = [_text(e) for e in at.error]
    assert "history.csv, row 1: objective is 'abc', not a finite number" in error

    at = wait_for_results(_upload(at, data))
    assert not at.exception and not at.error
    assert titled(at, "K-CSVM: test confusion (3×3)")
    (grid,) = titled(at, "Filters of the 3 sub-problems")  # each sub-problem's filter
    captions = [a["text"] for a in grid["layout"]["annotations"]]
    assert any("0 vs 2 · 1/1" in c for c in captions) and _filters_drawn(grid) == 3
    assert any(s.value == "Most confused pairs" for s in at.header)
    accuracy = 100 * results["csvm"]["test_accuracy"]
    assert _headline(at).startswith(f"## K-CSVM: {accuracy:.2f} % test")


def test_a_forged_accuracy_is_recomputed_and_an_undigested_export_marked_unverified(ovo_export):
    results, data = ovo_export
    forged = json.loads(zipfile.ZipFile(io.BytesIO(data)).read("results.json"))
    forged["csvm"]["test_accuracy"] = 1.0
    del forged["test_set"]  # as an export made before the digest
    content = _replaced(data, "results.json", json.dumps(forged).encode())
    at = wait_for_results(_upload(open_app({"pace": "live"}), content))
    assert not at.exception
    accuracy = 100 * results["csvm"]["test_accuracy"]
    assert accuracy < 100
    assert _headline(at).startswith(f"## K-CSVM (unverified): {accuracy:.2f} % test")
    warnings = [_text(w) for w in at.warning]
    assert any("claims 100.0 % test accuracy" in w for w in warnings)
    assert any("marked unverified" in w for w in warnings)

    v01 = (ROOT / "tests" / "fixtures" / "export_v0.1.zip").read_bytes()  # no predictions
    at = wait_for_results(_upload(at, v01))
    assert not at.exception
    assert _headline(at).startswith("## K-CSVM (unverified): 87.50 % test")


def test_a_reloaded_runs_last_change_is_said_to_be_not_kept():
    """An export keeps only the last filter: a 25-step run read "Last change: none, the run
    ended before its filter changed" under an empty grid."""
    import time

    config = RunConfig(n_train=60, n_iter=3, n_filters=1, baselines=())
    results = {"csvm": run_model(lambda e: None, config.to_dict(), "csvm")}
    data = load_data(config)
    bundle = export_run(config, results, test_set=(data.X_test, data.y_test))
    at = _upload(open_app({"pace": "live"}), bundle)
    for _ in range(60):
        if any("Last change" in m.value for m in at.markdown):
            break
        time.sleep(0.2)
        at.run()
    lines = [m.value for m in at.markdown if "Last change" in m.value]
    assert any("not kept" in v for v in lines) and not any("ended before" in v for v in lines)
