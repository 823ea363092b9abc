"""Do learned filters find the shapes in the teaching set?  Issue 33's targets as a library.

The protocol is declared in docs/protocol_teaching.md (amendment 3): the candidates
(:data:`CANDIDATES`) are compared on the **selection** draws of every report pair
(:func:`select`, the best worst pair wins); the chosen one is scored once on the
**report** draws (:func:`run_teaching_study`): images drawn from seeds nothing was chosen
on, of the same three pairs.
For every draw, on the same images (:func:`score_draw`): the learned model; the same
network and SVM on fixed filters at the learned norm (its random start, a blur, a delta);
an RBF SVM on the raw pixels with γ and C chosen by 5-fold cross-validation; the learned
filters' cosine to their start and to the shapes.

``python -m csvm reproduce teaching-shapes`` runs the report and saves every draw.

Examples
--------
>>> X, y, Xe, ye = draw_pair(("horizontal", "vertical"), 0, report=False)
>>> X.shape, Xe.shape
((100, 1, 28, 28), (400, 1, 28, 28))
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.stats import binomtest
from sklearn.model_selection import GridSearchCV
from sklearn.svm import SVC

from csvm.analysis.stats import format_p
from csvm.data.teaching import SHAPE_CLASSES, make_shapes, shape_similarity
from csvm.exceptions import DivergenceError

__all__ = [
    "CANDIDATES",
    "PRESET_PAIR",
    "REPORT_PAIRS",
    "REPORT_SEEDS",
    "SELECT_SEEDS",
    "draw_pair",
    "kcsvm_settings",
    "plain_cv",
    "run_teaching_study",
    "score_draw",
    "select",
    "summarise",
]

PRESET_PAIR = ("horizontal", "vertical")
REPORT_PAIRS = [PRESET_PAIR, ("diagonal", "antidiagonal"), ("cross", "corner")]
#: Report seeds 100-109 were scored by amendment 2 (they choose and report nothing now).
SELECT_SEEDS, REPORT_SEEDS = range(10), range(200, 210)
N_TRAIN, N_VAL = 100, 400
#: What every candidate shares (docs/protocol_teaching.md).
COMMON: dict[str, Any] = {
    "kernel": "rbf",
    "gamma": 1.0,
    "regulariser": "dfo2",
    "lam": 0.1,
    "step": "relative",
    "n_iter": 40,
    "filter_init": "zero-mean",
}
#: The candidates (amendment 3), in the order that breaks ties: name -> (layers, η, C).
CANDIDATES: dict[str, tuple[str, float, float]] = {
    f"{n} filter{'s' if n > 1 else ''}, η {eta}, C 1": (
        f"5x5{f'x{n}' if n > 1 else ''}-abs-max24",
        eta,
        1.0,
    )
    for n in (1, 2, 4)
    for eta in (0.3, 0.5)
}
#: The raw-pixel SVM's grid, searched by 5-fold cross-validation on the training images.
PLAIN_GRID = {"gamma": np.logspace(-4, 0, 9), "C": np.logspace(-1, 3, 5)}


def draw_pair(
    pair: tuple[str, str], seed: int, report: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One draw of a pair from freshly generated images: ``X, y, X_eval, y_eval``.

    Selection draws come from ``make_shapes(300, 1000 + seed)`` (100 train, 400 validate);
    report draws from ``make_shapes(600, 5000 + seed)`` (100 train, the other 1,100 test).
    Labels are -1 for ``pair[0]``, +1 for ``pair[1]``.
    """
    per_class, offset = (600, 5000) if report else (300, 1000)
    X, labels = make_shapes(per_class, offset + seed)
    a, b = (SHAPE_CLASSES.index(name) for name in pair)
    keep = (labels == a) | (labels == b)
    X, y = X[keep], np.where(labels[keep] == b, 1, -1)
    end = None if report else N_TRAIN + N_VAL
    return X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:end], y[N_TRAIN:end]


