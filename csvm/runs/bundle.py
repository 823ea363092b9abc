"""A run bundle read back: the Train page's export zip, checked, for the run to be shown
again (issue 23, "Reload a run").

Everything in the file is untrusted and is checked once, on upload, against a schema
(:mod:`csvm.runs.bundle_schema`): every member is read with a bound on the bytes actually
inflated (:func:`csvm.runs.persistence.read_member`), the settings go through the same
:func:`csvm.runs.config.parse` as a link, the history's shape is bounded by the settings
before its rows are parsed, the filters' ``.npy`` header is checked before NumPy
allocates, and of each model's result only known fields of the right type, range and
shape are kept.  Nothing is unpickled.

Then :func:`rescore` sets the results against this server's test images for the run's
settings: every score shown (accuracy, confusion, mistakes, per-class accuracy) is
recomputed from the stored test predictions, whatever the file claims, and the digest of
the test images the run was scored on, when the export has one, must match.  A result
that cannot be checked that way is labelled "(unverified)".
"""

from __future__ import annotations

import csv
import dataclasses
import io
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from csvm.analysis.lab_filters import filters_from_npy
from csvm.exceptions import CSVMError
from csvm.runs.bundle_schema import check_result, read_history
from csvm.runs.config import RunConfig, parse
from csvm.runs.confusion import confused_pairs, confusion_counts
from csvm.runs.persistence import (
    MAX_IMPORT_BYTES,
    BundleError,
    digest_test_set,
    parse_json,
    read_member,
)

__all__ = ["RunBundle", "expected_filter_shape", "load_bundle", "rescore"]

#: The models a bundle may hold results of.
MODELS = ("csvm", "svm", "cnn")
#: Largest magnitude of a filter weight read back (as for the history's numbers).
MAX_WEIGHT = 1e100
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass
class RunBundle:
    """What a run export holds, checked.

    Attributes
    ----------
    config : RunConfig
    problems : list of str
        Settings that could not be read and kept their default (as for a link), and
        history columns left out; after :func:`rescore`, also what it found (claims its
        predictions contradict, a result it could not verify).
    results : dict
        Model -> its result (only known fields), or None where the run had none.
    history : list of dict
        The CSVM's recorded steps (scalars only), in order.
    filters : ndarray or None
        The CSVM's final filters as the run returned them: (k, p, q) for grey images,
        (k, C, p, q) for colour ones; a multi-class run's have one more axis first, its
        sub-problems.
    test_set : str or None
        The SHA-256 of the test images the run was scored on (exports since issue 37).
    verified : bool or None
        After :func:`rescore`: whether the test images were checked to be the run's own.
        None before it.
    """

    config: RunConfig
    problems: list[str]
    results: dict[str, dict[str, Any] | None]
    history: list[dict[str, Any]] = field(default_factory=list)
    filters: np.ndarray | None = None
    test_set: str | None = None
    verified: bool | None = None


def _labels(config: RunConfig, k: int) -> tuple[int, ...]:
    """A run's class labels: -1 and +1 for a pair, 0..k-1 for several classes."""
    return tuple(range(k)) if config.multiclass else (-1, 1)


def _shape(config: RunConfig) -> tuple[int, int]:
    """The run's classes and binary sub-problems."""
    from csvm.runs.targets import n_classes

    try:
        k = n_classes(config)
    except (ValueError, CSVMError) as exc:  # parse kept it, but say so rather than raise
        raise BundleError(f"config.json: {exc}") from None
    return k, config.n_sub_problems(k)


def _test_set(raw: Any) -> str | None:
    """The export's digest of its test images (None: an export made before there was one)."""
    if raw is None:
        return None
    digest = raw.get("sha256") if isinstance(raw, Mapping) else None
    if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
        raise BundleError("results.json: test_set is not the digest of a run's test images.")
    return digest


