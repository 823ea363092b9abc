"""Imported by the fork server of the job pool: import the pool's preload modules once.

Workers are forked from that server, so every job starts with numpy, scikit-learn and
the library already imported (and whatever the preload modules load, such as the default
dataset), sharing those pages of memory, instead of spending 1-3 s importing them.

The modules come in the ``CSVM_JOBS_PRELOAD`` environment variable (comma-separated),
because ``multiprocessing``'s fork server can only import module names, and would stop
at the first one that raised anything but ImportError.  ``CSVM_JOBS_MAIN_PATH`` names the
parent's main script: imported here once (as ``multiprocessing`` does for spawned
children, under the name ``__mp_main__``), a forked worker finds it already loaded
instead of running it again.
"""

import importlib
import os
from multiprocessing import process, spawn

import csvm.jobs.worker  # noqa: F401 - what every worker runs

if os.environ.get("CSVM_JOBS_MAIN_PATH"):
    # As the fork server itself would: a main script that starts processes when imported
    # (no ``if __name__ == "__main__":``) then raises instead of starting servers here.
    process.current_process()._inheriting = True
    try:
        spawn.import_main_path(os.environ["CSVM_JOBS_MAIN_PATH"])
    except BaseException:  # noqa: BLE001 - each worker then imports it itself, as before
        pass
    finally:
        del process.current_process()._inheriting

for _name in filter(None, os.environ.get("CSVM_JOBS_PRELOAD", "").split(",")):
    try:
        importlib.import_module(_name)
    except BaseException:  # noqa: BLE001 - a failed preload shows up when the job runs
        pass
