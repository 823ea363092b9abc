"""The tuned-baseline job: a plain SVM or CNN tuned on the run's validation split, then
scored on its test split (the search itself is :mod:`csvm.analysis.tuning`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from csvm.analysis.tuning import CNN_BUDGET, SVM_BUDGET, TuningResult, tune_cnn, tune_plain_svm
from csvm.runs.config import MODEL_LABELS
from csvm.runs.fields import tuned_label
from csvm.runs.targets import as_config, load_data, model_summary

__all__ = ["run_tuned_model"]


def _tune(model: str, c: dict[str, Any], data, budget: int | None, callback) -> TuningResult:
    """Tune the run's plain SVM or CNN on its validation split."""
    if model == "svm":
        return tune_plain_svm(
            data.X_train,
            data.y_train,
            data.X_val,
            data.y_val,
            kernel="linear" if c["model"] == "lcsvm" else c["kernel"],
            degree=int(c["degree"]),
            gamma=None,
            coef0=float(c["coef0"]),
            budget=budget or SVM_BUDGET,
            callback=callback,
        )
    if model == "cnn":
        return tune_cnn(
            data.X_train,
            data.y_train,
            data.X_val,
            data.y_val,
            lr=float(c["cnn_lr"]),
            budget=budget or CNN_BUDGET,
            callback=callback,
            image_shape=data.image_shape,
            filter_shape=(int(c["filter_size"]),) * 2,
            n_filters=int(c["n_filters"]),
            hidden=int(c["cnn_hidden"]) or None,
            random_state=int(c["seed"]),
        )
    raise ValueError(f"Unknown baseline {model!r}: expected 'svm' or 'cnn'.")


def run_tuned_model(
    emit: Callable[[dict[str, Any]], Any],
    config: dict[str, Any],
    model: str,
    data_dir: str | None = None,
    budget: int | None = None,
) -> dict[str, Any]:
    """Tune a baseline on the validation split, then score it on the test split (job target).

    Parameters
    ----------
    emit : callable
        Receives ``{"kind": "start", ...}`` once the data are loaded, then one
        ``{"kind": "tuning", ...}`` event per scored grid cell.
    config : dict
        A run configuration (:class:`csvm.runs.config.RunConfig` or its dict): the kernel
        family, fixed degree/coef0, the CNN's shape, hidden units, learning rate (the
        centre of its axis) and seed.  The plain SVM's γ axis is centred on the data's own
        scale, ``1 / (D var(X))``, not on the CSVM's γ (which applies to feature maps).
    model : {"svm", "cnn"}
    data_dir : str, optional
    budget : int, optional
        Fits (SVM) or training runs (CNN); default :data:`SVM_BUDGET` / :data:`CNN_BUDGET`.

    Returns
    -------
    dict
        As :func:`csvm.runs.targets.run_model`'s result, labelled "… (tuned on validation)",
        plus ``"tuning"`` (:meth:`TuningResult.summary`) and ``"predictions"`` (the test
        predictions, for McNemar tests against other models).
    """
    c = as_config(config).to_dict()
    data = load_data(c, data_dir)
    emit({"kind": "start", "model": model, "n_train": int(len(data.y_train))})

    def cell_event(cell: dict[str, Any]) -> None:
        emit({"kind": "tuning", "model": model, "step": "tuning", **cell})

    result = _tune(model, c, data, budget, cell_event)
    summary = model_summary(model, result.estimator, data, result.seconds)
    summary["label"] = tuned_label(MODEL_LABELS[model])
    summary["tuning"] = result.summary()
    summary["predictions"] = result.estimator.predict(data.X_test).tolist()
    return summary
