"""``csvm train``'s other models: the run's ``--baselines`` trained on the same split as
its CSVM, each printed with its test accuracy and 95 % interval, then an exact McNemar
test of the CSVM against each, as the Train page's comparison table and the lines under it.

A baseline is trained as the app's job trains it (:func:`csvm.runs.targets.run_model`, or
:func:`csvm.runs.tuned.run_tuned_model` for the plain SVM and CNN with
``--tune-baselines true``), so the command and the page give the same numbers.
"""

from __future__ import annotations

import sys
from typing import Any

from csvm.runs.config import MODEL_LABELS, RunConfig
from csvm.runs.fields import tuned_label

__all__ = ["baseline_report", "train_baselines"]


def train_baselines(config: RunConfig, data_dir: str | None) -> dict[str, dict[str, Any]]:
    """Train each of ``config.baselines`` on the run's split.

    Parameters
    ----------
    config : RunConfig
        The run's settings; its ``baselines`` name the models, ``tune_baselines`` whether
        the plain SVM and CNN are tuned on the validation split first.
    data_dir : str or None
        Where the dataset's files are, as for the CSVM.

    Returns
    -------
    dict
        Model key -> ``{"state": "done", "result": ...}``, as the app's outcomes.
    """
    from csvm.runs.targets import run_model
    from csvm.runs.tuned import run_tuned_model

    outcomes: dict[str, dict[str, Any]] = {}
    for model in config.baselines:
        tuned = model in ("svm", "cnn") and config.tune_baselines
        target = run_tuned_model if tuned else run_model
        label = MODEL_LABELS[model]
        print(f"training {tuned_label(label) if tuned else label}…", file=sys.stderr)
        result = target(lambda event: None, config.to_dict(), model, data_dir)
        outcomes[model] = {"state": "done", "result": result}
    return outcomes


def baseline_report(config: RunConfig, outcomes: dict[str, dict[str, Any]], y_test) -> list[str]:
    """The lines ``csvm train`` prints for a run's models: one per model (test accuracy,
    95 % interval, seconds, and a status other than "done"), then the CSVM against each
    other model (McNemar's exact test on the same test images).

    Parameters
    ----------
    config : RunConfig
    outcomes : dict
        Model key ("csvm" first) -> ``{"state", "result"}``.
    y_test : array of shape (n_test,)
        The test labels the predictions are scored against.

    Returns
    -------
    list of str
    """
    from csvm.runs.summary import comparisons
    from csvm.runs.targets import result_rows

    rows = result_rows(config, outcomes)
    width = max(len(row["model"]) for row in rows)
    lines = []
    for row in rows:
        status = "" if row["status"] == "done" else f", {row['status']}"
        lines.append(
            f"{row['model']:<{width}}  {row['test accuracy']:6.2f} % test  "
            f"(95 % interval {row['95 % interval']})  {row['seconds']:.2f} s{status}"
        )
    # The CSVM against each model: every pair of seven models would be 21 lines.
    mine = f"{rows[0]['model']} vs "
    return lines + [line for line in comparisons(config, outcomes, y_test) if line.startswith(mine)]
