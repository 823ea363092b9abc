"""Does the learned filter help, or only its size?  Fixed-filter ablations of a K-CSVM run.

Learning moves a K-CSVM's filter in two ways at once: its shape changes, and so does its
norm — typically 0.22 → 1.1 on MNIST.  For a polynomial kernel ``(γ z·z′ + c)^d`` or an RBF
kernel ``exp(-γ ||z - z′||²)`` scaling the filter by ``s`` scales the feature maps by ``s``,
which is the same as changing γ by ``s²``: a change of kernel bandwidth, not feature
learning.  This module separates the two.  It trains the *same kernel and SVM* (same γ,
degree, coef0 and C) on the feature maps of fixed filters:

* the random start, a delta (the identity: the plain SVM on the cropped image) and a
  Gaussian blur, each rescaled to the learned filter's norm — if one of these matches the
  learned filter, the shape learned nothing the norm did not;
* the learned filter rescaled to the start's norm — the shape without the growth.

Norms are Frobenius norms over all filters of the run together.  Each is compared with the
learned filter on the same test images by an exact McNemar test (:mod:`csvm.analysis.stats`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.base import clone

from csvm.analysis.stats import describe_difference, mcnemar_exact, wilson_interval

__all__ = [
    "ABLATION_EXPLANATION",
    "delta_filters",
    "fixed_filter_predictions",
    "gaussian_filters",
    "one_solve",
    "rescale_to_norm",
    "score_filter_sets",
    "score_layered_sets",
    "start_layers",
]

#: What the ablation table means, for the page that shows it.
ABLATION_EXPLANATION = (
    "Each row trains the same kernel and SVM (same γ, degree, coef0 and C) on the feature "
    "maps of a fixed filter instead of the learned one. Scaling a filter by s scales its "
    "feature maps by s, which acts like changing the kernel's γ by s², so the fixed filters "
    "are rescaled to the learned filter's norm: if the random start, a delta (the plain SVM "
    "on the cropped image) or a Gaussian blur does as well at that norm, the gain came from "
    "the filter's size, not from its learned shape. The last row keeps the learned shape at "
    "the random start's norm. p is an exact McNemar test against the learned filter on the "
    "same test images; p ≥ 0.05 means the test set cannot tell the two apart."
)


def rescale_to_norm(filters: np.ndarray, norm: float) -> np.ndarray:
    """``filters`` scaled so that their Frobenius norm (over all filters) is ``norm``.

    Raises
    ------
    ValueError
        When ``filters`` are all zero or not finite, or ``norm`` is not positive.
    """
    filters = np.asarray(filters, dtype=np.float64)
    current = float(np.linalg.norm(filters))
    if not (np.isfinite(current) and current > 0):
        raise ValueError(f"Cannot rescale filters of norm {current:g}: they must be non-zero.")
    if not (np.isfinite(norm) and norm > 0):
        raise ValueError(f"The target norm must be a positive number, got {norm!r}.")
    return filters * (float(norm) / current)


def delta_filters(shape: tuple[int, ...]) -> np.ndarray:
    """Unit deltas at the centre of every filter and channel: the maps copy the image."""
    k, c, p, q = shape
    f = np.zeros(shape)
    f[:, :, p // 2, q // 2] = 1.0
    return f


def gaussian_filters(shape: tuple[int, ...], sigma: float | None = None) -> np.ndarray:
    """A centred Gaussian blur in every filter and channel.

    ``sigma`` defaults to a quarter of the filter's span, ``(max(p, q) - 1) / 4`` pixels
    (1 for a 5 × 5 filter), so that ±2σ fills it.
    """
    k, c, p, q = shape
    sigma = max((max(p, q) - 1) / 4, 0.5) if sigma is None else float(sigma)
    rows = np.arange(p) - (p - 1) / 2
    cols = np.arange(q) - (q - 1) / 2
    g = np.exp(-(rows[:, None] ** 2 + cols[None, :] ** 2) / (2 * sigma**2))
    return np.broadcast_to(g / g.sum(), shape).copy()


def _as_filter_array(filters: Any, channels: int, name: str) -> np.ndarray:
    """(k, C, p, q) float64 from the layouts the library hands out ((p, q), (k, p, q), …)."""
    f = np.asarray(filters, dtype=np.float64)
    if f.ndim == 2:
        f = f[None, None]
    elif f.ndim == 3:
        f = f[:, None] if channels == 1 else f[None]
    if f.ndim != 4 or f.shape[1] != channels:
        raise ValueError(
            f"{name} must have shape (n_filters, p, q) or (n_filters, {channels}, p, q) for "
            f"these {channels}-channel images, got {np.shape(filters)}."
        )
    if not np.all(np.isfinite(f)):
        raise ValueError(f"{name} hold non-finite values: pass the filters of a finished run.")
    return f


def fixed_filter_predictions(
    X_train: np.ndarray,
    y_train: np.ndarray,
    filters: np.ndarray,
    X_eval: list[np.ndarray],
    estimator: Any,
) -> list[np.ndarray]:
    """Train the K-CSVM's kernel SVM on one fixed filter set; predict each of ``X_eval``.

    This is one K-CSVM solve with the filter held still (the final solve of a run, at the
    same C), so the learned filters reproduce the run's own predictions.

    Parameters
    ----------
    X_train : array (n, C, H, W)
    y_train : array (n,) of ±1
    filters : array (k, C, p, q)
    X_eval : list of arrays (m, C, H, W)
    estimator : KernelCSVM
        The run's (unfitted) estimator: its ``kernel``, ``degree``, ``gamma``, ``coef0`` and
        ``C`` (None: hard margin) are the ones that matter; it is cloned, never fitted.

    Returns
    -------
    list of int arrays of ±1, one per entry of ``X_eval``
    """
    clf = one_solve(estimator)
    clf.set_params(init_filters=np.asarray(filters, dtype=np.float64))
    clf.fit(X_train, y_train)
    return [clf.predict(X) for X in X_eval]


def one_solve(estimator: Any) -> Any:
    """A clone of a K-CSVM that makes one SVM solve on its first filters and stops.

    η = 0 and one iteration: on the learned filters this is the run's own last solve (at
    the same C, on every iteration), so they reproduce the run's predictions.
    """
    return clone(estimator).set_params(
        eta=0.0, step="constant", n_iter=1, momentum=0.0, C_last_only=False
    )


def start_layers(estimator: Any, data: Any) -> list[np.ndarray]:
    """The run's random first filters of every layer, drawn by the estimator itself from
    its seed (one solve, no step, on one image of each class of ``data``'s training split).

    Parameters
    ----------
    estimator : KernelCSVM
        The run's estimator, fitted or not (it is cloned).
    data : PairData
        The run's pair (labels -1 and +1).

    Returns
    -------
    list of ndarray
        Each layer's ``(k, C, p, q)`` filters as float64 (one for a single filter layer).
    """
    clf = one_solve(estimator)
    # Two images suffice: the first filters depend on the seed and the shapes only.
    pick = np.concatenate(
        [np.flatnonzero(data.y_train < 0)[:1], np.flatnonzero(data.y_train > 0)[:1]]
    )
    clf.fit(data.X_train[pick], data.y_train[pick])
    return [np.asarray(f, dtype=np.float64) for f in clf.estimators_[0].layer_filters]


def _checked_filters(c: dict[str, Any], data, learned_filters, start_filters, estimator):
    """The learned and start filters as (k, C, p, q) arrays, checked against the run."""
    channels = data.image_shape[0]
    learned = _as_filter_array(learned_filters, channels, "learned_filters")
    expected = (int(c["n_filters"]), channels, int(c["filter_size"]), int(c["filter_size"]))
    if learned.shape != expected:
        raise ValueError(
            f"learned_filters have shape {learned.shape}, but the configuration describes "
            f"{expected} (n_filters, channels, filter size, filter size)."
        )
    start = (
        start_layers(estimator, data)[0]  # the run's own first layer
        if start_filters is None
        else _as_filter_array(start_filters, channels, "start_filters")
    )
    if start.shape != learned.shape:
        raise ValueError(f"start_filters have shape {start.shape}, expected {learned.shape}.")
    if not np.linalg.norm(learned) or not np.linalg.norm(start):
        raise ValueError(
            "The learned or start filters are all zero: there is no norm to rescale to. "
            "Pass the filters of a finished K-CSVM run."
        )
    return learned, start


def _variants(learned: np.ndarray, start: np.ndarray) -> list[tuple[str, str, np.ndarray]]:
    """The filter sets compared: the learned one first (the reference of the tests)."""
    learned_norm, start_norm = float(np.linalg.norm(learned)), float(np.linalg.norm(start))
    return [
        ("learned", "learned filter", learned),
        ("start", "random start, at the learned norm", rescale_to_norm(start, learned_norm)),
        (
            "delta",
            "delta, at the learned norm",
            rescale_to_norm(delta_filters(learned.shape), learned_norm),
        ),
        (
            "gaussian",
            "Gaussian, at the learned norm",
            rescale_to_norm(gaussian_filters(learned.shape), learned_norm),
        ),
        (
            "learned_at_start_norm",
            "learned shape, at the start's norm",
            rescale_to_norm(learned, start_norm),
        ),
    ]


def _score_variant(name, label, filters, data, estimator, reference: dict | None) -> dict:
    """One filter set's SVM scored on the test (and validation) images, with McNemar's
    test against the reference row (the learned filter)."""
    preds = fixed_filter_predictions(
        data.X_train, data.y_train, filters, [data.X_test, data.X_val], estimator
    )
    row = _row(name, label, filters, float(np.linalg.norm(filters)), preds, data)
    if reference is not None:
        _compare(row, reference, data)
    return row


def _row(name, label, filters, norm, predictions, data) -> dict:
    """A scored filter set: test accuracy with its Wilson interval, validation accuracy."""
    pred_test, pred_val = predictions
    n_test = int(len(data.y_test))
    correct = int(np.sum(pred_test == data.y_test))
    return {
        "name": name,
        "label": label,
        "norm": norm,
        "test_accuracy": correct / n_test,
        "n_correct": correct,
        "interval": wilson_interval(correct, n_test),
        "val_accuracy": float(np.mean(pred_val == data.y_val)) if len(data.y_val) else None,
        "mcnemar": None,
        "verdict": "",
        "filters": filters,
        "predictions": pred_test,
    }


def _compare(row: dict, reference: dict, data) -> None:
    """McNemar's exact test of ``row`` against the reference row (the learned filters)."""
    result = mcnemar_exact(data.y_test, row["predictions"], reference["predictions"])
    row["mcnemar"] = result._asdict()
    # The sentence counts from the learned filter, as the headline's verdict does
    # (csvm.runs.summary): "learned filter vs Gaussian: +1.00 points" in both, never
    # "-1.00 points" in the table beside "+1.00 points" above it for one comparison.
    learned_first = mcnemar_exact(data.y_test, reference["predictions"], row["predictions"])
    row["verdict"] = describe_difference("learned filter", row["label"], learned_first)


def score_filter_sets(
    data: Any,
    config: dict[str, Any],
    estimator: Any,
    learned_filters: Any,
    start_filters: Any = None,
    on_row: Callable[[dict[str, Any]], Any] | None = None,
) -> dict[str, Any]:
    """Score the learned filters against fixed filters at the learned norm.

    Parameters
    ----------
    data : PairData
        The run's split (``X_train``, ``y_train``, ``X_val``, ``y_val``, ``X_test``,
        ``y_test``, ``image_shape``).
    config : dict
        The run's settings; ``n_filters`` and ``filter_size`` are checked against the filters.
    estimator : KernelCSVM
        The run's unfitted estimator (its kernel, C and seed are used; see :func:`one_solve`).
    learned_filters : array-like (n_filters, p, q) or (n_filters, C, p, q)
        The run's final filters.
    start_filters : array-like, optional
        The run's first filters; None draws them again from the estimator's seed.
    on_row : callable, optional
        Called with each row (without its filters and predictions) once it is scored.

    Returns
    -------
    dict
        ``rows``: one dict per filter set (``name``, ``label``, ``norm``,
        ``test_accuracy``, ``n_correct``, ``interval`` (Wilson 95 %), ``val_accuracy``,
        ``mcnemar`` (b, c, p_value, diff_points, diff_images against the learned filter;
        None for the learned row), ``verdict`` (a sentence) and ``filters``);
        ``learned_norm``, ``start_norm``, ``n_test``, ``seconds`` and ``explanation``.
    """
    start_time = time.perf_counter()
    learned, start = _checked_filters(config, data, learned_filters, start_filters, estimator)
    rows: list[dict[str, Any]] = []
    for name, label, filters in _variants(learned, start):
        row = _score_variant(name, label, filters, data, estimator, rows[0] if rows else None)
        rows.append(row)
        _report(row, on_row)
    return _scored(rows, np.linalg.norm(learned), np.linalg.norm(start), data, start_time)


def _report(row: dict, on_row: Callable[[dict[str, Any]], Any] | None) -> None:
    """Tell ``on_row`` of a scored row (without its filters and predictions)."""
    if on_row is not None:
        on_row({k: v for k, v in row.items() if k not in ("filters", "predictions")})


def _scored(rows: list[dict], learned_norm, start_norm, data, start_time: float) -> dict:
    """The ablation's result: the rows (predictions dropped), the norms, the time."""
    for row in rows:
        row.pop("predictions")
    return {
        "rows": rows,
        "learned_norm": float(learned_norm),
        "start_norm": float(start_norm),
        "n_test": int(len(data.y_test)),
        "seconds": time.perf_counter() - start_time,
        "explanation": ABLATION_EXPLANATION,
    }


def _layered_variants(
    learned: list[np.ndarray], start: list[np.ndarray]
) -> list[tuple[str, str, list[np.ndarray]]]:
    """A stack's filter sets: every fixed set keeps each layer at the learned layer's norm
    (per layer: a layer's scale acts on the next layer's input, not only on γ)."""

    def at(layers, norms_of):
        pairs = zip(layers, norms_of, strict=True)
        return [rescale_to_norm(f, float(np.linalg.norm(g))) for f, g in pairs]

    shape = learned[0].shape
    return [
        ("learned", "learned filters (every layer)", learned),
        ("start", "random start, at the learned norms", at(start, learned)),
        (
            "delta",
            "delta in layer 1, at the learned norms",
            at([delta_filters(shape), *start[1:]], learned),
        ),
        (
            "gaussian",
            "Gaussian in layer 1, at the learned norms",
            at([gaussian_filters(shape), *start[1:]], learned),
        ),
        ("learned_at_start_norm", "learned shapes, at the start's norms", at(learned, start)),
    ]


def score_layered_sets(
    data: Any,
    estimator: Any,
    learned_layers: Any,
    start_layers: Any,
    on_row: Callable[[dict[str, Any]], Any] | None = None,
) -> dict[str, Any]:
    """:func:`score_filter_sets` for a stack of layers (``estimator.layers`` set).

    Each fixed set replaces every layer's filters: the random start, or a delta or a
    Gaussian in layer 1 with the later layers at their start, each layer rescaled to the
    learned layer's norm; and the learned shapes at the start's norms.  Each is one SVM
    solve of the same kernel and C on the stack's maps.

    Parameters
    ----------
    data : PairData
    estimator : KernelCSVM
        The run's unfitted estimator, with its ``layers``.
    learned_layers, start_layers : sequence of arrays (k_l, C_l, p_l, q_l)
        Every layer's learned and first filters (``layer_filters_[0]`` of the run).
    on_row : callable, optional

    Returns
    -------
    dict
        As :func:`score_filter_sets`; a row's ``filters`` are layer 1's, its ``norm`` that
        of every layer's filters together.
    """
    from csvm.model.kernel_state import solve_on_filters
    from csvm.model.layers import Network, parse_layers

    start_time = time.perf_counter()
    network = Network(parse_layers(estimator.layers), tuple(data.image_shape))
    learned = [np.asarray(f, dtype=np.float64) for f in learned_layers]
    start = [np.asarray(f, dtype=np.float64) for f in start_layers]
    expected = [tuple(s) for s in network.filter_shapes]
    for name, layers in (("learned_layers", learned), ("start_layers", start)):
        if [f.shape for f in layers] != expected:
            raise ValueError(
                f"{name} have shapes {[f.shape for f in layers]}, expected {expected}."
            )
        if not all(np.isfinite(f).all() and np.linalg.norm(f) for f in layers):
            raise ValueError(f"{name} hold a layer that is all zero or not finite.")
    params = {k: estimator.get_params()[k] for k in ("kernel", "degree", "gamma", "coef0")}
    rows: list[dict[str, Any]] = []
    for name, label, layers in _layered_variants(learned, start):
        theta = network.pack(layers)
        state = solve_on_filters(
            data.X_train, data.y_train, theta, params, estimator.C, network=network
        )
        preds = [np.where(state.decision_function(X) > 0, 1, -1) for X in (data.X_test, data.X_val)]
        row = _row(name, label, layers[0], float(np.linalg.norm(theta)), preds, data)
        if rows:
            _compare(row, rows[0], data)
        rows.append(row)
        _report(row, on_row)
    learned_norm, start_norm = (np.linalg.norm(network.pack(f)) for f in (learned, start))
    return _scored(rows, learned_norm, start_norm, data, start_time)
