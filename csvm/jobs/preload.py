"""Imported by the fork server of the job pool: import the pool's preload modules once.

Workers are forked from that server, so every job starts with numpy, scikit-learn and
the library already imported (and whatever the preload modules load, such as the default
dataset), sharing those pages of memory, instead of spending 1-3 s importing them.

The modules come in the ``CSVM_JOBS_PRELOAD`` environment variable (comma-separated),
because ``multiprocessing``'s fork server can only import module names, and would stop
at the first one that raised anything but ImportError.  The parent's main script is
never imported: workers are started with it hidden (``process._without_main``), since job
targets are importable functions and under Streamlit the main script is a page.
"""

import importlib
import os

import csvm.jobs.worker  # noqa: F401 - what every worker runs

_names = list(filter(None, os.environ.get("CSVM_JOBS_PRELOAD", "").split(",")))
if os.environ.get("CSVM_DASK_SCHEDULER", "").strip():
    # Train jobs relay to the cluster (csvm.jobs.dask_backend): importing ``distributed``
    # in each job's worker took 2-3 CPU seconds before its first event.
    _names.append("distributed")

for _name in _names:
    try:
        importlib.import_module(_name)
    except BaseException:  # noqa: BLE001 - a failed preload shows up when the job runs
        pass
