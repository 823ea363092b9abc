"""The ablation job: a finished K-CSVM run's learned filters against fixed filters at the
learned norm (the maths is :mod:`csvm.analysis.ablation`; this loads the run's data and
builds its estimator from its settings)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from csvm.analysis.ablation import score_filter_sets, score_layered_sets
from csvm.runs.targets import as_config, load_data

__all__ = ["run_ablation"]


def run_ablation(
    emit: Callable[[dict[str, Any]], Any],
    config: dict[str, Any],
    learned_filters: list,
    start_filters: list | None = None,
    data_dir: str | None = None,
    learned_layers: list | None = None,
    start_layers: list | None = None,
) -> dict[str, Any]:
    """Fixed-filter ablations of a finished K-CSVM run (a :class:`csvm.jobs.JobPool` target).

    Parameters
    ----------
    emit : callable
        Receives ``{"kind": "start", ...}`` once the data are loaded, then one
        ``{"kind": "ablation", ...}`` event per filter set scored.
    config : dict
        The run's configuration: ``dataset``, ``class_a``, ``class_b``, ``protocol``,
        ``n_train``, ``seed``, ``kernel``, ``degree``, ``gamma``, ``coef0``, ``C``,
        ``filter_size``, ``n_filters`` (others take :class:`~csvm.runs.config.RunConfig`'s
        defaults).
    learned_filters : array-like (n_filters, p, q) or (n_filters, C, p, q)
        The run's final filters (``run_model``'s ``result["filters"]``).
    start_filters : array-like, optional
        The run's first filters; None draws them again from ``config["seed"]``, as the
        estimator does.
    data_dir : str, optional
        Where the dataset files are.
    learned_layers, start_layers : list of array-like, optional
        A stack of layers' learned and first filters, every layer (the run's
        ``result["layer_filters"]`` and ``["start_layer_filters"]``): then each fixed set
        replaces every layer (:func:`csvm.analysis.ablation.score_layered_sets`).

    Returns
    -------
    dict
        As :func:`csvm.analysis.ablation.score_filter_sets`.
    """
    run = as_config(config)
    c = run.to_dict()
    if c.get("model", "kcsvm") != "kcsvm":
        raise ValueError("The ablation retrains a K-CSVM's kernel SVM: run it after a K-CSVM.")
    data = load_data(c, data_dir)
    emit({"kind": "start", "model": "ablation", "n_train": int(len(data.y_train))})
    estimator = run.replace(model="kcsvm").build_estimator(data.image_shape)

    def on_row(row: dict[str, Any]) -> None:
        emit({"kind": "ablation", "model": "ablation", "step": row["name"], **row})

    if learned_layers is not None and start_layers is not None:
        return score_layered_sets(data, estimator, learned_layers, start_layers, on_row)
    return score_filter_sets(data, c, estimator, learned_filters, start_filters, on_row)
