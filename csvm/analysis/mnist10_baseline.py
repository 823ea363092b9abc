"""The ten-class MNIST runs' scoring and their same-recipe plain SVM.

``reproduce mnist10`` (:mod:`csvm.analysis.mnist10`) sets its K-CSVM beside a plain RBF SVM
per pair trained on the same prepared images with the same virtual support vectors and
the same test-time shifts: what the learned filters add, tested by McNemar on the same
test images.  This module scores a fitted model (:func:`score_images`, with test-time
shifts: :func:`csvm.model.virtual.shifted_decision`), fits that baseline
(:func:`fit_baseline`) and writes its report line and saved entries.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from csvm.analysis.reproduced import pack_correct
from csvm.analysis.stats import format_p
from csvm.model.prediction import labels_from_decision
from csvm.model.virtual import refit_virtual, shifted_decision

__all__ = [
    "baseline_entries",
    "baseline_line",
    "fit_baseline",
    "mcnemar_line",
    "plain_svm",
    "score_images",
]

Shifts = tuple[tuple[int, int], ...]


def score_images(
    clf: Any, X: np.ndarray, y: np.ndarray, test_shifts: Shifts = (), n_jobs: int | None = None
) -> dict:
    """Test accuracy, the seconds prediction took and which test images it got right.

    With ``test_shifts`` the decision is summed over each image and its moved copies
    (:func:`csvm.model.virtual.shifted_decision`, ``n_jobs`` copies at once); the
    accuracy of the unmoved images alone comes too (``accuracy_unshifted``, from the
    same first decision).
    """
    t0 = time.perf_counter()
    plain = np.asarray(clf.decision_function(X), dtype=np.float64)
    decision = plain
    if test_shifts:
        decision = shifted_decision(clf, X, test_shifts, decision=plain, n_jobs=n_jobs)
    correct = labels_from_decision(clf.classes_, decision) == y
    out = {
        "accuracy": float(correct.mean()),
        "predict_seconds": time.perf_counter() - t0,
        "correct": correct,
    }
    if test_shifts:
        out["accuracy_unshifted"] = float(np.mean(labels_from_decision(clf.classes_, plain) == y))
    return out


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


def fit_baseline(
    X, y, X_test, y_test, config, shifts: Shifts, n_jobs: int, test_shifts: Shifts = ()
) -> tuple[dict[str, Any], np.ndarray]:
    """:func:`plain_svm` fitted, scored, given the same virtual support vectors, scored
    (with the same test-time shifts); its figures and which test images it got right."""
    svm = plain_svm(config, n_jobs, X.shape[1:])
    t0 = time.perf_counter()
    svm.fit(X, y)
    fit_seconds = time.perf_counter() - t0
    first = score_images(svm, X_test, y_test)
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
    if shifts or test_shifts:
        final = score_images(svm, X_test, y_test, test_shifts, n_jobs)
    if test_shifts:
        out["test_shifts"] = {
            "shifts": [list(s) for s in test_shifts],
            "accuracy_unshifted": final["accuracy_unshifted"],
        }
    out.update(
        test_accuracy=final["accuracy"],
        fit_seconds=fit_seconds,
        n_support=int(svm.n_support_.sum()),
        test_correct=pack_correct(final["correct"]),
    )
    return out, final["correct"]


def baseline_line(base: dict[str, Any], shifts: Shifts, test_shifts: Shifts = ()) -> str:
    """The report's line on the plain SVM baseline (:func:`fit_baseline`'s figures)."""
    same = [
        *(["the same virtual support vectors"] if shifts else []),
        *(["the same test-time shifts"] if test_shifts else []),
    ]
    return (
        "\nplain RBF SVM per pair on the same images"
        + (" with " + " and ".join(same) if same else "")
        + f": {100 * base['test_accuracy']:.2f} % (first fit "
        f"{100 * base['first_fit']['test_accuracy']:.2f} %), fit {base['fit_seconds']:.0f} s"
    )


def mcnemar_line(model: np.ndarray, plain: np.ndarray, record: dict[str, Any]) -> str:
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


def baseline_entries(
    base: dict[str, Any], shifts: Shifts, images: dict[str, Any], test_shifts: Shifts = ()
) -> list[dict[str, Any]]:
    """The saved fits of the plain SVM baseline: with the virtual support vectors (and the
    test-time shifts) and its first fit alone when there are shifts, else its one fit.

    ``images`` is how the images were prepared, as :func:`csvm.analysis.mnist10.image_words`
    gives it: ``name`` (e.g. ", deskewed images"), ``settings`` and ``config``.
    """
    from csvm.analysis.reproduced import model_entry

    models: list[dict[str, Any]] = []
    plain = base["settings"]  # what fit_baseline trained
    plain_settings = ", ".join(f"{k} {v}" for k, v in plain.items())
    plain_name = "plain RBF SVM per pair, γ " + format(plain["gamma"], "g") + images["name"]
    moved_name = " + the same virtual SVs" if shifts else ""
    if test_shifts:
        moved_name += " and test-time shifts"
    fits = [(base, plain_name + moved_name, shifts, test_shifts)]
    if shifts:
        fits.append((base["first_fit"], f"{plain_name} (first fit, no virtual SVs)", (), ()))
    for figures, label, moved, at_test in fits:
        extra = {"virtual_shifts": [list(s) for s in moved]} if moved else {}
        if at_test:
            extra["test_shifts"] = [list(s) for s in at_test]
        models.append(
            model_entry(
                label,
                [figures["test_accuracy"]],
                figures["fit_seconds"],
                settings=f"{plain_settings}{images['settings']}"
                + "".join(f", {k.replace('_', ' ')} {v}" for k, v in extra.items()),
                config={
                    "estimator": "KernelCSVM with a fixed 1x1 filter of weight 1, one solve",
                    **plain,
                    "multi_class": "ovo",
                    **images["config"],
                    **extra,
                },
                seconds_each=[figures["fit_seconds"]],
            )
        )
    return models
