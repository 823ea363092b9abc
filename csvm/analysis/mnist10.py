"""Ten-class MNIST at full scale: ``python -m csvm reproduce mnist10``.

A K-CSVM one-vs-one on all 60,000 MNIST training images (45 pairs of about 12,000
images, one 5x5 filter each), tested on the 10,000 test images, with a progress bar and
ETA on stderr and each pair's time split.  The images are deskewed first
(:mod:`csvm.data.deskew`), and after the first fit every pair's SVM is solved again on its
support vectors and their one-pixel shifts (:mod:`csvm.model.virtual`); both accuracies are
reported.  Also the figures of a ten-class run in general
(:func:`pair_times`, :func:`run_report`), used by ``reproduce table3.1`` too.

The configuration (:data:`MNIST10_CONFIG`) and why: see docs/scale.md, section 6.
"""

from __future__ import annotations

import functools
import resource
import time
from itertools import combinations
from typing import Any

import numpy as np

from csvm.analysis.mnist10_baseline import (
    baseline_entries,
    baseline_line,
    fit_baseline,
    mcnemar_line,
    plain_svm,
    score_images,
)
from csvm.analysis.progress import ProgressBar, format_seconds
from csvm.analysis.reproduced import pack_correct
from csvm.analysis.stats import format_p
from csvm.data.deskew import deskew
from csvm.data.moment import moment_normalise
from csvm.model.virtual import SHIFT_SETS, refit_virtual

__all__ = [
    "MNIST10_CONFIG",
    "MNIST10_DESKEW",
    "MNIST10_STACK_CONFIG",
    "MNIST10_STACK_LEARN_ON",
    "MNIST10_VIRTUAL",
    "VIRTUAL_SHIFTS",
    "image_words",
    "load_mnist10",
    "plain_svm",
    "pair_times",
    "run_mnist10",
    "run_report",
    "save_mnist10",
]

#: K-CSVM settings of ``reproduce mnist10`` (chosen on the validation split, docs/scale.md).
MNIST10_CONFIG: dict[str, Any] = {
    "kernel": "rbf",
    "gamma": 0.03,
    "regulariser": "dfo2",
    "lam": 0.1,
    "step": "armijo",
    "eta": 1.0,
    "n_iter": 10,
    "C": None,
    "n_filters": 1,
}
#: Shifts of the virtual support vectors (:mod:`csvm.model.virtual`), by the CLI's name.
VIRTUAL_SHIFTS: dict[str, tuple[tuple[int, int], ...]] = {"none": (), **SHIFT_SETS}
#: The virtual support vectors of ``reproduce mnist10`` (chosen on the validation split).
MNIST10_VIRTUAL = "4"
#: Deskew every image, training and test, before the first fit (:mod:`csvm.data.deskew`).
MNIST10_DESKEW = True
#: ``reproduce mnist10-stack`` (issue 19, chosen on validation splits: docs/layers.md): 16
#: learned 5x5 filters, |x|, 2x2 max pooling, RBF on the pooled maps.
MNIST10_STACK_CONFIG: dict[str, Any] = {
    "layers": "5x5x16-abs-max2",
    "filter_init": "zero-mean",
    "kernel": "rbf",
    "gamma": 0.2,
    "regulariser": "dfo2",
    "lam": 0.1,
    "step": "relative",
    "eta": 0.1,
    "n_iter": 30,
    "C": None,
}
#: The stack learns its filters on a stratified subsample this large (about 2,000 images
#: a pair, the scale they were chosen at); every pair's SVM is then solved on all images.
MNIST10_STACK_LEARN_ON = 10_000
#: Field anchor: convolutional kernel networks, several layers (Mairal et al., 2014).
CKN_ACCURACY = 99.6


def load_mnist10(data_dir: str | None = None, n_train: int | None = None, seed: int = 0):
    """All 60,000 MNIST training images (or a stratified ``n_train`` of them) and the test
    set, as ``(X_train, y_train, X_test, y_test)`` float32 images and integer labels."""
    from csvm.data import load_multiclass
    from csvm.data.protocols import stratified_subsample

    d = load_multiclass("mnist", protocol=None, data_dir=data_dir)
    # Table 3.1's split holds 50,000 training and 10,000 validation images: together
    # they are the whole training set, in the original order.
    X = np.concatenate([d.X_train, d.X_val])
    y = np.concatenate([d.y_train, d.y_val])
    keep = stratified_subsample(y, n_train, seed)
    if keep is not None:
        X, y = X[keep], y[keep]
    return X, y, d.X_test, d.y_test


