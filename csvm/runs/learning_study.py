"""With how many filters does learning pay?  A stack learned on each MNIST pair against the
same network on its random start at the learned norms (issue 35; declared in
docs/protocol_learning_pays.md before any run).

``python -m csvm reproduce mnist45-learning`` runs :func:`run_learning_study`: on each of the
45 MNIST pairs (thesis protocol), the chosen stack (:data:`CHOSEN`) learned on the pair's
training split, and the same network and SVM with its filters fixed at their random
zero-mean start, each layer rescaled to the learned layer's norm (the bandwidth learning
reached, without the shapes it learned); both scored once on the pair's test split.

The candidates (:data:`CANDIDATES`) were screened on the validation splits of the selection
pairs only (``bench/bench_learning_pays.py --stage select``), which chose :data:`CHOSEN`.
The protocol's addendum 2 screened one filter and 7 × 7 filters (:data:`FEW`) the same way
and gated its choice, :data:`CHOSEN_FEW`, on all 45 pairs' validation splits; ``python -m
csvm reproduce mnist45-learning-few`` (:func:`run_learning_study_few`) is its report.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from csvm.analysis.stats import format_p

__all__ = [
    "CANDIDATES",
    "CHOSEN",
    "CHOSEN_FEW",
    "FEW",
    "SCHEDULES",
    "candidate_config",
    "fit_with_start",
    "run_learning_study",
    "run_learning_study_few",
    "score_pair",
    "summary",
]

#: Stacks of F filters, γ keeping γ × F at the 45-pair stack's 0.2 × 16 (the squared
#: distance between two images' pooled maps grows with the number of maps).
CANDIDATES: dict[str, dict[str, Any]] = {
    str(f): {"layers": f"5x5x{f}-abs-max2", "gamma": 3.2 / f} for f in (2, 4, 8, 16)
}
#: The candidate the selection chose by docs/protocol_learning_pays.md's rule
#: (``bench/results/learning_pays_select.json``: mean learned − random start on the
#: selection pairs' validation splits +0.38 points with 2 filters, +0.19 with 4, +0.17
#: with 8, +0.20 with 16).
CHOSEN: str | None = "2"
#: The 45-pair stack's iterations (its chosen ``16/g0.2/30it``).
N_ITER = 30
#: Addendum 1's schedules for the chosen stack, in tie-break order: name -> the
#: fields that differ from :func:`candidate_config` ("2" is the reported model).
SCHEDULES: dict[str, dict[str, Any]] = {
    "2": {},
    "2/60it": {"n_iter": 60},
    "2/eta0.2": {"eta": 0.2},
    "2/eta0.2/60it": {"eta": 0.2, "n_iter": 60},
}
#: Addendum 2's candidates, in tie-break order: name -> the fields that differ from
#: addendum 1's chosen "2/60it" (one filter, and 7 × 7 filters; γ × F stays 3.2).
FEW: dict[str, dict[str, Any]] = {
    "2/60it": {},
    "1/60it": {"layers": "5x5x1-abs-max2", "gamma": 3.2},
    "1x7/60it": {"layers": "7x7x1-abs-max2", "gamma": 3.2},
    "2x7/60it": {"layers": "7x7x2-abs-max2", "gamma": 1.6},
}
#: The candidate addendum 2's selection chose (``bench/bench_learning_pays.py --stage
#: select-few``, ``bench/results/learning_pays_few.json``: mean learned − random start on
#: the selection pairs' validation splits +0.50 points for "2/60it", +0.91 for "1/60it",
#: +1.46 for "1x7/60it", +1.65 for "2x7/60it", every one above the plain SVM's floor).
#: Its gate on all 45 validation splits (``learning_pays_gate_few.json``): +0.66 points,
#: ahead on 44 pairs, passed.
CHOSEN_FEW: str | None = "2x7/60it"


def candidate_config(name: str) -> dict[str, Any]:
    """Candidate ``name``'s RunConfig fields: the 45-pair study's stack settings
    (:data:`csvm.runs.pair_study.STACK_BASE`, 30 iterations) with its layers and γ, and
    a schedule of :data:`SCHEDULES` where the name has one ("2/60it"); addendum 2's
    :data:`FEW` are "2/60it" with their own layers and γ."""
    from csvm.runs.pair_study import STACK_BASE

    if name in FEW and name not in SCHEDULES:
        return {**candidate_config("2/60it"), **FEW[name]}

    stack, _, schedule = name.partition("/")
    if stack not in CANDIDATES or (schedule and name not in SCHEDULES):
        known = ", ".join([*CANDIDATES, *list(SCHEDULES)[1:], *list(FEW)[1:]])
        raise ValueError(f"Unknown candidate {name!r}: choose one of {known}.")
    return {**STACK_BASE, "n_iter": N_ITER, **CANDIDATES[stack], **SCHEDULES.get(name, {})}


def fit_with_start(data, config: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    """The stack learned on ``data``'s training split, the same network's SVM solved on
    its random start at the learned norms, and what the two fits record.

    Returns
    -------
    clf : KernelCSVM
        Fitted (its own record: validation accuracy, seconds, divergence).
    fixed : KernelState
        The random start's solved SVM (``decision_function`` on the network's images).
    info : dict
        ``seconds`` (both fits), ``cosine`` (layer 1, learned to start) and the
        learned ``norms``.
    """
    from csvm.analysis.ablation import rescale_to_norm, start_layers
    from csvm.model.kernel_state import solve_on_filters
    from csvm.runs.pair_study import fit_scored

    start_time = time.perf_counter()
    clf, record = fit_scored(data, config)
    first = start_layers(clf, data)
    state = clf.estimators_[0]
    learned, net = state.layer_filters, state.network
    scaled = [
        rescale_to_norm(f0, float(np.linalg.norm(f))) for f0, f in zip(first, learned, strict=True)
    ]
    params = {k: clf.get_params()[k] for k in ("kernel", "degree", "gamma", "coef0")}
    sign = np.where(data.y_train == clf.classes_[1], 1, -1)
    fixed = solve_on_filters(
        clf._images(data.X_train, reset=False), sign, net.pack(scaled), params, clf.C, network=net
    )
    f0, f1 = first[0].ravel(), learned[0].ravel()
    info = {
        "seconds": time.perf_counter() - start_time,
        "cosine": float(f0 @ f1 / (np.linalg.norm(f0) * np.linalg.norm(f1))),
        "norms": [float(np.linalg.norm(f)) for f in learned],
        "diverged": record.get("diverged"),
    }
    return clf, fixed, info


def _right(clf, fixed, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which of ``X`` the learned stack and its random start get right."""
    learned = clf.predict(X) == y
    start = (fixed.decision_function(clf._images(X, reset=False)) > 0) == (y == clf.classes_[1])
    return learned, start


