"""What a finished (or stopped, or diverged) run says in words: the headline that a
class reads from the back row, and the significance of each difference between models.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from csvm.analysis.stats import (
    SIGNIFICANCE_LEVEL,
    describe_difference,
    format_p,
    format_signed,
    mcnemar_exact,
)
from csvm.model.kernel_registry import KERNELS
from csvm.runs.config import MODEL_LABELS, RunConfig
from csvm.runs.cost import format_elapsed

__all__ = [
    "ablation_verdict",
    "classes_words",
    "comparisons",
    "headline",
    "named_pair",
    "run_name",
    "task_words",
]

Outcomes = Mapping[str, Mapping[str, Any] | None]


def _label(config: RunConfig, key: str, result: Mapping[str, Any] | None = None) -> str:
    """A model's name; a tuned baseline's result carries its own ("… (tuned …)")."""
    return (result or {}).get("label") or MODEL_LABELS[config.model if key == "csvm" else key]


def _result(outcomes: Outcomes, key: str) -> Mapping[str, Any] | None:
    outcome = outcomes.get(key)
    return None if outcome is None else outcome.get("result")


def _baselines_text(config: RunConfig, outcomes: Outcomes, y_test: np.ndarray | None) -> str:
    """The baselines' accuracies, each with McNemar's p against the CSVM when known: the
    plain SVM and the small CNN, and the most accurate other baseline when it beats the
    CSVM (a headline that left out HOG's 98.29 % beside a K-CSVM 5 points lower read as a
    win)."""
    mine = _result(outcomes, "csvm") or {}
    others = [
        (result["test_accuracy"], key)
        for key in outcomes
        if key not in ("csvm", "svm", "cnn") and (result := _result(outcomes, key)) is not None
    ]
    best = max(others, default=None)
    beaten = best is not None and best[0] > mine.get("test_accuracy", 1.0)
    parts = []
    for key in ("svm", "cnn", *([best[1]] if beaten else [])):
        result = _result(outcomes, key)
        if key not in outcomes or result is None:
            continue
        text = f"{_label(config, key, result)} {100 * result['test_accuracy']:.2f} %"
        if y_test is not None and mine.get("test_predictions") is not None:
            test = mcnemar_exact(y_test, mine["test_predictions"], result["test_predictions"])
            verdict = "significant" if test.p_value < 0.05 else "not significant"
            text += f" (p {format_p(test.p_value)}, {verdict})"
        parts.append(text)
    return (" — " + ", ".join(parts)) if parts else ""


def _diverged(outcome: Mapping[str, Any], result: Mapping[str, Any], shown: int) -> str:
    """The divergence in words ("diverged at step k: filter norm a → b; try η = e")."""
    event = next(
        (e for e in reversed(outcome.get("events", ())) if e.get("kind") == "divergence"), {}
    )
    before, after = event.get("filter_norm_before"), event.get("filter_norm_after")
    norms = f": filter norm {before:,.3g} → {after:,.0f}" if before and after else ""
    eta = (result.get("diverged") or {}).get("suggested_eta")
    advice = f"; try η = {eta:g}" if eta else ""
    return f"diverged at step {event.get('iteration', shown - 1) + 1}{norms}{advice}"


def headline(
    config: RunConfig,
    outcomes: Outcomes,
    shown: Sequence[Mapping[str, Any]],
    finished: bool,
    y_test: np.ndarray | None = None,
    paused: bool = False,
    total: int | None = None,
    stopping: bool = False,
) -> str:
    """One large line (markdown heading) on the state or outcome of a run.

    Parameters
    ----------
    config : RunConfig
    outcomes : mapping
        Model key -> ``{"state", "result", "events"}`` (see :func:`csvm.runs.targets.result_rows`).
    shown : sequence of dict
        The CSVM's step events shown so far.
    finished : bool
        Whether the run has ended and every step has been shown.
    y_test : ndarray, optional
        The test labels: each baseline then gets McNemar's p against the CSVM.
    paused : bool
        Whether the owner has paused the run (or its playback).
    total : int, optional
        Steps the run will take (default: those of one sub-problem; a multi-class run
        passes the sum over its sub-problems).
    stopping : bool
        Whether the owner has pressed Stop and the run has not ended yet.

    Returns
    -------
    str
        E.g. "K-CSVM: 98.60 % test, 25 steps, 1.5 s — plain SVM 98.30 %, small CNN 98.40 %",
        "K-CSVM diverged at step 1: filter norm 0.22 → 4,820; try η = 0.01", "K-CSVM
        stopped at step 39: 97.90 % with the best filter".
    """
    # The result's own label: a reloaded run that could not be verified says so here.
    label = _label(config, "csvm", _result(outcomes, "csvm"))
    outcome = outcomes.get("csvm")
    if outcome is None:
        return f"## {label}: this run is no longer on the server"
    if total is None:
        total = config.n_iter * (2 if config.model == "lcsvm" else 1)
    if outcome.get("state") == "error" and outcome.get("result") is None:
        # Named at once, while the baselines may still train for minutes.
        if outcome.get("error_type") == "Interrupted":  # cut off by a server stopping
            return f"## {label} interrupted at step {len(shown)}: {_failure(outcome, False)}"
        return f"## {label} failed at step {len(shown)}: {_failure(outcome)}"
    if not finished:
        if outcome.get("state") == "queued":
            return f"## {label}: waiting for a free worker"
        if stopping:  # said at once; the best filter's test accuracy follows
            return f"## {label}: stopping at step {len(shown)} of {total}…"
        if paused:
            return f"## {label}: paused at step {len(shown)} of {total}"
        return f"## {label}: step {len(shown)} of {total}"
    result = outcome.get("result")
    if result is None:
        return f"## {label}: {outcome.get('state', 'ended')} at step {len(shown)}, no result"
    status = result.get("status", "done")
    # Two decimals, as every table writes an accuracy (one decimal read "98.8 %" beside
    # the table's 98.75 %).
    acc = f"{100 * result['test_accuracy']:.2f} %"
    if status == "diverged":
        return f"## {label} {_diverged(outcome, result, len(shown))} (best filter: {acc} test)"
    if status == "stopped":
        return f"## {label} stopped at step {len(shown)}: {acc} test with the best filter"
    return (
        f"## {label}: {acc} test, {len(shown)} steps, {format_elapsed(result['seconds'])}"
        f"{_baselines_text(config, outcomes, y_test)}"
    )


def _failure(outcome: Mapping[str, Any], named: bool = True) -> str:
    """Why a job failed, in plain words (no markdown survives): its process died, its CPU
    time ran out, or its exception (headed by its type when ``named``)."""
    kind = outcome.get("error_type") or ""
    if kind == "TimeLimit":
        return "it used up the server's CPU time per job"
    message = outcome.get("error") or "no message"
    if named and kind and kind != "WorkerCrashed":
        message = f"{kind}: {message}"
    return re.sub(r"[^A-Za-z0-9\s(),.:'=/-]", " ", message)[:300]


def comparisons(config: RunConfig, outcomes: Outcomes, y_test: np.ndarray) -> list[str]:
    """An exact McNemar test for each pair of models evaluated on the same test images."""
    evaluated = [
        (_label(config, key, result), result["test_predictions"])
        for key in outcomes
        if (result := _result(outcomes, key)) is not None
        and result.get("test_predictions") is not None
    ]
    lines = []
    for (a, pred_a), (b, pred_b) in combinations(evaluated, 2):
        test = mcnemar_exact(y_test, pred_a, pred_b)
        lines.append(describe_difference(a, b, test))
    return lines


def run_name(config: RunConfig) -> str:
    """A run in a few readable words: model, kernel and its width, images, filters.

    Examples
    --------
    >>> run_name(RunConfig(kernel="rbf", gamma=0.02, n_train=50, n_filters=2))
    'K-CSVM RBF γ 0.02, 2 filters, 50 images, 3 v 5'
    >>> run_name(RunConfig(model="lcsvm", n_train=None, n_filters=1))
    'L-CSVM, 1 filter, all images, 3 v 5'
    """
    parts = [MODEL_LABELS[config.model]]
    if config.model == "kcsvm":
        entry = KERNELS.get(config.kernel)  # only the parameters this kernel reads
        used = entry.params if entry is not None else ()
        # Its name as the pages write it ("RBF", "polynomial"), not its key ("rbf").
        kernel = entry.label if entry is not None else config.kernel
        if "gamma" in used:
            kernel += f" γ {config.gamma:g}"
        if "degree" in used:
            kernel += f" d {config.degree}"
        parts[0] += f" {kernel}"
    filters = f"{config.n_filters} filter{'s' if config.n_filters != 1 else ''}"
    images = "all images" if config.n_train is None else f"{config.n_train} images"
    return ", ".join([parts[0], filters, images, task_words(config)])


def task_words(config: RunConfig) -> str:
    """What a run classifies, in words: its pair, or the classes it trains.

    Examples
    --------
    >>> task_words(RunConfig(class_a="3", class_b="5"))
    '3 v 5'
    >>> task_words(RunConfig(classes="3,5,0")), task_words(RunConfig(classes="all"))
    ('classes 3, 5, 0', 'all classes')
    """
    if config.classes is None:
        return f"{config.class_a} v {config.class_b}"
    return classes_words(config.classes)


def classes_words(classes: str) -> str:
    """A RunConfig's ``classes`` ("3,5,0" or "all") in words.

    Examples
    --------
    >>> classes_words("3,5,0"), classes_words("all")
    ('classes 3, 5, 0', 'all classes')
    """
    return "all classes" if classes == "all" else "classes " + classes.replace(",", ", ")


def named_pair(pair: Sequence[Any], class_names: Sequence[str]) -> tuple[str, str]:
    """A multi-class sub-problem's two sides by name, the class first: ``("7", "0")``, or
    ``("3", "rest")`` for one-vs-rest, which the estimators write as ``("rest", 3)``.

    Its labels index ``class_names`` (the estimators number the loaded classes 0..k-1).

    Examples
    --------
    >>> named_pair((0, 2), ["3", "5", "7"]), named_pair(("rest", 1), ["3", "5", "7"])
    (('3', '7'), ('5', 'rest'))
    """
    negative, positive = ("rest" if v == "rest" else str(class_names[int(v)]) for v in pair)
    return (positive, negative) if negative == "rest" else (negative, positive)


#: The ablation's fixed filters at the learned norm (``csvm.analysis.ablation``'s names).
_FIXED_AT_LEARNED_NORM = ("start", "delta", "gaussian")


def ablation_verdict(result: Mapping[str, Any]) -> str:
    """Which won: the learned filter or the best fixed filter at the learned norm.

    Parameters
    ----------
    result : mapping
        :func:`csvm.analysis.ablation.score_filter_sets`'s result (``rows`` with ``name``,
        ``label``, ``test_accuracy`` and ``mcnemar`` against the learned filter).

    Returns
    -------
    str
        E.g. "Learned filter 92.50 % vs the best fixed filter at its norm (Gaussian) 93.00 %:
        −0.50 points, p = 0.63 — no significant difference: a fixed filter does as well".
    """
    rows = {r["name"]: r for r in result["rows"]}
    learned = rows["learned"]
    fixed = [rows[n] for n in _FIXED_AT_LEARNED_NORM if rows.get(n) and rows[n]["mcnemar"]]
    best = max(fixed, key=lambda r: r["test_accuracy"])
    name = best["label"].split(",")[0]
    test = best["mcnemar"]
    gain = 100 * (learned["test_accuracy"] - best["test_accuracy"])
    head = (
        f"Learned filter {100 * learned['test_accuracy']:.2f} % vs the best fixed filter at "
        f"its norm ({name}) {100 * best['test_accuracy']:.2f} %: {format_signed(gain)} points, "
        f"p {format_p(test['p_value'])}"
    )
    if test["p_value"] >= SIGNIFICANCE_LEVEL:
        return f"{head} — no significant difference: a fixed filter does as well"
    return f"{head} — " + ("learning the filter won" if gain > 0 else "the fixed filter won")
