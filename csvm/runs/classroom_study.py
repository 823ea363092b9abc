"""Does a learned filter's *shape* matter at classroom scale (50 images)?  Issue 19's
Classroom target as a library.

The protocol is declared in docs/protocol_issue19.md: candidates were compared on the
**selection** pairs (:data:`SELECT_PAIRS`, seeds 0-9, 50 training and 100 validation images
drawn from the pair's 60,000 MNIST training images; ``bench/bench_layers_small.py --stage
select``); the chosen stack and the one-layer Classroom preset (:data:`REPORT_MODELS`) are
scored once on the **report** pairs (:data:`REPORT_PAIRS`, seeds 100-109, on the pair's
images of the MNIST test set).  For every draw (:func:`score_draw`), on the same images:

* ``learned``: the trained K-CSVM;
* ``fixed``: the same network and SVM on fixed filters, each layer rescaled to the learned
  layer's norm (scaling acts like a change of γ, not a learned shape): the random start, a
  Gaussian blur and a delta in layer 1; the best of them is the comparison most favourable
  to fixed filters;
* ``plain``: the plain RBF SVM on raw pixels at the model's γ and at the preset's γ 0.02;
* ``cosine``: layer 1's cosine to its random start (does the shape move?).

``python -m csvm reproduce classroom-stack`` runs :func:`run_classroom_study` and saves
every draw.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.stats import binomtest
from sklearn.svm import SVC

from csvm.analysis.stats import format_p
from csvm.exceptions import DivergenceError

__all__ = [
    "REPORT_MODELS",
    "REPORT_PAIRS",
    "REPORT_SEEDS",
    "SELECT_PAIRS",
    "SELECT_SEEDS",
    "draw_pair",
    "fixed_variants",
    "kcsvm_settings",
    "run_classroom_study",
    "score_draw",
    "summarise_draws",
]

SELECT_PAIRS = [(3, 5), (4, 9), (7, 9), (1, 7), (2, 3)]
REPORT_PAIRS = [(0, 6), (2, 8), (5, 6), (1, 8), (3, 9)]
SELECT_SEEDS, REPORT_SEEDS = range(10), range(100, 110)
N_TRAIN, N_VAL = 50, 100
#: What every candidate shares: RBF on the (pooled) maps, DFO2, relative steps, hard margin.
COMMON: dict[str, Any] = {
    "kernel": "rbf",
    "regulariser": "dfo2",
    "lam": 0.1,
    "step": "relative",
    "C": None,
}
#: A candidate: (layers or None for one plain layer of two 5x5 filters, γ, η, iterations,
#: layer 1's start: True zero-mean, False uniform, or a kind's name[, overrides]).
Candidate = tuple
#: The two models of the report (docs/layers.md, "Classroom scale"): the stack chosen on the
#: selection draws, and the one-layer Classroom preset.
REPORT_MODELS: dict[str, Candidate] = {
    "5x5x8-abs-max2,3x3x8-abs-max2 zm g0.05 it15": (
        "5x5x8-abs-max2,3x3x8-abs-max2",
        0.05,
        0.1,
        15,
        True,
    ),
    "classroom (1 layer 5x5x2)": (None, 0.02, 0.1, 10, False),
}
#: How the saved run and the page name them (the keys are bench_layers_small's cache keys).
LABELS = {
    "5x5x8-abs-max2,3x3x8-abs-max2 zm g0.05 it15": "two layers (8 + 8 filters, |x|, 2×2 max "
    "pooling), zero-mean start, γ 0.05, 15 steps",
    "classroom (1 layer 5x5x2)": "the Classroom preset: one layer of two 5×5 filters, γ 0.02, "
    "10 steps",
}


def draw_pair(data, a: int, b: int, seed: int, report: bool):
    """``N_TRAIN`` training images of the pair ``a`` v ``b`` drawn from all training images,
    and ``N_VAL`` more of them (selection) or the pair's test images (report).

    ``data`` is ``(X_train, y_train, X_test, y_test)``: images (n, 1, 28, 28) in [0, 1] and
    digit labels.  Returns ``X, y, X_eval, y_eval`` with labels -1 for ``a``, +1 for ``b``.
    """
    Xtr, ytr, Xte, yte = data
    rng = np.random.default_rng(seed)
    idx = np.flatnonzero((ytr == a) | (ytr == b))
    pick = rng.permutation(idx)
    train = pick[:N_TRAIN]
    while len(set(ytr[train])) < 2:  # both classes in the 50 (always, at 50; kept safe)
        pick = rng.permutation(idx)
        train = pick[:N_TRAIN]

    def signed(y):
        return np.where(y == b, 1, -1)

    if report:
        m = (yte == a) | (yte == b)
        return Xtr[train], signed(ytr[train]), Xte[m], signed(yte[m])
    val = pick[N_TRAIN : N_TRAIN + N_VAL]
    return Xtr[train], signed(ytr[train]), Xtr[val], signed(ytr[val])


def kcsvm_settings(candidate: Candidate, seed: int) -> dict[str, Any]:
    """KernelCSVM's parameters for a candidate."""
    layers, gamma, eta, n_iter, init, *extra = candidate
    kw = dict(COMMON, gamma=gamma, eta=eta, n_iter=n_iter, random_state=seed, layers=layers)
    kw["filter_init"] = init if isinstance(init, str) else ("zero-mean" if init else "uniform")
    kw.update(extra[0] if extra else {})
    if layers is None:
        kw.update(filter_shape=(5, 5), n_filters=2)
    return kw