def kcsvm_settings(candidate: str, seed: int) -> dict[str, Any]:
    """KernelCSVM's parameters for the candidate named ``candidate``."""
    layers, eta, C = CANDIDATES[candidate]
    return dict(COMMON, layers=layers, eta=eta, C=C, random_state=seed)


def _accuracy(decision: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(np.where(decision > 0, 1, -1) == y))


def _on_fixed(clf, theta: np.ndarray, X, y, Xe, ye) -> float:
    """The same kernel, network and C on the fixed filters ``theta``."""
    from csvm.model.kernel_state import solve_on_filters

    params = dict(clf.estimators_[0].kernel_params)
    # The learned model's own C: a hard margin on a fixed filter's maps, which rarely
    # separate the images, is another model (and LIBSVM crawls on it).
    state = solve_on_filters(X, y, theta, params, clf.C, network=clf.network_)
    return _accuracy(state.decision_function(Xe), ye)


def plain_cv(X, y, Xe, ye, seed: int = 0) -> float:
    """An RBF SVM on the raw pixels, γ and C chosen by 5-fold CV on ``X``; its accuracy."""
    flat = X.reshape(len(X), -1)
    search = GridSearchCV(SVC(kernel="rbf"), PLAIN_GRID, cv=5).fit(flat, y)
    return float(search.score(Xe.reshape(len(Xe), -1), ye))