def pair_times(history: list[dict[str, Any]]) -> dict[int, dict[str, float]]:
    """Per classifier: ``seconds`` (its own wall time), ``steps`` and the summed
    ``kernel``/``svm``/``gradient`` timings of its recorded steps."""
    out: dict[int, dict[str, float]] = {}
    for event in history:
        entry = out.setdefault(
            event["classifier"], {"seconds": 0.0, "steps": 0, "kernel": 0.0, "svm": 0.0}
        )
        entry["seconds"] = max(entry["seconds"], float(event.get("seconds", 0.0)))
        entry["steps"] += 1
        for key, value in (event.get("timings") or {}).items():
            entry[key] = entry.get(key, 0.0) + float(value)
    return out


def _pair_matrix(times: dict[int, dict[str, float]], classes: np.ndarray) -> list[str]:
    """Upper-triangular table of each one-vs-one pair's seconds."""
    n = len(classes)
    cells = {pair: k for k, pair in enumerate(combinations(range(n), 2))}
    lines = ["| s | " + " | ".join(str(c) for c in classes[1:]) + " |"]
    lines.append("|---" * n + "|")
    for i in range(n - 1):
        row = []
        for j in range(1, n):
            k = cells.get((i, j))
            row.append("" if k is None or k not in times else f"{times[k]['seconds']:.0f}")
        lines.append(f"| {classes[i]} | " + " | ".join(row) + " |")
    return lines


def run_report(
    clf: Any, fit_seconds: float, predict_seconds: float, accuracy: float
) -> tuple[list[str], dict[str, Any]]:
    """Lines to print and a JSON-ready record: accuracy, times, per-pair split, memory."""
    times = pair_times(clf.history_)
    per_pair = np.array([t["seconds"] for t in times.values()])
    split = {k: sum(t.get(k, 0.0) for t in times.values()) for k in ("kernel", "svm", "gradient")}
    busy = float(per_pair.sum())
    split["other"] = max(0.0, busy - sum(split.values()))
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines = [
        f"test accuracy {100 * accuracy:.2f} %; fit {format_seconds(fit_seconds)} "
        f"({fit_seconds:.0f} s), predict {predict_seconds:.1f} s, peak memory "
        f"{peak_mib / 1024:.2f} GiB",
        f"per pair: median {np.median(per_pair):.0f} s, min {per_pair.min():.0f} s, max "
        f"{per_pair.max():.0f} s, summed {busy:.0f} s over {len(per_pair)} pairs; split "
        + ", ".join(f"{k} {100 * v / max(busy, 1e-9):.0f} %" for k, v in split.items()),
    ]
    if clf.multi_class == "ovo" and len(clf.classes_) > 2:
        lines += ["", "seconds per one-vs-one pair:"] + _pair_matrix(times, clf.classes_)
    record = {
        "test_accuracy": float(accuracy),
        "fit_seconds": float(fit_seconds),
        "predict_seconds": float(predict_seconds),
        "peak_memory_mib": float(peak_mib),
        "pairs": [{"pair": [str(v) for v in clf.pairs_[k]], **times[k]} for k in sorted(times)],
        "split_seconds": split,
    }
    return lines, record


