"""The Filter lab's job target: one lab computation (a solve at a fixed filter, or a
landscape) in a worker process; the maths is :mod:`csvm.analysis.lab` and
:mod:`csvm.analysis.landscape`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from csvm.analysis.lab import SETTING_NAMES, LabResult, solve_fixed_filter
from csvm.analysis.landscape import Landscape1D, Landscape2D, landscape_1d, landscape_2d

__all__ = ["lab_job"]


def lab_job(
    emit: Callable[[dict[str, Any]], Any],
    *,
    task: str,
    data: dict[str, Any],
    filters: Any,
    settings: dict[str, Any],
    d1: Any = None,
    d2: Any = None,
    grid: Any = None,
) -> LabResult | Landscape1D | Landscape2D:
    """One lab computation in a worker process: the explorer's job-pool target.

    The worker loads the pair itself (the same :func:`csvm.data.load_pair` call the
    page makes, so the images agree), which keeps the job's message small whatever the
    dataset.

    Parameters
    ----------
    emit : callable
        Receives ``{"kind": "landscape", "done", "total", "objective"}`` after every
        point of a landscape.
    task : {"solve", "landscape_1d", "landscape_2d"}
    data : dict
        ``dataset``, ``class_a``, ``class_b``, ``protocol``, ``n_train``, ``seed``.
    filters : array
    settings : dict
        Keywords of :func:`solve_fixed_filter` (see ``SETTING_NAMES``).
    d1, d2, grid
        Directions and positions of the landscapes (``grid`` is ``ts`` for 1-D).

    Returns
    -------
    LabResult (with the test split's accuracy), Landscape1D or Landscape2D
    """
    from csvm.data import load_pair

    n_train = data.get("n_train")
    pair = load_pair(
        data["dataset"],
        data["class_a"],
        data["class_b"],
        protocol=data.get("protocol"),
        n_train=None if n_train is None else int(n_train),
        random_state=int(data.get("seed", 0)),
    )
    kwargs = {k: settings[k] for k in SETTING_NAMES if k in settings}

    def progress(done: int, total: int, objective: float) -> None:
        emit({"kind": "landscape", "done": done, "total": total, "objective": objective})

    X, y = pair.X_train, pair.y_train
    if task == "solve":
        return solve_fixed_filter(X, y, filters, X_test=pair.X_test, y_test=pair.y_test, **kwargs)
    if task == "landscape_1d":
        return landscape_1d(X, y, filters, d1, grid, progress=progress, **kwargs)
    if task == "landscape_2d":
        return landscape_2d(X, y, filters, d1, d2, grid, progress=progress, **kwargs)
    raise ValueError(
        f"Unknown lab task {task!r}: expected 'solve', 'landscape_1d' or 'landscape_2d'."
    )
