"""Reload a run from its export zip: the Train page shows it again, as it was trained.

The bundle is read and checked once, on upload, by :func:`csvm.runs.bundle.load_bundle`
(its schema: nothing downstream can raise on what passes), then set against this
server's data by :func:`csvm.runs.bundle.rescore` (the run's settings must give the same
test images; every score is recomputed from its test predictions), then shown through
the worker pool as replay jobs (:func:`csvm.runs.replay.replay_model`), so the page, its
playback, its results and its shared links treat it as any other run.  A viewer of its
link reads the checked run from the pool and never the upload.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from csvm.exceptions import CSVMError
from csvm.jobs import QuotaExceeded
from csvm.runs.bundle import RunBundle, load_bundle, rescore
from csvm.runs.replay import replay_model
from explorer.datasets import data_for
from explorer.playback import playback
from explorer.runs import start_run, stop_current_run
from explorer.settings import set_config

__all__ = ["bundle_replays", "reload_run"]


def _with_filters(rows: list[dict[str, Any]], filters: np.ndarray | None, multi: bool) -> None:
    """Give the last step of each sub-problem its final filters (the views draw the last
    step's; a multi-class run's grid draws each sub-problem's)."""
    if filters is None:
        return
    last: dict[int, dict[str, Any]] = {}
    for row in rows:
        if row.get("kind") != "divergence":  # a divergence is no step: never drawn
            last[int(row.get("classifier", 0))] = row
    for classifier, row in last.items():
        row["filters"] = filters[classifier] if multi else filters


def bundle_replays(bundle: RunBundle, n_train: int) -> dict[str, dict[str, Any]]:
    """Each model's replay of a checked bundle (``{model: {"events", "result"}}``): the
    events its replay job emits and the result it returns (the run store replays a stored
    run with them too)."""
    jobs: dict[str, dict[str, Any]] = {}
    for model, result in bundle.results.items():
        events: list[dict[str, Any]] = [{"kind": "start", "model": model, "n_train": n_train}]
        if model == "csvm":
            rows = [dict(row) for row in bundle.history]
            _with_filters(rows, bundle.filters, bundle.config.multiclass)
            events += rows
            if result is not None:
                result = {**result, "history": bundle.history, "filters": bundle.filters}
        jobs[model] = {"events": events, "result": result}
    return jobs


def reload_run(data: bytes) -> tuple[str | None, list[str]]:
    """Show the run of an export zip on the Train page.

    Parameters
    ----------
    data : bytes
        The uploaded file.

    Returns
    -------
    problem : str or None
        Why it cannot be shown (None: it is): a named refusal, never a traceback.
    notes : list of str
        Settings that could not be read (they keep their defaults, as for a link),
        history columns left out, claims its predictions contradict, and whether its
        results could be verified against this server's test images.
    """
    try:
        bundle = load_bundle(data)
        pair = data_for(bundle.config)
        bundle = rescore(bundle, pair)
    except CSVMError as exc:
        return str(exc), []
    stop_current_run()  # this tab's run stops, as on Start (another tab's goes on)
    targets = {
        model: (replay_model, kwargs)
        for model, kwargs in bundle_replays(bundle, len(pair.y_train)).items()
    }
    try:
        run = start_run(bundle.config, targets, reloaded=True)
    except QuotaExceeded as exc:
        return str(exc), bundle.problems
    playback(run).jump = True  # a finished run: its last step and results at once
    set_config(bundle.config)
    return None, bundle.problems
