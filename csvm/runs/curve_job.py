"""The job target of one learning-curve cell (the "When does the filter pay?" page)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from csvm.analysis.curves import run_cell

__all__ = ["run_curve_cell"]


def run_curve_cell(
    emit: Callable[[dict[str, Any]], Any],
    dataset: str,
    a: str,
    b: str,
    method: str,
    n_train: int,
    seed: int,
    data_dir: str | None = None,
) -> dict[str, Any]:
    """One cell (:func:`csvm.analysis.curves.run_cell`) as a :class:`csvm.jobs.JobPool`
    target: a ``start`` event, then the cell as the result."""
    emit({"kind": "start", "model": method, "n_train": int(n_train), "seed": int(seed)})
    return run_cell(dataset, a, b, method, n_train, seed, data_dir)
