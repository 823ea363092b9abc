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

import resource
import time
from itertools import combinations
from typing import Any

import numpy as np

from csvm.analysis.progress import ProgressBar, format_seconds
from csvm.analysis.reproduced import pack_correct
from csvm.analysis.stats import format_p
from csvm.data.deskew import deskew
from csvm.model.virtual import SHIFT_SETS, refit_virtual

__all__ = [
    "MNIST10_CONFIG",
    "MNIST10_DESKEW",
    "MNIST10_STACK_CONFIG",
    "MNIST10_STACK_LEARN_ON",
    "MNIST10_VIRTUAL",
    "VIRTUAL_SHIFTS",
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
    data_dir: str | None, n_train: int | None, seed: int, deskewed: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """The training and test images and labels (deskewed if asked), and the seconds that
    deskewing the training images took (they count in the fit)."""
    X, y, X_test, y_test = load_mnist10(data_dir, n_train, seed)
    prep = 0.0
    if deskewed:
        t0 = time.perf_counter()
        X = deskew(X)
        prep = time.perf_counter() - t0
        X_test = deskew(X_test)
    return X, y, X_test, y_test, prep


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
) -> dict[str, float]:
    """Solve the pairs again with virtual support vectors; update ``lines`` and ``record``
    (in place) with the new figures, and return the new score."""
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
    final = _score(clf, X_test, y_test)
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


def _baseline_line(base: dict[str, Any], shifts: tuple[tuple[int, int], ...]) -> str:
    """The report's line on the plain SVM baseline (:func:`_baseline`'s figures)."""
    return (
        "\nplain RBF SVM per pair on the same images"
        + (" with the same virtual support vectors" if shifts else "")
        + f": {100 * base['test_accuracy']:.2f} % (first fit "
        f"{100 * base['first_fit']['test_accuracy']:.2f} %), fit {base['fit_seconds']:.0f} s"
    )


def _announce(n_train: int, n_test: int, config, stack: bool, shifts, deskewed: bool) -> None:
    """The run's first line: its data and settings."""
    settings = ", ".join(f"{k} {v}" for k, v in config.items())
    print(
        f"MNIST, 10 classes: {n_train:,} training images, {n_test:,} test images; K-CSVM "
        f"one-vs-one (45 pairs), {'' if stack else '5x5 filter, '}{settings}; virtual "
        f"support vectors: {len(shifts)} shifts; deskewed images: "
        f"{'yes' if deskewed else 'no'}",
        flush=True,
    )


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
        Also train :func:`plain_svm` on the same images, with the same virtual support
        vectors: what the learned filters add.
    stack : bool
        ``reproduce mnist10-stack``: the pooled stack of :data:`MNIST10_STACK_CONFIG`,
        its filters learned on a stratified :data:`MNIST10_STACK_LEARN_ON` of the training
        images, then every pair's SVM solved on all of them
        (:func:`csvm.model.refit.refit_all`); the baseline keeps :data:`MNIST10_CONFIG`'s RBF γ.
    table : str, optional
        The saved run's table (default: ``mnist10-stack`` for a stack, else ``mnist10``).
    """
    if virtual not in VIRTUAL_SHIFTS:
        raise ValueError(
            f"virtual={virtual!r} is not a set of shifts: use one of {sorted(VIRTUAL_SHIFTS)}."
        )
    shifts = VIRTUAL_SHIFTS[virtual]
    X, y, X_test, y_test, prep = _load(data_dir, n_train, seed, deskewed)
    config = {**(MNIST10_STACK_CONFIG if stack else MNIST10_CONFIG), **(overrides or {})}
    _announce(len(y), len(y_test), config, stack, shifts, deskewed)
    clf, fit_only = (
        _fit_stack(X, y, config, n_jobs, seed) if stack else _fit_first(X, y, config, n_jobs, seed)
    )
    first_fit = prep + fit_only
    first = _score(clf, X_test, y_test)
    first.update(fit_seconds=first_fit, n_support=int(clf.n_support_.sum()))
    lines, record = run_report(clf, first_fit, first["predict_seconds"], first["accuracy"])
    final = first
    if shifts:
        final = _add_virtual(clf, X, X_test, y_test, shifts, n_jobs, first, lines, record)
    record["deskew_seconds"] = prep if deskewed else None
    record["test_correct"] = pack_correct(final["correct"])
    record["first_fit"] = _first_fit_record(first, first_fit)
    if baseline:
        plain = {**MNIST10_CONFIG, **(overrides or {})} if not stack else MNIST10_CONFIG
        record["baseline"], plain_correct = _baseline(X, y, X_test, y_test, plain, shifts, n_jobs)
        lines.append(_baseline_line(record["baseline"], shifts))
        lines.append(_mcnemar(final["correct"], plain_correct, record))
    lines.append(_anchor_line(final["accuracy"]))
    if out:
        save_mnist10(
            out, record, config, len(y), len(y_test), seed, env, shifts, deskewed,
            table=table or ("mnist10-stack" if stack else "mnist10"),
        )  # fmt: skip
    return lines


def plain_svm(config: dict[str, Any], n_jobs: int, image_shape: tuple[int, ...]) -> Any:
    """A plain SVM per pair with ``config``'s kernel and C: a K-CSVM whose filter is a
    fixed 1x1 of weight 1 (its maps are the images) solved once, so that
    :func:`csvm.model.virtual.refit_virtual` applies to it unchanged."""
    from csvm.model.kernelised import KernelCSVM

    return KernelCSVM(
        image_shape=image_shape,
        filter_shape=(1, 1),
        init_filters=np.ones((1, 1, 1)),
        n_iter=1,  # one SVM solve, no filter step
        kernel=config["kernel"],
        gamma=config["gamma"],
        C=config["C"],
        multi_class="ovo",
        n_jobs=n_jobs,
    )


def _mcnemar(model: np.ndarray, plain: np.ndarray, record: dict[str, Any]) -> str:
    """The exact McNemar test of the model against the plain SVM on the same test images,
    recorded under ``record["mcnemar"]``; the report's line."""
    from csvm.analysis.stats import mcnemar_correct

    m = mcnemar_correct(model, plain)
    b, c, p = m.b, m.c, m.p_value
    record["mcnemar"] = {"model_only": b, "plain_only": c, "p": p}
    return (
        f"McNemar against the plain SVM on the same test images: {b} images only the K-CSVM "
        f"gets right, {c} only the plain SVM, p {format_p(p)}"
    )


