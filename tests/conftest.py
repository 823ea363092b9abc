"""Test-wide configuration, and the fixtures of the real-browser tests."""

import atexit
import logging
import os
import shutil
import tempfile

import pytest

from tests._browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, streamlit_server

# AppTest and cached helpers run Streamlit code outside a browser session, where Streamlit
# logs "missing ScriptRunContext! This warning can be ignored when running in bare mode."
# It is expected there, so that one logger is quietened; every other warning still shows.
logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(logging.ERROR)

# The app keeps every Train run in its run store (explorer/run_store.py): the tests' apps and
# servers share a throwaway SQLite file, never the user's own store (a test may name another).
if not os.environ.get("CSVM_RUN_STORE"):
    _STORE_DIR = tempfile.mkdtemp(prefix="csvm-test-store-")
    atexit.register(shutil.rmtree, _STORE_DIR, ignore_errors=True)
    os.environ["CSVM_RUN_STORE"] = f"sqlite:///{_STORE_DIR}/runs.sqlite"


@pytest.fixture(scope="module")
def server(request):
    ARTIFACTS.mkdir(exist_ok=True)
    # One log per test module, so two modules' servers never share a file.
    with open(ARTIFACTS / f"streamlit-{request.module.__name__}.log", "w") as log:
        with streamlit_server(log) as url:
            yield url


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()