def fixed_variants(clf, start_theta: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """(name, theta) of fixed filters at the learned norms, layer by layer: the random
    start, and a Gaussian blur or a delta in layer 1 (later layers at their start)."""
    from csvm.analysis.ablation import delta_filters, gaussian_filters, rescale_to_norm

    state = clf.estimators_[0]
    net = state.network
    learned = state.layer_filters
    starts = [start_theta] if net is None else net.unpack(start_theta)

    def at_norms(layers):
        scaled = [
            rescale_to_norm(f, float(np.linalg.norm(g)))
            for f, g in zip(layers, learned, strict=True)
        ]
        return scaled[0] if net is None else net.pack(scaled)

    shape = learned[0].shape
    return [
        ("start", at_norms(starts)),
        ("gaussian", at_norms([gaussian_filters(shape), *starts[1:]])),
        ("delta", at_norms([delta_filters(shape), *starts[1:]])),
    ]


def _accuracy_on(clf, theta, X, y, Xe, ye) -> float:
    """The same kernel and a hard-margin SVM on the maps of the filters ``theta``."""
    from csvm.model.kernel_state import solve_on_filters

    params = dict(clf.estimators_[0].kernel_params)
    state = solve_on_filters(X, y, theta, params, network=clf.network_)
    return float(np.mean(np.where(state.decision_function(Xe) > 0, 1, -1) == ye))


def _plain(gamma: float, X, y, Xe, ye) -> float:
    flat = SVC(kernel="rbf", gamma=gamma, C=1e10).fit(X.reshape(len(X), -1), y)
    return float(np.mean(flat.predict(Xe.reshape(len(Xe), -1)) == ye))


def score_draw(candidate: Candidate, X, y, Xe, ye, seed: int) -> dict[str, Any] | None:
    """Train the candidate on one draw; the learned model against fixed filters at its
    norms and the plain SVM, on the same evaluation images (None: it diverged)."""
    from csvm.model.kernelised import KernelCSVM

    kw = kcsvm_settings(candidate, seed)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = KernelCSVM(**{**kw, "n_iter": 1}).fit(X, y)
        try:
            clf = KernelCSVM(**kw).fit(X, y)
        except DivergenceError:
            return None
    seconds = time.perf_counter() - t0
    learned = float(np.mean(np.where(clf.decision_function(Xe) > 0, 1, -1) == ye))
    fixed = {
        name: _accuracy_on(clf, theta, X, y, Xe, ye)
        for name, theta in fixed_variants(clf, start.estimators_[0].theta)
    }
    f0 = start.estimators_[0].filters.ravel()
    f1 = clf.estimators_[0].filters.ravel()
    return {
        "learned": learned,
        "fixed": fixed,
        "best_fixed": max(fixed.values()),
        "plain": _plain(kw["gamma"], X, y, Xe, ye),
        # The preset's γ on raw pixels: a γ chosen for pooled maps is not one for pixels.
        "plain_g002": _plain(0.02, X, y, Xe, ye),
        "cosine": float(f0 @ f1 / (np.linalg.norm(f0) * np.linalg.norm(f1))),
        "seconds": seconds,
    }


def summarise_draws(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Means over draws (points), the sign test of learned against the best fixed filter."""
    diff = np.array([r["learned"] - r["best_fixed"] for r in rows]) * 100
    wins, losses = int((diff > 0).sum()), int((diff < 0).sum())
    p = float(binomtest(wins, wins + losses).pvalue) if wins + losses else 1.0
    return {
        "n": len(rows),
        "learned": 100 * float(np.mean([r["learned"] for r in rows])),
        "minus_best_fixed": float(diff.mean()),
        "wins": wins,
        "losses": losses,
        "sign_p": p,
        "sign_test": f"{wins}+/{losses}- p {format_p(p)}",
        "over_plain": 100 * float(np.mean([r["learned"] - r["plain"] for r in rows])),
        "over_plain_g002": 100 * float(np.mean([r["learned"] - r["plain_g002"] for r in rows])),
        "cosine": float(np.mean([r["cosine"] for r in rows])),
        "seconds": float(np.mean([r["seconds"] for r in rows])),
    }


def run_classroom_study(
    data_dir: str | None = None,
    log: Callable[[str], None] = print,
    models: dict[str, Candidate] | None = None,
    pairs: list[tuple[int, int]] | None = None,
    seeds: range | None = None,
) -> tuple[list[str], list[dict[str, Any]], dict[str, Any]]:
    """Every report draw of every model; returns the printed lines, the Reproduce page's
    model rows and the extra fields of the saved run (every draw in ``details.draws``)."""
    from csvm.analysis.mnist10 import load_mnist10
    from csvm.analysis.reproduced import model_entry

    data = load_mnist10(data_dir)
    pairs = REPORT_PAIRS if pairs is None else pairs
    seeds = REPORT_SEEDS if seeds is None else seeds
    entries, lines, draws = [], [], []
    for key, candidate in (models or REPORT_MODELS).items():
        name = LABELS.get(key, key)
        rows = []
        for a, b in pairs:
            for seed in seeds:
                row = score_draw(candidate, *draw_pair(data, a, b, seed, True), seed)
                if row is not None:
                    rows.append(row)
                    draws.append(
                        {"model": name, "candidate": key, "pair": f"{a}-{b}", "seed": seed, **row}
                    )
            log(f"  {name}, {a} v {b}: {100 * np.mean([r['learned'] for r in rows[-10:]]):.2f} %")
        s = summarise_draws(rows)
        lines.append(
            f"- {name} ({s['n']} draws): learned − best fixed filter at the learned norms "
            f"{s['minus_best_fixed']:+.2f} points, sign test {s['wins']}+/{s['losses']}− "
            f"p {format_p(s['sign_p'])}; over the plain SVM at the same γ {s['over_plain']:+.2f}, "
            f"at γ 0.02 {s['over_plain_g002']:+.2f}; cosine to the start {s['cosine']:.3f}"
        )
        log(lines[-1])
        entries.append(
            model_entry(
                name,
                [r["learned"] for r in rows],
                s["seconds"],
                settings=key,
                config=kcsvm_settings(candidate, 0),
            )
        )
    pair_names = ", ".join(f"{a} v {b}" for a, b in pairs)
    extra = {
        "data": {
            "source": f"MNIST pairs {pair_names}: per draw {N_TRAIN} training images drawn "
            "from all 60,000, scored on the pair's images of the test set",
        },
        "details": {"sign_tests": lines, "draws": draws},
    }
    return lines, entries, extra
