"""A hostile "Reload a run" zip sent over Streamlit's own protocol (issue 37, rows 1 and 5):
the file goes up as a browser sends it (an upload URL asked over the websocket, an HTTP PUT
with the XSRF token, a rerun naming the file) to a real ``streamlit run app.py``, and the
Train page answers with the named refusal of :mod:`csvm.runs.bundle` - no exception box,
no traceback - while another student's page still loads.

The bundles are those of tests/runs/test_bundle_hostile.py (its builders); the client is
:mod:`tests._ws_client`.  No time is asserted: a page that does not come within the
generous timeout fails the test by its TimeoutError.
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("websockets.sync.client")
st = pytest.importorskip("streamlit")

from tests._browser import ARTIFACTS, streamlit_server  # noqa: E402
from tests._ws_client import Page, StreamlitClient  # noqa: E402
from tests.runs.test_bundle_hostile import (  # noqa: E402
    PAIR,
    _export,
    _rezip,
    _trained,
    _with_cell,
)

pytestmark = pytest.mark.slow

UPLOADER = "The zip a run's Download gave"
#: How long a page may take on a loaded CI machine; no timing is asserted below it.
PATIENCE = 60
LOG = ARTIFACTS / "streamlit-hostile-reload-ws.log"


@pytest.fixture(scope="module")
def server():
    ARTIFACTS.mkdir(exist_ok=True)
    with open(LOG, "w") as log, streamlit_server(log=log) as url:
        yield url


@pytest.fixture(scope="module")
def export() -> bytes:
    """The app's own export of a small two-class run."""
    return _export(PAIR, _trained(PAIR))


def _unescaped(text: str) -> str:
    """An alert's text without the backslashes the page's md_escape adds."""
    return re.sub(r"\\(.)", r"\1", text)


def _reload(url: str, content: bytes) -> Page:
    """Open the Train page and upload ``content`` in "Reload a run" (shown on upload)."""
    with StreamlitClient(url, page="train").open(PATIENCE) as owner:
        page = owner.rerun(timeout=PATIENCE)
        return owner.upload(UPLOADER, "run.zip", content, page, timeout=PATIENCE)


def _errors(page: Page) -> list[str]:
    return [_unescaped(e.text) for e in page.elements if e.kind == "alert"]


def _assert_refused(page: Page, message: str) -> None:
    assert page.finished and page.status == "FINISHED_SUCCESSFULLY", page.status
    assert not page.exception
    assert not [e for e in page.elements if e.kind == "exception"]
    assert "Traceback" not in page.texts()
    errors = _errors(page)
    assert any(message in e for e in errors), errors


def _assert_server_log_clean() -> None:
    log = LOG.read_text()
    assert "Uncaught app execution" not in log and "Traceback" not in log, log[-2000:]


# -- row 1: a 30,000-column history ----------------------------------------------------------
def test_a_wide_history_uploaded_is_refused_by_name_and_the_server_answers_others(server, export):
    columns = 30_000
    header = ",".join(f"c{i}" for i in range(columns))
    wide = f"{header}\n{','.join('1' * columns)}\n{','.join('2' * columns)}\n".encode()
    page = _reload(server, _rezip(export, **{"history.csv": wide}))
    _assert_refused(page, f"history.csv has {columns:,} columns; a run export has at most")
    # Another student, from another address, still gets the Train page.
    with StreamlitClient(server, source="127.0.0.2", page="train").open(PATIENCE) as other:
        other_page = other.rerun(timeout=PATIENCE)
    assert other_page.finished and not other_page.exception
    assert other_page.widget("file_uploader", UPLOADER)
    _assert_server_log_clean()


# -- row 5: a crafted value ------------------------------------------------------------------
def test_a_crafted_objective_uploaded_is_refused_by_name(server, export):
    page = _reload(server, _with_cell(export, "objective", "abc"))
    _assert_refused(page, "history.csv, row 1: objective is 'abc', not a finite number")
    _assert_server_log_clean()
