"""Are learned filters stable across random starts?  The thesis's claim that DFO₂
filters are and DFO₁ filters are not, answered from the numbers: filters of several seeds
aligned up to sign, their pairwise |cosine|, and the accuracy spread."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["align_signs", "stability_verdict", "summarise_stability"]


def align_signs(filters: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Flip each filter to maximise its cosine with the first run's same filter.

    Parameters
    ----------
    filters : array (runs, k, ...)
        k filters per run.

    Returns
    -------
    aligned : array like ``filters``
    signs : array (runs, k) of +-1
    """
    F = np.asarray(filters, dtype=np.float64)
    flat = F.reshape(F.shape[0], F.shape[1], -1)
    dots = np.einsum("rkd,kd->rk", flat, flat[0])
    signs = np.where(dots < 0, -1.0, 1.0)
    return F * signs.reshape(signs.shape + (1,) * (F.ndim - 2)), signs


def _abs_cosines(filters: np.ndarray) -> np.ndarray:
    """(runs, runs) mean over the k filters of |cos| between two runs' filters."""
    flat = filters.reshape(filters.shape[0], filters.shape[1], -1)
    norms = np.linalg.norm(flat, axis=2, keepdims=True)
    unit = flat / np.where(norms > 0, norms, 1.0)
    return np.abs(np.einsum("rkd,skd->rsk", unit, unit)).mean(axis=2)


def summarise_stability(seeds: list[int], results: list[dict[str, Any]]) -> dict[str, Any]:
    """What :func:`stability` returns, from each seed's :func:`run_seed` result.

    Parameters
    ----------
    seeds : list of int
    results : list of dict
        :func:`run_seed`'s results, in the order of ``seeds``.
    """
    aligned, signs = align_signs(np.stack([r["filters"] for r in results]))
    cosine = _abs_cosines(aligned)
    pairs = np.triu_indices(len(seeds), k=1)
    # The same measure on the random first filters: the level that means "no more alike
    # than where they started" (about 0.75 for uniform random 5x5 filters).
    starts = [r["start_filters"] for r in results]
    start_cosine = (
        float(_abs_cosines(np.stack(starts))[pairs].mean())
        if all(f is not None for f in starts)
        else None
    )

    def spread(key: str) -> tuple[float, float] | None:
        values = [r[key] for r in results if r[key] is not None]
        return (float(np.mean(values)), float(np.std(values))) if values else None

    return {
        "seeds": list(seeds),
        "filters": aligned,
        "signs": signs,
        "cosine": cosine,
        "mean_abs_cosine": float(cosine[pairs].mean()),
        "start_mean_abs_cosine": start_cosine,
        "val_accuracy": spread("val_accuracy"),
        "test_accuracy": spread("test_accuracy"),
        "runs": [
            {k: v for k, v in r.items() if k not in ("filters", "start_filters")} for r in results
        ],
    }


def stability_verdict(
    stable: dict[str, Any], unstable: dict[str, Any], stable_name: str, unstable_name: str
) -> str:
    """One sentence on a claim "``stable_name`` filters are stable across seeds and
    ``unstable_name`` filters are not", from two :func:`summarise_stability` results,
    whichever way the numbers come out.

    A configuration counts as stable when its filters are more alike than their random
    starts were (mean |cos| above the start's by at least 0.05).  When runs diverged, the
    claim is not judged: a diverged run keeps its best filter, often its random start,
    which would read as "not stable" whatever the regulariser does.
    """

    def level(r: dict[str, Any]) -> str:
        start = r["start_mean_abs_cosine"]
        text = f"mean |cos| {r['mean_abs_cosine']:.3f}"
        return text + (f" (random starts {start:.3f})" if start is not None else "")

    def is_stable(r: dict[str, Any]) -> bool:
        start = r["start_mean_abs_cosine"]
        return r["mean_abs_cosine"] >= (0.0 if start is None else start) + 0.05

    runs = [*stable.get("runs", []), *unstable.get("runs", [])]
    diverged = sum(bool(r.get("diverged")) for r in runs)
    a, b = is_stable(stable), is_stable(unstable)
    if diverged:
        outcome = (
            f"{diverged} of the {len(runs)} runs diverged, so the claim is not tested here "
            "(their filters are where the divergence left them)"
        )
    elif a and not b:
        outcome = "the claim holds here"
    elif a and b:
        outcome = f"both are stable here: the claim about {unstable_name} does not hold"
    elif not a and not b:
        outcome = f"neither is stable here: the claim about {stable_name} does not hold"
    else:
        outcome = "the opposite of the claim holds here"
    text = f"{stable_name}: {level(stable)}; {unstable_name}: {level(unstable)} — {outcome}."
    seeds = len(stable.get("seeds", ()))
    if seeds:  # how much the sentence rests on, and its rule
        text += (
            f" ({seeds} seeds each; stable means filters more alike than their random "
            "starts by at least 0.05 of mean |cos|: a rule of thumb, not a significance test.)"
        )
    a_filters, b_filters = stable.get("filters"), unstable.get("filters")
    if (
        a_filters is not None
        and b_filters is not None
        and np.shape(a_filters) == np.shape(b_filters)
        and np.allclose(a_filters, b_filters)
    ):
        text += (
            " The two trained the same filters: both regularisers are zero while a filter's "
            "norm stays at or below 1, so here they changed nothing."
        )
    return text