def _filters(data: bytes, multiclass: bool, n_sub: int) -> np.ndarray:
    """``filters.npy``: its header checked before NumPy allocates, then its shape."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        if "filters.npy" not in zf.namelist():
            raise BundleError(
                "The zip has no filters.npy, but its CSVM has a result: every run export "
                "holds the CSVM's filters; was this file made by the Train page's Download run?"
            )
    npy = read_member(data, "filters.npy")  # its BundleError names filters.npy already
    try:
        raw = filters_from_npy(npy)
    except CSVMError as exc:
        raise BundleError(f"filters.npy: {exc}") from None
    dims = (4, 5) if multiclass else (3, 4)
    ok = raw.ndim in dims and raw.dtype.kind in "fiu" and raw.size > 0
    if not ok or (multiclass and raw.shape[0] != n_sub):
        what = f"{n_sub} sub-problems' filters" if multiclass else "filters (k, p, q)"
        raise BundleError(f"filters.npy holds an array of shape {raw.shape}, not {what}.")
    filters = raw.astype(np.float64)
    if not np.all(np.isfinite(filters)) or np.abs(filters).max() > MAX_WEIGHT:
        raise BundleError("filters.npy holds weights that are not finite numbers.")
    return filters


def _read(data: bytes) -> tuple[Any, Any, str]:
    """config.json and results.json parsed, history.csv decoded.

    Each member's refusal (too large, unreadable, not JSON) is :func:`read_member`'s or
    :func:`parse_json`'s own BundleError, naming that member: none is wrapped in another.
    """
    values = parse_json(read_member(data, "config.json"), "config.json")
    results = parse_json(read_member(data, "results.json"), "results.json")
    try:
        history = read_member(data, "history.csv").decode("utf-8")
    except UnicodeDecodeError:
        raise BundleError(
            "history.csv is not what a run export holds: it is not text. Upload the zip that "
            "the Train page's Download run gave."
        ) from None
    if not isinstance(values, Mapping) or not isinstance(results, Mapping):
        raise BundleError("config.json or results.json does not hold a mapping.")
    return values, results, history


def load_bundle(data: bytes) -> RunBundle:
    """A run export (zip) read back and checked against its schema.

    Parameters
    ----------
    data : bytes
        The zip the Train page's "Download run" button gave.

    Returns
    -------
    RunBundle
        The results as the file claims them: :func:`rescore` sets them against the test
        images before they are shown.

    Raises
    ------
    BundleError
        Too large, not a run export, holding values of the wrong kind, or of a shape its
        own settings cannot give; the message says which.

    Examples
    --------
    >>> from csvm.runs.persistence import export_run
    >>> from csvm.runs.config import RunConfig
    >>> zipped = export_run(RunConfig(), {"csvm": None})
    >>> load_bundle(zipped).config == RunConfig()
    True
    """
    if len(data) > MAX_IMPORT_BYTES:
        raise BundleError(
            f"The file is {len(data):,} bytes; a run export takes at most {MAX_IMPORT_BYTES:,}."
        )
    if data[:4] != b"PK\x03\x04":
        raise BundleError("Not a zip file: upload the zip that the Train page's Download gave.")
    values, results, text = _read(data)
    config, problems = parse(values, source="the file")
    k, n_sub = _shape(config)
    labels = _labels(config, k)
    checked = {
        m: check_result(m, results[m], config, labels, n_sub) for m in MODELS if m in results
    }
    if "csvm" not in checked:
        raise BundleError("results.json has no CSVM result: this is not a Train run's export.")
    try:
        history, notes = read_history(text, config, n_sub)
    except csv.Error as exc:
        raise BundleError(f"history.csv is not a CSV table ({str(exc)[:200]}).") from None
    filters = None
    if checked["csvm"] is not None:
        filters = _filters(data, config.multiclass, n_sub)
    return RunBundle(
        config,
        [p.message for p in problems] + notes,
        checked,
        history,
        filters,
        _test_set(results.get("test_set")),
    )


def expected_filter_shape(
    config: RunConfig, image_shape: tuple[int, ...], n_classes: int = 2
) -> tuple[int, ...]:
    """The shape of the final filters a run with these settings returns.

    ``(k, p, q)`` for grey images, ``(k, C, p, q)`` for colour ones, where a stack of
    layers names its first layer's ``k`` and ``(p, q)`` (as the estimator does); a
    multi-class run on ``n_classes`` classes has its sub-problems' count first.

    Examples
    --------
    >>> expected_filter_shape(RunConfig(n_filters=2, filter_size=5), (1, 28, 28))
    (2, 5, 5)
    >>> expected_filter_shape(RunConfig(layers="3x3x4-abs-avg2"), (3, 32, 32))
    (4, 3, 3, 3)
    >>> expected_filter_shape(RunConfig(classes="0,1,2", n_filters=1), (1, 28, 28), 3)
    (3, 1, 5, 5)
    """
    k, shape = config.n_filters, (config.filter_size, config.filter_size)
    if config.model == "kcsvm" and config.layers:
        from csvm.model.layers import parse_layers

        first = parse_layers(config.layers)[0]
        k, shape = first.n_filters, tuple(first.filter_shape)
    channels = int(image_shape[0]) if len(image_shape) == 3 else 1
    one = (k, *(() if channels == 1 else (channels,)), *shape)
    return (config.n_sub_problems(n_classes), *one) if config.multiclass else one


def _scores(result: dict, y: np.ndarray, labels: tuple[int, ...]) -> dict[str, Any]:
    """A result's scores recomputed from its test predictions and the test labels, or,
    in an export too old to hold predictions, from its confusion matrix."""
    if "test_predictions" in result:
        predicted = np.asarray(result["test_predictions"])
        wrong = np.flatnonzero(predicted != y)
        confusion = confusion_counts(y, predicted, labels)
        misclassified = wrong[:32].tolist()
    else:
        confusion, misclassified = result["confusion"], result["misclassified"]
    m = np.asarray(confusion, dtype=float)
    right = int(np.trace(m))
    scores = {
        "test_accuracy": right / len(y),
        "confusion": confusion,
        "misclassified": misclassified,
        "n_misclassified": len(y) - right,
        "n_test": int(len(y)),
    }
    if len(labels) > 2:
        scores["per_class_accuracy"] = (np.diag(m) / np.maximum(m.sum(axis=1), 1)).tolist()
    return scores


def _contradicted(claimed: dict, scores: dict) -> str | None:
    """What the file claimed that its own predictions (or, without them, its confusion
    matrix) contradict (None: nothing)."""
    label = claimed["label"]
    source, gives = ("test predictions", "give")
    if "test_predictions" not in claimed:
        source, gives = ("confusion matrix", "gives")
    if abs(claimed["test_accuracy"] - scores["test_accuracy"]) > 1e-9:
        return (
            f"results.json claims {100 * claimed['test_accuracy']:.1f} % test accuracy for "
            f"the {label}, but its own {source} {gives} "
            f"{100 * scores['test_accuracy']:.1f} %: the page shows that."
        )
    if claimed["confusion"] != scores["confusion"] or (
        claimed["n_misclassified"] != scores["n_misclassified"]
    ):
        return (
            f"results.json's confusion matrix or count of mistakes for the {label} differs "
            f"from its own {source}: the page shows the counts its {source} {gives}."
        )
    return None


def _multiclass_parts(bundle: RunBundle, names: list[str]) -> dict[str, Any]:
    """A multi-class CSVM's pairs, scheme, steps per sub-problem, from its settings."""
    from itertools import combinations

    config = bundle.config
    if config.multi_class == "ovo":
        pairs = [[a, b] for a, b in combinations(names, 2)]
    else:
        pairs = [["rest", n] for n in names]
    steps = np.bincount(
        [row.get("classifier", 0) for row in bundle.history if row["kind"] != "divergence"],
        minlength=len(pairs),
    )
    return {
        "pairs": pairs,
        "multi_class": config.multi_class,
        "sub_steps": steps.tolist(),
        "class_names": names,
    }


