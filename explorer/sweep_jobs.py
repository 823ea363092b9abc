"""A sweep's cells in the worker pool, found again after a reload.

The Sweep page keeps its grid in the session, which a reload replaces: a sweep of
minutes then vanished from the page while its cells went on in the pool.  Each cell's
job carries the sweep's id, its axes and its place in the grid (the pool's ``meta``, never
sent to the worker), so a new session of the same browser (the owner cookie) rebuilds
the newest sweep from the pool.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, MutableMapping, Sequence
from typing import Any

from csvm.runs.sweeps import run_validation

__all__ = ["recover_sweep", "seed_widgets", "submit_sweep"]


def submit_sweep(pool, cells: Sequence, axes: dict[str, tuple], owner: str) -> dict[str, Any]:
    """Queue one validation job per cell; returns the page's sweep state.

    ``axes`` is ``{"x": (name, values), "y": (name, values)}``.  Raises the pool's
    QuotaExceeded as :meth:`~csvm.jobs.pool.JobPool.submit` does.
    """
    sweep_id = uuid.uuid4().hex[:12]
    plain = {k: (name, list(values)) for k, (name, values) in axes.items()}
    plain.update({k: cells[0].get(k) for k in ("n_train", "n_iter")} if cells else {})
    jobs = [
        pool.submit(
            run_validation,
            {"config": cell},
            name=f"sweep {i}",
            group="sweep",
            owner=owner,
            meta={"sweep": sweep_id, "cell": i, **plain},
        )
        for i, cell in enumerate(cells)
    ]
    return {"id": sweep_id, "jobs": jobs, **plain}


def recover_sweep(views: Iterable) -> dict[str, Any] | None:
    """The newest sweep among an owner's sweep jobs (views from ``pool.jobs``), as the
    page's state, or None when there is none.

    A cell the pool has forgotten to make room keeps its place with an id the pool does
    not know, so the page says that the cell is no longer on the server.
    """
    views = [v for v in views if isinstance(v.meta.get("sweep"), str)]
    if not views:
        return None
    newest = views[-1].meta  # pool.jobs lists the oldest first
    cells = {v.meta.get("cell"): v.id for v in views if v.meta["sweep"] == newest["sweep"]}
    size = len(newest["x"][1]) * len(newest["y"][1])
    jobs = [cells.get(i, f"forgotten-{i}") for i in range(size)]
    return {
        "id": newest["sweep"],
        "jobs": jobs,
        "x": tuple(newest["x"]),
        "y": tuple(newest["y"]),
        **{k: newest.get(k) for k in ("n_train", "n_iter")},
    }


def seed_widgets(state: dict[str, Any], session: MutableMapping[str, Any]) -> None:
    """Give the page's boxes the recovered sweep's settings (before they are drawn), so
    they describe the heatmap below them, not the page's defaults."""
    for key in ("n_train", "n_iter"):
        if isinstance(state.get(key), int):
            session[f"sw_{key}"] = state[key]
    for axis in ("x", "y"):
        name, values = state[axis]
        session[f"sw_{axis}"] = name
        session[f"sw_{axis}_values_{name}"] = ", ".join(f"{v:g}" for v in values)