def score_pair(
    pair: str, config: dict[str, Any], split: str, data_dir: str | None = None
) -> dict[str, Any]:
    """One pair: the learned stack and its random start scored on ``split`` ("val" or
    "test"; the selection reads "val" only), as packed right / wrong bits."""
    from csvm.analysis.reproduced import pack_correct
    from csvm.runs.pair_study import load_thesis_pair

    if split not in ("val", "test"):
        raise ValueError(f"split {split!r}: 'val' or 'test'.")
    data = load_thesis_pair("mnist", pair, data_dir)
    clf, fixed, info = fit_with_start(data, config)
    X, y = (data.X_val, data.y_val) if split == "val" else (data.X_test, data.y_test)
    learned, start = _right(clf, fixed, X, y)
    return {
        "pair": pair,
        "split": split,
        "n": int(len(y)),
        "n_train": int(len(data.y_train)),
        "learned": pack_correct(learned),
        "start": pack_correct(start),
        "learned_accuracy": float(learned.mean()),
        "start_accuracy": float(start.mean()),
        **info,
    }


def summary(units: list[dict[str, Any]]) -> dict[str, Any]:
    """Learned − random start over pairs (:func:`csvm.runs.pair_study.summarise` of each
    pair's :func:`~csvm.runs.pair_study.compare_units`, the random start in the plain
    SVM's place): mean and sd in points, ahead / level / behind, McNemar wins / ties /
    losses (p < 0.05) and the sign test over the pairs not level."""
    from csvm.runs.pair_study import compare_units, summarise

    return summarise([
        compare_units({"correct": u["start"], "n_test": u["n"]},
                      {"correct": u["learned"], "n_test": u["n"]}, u["pair"])
        for u in units
    ])  # fmt: skip