def rescore(bundle: RunBundle, data: Any) -> RunBundle:
    """The bundle's results set against this server's test images for its settings.

    Every score is recomputed from the stored test predictions and ``data``'s test labels
    (what results.json claims is not shown); the digest of the test images must match the
    export's when it has one; a result without one is labelled "(unverified)".

    Parameters
    ----------
    bundle : RunBundle
        From :func:`load_bundle`.
    data : Dataset-like
        The run's data on this server (``X_test``, ``y_test``, ``class_names``,
        ``image_shape``), e.g. :func:`csvm.runs.targets.load_data` of its config.

    Returns
    -------
    RunBundle
        A new bundle: results recomputed, ``verified`` set, and what was found (a claim
        its predictions contradict, no digest) added to ``problems``.

    Raises
    ------
    BundleError
        The run was tested on other images than these (their number, their classes,
        their digest), or its filters do not have the shape its settings give.
    """
    y = np.asarray(data.y_test).astype(np.int64)
    labels = _labels(bundle.config, len(data.class_names))
    if set(np.unique(y).tolist()) - set(labels):
        raise BundleError("This server's test labels are not the classes the run names.")
    if bundle.test_set is not None and bundle.test_set != digest_test_set(data.X_test, y):
        raise BundleError(
            "The run was scored on other test images than this server gives for its "
            "settings (their digests differ): its results cannot be checked here."
        )
    verified = bundle.test_set is not None
    notes = list(bundle.problems)
    # An export too old to hold test predictions is scored on its confusion matrices:
    # nothing then ties its scores to these images.
    predicted = all("test_predictions" in r for r in bundle.results.values() if r is not None)
    verified = verified and predicted
    results: dict[str, dict[str, Any] | None] = {}
    for model, claimed in bundle.results.items():
        if claimed is None:
            results[model] = None
            continue
        if claimed["n_test"] != len(y):
            raise BundleError(
                f"The run's {model} was tested on {claimed['n_test']:,} images, but its "
                f"settings give {len(y):,} test images on this server (other data files): "
                "it cannot be shown here."
            )
        scores = _scores(claimed, y, labels)
        note = _contradicted(claimed, scores)
        if note:
            notes.append(note)
        label = claimed["label"] + ("" if verified else " (unverified)")
        results[model] = {**claimed, **scores, "label": label}
        if not predicted:  # McNemar's test pairs predictions: none, or every model's
            results[model].pop("test_predictions", None)
    _check_filters(bundle, data.image_shape, len(data.class_names))
    csvm = results.get("csvm")
    if csvm is not None and bundle.config.multiclass:
        csvm.update(_multiclass_parts(bundle, [str(n) for n in data.class_names]))
        csvm["confused"] = confused_pairs(csvm["confusion"], bundle.config.multi_class)
    if not verified:
        notes.append(_UNVERIFIED[predicted])
    return dataclasses.replace(bundle, problems=notes, results=results, verified=verified)


#: Why a reloaded run is marked unverified, by whether its results hold test predictions.
_UNVERIFIED = {
    False: "This export holds no test predictions (made before exports kept them): its "
    "scores are read from its confusion matrices and cannot be checked against these test "
    "images, so its results are marked unverified.",
    True: "This export has no digest of its test images (made before exports had one): its "
    "scores are recomputed from its test predictions, but that they were made on these test "
    "images cannot be checked, so its results are marked unverified.",
}


def _check_filters(bundle: RunBundle, image_shape: tuple[int, ...], n_classes: int) -> None:
    if bundle.filters is None:
        return
    expected = expected_filter_shape(bundle.config, image_shape, n_classes)
    if bundle.filters.shape != expected:
        raise BundleError(
            f"filters.npy holds filters of shape {bundle.filters.shape}, but the run's "
            f"settings give {expected}: it cannot be shown with them."
        )
