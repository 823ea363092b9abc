"""Experiments as data: a run's configuration, its validation, and the job that trains it.

The explorer submits :func:`run_model` to a worker process once per model (the CSVM and
each baseline).  Everything a page shows is computed here, so pages stay thin.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from csvm.conv import correlate, map_shape
from csvm.exceptions import CSVMError, DivergenceError
from csvm.kernels import KERNELS
from csvm.regularisers import REGULARISERS

__all__ = [
    "DEFAULT_CONFIG",
    "MODEL_LABELS",
    "build_csvm",
    "config_from_query",
    "config_to_query",
    "pinned_indices",
    "python_snippet",
    "query_to_config",
    "run_model",
    "validate_config",
]

#: The classroom default: real MNIST 3 vs 5 from the offline dataset, done in seconds.
DEFAULT_CONFIG: dict[str, Any] = {
    "dataset": "mnist-5k",
    "class_a": "3",
    "class_b": "5",
    "n_train": 600,
    "protocol": None,
    "model": "kcsvm",
    "kernel": "poly",
    "degree": 2,
    "gamma": 1.0,
    "coef0": 1.0,
    "regulariser": "dfo1",
    "lam": 0.01,
    "lam_w": 0.1,
    "lam_f": 0.1,
    "eta": 0.1,
    "step": "constant",
    "momentum": 0.0,
    "C": None,
    "C_last_only": False,
    "n_iter": 15,
    "filter_size": 5,
    "n_filters": 1,
    "seed": 0,
    "baselines": ["svm", "cnn"],
    "cnn_hidden": 100,
    "cnn_epochs": 5,
    "cnn_lr": 0.1,
}

MODEL_LABELS = {"kcsvm": "K-CSVM", "lcsvm": "L-CSVM", "svm": "plain SVM", "cnn": "small CNN"}
_N_PINNED = 3  # pinned example images per class


def validate_config(
    config: dict[str, Any],
    image_shape: tuple[int, ...] | None = None,
    n_available: int | None = None,
) -> list[str]:
    """Everything wrong with a configuration, as messages that say what to change.

    Parameters
    ----------
    config : dict
        Keys as in :data:`DEFAULT_CONFIG`.
    image_shape : tuple, optional
        (C, H, W) of the chosen dataset, to check the filter size.
    n_available : int, optional
        Training images available for the chosen pair.
    """
    errors = []
    c = {**DEFAULT_CONFIG, **config}
    if str(c["class_a"]) == str(c["class_b"]):
        errors.append("Choose two different classes: the pair needs a class for each side.")
    if c["model"] not in ("kcsvm", "lcsvm"):
        errors.append(f"Unknown model {c['model']!r}: choose K-CSVM or L-CSVM.")
    if c["kernel"] not in KERNELS:
        errors.append(f"Unknown kernel {c['kernel']!r}: choose one of {', '.join(KERNELS)}.")
    if c["regulariser"] not in REGULARISERS:
        errors.append(f"Unknown regulariser {c['regulariser']!r}.")
    checks = [
        ("degree", c["degree"] >= 1, "Degree must be at least 1."),
        ("gamma", c["gamma"] > 0, "γ must be greater than 0."),
        ("lam", c["lam"] >= 0, "λ must be 0 or more (0 switches the regulariser off)."),
        ("lam_w", c["lam_w"] > 0, "λ_w must be greater than 0."),
        ("lam_f", c["lam_f"] > 0, "λ_f must be greater than 0."),
        (
            "eta",
            c["eta"] > 0 or (c["eta"] == 0 and c["step"] == "constant"),
            "η must be greater than 0 (0 freezes the filter, with a constant step only).",
        ),
        ("momentum", 0 <= c["momentum"] < 1, "Momentum must be in [0, 1)."),
        ("C", c["C"] is None or c["C"] > 0, "C must be greater than 0, or 'no limit'."),
        ("n_iter", 1 <= int(c["n_iter"]) <= 1000, "Iterations must be between 1 and 1000."),
        ("n_filters", 1 <= int(c["n_filters"]) <= 8, "Use between 1 and 8 filters."),
        ("filter_size", int(c["filter_size"]) >= 1, "The filter size must be at least 1 pixel."),
        ("cnn_hidden", int(c["cnn_hidden"]) >= 0, "The CNN's hidden units must be 0 or more."),
        (
            "n_train",
            c["n_train"] is None or int(c["n_train"]) >= 10,
            "Use at least 10 training images.",
        ),
        ("cnn_epochs", int(c["cnn_epochs"]) >= 1, "The CNN needs at least one epoch."),
        ("cnn_lr", c["cnn_lr"] > 0, "The CNN's learning rate must be greater than 0."),
    ]
    errors += [message for _, ok, message in checks if not ok]
    if image_shape is not None:
        size = int(c["filter_size"])
        try:
            map_shape(image_shape[-2:], (size, size))
        except ValueError as exc:
            errors.append(f"{exc} (the images are {image_shape[-2]}×{image_shape[-1]}).")
    if not errors:
        # The estimator's own checks too, so the page refuses whatever fit() would refuse.
        try:
            estimator = build_csvm(c, image_shape or (1, 28, 28))
            check = getattr(estimator, "_check_params", None)
            if check is not None:
                check()
        except (ValueError, TypeError, CSVMError) as exc:
            errors.append(str(exc))
    if n_available is not None and c["n_train"] is not None and int(c["n_train"]) > n_available:
        errors.append(
            f"Only {n_available} training images of this pair exist: lower the training-set size."
        )
    return errors


def build_csvm(config: dict[str, Any], image_shape: tuple[int, ...]):
    """The KernelCSVM or LinearCSVM a configuration describes.

    Parameters
    ----------
    config : dict
        A run configuration (missing keys take :data:`DEFAULT_CONFIG`'s values).
    image_shape : tuple of int
        ``(C, H, W)`` of the images it will be trained on.

    Returns
    -------
    KernelCSVM or LinearCSVM
        Unfitted, with the configuration's hyperparameters and seed.
    """
    from csvm.kernelised import KernelCSVM
    from csvm.linear import LinearCSVM

    c = {**DEFAULT_CONFIG, **config}
    common = {
        "image_shape": tuple(image_shape),
        "filter_shape": (int(c["filter_size"]),) * 2,
        "n_filters": int(c["n_filters"]),
        "n_iter": int(c["n_iter"]),
        "random_state": int(c["seed"]),
    }
    if c["model"] == "lcsvm":
        return LinearCSVM(lam_w=float(c["lam_w"]), lam_f=float(c["lam_f"]), **common)
    return KernelCSVM(
        kernel=c["kernel"],
        degree=int(c["degree"]),
        gamma=float(c["gamma"]),
        coef0=float(c["coef0"]),
        C=None if c["C"] is None else float(c["C"]),
        C_last_only=bool(c["C_last_only"]),
        regulariser=c["regulariser"],
        lam=float(c["lam"]),
        eta=float(c["eta"]),
        step=c["step"],
        momentum=float(c["momentum"]),
        nesterov=False,
        **common,
    )


def load_data(config: dict[str, Any], data_dir: str | None = None):
    """The pair a configuration names (cached inside :mod:`csvm.datasets`).

    Parameters
    ----------
    config : dict
        A run configuration: dataset, classes, protocol, training size and seed are used.
    data_dir : str, optional
        Where the file datasets live (default: ``CSVM_DATA_DIR`` or the user cache).

    Returns
    -------
    csvm.datasets.PairData
    """
    from csvm.datasets import load_pair

    c = {**DEFAULT_CONFIG, **config}
    return load_pair(
        c["dataset"],
        c["class_a"],
        c["class_b"],
        protocol=c["protocol"],
        data_dir=data_dir,
        n_train=None if c["n_train"] is None else int(c["n_train"]),
        random_state=int(c["seed"]),
    )


def pinned_indices(y: np.ndarray, per_class: int = _N_PINNED) -> np.ndarray:
    """The first ``per_class`` training images of each class: fixed for a given split.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    per_class : int, default 3

    Returns
    -------
    ndarray of int
        Indices of the -1 images, then of the +1 images.
    """
    neg = np.flatnonzero(y < 0)[:per_class]
    pos = np.flatnonzero(y > 0)[:per_class]
    return np.concatenate([neg, pos])


def _confusion(y_true: np.ndarray, y_pred: np.ndarray) -> list[list[int]]:
    return [[int(np.sum((y_true == t) & (y_pred == p))) for p in (-1, 1)] for t in (-1, 1)]


def _summary(model: str, clf, data, seconds: float) -> dict[str, Any]:
    pred_test = clf.predict(data.X_test)
    wrong = np.flatnonzero(pred_test != data.y_test)
    return {
        "model": model,
        "label": MODEL_LABELS[model],
        "train_accuracy": float(np.mean(clf.predict(data.X_train) == data.y_train)),
        "test_accuracy": float(np.mean(pred_test == data.y_test)),
        "seconds": float(seconds),
        "confusion": _confusion(data.y_test, pred_test),
        "misclassified": wrong[:32].tolist(),
        "n_misclassified": int(len(wrong)),
        "n_test": int(len(data.y_test)),
    }


def run_model(
    emit: Callable[[dict[str, Any]], Any],
    config: dict[str, Any],
    model: str,
    data_dir: str | None = None,
) -> dict[str, Any]:
    """Train one model of a run, emitting live events; the job target of the explorer.

    Parameters
    ----------
    emit : callable
        Receives each event dict: first ``{"step": "start"}`` once the data are loaded, then
        the CSVM's iterations, the CNN's epochs, or the SVM's single ``"done"`` result.
        CSVM events carry ``"filters"`` and ``"pinned_maps"`` (the six pinned images'
        feature maps under the current filters).
    config : dict
        A run configuration (see :data:`DEFAULT_CONFIG`).
    model : {"csvm", "svm", "cnn"}

    Returns
    -------
    dict
        Accuracies, seconds, confusion matrix, misclassified test indices; for a CSVM also
        the final filters, the support vectors and their alpha, and ``"diverged"`` (the
        message and a safer eta) when training diverged.
    """
    c = {**DEFAULT_CONFIG, **config}
    data = load_data(c, data_dir)
    # The data are loaded: the page can say "training" instead of "starting".
    emit({"model": model, "step": "start", "iteration": -1, "n_train": int(len(data.y_train))})
    start = time.perf_counter()
    if model == "csvm":
        clf = build_csvm(c, data.image_shape)
        pinned = data.X_train[pinned_indices(data.y_train)]

        def callback(event: dict[str, Any]) -> None:
            filters = event["filters"]
            maps = correlate(pinned, filters.astype(np.float32))
            emit({**event, "filters": filters, "pinned_maps": maps})

        diverged = None
        try:
            clf.fit(data.X_train, data.y_train, callback=callback)
        except DivergenceError as exc:
            diverged = {"message": str(exc), "suggested_eta": exc.suggested_eta, "cause": exc.cause}
        seconds = time.perf_counter() - start
        result = _summary(c["model"], clf, data, seconds)
        a = np.asarray(clf.dual_coef_, dtype=float)
        order = np.argsort(-np.abs(a))[:24] if len(a) else np.zeros(0, dtype=int)
        result.update(
            {
                "filters": np.asarray(clf.filters_[0]),
                "support": np.asarray(clf.support_)[order].tolist(),
                "support_alpha": np.abs(a[order]).tolist() if len(a) else [],
                "n_support": int(len(clf.support_)),
                "diverged": diverged,
                "history": clf.history_,
            }
        )
        return result
    if model == "svm":
        from csvm.baselines import make_plain_svm

        p = build_csvm(c, data.image_shape).get_params()
        if c["model"] == "lcsvm":
            clf = make_plain_svm(linear=True, lam_w=p["lam_w"], n_samples=len(data.X_train))
        else:
            clf = make_plain_svm(**{k: p[k] for k in ("kernel", "degree", "gamma", "coef0", "C")})
        clf.fit(data.X_train, data.y_train)
        seconds = time.perf_counter() - start
        result = _summary("svm", clf, data, seconds)
        emit(
            {
                "model": "svm",
                "iteration": 0,
                "step": "done",
                "seconds": seconds,
                "train_accuracy": result["train_accuracy"],
                "test_accuracy": result["test_accuracy"],
            }
        )
        return result
    if model == "cnn":
        from csvm.baselines import SmallCNN

        clf = SmallCNN(
            image_shape=data.image_shape,
            filter_shape=(int(c["filter_size"]),) * 2,
            n_filters=int(c["n_filters"]),
            hidden=int(c["cnn_hidden"]) or None,
            lr=float(c["cnn_lr"]),
            epochs=int(c["cnn_epochs"]),
            random_state=int(c["seed"]),
        )
        diverged = None
        try:
            clf.fit(
                data.X_train,
                data.y_train,
                callback=lambda e: emit({k: v for k, v in e.items() if k != "filters"}),
            )
        except DivergenceError as exc:
            diverged = {"message": str(exc), "suggested_eta": exc.suggested_eta, "cause": exc.cause}
        result = _summary("cnn", clf, data, time.perf_counter() - start)
        result["diverged"] = diverged
        result["history"] = clf.history_
        return result
    raise ValueError(f"Unknown model {model!r}: expected 'csvm', 'svm' or 'cnn'.")


# -- sharing ------------------------------------------------------------------------------


def config_to_query(config: dict[str, Any]) -> dict[str, str]:
    """Every setting as URL query parameters (only those that differ from the default).

    Parameters
    ----------
    config : dict
        A run configuration.

    Returns
    -------
    dict of str to str
        ``None`` is written "none", lists comma-separated ("-" for an empty list).
    """
    out = {}
    for key, default in DEFAULT_CONFIG.items():
        value = config.get(key, default)
        if value == default:
            continue
        if isinstance(value, list):
            out[key] = ",".join(value) or "-"
        elif value is None:
            out[key] = "none"
        else:
            out[key] = str(value)
    return out


def config_from_query(query: dict[str, str]) -> dict[str, Any]:
    """Read a configuration back from URL query parameters.

    Parameters
    ----------
    query : dict of str to str
        As written by :func:`config_to_query`; unknown keys are ignored.

    Returns
    -------
    dict
        A full configuration; values that do not parse fall back to the default (a shared
        link must never crash the page).  Range checks are :func:`validate_config`'s job.
    """
    config = dict(DEFAULT_CONFIG)
    for key, default in DEFAULT_CONFIG.items():
        if key not in query:
            continue
        raw = str(query[key])
        try:
            if raw == "none" and key in ("C", "protocol", "n_train"):
                config[key] = None
            elif isinstance(default, list):
                config[key] = [] if raw == "-" else [s for s in raw.split(",") if s]
            elif isinstance(default, bool):
                config[key] = raw.lower() in ("1", "true", "yes")
            elif isinstance(default, int):
                config[key] = int(float(raw))
            elif isinstance(default, float) or key == "C":
                config[key] = float(raw)
            else:
                config[key] = raw
        except ValueError:
            continue
    return config


#: The name the issue uses for :func:`config_from_query`.
query_to_config = config_from_query


def python_snippet(config: dict[str, Any]) -> str:
    """A Python script that reproduces the run with the library.

    Parameters
    ----------
    config : dict
        A run configuration.

    Returns
    -------
    str
        Source code that loads the same pair, builds the same estimator and prints its
        test accuracy.
    """
    c = {**DEFAULT_CONFIG, **config}
    return f"""from csvm.datasets import load_pair
from csvm.experiments import build_csvm

config = {
        json.dumps(c, indent=4)
        .replace("null", "None")
        .replace("true", "True")
        .replace("false", "False")
    }
data = load_pair(config["dataset"], config["class_a"], config["class_b"],
                 protocol=config["protocol"], n_train=config["n_train"],
                 random_state=config["seed"])
clf = build_csvm(config, data.image_shape)
clf.fit(data.X_train, data.y_train)
print("test accuracy:", clf.score(data.X_test, data.y_test))
"""
