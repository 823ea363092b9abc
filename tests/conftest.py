"""Test-wide configuration."""

import logging

# AppTest and cached helpers run Streamlit code outside a browser session, where Streamlit
# logs "missing ScriptRunContext! This warning can be ignored when running in bare mode."
# It is expected there, so that one logger is quietened; every other warning still shows.
logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(logging.ERROR)
