"""Issue 35's Classroom stack target on 50 images: a learned stack against the best fixed
filter at its norms, a cross-validated plain SVM and the one-layer preset, on the same draws.

The protocol is declared in docs/protocol_classroom_stack.md: candidates (:data:`CANDIDATES`,
HOG-like stacks with HOG's or a random start) are compared on issue 19's **selection**
draws (:data:`~csvm.runs.classroom_study.SELECT_PAIRS`, seeds 0-9, 100 validation images
each); the chosen one is scored once on **fresh report** draws (:data:`REPORT_PAIRS`,
:data:`REPORT_SEEDS` 300-309, the pairs' MNIST test images).  For every draw
(:func:`score_draw`), on the same images:

* ``learned``: the trained K-CSVM;
* ``fixed``: the same network, kernel, γ and C on fixed layer-1 filters at the learned
  norm: its start, a Gaussian, a delta and HOG's oriented derivatives; ``best_fixed`` is
  the best of them on the draw;
* ``plain_cv``: an RBF SVM on the pixels, γ and C by 5-fold CV repeated 4 times;
* ``one_layer``: the one-layer Classroom preset ("Digits: 3 vs 5, fast") on the draw.

:func:`summarise` checks the three targets (T1-T3 of the protocol).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.stats import binomtest
from sklearn.model_selection import GridSearchCV, RepeatedStratifiedKFold
from sklearn.svm import SVC

from csvm.analysis.stats import format_p
from csvm.exceptions import DivergenceError
from csvm.runs.classroom_study import REPORT_MODELS, fixed_variants, kcsvm_settings

__all__ = [
    "CANDIDATES",
    "ONE_LAYER",
    "PLAIN_GRID",
    "REPORT_PAIRS",
    "REPORT_SEEDS",
    "CHOSEN",
    "HOG_LAYER",
    "REPORT_LABELS",
    "STACK_PRESET",
    "candidate",
    "describe",
    "plain_cv",
    "run_classroom_stack_study",
    "score_draw",
    "summarise",
]

REPORT_PAIRS = [(0, 6), (2, 8), (5, 6), (1, 8), (3, 9)]
REPORT_SEEDS = range(300, 310)
#: The plain SVM's grid (γ on raw pixels in [0, 1], C), chosen by repeated 5-fold CV.
PLAIN_GRID = {"gamma": [0.005, 0.01, 0.02, 0.03, 0.05, 0.1], "C": [1.0, 10.0, 100.0, 1000.0]}
#: The blocks a -bn2 stack of 4x4 cells shows the SVM on 28x28 images (γ = g / BLOCKS).
BLOCKS = 25
ONE_LAYER = REPORT_MODELS["classroom (1 layer 5x5x2)"]
STACK_PRESET = REPORT_MODELS["5x5x8-abs-max2,3x3x8-abs-max2 zm g0.05 it15"]


def candidate(layers: str, init: str, g: float, blocks: int = BLOCKS, **extra: Any) -> tuple:
    """A candidate in classroom_study's form: γ = g / ``blocks``, η 0.1, 10 iterations,
    C 10 unless ``extra`` says otherwise (``eta``, ``n_iter`` and any KernelCSVM setting)."""
    eta, n_iter = extra.pop("eta", 0.1), extra.pop("n_iter", 10)
    return (layers, g / blocks, eta, n_iter, init, {"C": 10.0, **extra})


#: Round 1 of the protocol: 4 stacks x 2 starts x 2 values of g.
CANDIDATES: dict[str, tuple] = {
    f"{layers} {init} g{g}": candidate(layers, init, g)
    for layers in (
        "3x3x8-relu-avg4-bn2-sqrt",
        "5x5x8-relu-avg4-bn2-sqrt",
        "3x3x8-abs-avg4-bn2-sqrt",
        "5x5x8-abs-avg4-bn2-sqrt",
    )
    for init in ("hog", "zero-mean")
    for g in (0.5, 1.0)
}
#: Round 2 (addendum 1): round 1's pick with one change each, and (the amendment) the
#: current stack's first layer under a HOG-like second layer (4 x 4 blocks: γ = g / 16).
_PICK1 = "5x5x8-abs-avg4-bn2-sqrt"
_TWO = "5x5x8-abs-max2,3x3x8-{}-avg2-bn2-sqrt"
CANDIDATES.update(
    {
        f"{_PICK1} zero-mean g0.5 eta0.05": candidate(_PICK1, "zero-mean", 0.5, eta=0.05),
        f"{_PICK1} zero-mean g0.5 eta0.2": candidate(_PICK1, "zero-mean", 0.5, eta=0.2),
        f"{_PICK1} zero-mean g0.5 it5": candidate(_PICK1, "zero-mean", 0.5, n_iter=5),
        f"{_PICK1} zero-mean g0.5 it20": candidate(_PICK1, "zero-mean", 0.5, n_iter=20),
        f"{_PICK1} zero-mean g0.5 C1": candidate(_PICK1, "zero-mean", 0.5, C=1.0),
        f"{_PICK1} zero-mean g0.5 C100": candidate(_PICK1, "zero-mean", 0.5, C=100.0),
        "5x5x8-abs-avg3-bn2-sqrt zero-mean g0.5": candidate(
            "5x5x8-abs-avg3-bn2-sqrt", "zero-mean", 0.5, blocks=49
        ),
        **{
            f"{_TWO.format(act)} {init} g{g}{tail}": candidate(
                _TWO.format(act), init, g, blocks=16, n_iter=15, **extra
            )
            for act, init, g, tail, extra in (
                ("abs", "zero-mean", 0.5, "", {}),
                ("abs", "zero-mean", 1.0, "", {}),
                ("relu", "zero-mean", 0.5, "", {}),
                ("abs", "zero-mean", 0.5, " eta0.2", {"eta": 0.2}),
                ("abs", "hog", 0.5, "", {}),
            )
        },
    }
)


def plain_cv(X, y, Xe, ye, seed: int) -> float:
    """The raw-pixel RBF SVM with γ and C chosen by 5-fold CV repeated 4 times on ``X``."""
    cv = RepeatedStratifiedKFold(n_splits=5, n_repeats=4, random_state=seed)
    search = GridSearchCV(SVC(kernel="rbf"), PLAIN_GRID, cv=cv)
    search.fit(X.reshape(len(X), -1), y)
    return float(search.score(Xe.reshape(len(Xe), -1), ye))


def _accuracy(decision: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(np.where(decision > 0, 1, -1) == y))


def _hog_at_norms(clf, variants: list[tuple[str, np.ndarray]]) -> np.ndarray:
    """HOG's oriented derivatives in layer 1 (later layers at their start), at the learned
    norms: built from the Gaussian variant by swapping its layer 1."""
    from csvm.analysis.ablation import rescale_to_norm
    from csvm.model.init_filters import first_filters

    state, net = clf.estimators_[0], clf.network_
    layer1 = state.layer_filters[0]
    hog = rescale_to_norm(
        first_filters("hog", np.random.default_rng(0), layer1.shape),
        float(np.linalg.norm(layer1)),
    )
    if net is None:
        return hog
    gaussian = dict(variants)["gaussian"]
    return net.pack([hog, *net.unpack(gaussian)[1:]])


def _fit(cand: tuple, X, y, seed: int):
    """(start model, trained model, fit seconds) or None when the fit diverges."""
    from csvm.model.kernelised import KernelCSVM

    kw = kcsvm_settings(cand, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = KernelCSVM(**{**kw, "n_iter": 1}).fit(X, y)
        t0 = time.perf_counter()
        try:
            clf = KernelCSVM(**kw).fit(X, y)
        except DivergenceError:
            return None
    return start, clf, time.perf_counter() - t0


def score_draw(
    cand: tuple, X, y, Xe, ye, seed: int, one_layer: float | None = None, plain: float | None = None
) -> dict[str, Any] | None:
    """One draw: the learned candidate against fixed filters at its norms, the CV plain
    SVM and the one-layer preset (``one_layer``, ``plain``: their accuracies if already
    known on this draw).  None: the fit diverged."""
    from csvm.model.kernel_state import solve_on_filters

    fitted = _fit(cand, X, y, seed)
    if fitted is None:
        return None
    start, clf, seconds = fitted
    params = dict(clf.estimators_[0].kernel_params)
    variants = fixed_variants(clf, start.estimators_[0].theta)
    variants.append(("hog", _hog_at_norms(clf, variants)))
    fixed, fixed_seconds = {}, {}
    for name, theta in variants:
        t0 = time.perf_counter()
        state = solve_on_filters(X, y, theta, params, clf.C, network=clf.network_)
        fixed_seconds[name] = time.perf_counter() - t0
        fixed[name] = _accuracy(state.decision_function(Xe), ye)
    if one_layer is None:
        base = _fit(ONE_LAYER, X, y, seed)
        one_layer = _accuracy(base[1].decision_function(Xe), ye) if base else float("nan")
    f0 = start.estimators_[0].layer_filters[0].ravel()
    f1 = clf.estimators_[0].layer_filters[0].ravel()
    return {
        "learned": _accuracy(clf.decision_function(Xe), ye),
        "fixed": fixed,
        "best_fixed": max(fixed.values()),
        "plain_cv": plain_cv(X, y, Xe, ye, seed) if plain is None else plain,
        "one_layer": one_layer,
        "cosine": float(f0 @ f1 / (np.linalg.norm(f0) * np.linalg.norm(f1))),
        "seconds": seconds,
        "fixed_seconds": fixed_seconds,  # a solve and the scoring of the evaluation images
    }


def _sign(diff: np.ndarray) -> tuple[int, int, float]:
    wins, losses = int((diff > 0).sum()), int((diff < 0).sum())
    return wins, losses, float(binomtest(wins, wins + losses).pvalue) if wins + losses else 1.0


def _pair_rows(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(r["pair"], []).append(r)
    return out


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Means (points), sign tests and targets T1-T3 over draws that carry a ``pair``."""

    def pts(key_a: str, key_b: str, rs=rows) -> np.ndarray:
        return 100 * np.array([r[key_a] - r[key_b] for r in rs])

    per_pair = {
        pair: {
            "learned": 100 * float(np.mean([r["learned"] for r in rs])),
            "minus_best_fixed": float(pts("learned", "best_fixed", rs).mean()),
            "sign_fixed": _sign(pts("learned", "best_fixed", rs)),
            "over_plain_cv": float(pts("learned", "plain_cv", rs).mean()),
            "over_one_layer": float(pts("learned", "one_layer", rs).mean()),
        }
        for pair, rs in _pair_rows(rows).items()
    }
    plain = pts("learned", "plain_cv")
    ahead = sum(p["minus_best_fixed"] > 0 for p in per_pair.values())
    w, lo, p = _sign(plain)
    s = {
        "n": len(rows),
        "learned": 100 * float(np.mean([r["learned"] for r in rows])),
        "one_layer": 100 * float(np.mean([r["one_layer"] for r in rows])),
        "minus_best_fixed": float(pts("learned", "best_fixed").mean()),
        "sign_fixed": _sign(pts("learned", "best_fixed")),
        "over_plain_cv": float(plain.mean()),
        "sign_plain": (w, lo, p),
        "over_one_layer": float(pts("learned", "one_layer").mean()),
        "pairs_ahead": ahead,
        "per_pair": per_pair,
        "cosine": float(np.mean([r["cosine"] for r in rows])),
        "seconds": float(np.mean([r["seconds"] for r in rows])),
    }
    s["T1"] = ahead >= 4
    s["T2"] = s["over_plain_cv"] >= 1.0 and w > lo and p < 0.05
    s["T3"] = s["learned"] >= s["one_layer"]
    s["met"] = int(s["T1"]) + int(s["T2"]) + int(s["T3"])
    return s