def _baseline(X, y, X_test, y_test, config, shifts, n_jobs) -> tuple[dict[str, Any], np.ndarray]:
    """:func:`plain_svm` fitted, scored, given the same virtual support vectors, scored;
    its figures and which test images it got right."""
    svm = plain_svm(config, n_jobs, X.shape[1:])
    t0 = time.perf_counter()
    svm.fit(X, y)
    fit_seconds = time.perf_counter() - t0
    first = _score(svm, X_test, y_test)
    out: dict[str, Any] = {
        "settings": {k: config[k] for k in ("kernel", "gamma", "C")},
        "first_fit": {
            "test_accuracy": first["accuracy"],
            "fit_seconds": fit_seconds,
            "n_support": int(svm.n_support_.sum()),
        },
    }
    final = first
    if shifts:
        t0 = time.perf_counter()
        refit_virtual(svm, X, shifts, n_jobs=n_jobs)
        fit_seconds += time.perf_counter() - t0
        final = _score(svm, X_test, y_test)
    out.update(
        test_accuracy=final["accuracy"],
        fit_seconds=fit_seconds,
        n_support=int(svm.n_support_.sum()),
        test_correct=pack_correct(final["correct"]),
    )
    return out, final["correct"]


def _pair_text(pair: tuple) -> str:
    """``(3, 5)``, as the first fit's progress bar writes a pair."""
    return "(" + ", ".join(str(v) for v in pair) + ")"


def _score(clf: Any, X: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """Test accuracy, the seconds predict took, and which test images it got right."""
    t0 = time.perf_counter()
    correct = clf.predict(X) == y
    seconds = time.perf_counter() - t0
    return {"accuracy": float(correct.mean()), "predict_seconds": seconds, "correct": correct}


def _baseline_entries(
    base: dict[str, Any],
    shifts: tuple[tuple[int, int], ...],
    deskewed: bool,
) -> list[dict[str, Any]]:
    """:func:`save_mnist10`'s fits of the plain SVM baseline: with the virtual support
    vectors and its first fit alone when there are shifts, else its one fit."""
    from csvm.analysis.reproduced import model_entry

    models: list[dict[str, Any]] = []
    plain = base["settings"]  # what _baseline trained
    plain_settings = ", ".join(f"{k} {v}" for k, v in plain.items())
    plain_name = "plain RBF SVM per pair, γ " + format(plain["gamma"], "g")
    if deskewed:
        plain_name += ", deskewed images"
    fits = [(base, plain_name, shifts)]
    if shifts:
        fits = [
            (base, f"{plain_name} + the same virtual SVs", shifts),
            (base["first_fit"], f"{plain_name} (first fit, no virtual SVs)", ()),
        ]
    for figures, label, moved in fits:
        models.append(
            model_entry(
                label,
                [figures["test_accuracy"]],
                figures["fit_seconds"],
                settings=f"{plain_settings}, deskew {deskewed}"
                + (f", virtual shifts {[list(s) for s in moved]}" if moved else ""),
                config={
                    "estimator": "KernelCSVM with a fixed 1x1 filter of weight 1, one solve",
                    **plain,
                    "multi_class": "ovo",
                    "deskew": deskewed,
                    **({"virtual_shifts": [list(s) for s in moved]} if moved else {}),
                },
                seconds_each=[figures["fit_seconds"]],
            )
        )
    return models


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
    if deskewed:
        name += ", deskewed images"
    anchor = {
        "reference": f"{CKN_ACCURACY}",
        "source": "Mairal et al. 2014, convolutional kernel network (several layers)",
    }
    settings = ", ".join(f"{k} {v}" for k, v in config.items()) + f", deskew {deskewed}"
    full = {
        "estimator": "KernelCSVM",
        **config,
        "multi_class": "ovo",
        "seed": seed,
        "deskew": deskewed,
    }
    first = record["first_fit"]
    models = []
    if shifts:
        models.append(
            model_entry(
                f"{name} + virtual SVs ({len(shifts)} shifts)",
                [record["test_accuracy"]],
                record["fit_seconds"],
                anchor["reference"],
                source=anchor["source"],
                settings=f"{settings}, virtual shifts {[list(s) for s in shifts]}",
                config={**full, "virtual_shifts": [list(s) for s in shifts]},
                seconds_each=[record["fit_seconds"]],
            )
        )
    models.append(
        model_entry(
            name + (" (first fit, no virtual SVs)" if shifts else ""),
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
        models += _baseline_entries(base, shifts, deskewed)
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