def _load(
    data_dir: str | None,
    n_train: int | None,
    seed: int,
    deskewed: bool,
    moment_box: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """The training and test images and labels, prepared (deskewed, or moment-normalised
    to ``moment_box`` pixels), and the seconds preparing the training images took (they
    count in the fit)."""
    X, y, X_test, y_test = load_mnist10(data_dir, n_train, seed)
    prepare = None
    if moment_box is not None:
        prepare = functools.partial(moment_normalise, box=moment_box)
    elif deskewed:
        prepare = deskew
    if prepare is None:
        return X, y, X_test, y_test, 0.0
    t0 = time.perf_counter()
    X = prepare(X)
    prep = time.perf_counter() - t0
    return X, y, prepare(X_test), y_test, prep


def image_words(deskewed: bool, moment_box: float | None = None) -> dict[str, Any]:
    """How the images were prepared, for the saved run: a ``name`` suffix, a
    ``settings`` suffix and ``config`` entries.

    Examples
    --------
    >>> image_words(True)["name"], image_words(True, 22.0)["name"]
    (', deskewed images', ', moment-normalised images (22 px)')
    >>> image_words(False)
    {'name': '', 'settings': ', deskew False', 'config': {'deskew': False}}
    """
    if moment_box is None:
        name = ", deskewed images" if deskewed else ""
        return {"name": name, "settings": f", deskew {deskewed}", "config": {"deskew": deskewed}}
    return {
        "name": f", moment-normalised images ({moment_box:g} px)",
        "settings": f", deskew True, moment box {moment_box:g}",
        "config": {"deskew": True, "moment_box": float(moment_box)},
    }


def _fit_first(
    X: np.ndarray, y: np.ndarray, config: dict[str, Any], n_jobs: int, seed: int
) -> tuple[Any, float]:
    """The one-vs-one K-CSVM fitted with a progress bar, and the seconds the fit took
    (``config["beside_hog"]``: a stack beside HOG, :mod:`csvm.model.hog_product`)."""
    from csvm.model.hog_product import HOGProductCSVM
    from csvm.model.kernelised import KernelCSVM

    config = dict(config)
    cls = HOGProductCSVM if config.pop("beside_hog", False) else KernelCSVM
    shape = {} if config.get("layers") else {"filter_shape": (5, 5)}
    fixed = {"multi_class": "ovo", "n_jobs": n_jobs, "random_state": seed}
    clf = cls(image_shape=X.shape[1:], **shape, **fixed, **config)
    bar = ProgressBar(total=45 * int(config["n_iter"]), unit="pair iterations")
    t0 = time.perf_counter()
    try:
        clf.fit(X, y, callback=bar.callback)
    finally:
        bar.close()
    return clf, time.perf_counter() - t0


def _fit_stack(
    X: np.ndarray, y: np.ndarray, config: dict[str, Any], n_jobs: int, seed: int
) -> tuple[Any, float]:
    """The stack's filters learned on a stratified subsample, then every pair's SVM solved
    on all of ``X``: the estimator and the seconds both took."""
    from csvm.data.protocols import stratified_subsample
    from csvm.model.refit import refit_all

    keep = stratified_subsample(y, MNIST10_STACK_LEARN_ON, seed)
    if keep is None:  # no more images than the filters learn on
        return _fit_first(X, y, config, n_jobs, seed)
    clf, seconds = _fit_first(X[keep], y[keep], config, n_jobs, seed)
    print(f"filters learned on {len(keep):,} images; solving the 45 SVMs on all", flush=True)
    t0 = time.perf_counter()
    refit_all(clf, X, y, n_jobs=n_jobs)
    return clf, seconds + time.perf_counter() - t0


def _add_virtual(
    clf: Any,
    X: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
    shifts: tuple[tuple[int, int], ...],
    n_jobs: int,
    first: dict[str, Any],
    lines: list[str],
    record: dict[str, Any],
    test_shifts: tuple[tuple[int, int], ...] = (),
) -> dict[str, float]:
    """Solve the pairs again with virtual support vectors; update ``lines`` and ``record``
    (in place) with the new figures, and return the new score (with ``test_shifts``)."""
    first_fit = first["fit_seconds"]
    print(
        f"first fit: test accuracy {100 * first['accuracy']:.2f} %; solving the 45 SVMs "
        f"again on {first['n_support']:,} support vectors and {len(shifts)} shifts of each",
        flush=True,
    )
    bar = ProgressBar(total=len(clf.estimators_), unit="pairs solved again")
    t0 = time.perf_counter()
    try:
        refit_virtual(
            clf,
            X,
            shifts,
            n_jobs=n_jobs,
            on_done=lambda k: bar.update(note=f"last: pair {_pair_text(clf.pairs_[k])}"),
        )
    finally:
        bar.close()
    refit = time.perf_counter() - t0
    fit_seconds = first_fit + refit
    final = score_images(clf, X_test, y_test, test_shifts, n_jobs)
    record.update(
        test_accuracy=final["accuracy"],
        fit_seconds=fit_seconds,
        predict_seconds=final["predict_seconds"],
        peak_memory_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    )
    record["virtual"] = {
        "shifts": [list(s) for s in shifts],
        "refit_seconds": refit,
        "n_support": int(clf.n_support_.sum()),
        "pairs": [
            {"pair": [str(v) for v in pair], "n_support": int(n), **timings}
            for pair, n, timings in zip(
                clf.pairs_, clf.n_support_, clf.virtual_timings_, strict=True
            )
        ],
    }
    lines[0] = (
        f"test accuracy {100 * final['accuracy']:.2f} %; fit {format_seconds(fit_seconds)} "
        f"({fit_seconds:.0f} s: first fit {first_fit:.0f} s, virtual support vectors "
        f"{refit:.0f} s), predict {final['predict_seconds']:.1f} s, peak memory "
        f"{record['peak_memory_mib'] / 1024:.2f} GiB"
    )
    lines.insert(
        1,
        f"first fit alone: {100 * first['accuracy']:.2f} % ({first['n_support']:,} "
        f"support vectors); with the virtual ones: {record['virtual']['n_support']:,}",
    )
    return final


def _announce(n_train: int, n_test: int, config, stack: bool, shifts, images: dict) -> None:
    """The run's first line: its data and settings."""
    settings = ", ".join(f"{k} {v}" for k, v in config.items())
    print(
        f"MNIST, 10 classes: {n_train:,} training images, {n_test:,} test images; K-CSVM "
        f"one-vs-one (45 pairs), {'' if stack else '5x5 filter, '}{settings}; virtual "
        f"support vectors: {len(shifts)} shifts; images: "
        f"{images['name'].lstrip(', ') or 'as they are'}",
        flush=True,
    )


def _note_test_shifts(
    final: dict[str, Any], test_shifts, first_accuracy: float, lines: list[str], record: dict
) -> None:
    """Record the test-time shifts' figures and say them in the report (in place)."""
    record["test_accuracy"] = final["accuracy"]
    record["test_shifts"] = {
        "shifts": [list(s) for s in test_shifts],
        "accuracy_unshifted": final["accuracy_unshifted"],
    }
    lines[0] = lines[0].replace(
        f"test accuracy {100 * first_accuracy:.2f} %",
        f"test accuracy {100 * final['accuracy']:.2f} %",
        1,
    )
    lines.insert(
        1,
        f"with test-time shifts ({len(test_shifts)} moves of each test image): "
        f"{100 * final['accuracy']:.2f} %; without them {100 * final['accuracy_unshifted']:.2f} %",
    )


def _pair_text(pair: tuple) -> str:
    """``(3, 5)``, as the first fit's progress bar writes a pair."""
    return "(" + ", ".join(str(v) for v in pair) + ")"


def _first_fit_record(first: dict[str, Any], seconds: float) -> dict[str, Any]:
    """The saved figures of the fit before virtual support vectors."""
    return {
        "test_accuracy": first["accuracy"],
        "fit_seconds": seconds,
        "predict_seconds": first["predict_seconds"],
        "n_support": first["n_support"],
    }


def _anchor_line(accuracy: float) -> str:
    """The result beside the field's anchor (CKN)."""
    return (
        f"\nfield anchor: convolutional kernel networks (Mairal et al. 2014, several layers) "
        f"{CKN_ACCURACY} %; one learned 5x5 layer here: {100 * accuracy:.2f} % "
        f"({CKN_ACCURACY - 100 * accuracy:.2f} points below)"
    )


def run_mnist10(
    data_dir: str | None = None,
    n_train: int | None = None,
    n_jobs: int = -1,
    seed: int = 0,
    overrides: dict[str, Any] | None = None,
    out: str | None = None,
    env: dict[str, Any] | None = None,
    virtual: str = MNIST10_VIRTUAL,
    deskewed: bool = MNIST10_DESKEW,
    baseline: bool = True,
    stack: bool = False,
    table: str | None = None,
    moment_box: float | None = None,
    test_shifts: str = "none",
) -> list[str]:
    """Fit the K-CSVM of :data:`MNIST10_CONFIG` on MNIST and return the report's lines.

    Parameters
    ----------
    data_dir : str, optional
    n_train : int, optional
        A stratified subsample of the 60,000 (for a quick look); None: all.
    n_jobs : int
        Pairs trained at once (threads; inside :func:`csvm.parallel.backend`, a cluster).
    seed : int
    overrides : dict, optional
        Settings that replace :data:`MNIST10_CONFIG`'s.
    out : str, optional
        Write the figures as JSON to this file (:func:`save_mnist10`).
    env : dict, optional
        :func:`csvm.analysis.reproduced.environment` taken when the run started.
    virtual : {"none", "4", "8", "8+2px", "16"}
        The virtual support vectors' shifts (:data:`VIRTUAL_SHIFTS`); the first fit's
        accuracy is measured and reported too.
    deskewed : bool
        Deskew the training and test images first (:func:`csvm.data.deskew.deskew`); the
        training images' seconds count in the fit.
    baseline : bool
        Also train :func:`plain_svm` the same way: what the learned filters add.
    stack : bool
        ``reproduce mnist10-stack``: the pooled stack of :data:`MNIST10_STACK_CONFIG`,
        its filters learned on a stratified :data:`MNIST10_STACK_LEARN_ON` of the training
        images, then every pair's SVM solved on all of them
        (:func:`csvm.model.refit.refit_all`); the baseline keeps :data:`MNIST10_CONFIG`'s RBF γ.
    table : str, optional
        The saved run's table (default: ``mnist10-stack`` for a stack, else ``mnist10``).
    moment_box : float, optional
        Moment-normalise the images to this box (:mod:`csvm.data.moment`; deskews too).
    test_shifts : {"none", "4", "8", "8+2px", "16"}
        Test-time shifts of the final model and the baseline
        (:func:`csvm.model.virtual.shifted_decision`); the accuracy without them too.
    """
    shifts, at_test = _shift_set("virtual", virtual), _shift_set("test_shifts", test_shifts)
    X, y, X_test, y_test, prep = _load(data_dir, n_train, seed, deskewed, moment_box)
    images = image_words(deskewed, moment_box)
    config = {**(MNIST10_STACK_CONFIG if stack else MNIST10_CONFIG), **(overrides or {})}
    _announce(len(y), len(y_test), config, stack, shifts, images)
    clf, fit_only = (
        _fit_stack(X, y, config, n_jobs, seed) if stack else _fit_first(X, y, config, n_jobs, seed)
    )
    first_fit = prep + fit_only
    first = score_images(clf, X_test, y_test)
    first.update(fit_seconds=first_fit, n_support=int(clf.n_support_.sum()))
    lines, record = run_report(clf, first_fit, first["predict_seconds"], first["accuracy"])
    final = _final_score(clf, X, X_test, y_test, shifts, at_test, n_jobs, first, lines, record)
    record["deskew_seconds"] = prep if deskewed or moment_box is not None else None
    record["test_correct"] = pack_correct(final["correct"])
    record["first_fit"] = _first_fit_record(first, first_fit)
    if baseline:
        plain = {**MNIST10_CONFIG, **(overrides or {})} if not stack else MNIST10_CONFIG
        _add_baseline(X, y, X_test, y_test, plain, shifts, at_test, n_jobs, final, lines, record)
    lines.append(_anchor_line(final["accuracy"]))
    if out:
        save_mnist10(
            out, record, config, len(y), len(y_test), seed, env, shifts, deskewed,
            table=table or ("mnist10-stack" if stack else "mnist10"),
            moment_box=moment_box, test_shifts=at_test,
        )  # fmt: skip
    return lines


def _add_baseline(X, y, X_test, y_test, plain, shifts, at_test, n_jobs, final, lines, record):
    """:func:`~csvm.analysis.mnist10_baseline.fit_baseline` and its McNemar test against
    the model, into ``record`` and ``lines`` (in place)."""
    base, plain_correct = fit_baseline(X, y, X_test, y_test, plain, shifts, n_jobs, at_test)
    record["baseline"] = base
    lines.append(baseline_line(base, shifts, at_test))
    lines.append(mcnemar_line(final["correct"], plain_correct, record))


def _final_score(clf, X, X_test, y_test, shifts, at_test, n_jobs, first, lines, record) -> dict:
    """The score after the virtual support vectors and the test-time shifts (each if
    asked; ``lines`` and ``record`` updated in place)."""
    final = first
    if shifts:
        final = _add_virtual(clf, X, X_test, y_test, shifts, n_jobs, first, lines, record, at_test)
    elif at_test:
        final = score_images(clf, X_test, y_test, at_test, n_jobs)
    if at_test:
        _note_test_shifts(final, at_test, first["accuracy"], lines, record)
    return final


def _shift_set(name: str, value: str) -> tuple[tuple[int, int], ...]:
    """A set of shifts named by :data:`VIRTUAL_SHIFTS`' key (a clear error otherwise)."""
    if value not in VIRTUAL_SHIFTS:
        raise ValueError(
            f"{name}={value!r} is not a set of shifts: use one of {sorted(VIRTUAL_SHIFTS)}."
        )
    return VIRTUAL_SHIFTS[value]


def save_mnist10(
    out: str,
    record: dict[str, Any],
    config: dict[str, Any],
    n_train: int,
    n_test: int,
    seed: int = 0,
    env: dict[str, Any] | None = None,
    shifts: tuple[tuple[int, int], ...] = (),
    deskewed: bool = False,
    table: str = "mnist10",
    moment_box: float | None = None,
    test_shifts: tuple[tuple[int, int], ...] = (),
) -> dict[str, Any]:
    """Write a run's :func:`run_report` record in :mod:`csvm.analysis.reproduced`'s format: the
    model (one seed) beside the field anchor, and its first fit alone when virtual support
    vectors were added; the record itself under ``details``."""
    from csvm.analysis.reproduced import model_entry, save_run

    name = "K-CSVM, 45 OvO filters 5×5, RBF γ " + format(config.get("gamma", 0), "g")
    if config.get("layers"):
        name = f"K-CSVM, 45 OvO stacks {config['layers']}, RBF γ " + format(config["gamma"], "g")
    if config.get("beside_hog"):
        name = name.replace("stacks ", "stacks beside HOG, ", 1)
    images = image_words(deskewed, moment_box)
    name += images["name"]
    anchor = {
        "reference": f"{CKN_ACCURACY}",
        "source": "Mairal et al. 2014, convolutional kernel network (several layers)",
    }
    settings = ", ".join(f"{k} {v}" for k, v in config.items()) + images["settings"]
    full = {"estimator": "KernelCSVM", **config, "multi_class": "ovo", "seed": seed}
    full.update(images["config"])
    first = record["first_fit"]
    models = []
    if shifts or test_shifts:
        moved = {"virtual_shifts": shifts, "test_shifts": test_shifts}
        moved = {k: [list(s) for s in v] for k, v in moved.items() if v}
        what = [f"virtual SVs ({len(shifts)} shifts)"] if shifts else []
        what += [f"test-time shifts ({len(test_shifts)})"] if test_shifts else []
        models.append(
            model_entry(
                f"{name} + {' and '.join(what)}",
                [record["test_accuracy"]],
                record["fit_seconds"],
                anchor["reference"],
                source=anchor["source"],
                settings=settings
                + "".join(f", {k.replace('_', ' ')} {v}" for k, v in moved.items()),
                config={**full, **moved},
                seconds_each=[record["fit_seconds"]],
            )
        )
    models.append(
        model_entry(
            name + (" (first fit, no virtual SVs)" if shifts or test_shifts else ""),
            [first["test_accuracy"]],
            first["fit_seconds"],
            anchor["reference"],
            source=anchor["source"],
            settings=settings,
            config=full,
            seconds_each=[first["fit_seconds"]],
        )
    )
    base = record.get("baseline")
    if base is not None:
        models += baseline_entries(base, shifts, images, test_shifts)
    data = {"n_train": int(n_train), "n_test": int(n_test)}
    details: dict[str, Any] = {"seed 0": record}
    if "mcnemar" in record:
        m = record["mcnemar"]
        details["mcnemar"] = [
            f"- {models[0]['name']} vs the plain SVM with the same recipe: {m['model_only']} "
            f"test images only it gets right, {m['plain_only']} only the plain SVM, "
            f"p {format_p(m['p'])}"
        ]
    return save_run(out, table, models, env, data=data, details=details)