def describe(name: str, s: dict[str, Any]) -> str:
    """One line: the summary as the bench prints it."""
    w, lo, p = s["sign_plain"]
    fw, fl, fp = s["sign_fixed"]
    return (
        f"{name:40} n={s['n']:2} acc {s['learned']:.2f} (1-layer {s['one_layer']:.2f})  "
        f"-bestfixed {s['minus_best_fixed']:+.2f} ({fw}+/{fl}- p {format_p(fp)}; "
        f"{s['pairs_ahead']}/5 pairs)  -plainCV {s['over_plain_cv']:+.2f} ({w}+/{lo}- "
        f"p {format_p(p)})  cos {s['cosine']:.3f}  {s['seconds']:.2f} s  "
        f"T1 {'y' if s['T1'] else 'n'} T2 {'y' if s['T2'] else 'n'} "
        f"T3 {'y' if s['T3'] else 'n'}"
    )


#: The protocol's pick (addendum 2) and the one-layer HOG-like network the report also shows
#: (its HOG start is the strongest fixed network on the selection draws).
CHOSEN = "5x5x8-abs-max2,3x3x8-abs-avg2-bn2-sqrt zero-mean g0.5 eta0.2"
HOG_LAYER = "5x5x8-abs-avg4-bn2-sqrt hog g1.0"
#: The report's models (bench/bench_classroom_stack.py's cache keys) and how the saved run
#: names them.
REPORT_LABELS = {
    CHOSEN: "Classroom stack: 8 5×5 filters, |x|, 2×2 max; 8 3×3 filters, |x|, 2×2 average, "
    "block norm, √; γ 0.03125, η 0.2, 15 steps, C 10",
    "ref: current stack preset": "issue 19's stack: 8 5×5 and 8 3×3 filters, |x|, 2×2 max "
    "pooling twice; γ 0.05, 15 steps, hard margin",
    HOG_LAYER: "one HOG-like layer from HOG's filters: 8 5×5, |x|, 4×4 cells, block norm, √; "
    "γ 0.04, 10 steps, C 10",
}