def _line(label: str, s: dict[str, Any]) -> str:
    return (
        f"- {label} ({s['pairs']} pairs): learned − random start at the learned norms "
        f"{s['mean']:+.2f} ± {s['sd']:.2f} points; ahead / level / behind {s['ahead']} / "
        f"{s['level']} / {s['behind']}; McNemar wins / losses {s['wins']} / {s['losses']}; "
        f"sign test p {format_p(s['sign_p'])}"
    )


def run_learning_study_few(
    data_dir: str | None = None, log: Callable[[str], Any] = print
) -> tuple[list[str], list[dict[str, Any]], dict[str, Any]]:
    """Addendum 2's report: :func:`run_learning_study` with :data:`CHOSEN_FEW`, once its
    gate on the 45 validation splits has passed."""
    if CHOSEN_FEW is None:
        raise ValueError(
            "Addendum 2 chose nothing to report: run bench/bench_learning_pays.py --stage "
            "gate-few; the test splits are read only past its gate."
        )
    return run_learning_study(data_dir, log, chosen=CHOSEN_FEW)


def run_learning_study(
    data_dir: str | None = None, log: Callable[[str], Any] = print, chosen: str | None = None
) -> tuple[list[str], list[dict[str, Any]], dict[str, Any]]:
    """Every MNIST pair's learned stack and random start on the test split, as a saved run:
    the printed lines, the model rows (means over the pairs) and the extra fields.
    ``chosen`` is a candidate's name (default: :data:`CHOSEN`)."""
    from csvm.analysis.reproduced import model_entry
    from csvm.runs.pair_study import MNIST_PAIRS, SELECTION_PAIRS

    chosen = CHOSEN if chosen is None else chosen
    if chosen is None:
        raise ValueError("No stack chosen yet: run bench/bench_learning_pays.py --stage select.")
    config = candidate_config(chosen)
    units = []
    for pair in MNIST_PAIRS:
        units.append(score_pair(pair, config, "test", data_dir))
        u = units[-1]
        log(f"{pair}: learned {100 * u['learned_accuracy']:.2f} %, random start at the learned "
            f"norms {100 * u['start_accuracy']:.2f} % ({u['seconds']:.0f} s)")  # fmt: skip
    settings = (
        f"layers {config['layers']}, RBF γ {config['gamma']:g}, {config['n_iter']} iterations"
    )
    seconds = float(np.mean([u["seconds"] for u in units]))
    models = [
        model_entry(
            f"mean of {len(units)} pairs: {name}",
            [float(np.mean([u[key] for u in units]))],
            seconds,
            settings=settings,
        )
        for key, name in (
            ("learned_accuracy", f"stack {config['layers']}, learned"),
            ("start_accuracy", "the same on its random start at the learned norms"),
        )
    ]
    off = [u for u in units if u["pair"] not in SELECTION_PAIRS]
    s = summary(units)
    lines = [_line("all pairs", s), _line("off the 5 selection pairs", summary(off))]
    met = s["mean"] >= 0.5 and s["ahead"] >= 30
    lines.append(f"- issue 35's target (≥ +0.5 points, ahead on ≥ 30 pairs): "
                 f"{'met' if met else 'missed'}")  # fmt: skip
    extra = {
        "data": {
            "source": "mnist, thesis protocol per pair",
            "n_train": int(sum(u["n_train"] for u in units)),
            "n_test": int(sum(u["n"] for u in units)),
        },
        # not "pairs": the Reproduce page reads that key as a pair study's table
        "details": {"mcnemar": lines, "chosen": chosen, "config": config, "units": units},
    }
    return [f"{len(units)} MNIST pairs: does learning the filters pay?", *lines], models, extra