def score_draw(
    candidate: str, pair: tuple[str, str], X, y, Xe, ye, seed: int, plain: bool = True
) -> dict[str, Any] | None:
    """Train the candidate on one draw and score it against fixed filters at its norm and
    the cross-validated raw-pixel SVM on the same images (None: it diverged).  With
    ``plain`` False (selection) only the learned model is scored."""
    from csvm.model.kernelised import KernelCSVM
    from csvm.runs.classroom_study import fixed_variants

    kw = kcsvm_settings(candidate, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = KernelCSVM(**{**kw, "n_iter": 1}).fit(X, y)
        t0 = time.perf_counter()
        try:
            clf = KernelCSVM(**kw).fit(X, y)
        except DivergenceError:
            return None
        seconds = time.perf_counter() - t0
    if not plain:  # selection: only the learned model's validation accuracy counts
        return {"learned": _accuracy(clf.decision_function(Xe), ye), "seconds": seconds}
    start_theta = start.estimators_[0].theta
    fixed = {
        name: _on_fixed(clf, theta, X, y, Xe, ye)
        for name, theta in fixed_variants(clf, start_theta)
    }
    learned = clf.estimators_[0].layer_filters[0]
    f0, f1 = start.estimators_[0].layer_filters[0].ravel(), learned.ravel()
    return {
        "learned": _accuracy(clf.decision_function(Xe), ye),
        "fixed": fixed,
        "best_fixed": max(fixed.values()),
        "plain": plain_cv(X, y, Xe, ye),
        "cosine": float(f0 @ f1 / (np.linalg.norm(f0) * np.linalg.norm(f1))),
        "shape": max(shape_similarity(f, pair) for f in learned.reshape(-1, 5, 5)),
        "shape_start": max(shape_similarity(f, pair) for f in f0.reshape(-1, 5, 5)),
        "seconds": seconds,
    }


def select(
    log: Callable[[str], None] = print,
    seeds: range = SELECT_SEEDS,
    pairs: list[tuple[str, str]] | None = None,
) -> tuple[str, dict[str, dict[str, float]]]:
    """Every candidate on the selection draws' validation images of every pair; the chosen
    name (the best worst pair, amendment 3) and each candidate's mean validation accuracy
    (per cent) per pair."""
    means: dict[str, dict[str, float]] = {}
    for name in CANDIDATES:
        means[name] = {}
        for pair in pairs or REPORT_PAIRS:
            scores = []
            for seed in seeds:
                row = score_draw(name, pair, *draw_pair(pair, seed, False), seed, False)
                scores.append(0.0 if row is None else row["learned"])
            means[name][f"{pair[0]} v {pair[1]}"] = 100 * float(np.mean(scores))
        shown = ", ".join(f"{k} {v:.2f} %" for k, v in means[name].items())
        log(f"  {name}: validation {shown} ({len(seeds)} draws each)")
    # Declared order of the candidates breaks ties: fewer filters, then the smaller η.
    order = list(CANDIDATES)
    chosen = max(means, key=lambda n: (round(min(means[n].values()), 6), -order.index(n)))
    return chosen, means


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Means over draws (per cent / points), the worst draw, and the sign test of learned
    against the best fixed filter at its norm."""
    learned = np.array([r["learned"] for r in rows]) * 100
    diff = learned - np.array([r["best_fixed"] for r in rows]) * 100
    wins, losses = int((diff > 0).sum()), int((diff < 0).sum())
    return {
        "n": len(rows),
        "learned": float(learned.mean()),
        "worst": float(learned.min()),
        "over_plain": float(np.mean([r["learned"] - r["plain"] for r in rows]) * 100),
        "over_start": float(np.mean([r["learned"] - r["fixed"]["start"] for r in rows]) * 100),
        "over_best_fixed": float(diff.mean()),
        "wins": wins,
        "losses": losses,
        "sign_p": float(binomtest(wins, wins + losses).pvalue) if wins + losses else 1.0,
        "cosine": float(np.mean([r["cosine"] for r in rows])),
        "shape": float(np.mean([r["shape"] for r in rows])),
        "shape_start": float(np.mean([r["shape_start"] for r in rows])),
        "seconds": float(np.mean([r["seconds"] for r in rows])),
        "max_seconds": float(np.max([r["seconds"] for r in rows])),
    }


def _line(pair: tuple[str, str], s: dict[str, Any]) -> str:
    return (
        f"- {pair[0]} v {pair[1]} ({s['n']} draws): learned {s['learned']:.2f} % "
        f"(worst {s['worst']:.2f}); over the cross-validated pixel SVM {s['over_plain']:+.2f} "
        f"points, over its own random start at the learned norm {s['over_start']:+.2f}, over "
        f"the best fixed filter {s['over_best_fixed']:+.2f} (sign test {s['wins']}+/"
        f"{s['losses']}−, p {format_p(s['sign_p'])}); cosine to the start {s['cosine']:.2f}, "
        f"to the shape {s['shape']:.2f} (its start {s['shape_start']:.2f}); "
        f"fit {s['seconds']:.2f} s (at most {s['max_seconds']:.2f})"
    )


def run_teaching_study(
    log: Callable[[str], None] = print,
    candidate: str | None = None,
    pairs: list[tuple[str, str]] | None = None,
    seeds: range | None = None,
) -> tuple[list[str], list[dict[str, Any]], dict[str, Any]]:
    """Select (unless ``candidate`` is given), then score every report draw; returns the
    printed lines, the Reproduce page's model rows and the saved run's extra fields."""
    from csvm.analysis.reproduced import model_entry

    means = None
    if candidate is None:
        log("selection (validation images of every report pair, seeds 0-9):")
        candidate, means = select(log)
    log(f"chosen: {candidate}")
    entries, lines, draws = [], [], []
    for pair in pairs or REPORT_PAIRS:
        rows = []
        for seed in seeds or REPORT_SEEDS:
            row = score_draw(candidate, pair, *draw_pair(pair, seed, True), seed)
            if row is not None:
                rows.append(row)
                draws.append({"pair": f"{pair[0]}-{pair[1]}", "seed": seed, **row})
        s = summarise(rows)
        lines.append(_line(pair, s))
        log(lines[-1])
        entries.append(
            model_entry(
                f"learned filter, {pair[0]} v {pair[1]}",
                [r["learned"] for r in rows],
                s["seconds"],
                settings=candidate,
                config=kcsvm_settings(candidate, 0),
            )
        )
    extra = {
        "data": {
            "source": "teaching shapes drawn from seeds 5000 + 200…209: per draw 100 "
            "training images of the pair, the other 1,100 of it tested",
        },
        "details": {"chosen": candidate, "selection": means, "sign_tests": lines, "draws": draws},
    }
    return lines, entries, extra