def _model(key: str) -> tuple:
    return STACK_PRESET if key == "ref: current stack preset" else CANDIDATES[key]


def _lines(name: str, s: dict[str, Any]) -> list[str]:
    """The saved run's sign-test lines of one model: overall, then per pair."""
    w, lo, p = s["sign_plain"]
    fw, fl, fp = s["sign_fixed"]
    met = ", ".join(t for t in ("T1", "T2", "T3") if s[t]) or "none"
    out = [
        f"- {name} ({s['n']} draws): {s['learned']:.2f} %; learned − best fixed filter at the "
        f"learned norms {s['minus_best_fixed']:+.2f} points ({fw}+/{fl}− p {format_p(fp)}), "
        f"ahead on {s['pairs_ahead']} of 5 pairs; over the plain SVM with γ and C by repeated "
        f"5-fold CV {s['over_plain_cv']:+.2f} ({w}+/{lo}− p {format_p(p)}); over the one-layer "
        f"preset {s['over_one_layer']:+.2f}; cosine {s['cosine']:.3f}; fit {s['seconds']:.2f} s; "
        f"targets met: {met}"
    ]
    for pair, q in s["per_pair"].items():
        qw, ql, qp = q["sign_fixed"]
        out.append(
            f"  - {pair}: {q['learned']:.2f} %, − best fixed {q['minus_best_fixed']:+.2f} "
            f"({qw}+/{ql}− p {format_p(qp)}), − plain CV {q['over_plain_cv']:+.2f}, − one-layer "
            f"preset {q['over_one_layer']:+.2f}"
        )
    return out


