"""Reload a run from its export zip: the Train page shows it again, as it was trained.

The bundle is read and checked by :func:`csvm.runs.bundle.load_bundle`; here it is also
checked against this server's data (the run's settings must give the same test images,
or its predictions would be scored against the wrong labels), then shown through the
worker pool as replay jobs (:func:`csvm.runs.replay.replay_model`), so the page, its
playback, its results and its shared links treat it as any other run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from csvm.exceptions import CSVMError
from csvm.jobs import QuotaExceeded
from csvm.runs.bundle import RunBundle, load_bundle
from csvm.runs.replay import replay_model
from explorer.common import data_for, get_pool, owner, playback, start_run
from explorer.settings import set_config


def _mismatch(bundle: RunBundle, y_test: np.ndarray) -> str | None:
    """Why the bundle's results cannot be scored against these test labels (None: they can)."""
    labels = set(np.unique(y_test).tolist())
    for model, result in bundle.results.items():
        if result is None:
            continue
        predictions = result.get("test_predictions", [])
        n = result.get("n_test", len(predictions) or len(y_test))
        if n != len(y_test) or len(predictions) not in (0, len(y_test)):
            return (
                f"The run's {model} was tested on {n:,} images, but its settings give "
                f"{len(y_test):,} test images on this server (other data files): it cannot "
                "be shown here."
            )
        if set(predictions) - labels:
            return f"The run's {model} predictions hold labels these test images do not have."
    return None


def _jobs_of(bundle: RunBundle, n_train: int) -> dict[str, dict[str, Any]]:
    """Each model's replay: the events it emits and the result it returns."""
    jobs: dict[str, dict[str, Any]] = {}
    for model, result in bundle.results.items():
        events: list[dict[str, Any]] = [{"kind": "start", "model": model, "n_train": n_train}]
        if model == "csvm":
            events += [dict(row) for row in bundle.history]
            if bundle.filters is not None and len(events) > 1:
                events[-1]["filters"] = bundle.filters  # the filter view draws the last
            if result is not None:
                result = {**result, "history": bundle.history, "filters": bundle.filters}
        jobs[model] = {"events": events, "result": result}
    return jobs


def reload_run(data: bytes) -> tuple[str | None, list[str]]:
    """Show the run of an export zip on the Train page.

    Returns the reason it cannot be shown (None: it is), and the settings that could not
    be read (they keep their defaults, as for a link).
    """
    try:
        bundle = load_bundle(data)
        pair = data_for(bundle.config)
    except CSVMError as exc:
        return str(exc), []
    problem = _mismatch(bundle, pair.y_test)
    if problem:
        return problem, bundle.problems
    get_pool().cancel_owner(owner(), group="train")  # one Train run per session, as Start
    targets = {
        model: (replay_model, kwargs)
        for model, kwargs in _jobs_of(bundle, len(pair.y_train)).items()
    }
    try:
        run = start_run(bundle.config, targets, reloaded=True)
    except QuotaExceeded as exc:
        return str(exc), bundle.problems
    playback(run).jump = True  # a finished run: its last step and results at once
    set_config(bundle.config)
    return None, bundle.problems
