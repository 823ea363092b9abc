"""Hyperparameter sweeps: a grid over two settings, scored on the validation split.

Like the thesis's tables 4.2–4.6, every cell trains one CSVM and reports its accuracy on
the validation images (never the test images, which stay for the final comparison).
Cells are independent jobs, so the explorer runs them in parallel on its worker pool;
:func:`run_sweep` runs them in local threads or, inside :func:`csvm.parallel.backend`, on
a Dask cluster (each cell is seeded by its configuration, so the results are the same).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from csvm.analysis.stability import summarise_stability
from csvm.parallel import run_tasks
from csvm.runs.config import RunConfig
from csvm.runs.targets import as_config, fit_timed, load_data

__all__ = [
    "MAX_SEEDS",
    "SWEEP_PARAMS",
    "parse_values",
    "run_cell",
    "run_seed",
    "run_sweep",
    "run_validation",
    "run_seed_job",
    "stability",
    "sweep_configs",
    "sweepable",
    "sweep_rows",
    "ignore_event",
]

#: Most seeds a stability run takes (the issue's k <= 10).
MAX_SEEDS = 10

#: Settings a sweep can vary, with their labels and value types.
SWEEP_PARAMS: dict[str, tuple[str, type]] = {
    "lam": ("λ", float),
    "eta": ("η", float),
    "degree": ("degree d", int),
    "gamma": ("γ", float),
    "C": ("C", float),
    "filter_size": ("filter size", int),
    "n_filters": ("filters", int),
    "lam_w": ("λ_w", float),
    "lam_f": ("λ_f", float),
    # A seed axis shows how much a setting's score moves between random first filters.
    "seed": ("seed", int),
}

#: A first grid for each axis (γ's and C's show a pattern on the classroom preset).
DEFAULT_VALUES: dict[str, str] = {
    "lam": "0.001, 0.01, 0.1",
    "eta": "0.03, 0.1, 0.3",
    "degree": "2, 3",
    "gamma": "0.0005, 0.02, 1",
    "C": "0.01, 10",
    "filter_size": "3, 5, 7",
    "n_filters": "1, 2",
    "lam_w": "0.001, 0.1",
    "lam_f": "0.001, 0.1",
    "seed": "0, 1, 2",
}


def sweepable(config) -> list[str]:
    """The settings a sweep may vary for ``config``: only those its model and kernel use
    (an L-CSVM ignores γ and C: a grid over them would show one number six times)."""
    return [name for name in SWEEP_PARAMS if config.uses(name)]


def parse_values(name: str, text: str) -> list:
    """Comma-separated values of one sweep axis, e.g. ``"0.01, 0.1, 1"``.

    Raises
    ------
    ValueError
        Naming the value that does not parse, or when there are none or more than eight.
    """
    if name not in SWEEP_PARAMS:
        raise ValueError(f"Cannot sweep {name!r}: choose one of {', '.join(SWEEP_PARAMS)}.")
    kind = SWEEP_PARAMS[name][1]
    values = []
    for item in (s.strip() for s in str(text).split(",")):
        if not item:
            continue
        try:
            values.append(kind(float(item)) if kind is int else kind(item))
        except ValueError:
            raise ValueError(f"{SWEEP_PARAMS[name][0]}: {item!r} is not a number.") from None
    if not 1 <= len(values) <= 8:
        raise ValueError(
            f"{SWEEP_PARAMS[name][0]}: give between 1 and 8 values, separated by commas."
        )
    return values


def sweep_configs(
    base: RunConfig | dict[str, Any],
    x_name: str,
    x_values: list,
    y_name: str,
    y_values: list,
    image_shape: tuple[int, ...] | None = None,
) -> list[dict]:
    """One configuration per grid cell, row-major (y outer, x inner).

    Raises
    ------
    ValueError
        When the two axes are the same setting, or a cell is invalid (the message names
        the cell).
    """
    if x_name == y_name:
        raise ValueError("Choose two different settings for the two axes.")
    base = as_config(base)
    cells = []
    for y in y_values:
        for x in x_values:
            try:
                config = base.replace(**{x_name: x, y_name: y, "baselines": ()})
            except ValueError as exc:
                raise ValueError(f"{x_name}={x}, {y_name}={y}: {exc}") from None
            errors = config.problems(image_shape)
            if errors:
                raise ValueError(f"{x_name}={x}, {y_name}={y}: {errors[0]}")
            cells.append(config.to_dict())
    return cells


def ignore_event(event: dict[str, Any]) -> None:
    """An ``emit`` for cells whose progress nobody watches (a Dask cluster's cells)."""


def run_validation(
    emit: Callable[[dict[str, Any]], Any], config: dict[str, Any], data_dir: str | None = None
) -> dict[str, Any]:
    """Train one CSVM and score it on the validation split (a sweep cell's job target).

    Returns
    -------
    dict
        ``val_accuracy``, ``n_val`` (the validation images it is scored on),
        ``train_accuracy``, ``seconds``, ``objective`` (last recorded) and ``diverged`` (a
        message, or None; a diverged cell is scored with its best state).
    """
    config = as_config(config)
    data = load_data(config, data_dir)
    if len(data.y_val) == 0:
        raise ValueError("This dataset has no validation images for the pair.")
    clf = config.build_estimator(data.image_shape)
    seconds, exc = fit_timed(clf, data)
    diverged = None if exc is None else str(exc)
    # The last training step (a divergence event, if any, comes after it and has no T).
    steps = [e for e in clf.history_ if e["kind"] in ("iteration", "half_step")]
    result = {
        "val_accuracy": float(np.mean(clf.predict(data.X_val) == data.y_val)),
        "n_val": int(len(data.y_val)),
        "train_accuracy": float(np.mean(clf.predict(data.X_train) == data.y_train)),
        "seconds": seconds,
        "objective": steps[-1]["objective"] if steps else None,
        "diverged": diverged,
    }
    emit({"kind": "result", "model": "sweep", **result})
    return result


def _no_emit(event: dict[str, Any]) -> None:
    """A cell's progress events go nowhere when it runs as a plain task."""


def run_cell(config: dict[str, Any], data_dir: str | None = None) -> dict[str, Any]:
    """:func:`run_validation` without an event sink: a task for an executor or a cluster."""
    return run_validation(_no_emit, config, data_dir)


def run_sweep(
    cells: list[dict[str, Any]],
    n_jobs: int | None = None,
    data_dir: str | None = None,
    on_result: Callable[[int, dict[str, Any]], Any] | None = None,
) -> list[dict[str, Any] | None]:
    """Score every cell of a grid on the validation split.

    Parameters
    ----------
    cells : list of dict
        Configurations, as from :func:`sweep_configs`.
    n_jobs : int or None
        Cells trained at once in local threads (-1: one per core).  Inside
        :func:`csvm.parallel.backend` the cells run on the Dask cluster instead.
    data_dir : str, optional
        Where the dataset files are.
    on_result : callable, optional
        ``on_result(index, result)`` as each cell finishes; returning False stops the
        sweep (cells not yet started are cancelled; their results are None).

    Returns
    -------
    list
        One :func:`run_validation` result per cell, in the cells' order.
    """
    return run_tasks(run_cell, [(c, data_dir) for c in cells], n_jobs, on_result)


def sweep_rows(
    cells: list[dict[str, Any]],
    results: list[dict[str, Any] | None],
    x_name: str,
    y_name: str,
) -> list[dict[str, Any]]:
    """One flat record per cell (its two settings, then its scores), e.g. for a CSV file."""
    rows = []
    for config, result in zip(cells, results, strict=True):
        row: dict[str, Any] = {x_name: config[x_name], y_name: config[y_name]}
        keys = ("val_accuracy", "train_accuracy", "seconds", "objective", "diverged")
        row.update({k: None if result is None else result[k] for k in keys})
        rows.append(row)
    return rows


# -- stability across seeds ---------------------------------------------------------------
def _estimator(config: dict[str, Any], image_shape: tuple[int, ...]):
    return as_config(config).build_estimator(image_shape)


def run_seed(
    config: dict[str, Any],
    seed: int,
    data_dir: str | None = None,
    emit: Callable[[dict[str, Any]], Any] = ignore_event,
) -> dict[str, Any]:
    """Train ``config`` with its first filter drawn from ``seed`` (a stability task).

    The data (including any ``n_train`` subsample) are those of ``config``'s own seed, so
    that the seeds differ only in the random first filter.  ``emit`` receives a "start"
    event once the data are loaded.

    Returns
    -------
    dict
        ``seed``, ``filters`` (n_filters, C, p, q), ``start_filters`` (the random first
        filters), ``val_accuracy``, ``test_accuracy``, ``seconds`` and ``diverged`` (a
        message or None).
    """
    data = load_data(config, data_dir)
    emit({"kind": "start", "model": "csvm", "n_train": int(len(data.y_train))})
    clf = _estimator({**config, "seed": int(seed)}, data.image_shape)
    first: dict[str, np.ndarray] = {}

    def keep_first(event: dict[str, Any]) -> None:
        # The first record holds the random starting filter (before any step).
        if "filters" in event:
            first.setdefault("filters", np.asarray(event["filters"], dtype=np.float64))

    seconds, exc = fit_timed(clf, data, keep_first)
    diverged = None if exc is None else str(exc)
    return {
        "seed": int(seed),
        "filters": np.asarray(clf.estimators_[0].filters, dtype=np.float64),
        "start_filters": first.get("filters"),
        "val_accuracy": float(np.mean(clf.predict(data.X_val) == data.y_val))
        if len(data.y_val)
        else None,
        "test_accuracy": float(np.mean(clf.predict(data.X_test) == data.y_test)),
        "seconds": seconds,
        "diverged": diverged,
    }


def run_seed_job(emit: Callable[..., Any], config: dict[str, Any], seed: int) -> dict[str, Any]:
    """:func:`run_seed` as a :class:`csvm.jobs.JobPool` target (the Stability page runs one
    job per seed, in parallel on the pool's workers)."""
    return run_seed(config, seed, emit=emit)


def stability(
    config: dict[str, Any],
    seeds: int | list[int] = 5,
    n_jobs: int | None = None,
    data_dir: str | None = None,
) -> dict[str, Any]:
    """The same configuration over several seeds: how much do the filters move?

    Parameters
    ----------
    config : dict
        A run configuration (its pair, data and settings; its seed only picks the data
        subsample).
    seeds : int or list of int
        The seeds of the first filters (an int k means 0..k-1); at most :data:`MAX_SEEDS`.
    n_jobs : int or None
        Seeds trained at once in local threads; inside :func:`csvm.parallel.backend` they
        run on the Dask cluster.
    data_dir : str, optional

    Returns
    -------
    dict
        ``seeds``; ``filters`` (runs, k, C, p, q), each flipped to agree in sign with the
        first run's (a filter and its negative give the same SVM: both feature maps of a
        kernel entry change sign, so every kernel value stays); ``signs``; ``cosine``
        (runs x runs, mean |cosine| of the filters); ``mean_abs_cosine`` over the pairs of
        runs, and ``start_mean_abs_cosine``, the same for the random first filters (the
        chance level); ``val_accuracy`` and ``test_accuracy`` as (mean, std); ``runs`` (each
        seed's result without its filters).

    Raises
    ------
    ValueError
        For fewer than 2 or more than :data:`MAX_SEEDS` seeds, or repeated seeds.
    """
    seeds = list(range(seeds)) if isinstance(seeds, int) else [int(s) for s in seeds]
    if not 2 <= len(seeds) <= MAX_SEEDS or len(set(seeds)) != len(seeds):
        raise ValueError(
            f"Give between 2 and {MAX_SEEDS} different seeds, got {seeds}: stability "
            "compares the runs with each other."
        )
    config = as_config(config).replace(baselines=()).to_dict()
    results = run_tasks(run_seed, [(config, s, data_dir) for s in seeds], n_jobs)
    return summarise_stability(seeds, results)