def run_classroom_stack_study(
    data_dir: str | None = None,
    log: Callable[[str], None] = print,
    models: list[str] | None = None,
    pairs: list[tuple[int, int]] | None = None,
    seeds: range | None = None,
) -> tuple[list[str], list[dict[str, Any]], dict[str, Any]]:
    """The report of docs/protocol_classroom_stack.md: every report draw of every model;
    the printed lines, the Reproduce page's model rows and the saved run's extra fields."""
    from csvm.analysis.mnist10 import load_mnist10
    from csvm.analysis.reproduced import model_entry
    from csvm.runs.classroom_study import draw_pair

    data = load_mnist10(data_dir)
    keys = list(REPORT_LABELS) if models is None else models
    pairs = REPORT_PAIRS if pairs is None else pairs
    seeds = REPORT_SEEDS if seeds is None else seeds
    rows: dict[str, list[dict[str, Any]]] = {k: [] for k in keys}
    for a, b in pairs:
        for seed in seeds:
            X, y, Xe, ye = draw_pair(data, a, b, seed, True)
            base = _fit(ONE_LAYER, X, y, seed)
            one = _accuracy(base[1].decision_function(Xe), ye) if base else float("nan")
            t0 = time.perf_counter()
            plain = plain_cv(X, y, Xe, ye, seed)
            ref_seconds = {
                "one_layer_seconds": base[2] if base else 0.0,
                "plain_cv_seconds": time.perf_counter() - t0,  # the search and its refit
            }
            for key in keys:
                row = score_draw(_model(key), X, y, Xe, ye, seed, one, plain)
                if row is not None:
                    rows[key].append({**row, "pair": f"{a}v{b}", "seed": seed, **ref_seconds})
        log(f"  {a} v {b}: done")
    lines, entries, draws = [], [], []
    for key in keys:
        name = REPORT_LABELS.get(key, key)
        s = summarise(rows[key])
        lines.extend(_lines(name, s))
        log("\n".join(_lines(name, s)))
        draws.extend({"model": name, "candidate": key, **r} for r in rows[key])
        cfg = kcsvm_settings(_model(key), 0)
        entries.append(
            model_entry(name, [r["learned"] for r in rows[key]], s["seconds"], settings=key,
                        config=cfg)
        )  # fmt: skip
        if key == HOG_LAYER:
            fixed = [r["fixed"]["start"] for r in rows[key]]
            secs = float(np.mean([r["fixed_seconds"]["start"] for r in rows[key]]))
            entries.append(model_entry(f"{name}, at HOG's start (no learning)", fixed, secs))
    first = rows[keys[0]]
    refs = (("one-layer preset", "one_layer"), ("plain SVM, γ and C by CV", "plain_cv"))
    for label, field in refs:
        secs = float(np.mean([r[f"{field}_seconds"] for r in first]))
        entries.append(model_entry(label, [r[field] for r in first], secs))
    pair_names = ", ".join(f"{a} v {b}" for a, b in pairs)
    extra = {
        "data": {
            "source": f"MNIST pairs {pair_names}, seeds {seeds.start}-{seeds.stop - 1}: per "
            f"draw 50 training images drawn from all 60,000, scored on the pair's test images",
        },
        "details": {"sign_tests": lines, "draws": draws},
    }
    return lines, entries, extra
