"""Warm a Dask worker for the Train page's jobs.

Start each worker as ``dask worker ADDRESS --preload csvm.jobs.dask_preload``.

A cluster worker that starts cold spends its first Train job importing the library and
scikit-learn, loading the run's data and making its first fit's lazy imports: the first
event of the Classroom preset's K-CSVM came 13 s after its submission on a cold worker and
0.1 s on a warm one (2 shared cores at load 5; ``bench/bench_class_load.py --dask``).  Dask
calls :func:`dask_setup` when the worker starts, before it takes any task, so a class's
first Start finds the worker warm.

What it does: imports the job targets, loads the data of every preset whose data ship with
the library (the Classroom shapes, the bundled MNIST digits), and trains the first preset's
three models once, with one iteration and few images, so that the lazily imported solvers
and the network's code are in memory.  Data that must be downloaded are left alone: a
worker never fetches anything at start.  Whatever fails here only costs time; the job
itself reports its errors.

It also undoes the nanny's ``MALLOC_TRIM_THRESHOLD_=65536``: set in the environment, it
turns off glibc's growing mmap threshold, so every array over 128 kB is a fresh mapping
whose pages fault in again, and a Train job's numpy work took about twice the CPU time it
takes in the server's own workers (the Classroom preset's CNN 4.5-5.3 CPU s against
2.4-2.8, its K-CSVM 1.6-1.7 against 1.0; ``--no-nanny`` workers match the pool).  The
worker gives memory back less eagerly for it; the jobs' memory is bounded by their data.
"""

from __future__ import annotations

import ctypes
import logging
import os
import time
import warnings
from typing import Any

__all__ = ["dask_setup", "warm"]

_log = logging.getLogger(__name__)

# glibc's mallopt parameters (malloc.h) and the largest mmap threshold glibc itself grows
# to (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 32 * 2**20

#: A warm-up fit's size: enough to run every code path of a real one, cheap to run.
_WARM_UP = {"n_iter": 1, "n_train": 40, "tune_baselines": False, "baselines": "svm,cnn"}


def _offline_presets() -> list[Any]:
    """The presets' settings whose data ship with the library (no download)."""
    from csvm.data.registry import DATASETS
    from csvm.runs.config import parse
    from csvm.runs.presets import load_presets

    found = []
    for preset in load_presets():
        config, problems = parse(preset["config"], source=f"the preset {preset['name']!r}")
        spec = DATASETS.get(config.dataset)
        if not problems and spec is not None and spec.offline:
            found.append(config)
    return found


def warm() -> float:
    """Import, load and fit what a Train job needs; returns the seconds it took."""
    start = time.perf_counter()
    from csvm.runs.targets import load_data, run_model
    from csvm.runs.tuned import run_tuned_model  # noqa: F401 - the baselines' target

    configs = _offline_presets()
    for config in configs:
        load_data(config)
    if configs:
        small = configs[0].replace(**_WARM_UP)
        with warnings.catch_warnings():  # a 40-image, one-step fit's advice is not news
            warnings.simplefilter("ignore")
            for model in ("csvm", "svm", "cnn"):
                run_model(lambda event: None, small.to_dict(), model)
    return time.perf_counter() - start


def _undo_malloc_trim() -> bool:
    """Give glibc's malloc its own thresholds back (see the module); False where not glibc."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(
            libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
            and libc.mallopt(_M_TRIM_THRESHOLD, 2 * _MMAP_THRESHOLD)
        )
    except (OSError, AttributeError):
        return False


def dask_setup(worker: Any = None) -> None:
    """Dask's preload hook: warm this worker before it takes tasks (see the module)."""
    if os.environ.get("MALLOC_TRIM_THRESHOLD_") and not _undo_malloc_trim():
        _log.warning("csvm.jobs.dask_preload: could not reset malloc's trim threshold")
    try:
        seconds = warm()
    except Exception:  # noqa: BLE001 - a failed warm-up only costs the first job time
        _log.warning("csvm.jobs.dask_preload: the warm-up failed", exc_info=True)
        return
    _log.info("csvm.jobs.dask_preload: worker warm in %.1f s", seconds)
