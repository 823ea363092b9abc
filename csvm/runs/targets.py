"""A run of the explorer: its job target, its live control, and what its results show.

The explorer submits :func:`run_model` to a worker process once per model (the CSVM and
each baseline).  Everything a page shows about a run is computed here, so pages only
draw: the comparison rows (:func:`result_rows`), the progress and time left
(:func:`progress`), the outcome headline (:func:`headline`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from csvm.exceptions import DivergenceError
from csvm.model.conv import correlate
from csvm.runs.config import MODEL_LABELS, RunConfig
from csvm.runs.confusion import confused_pairs
from csvm.runs.cost import format_elapsed
from csvm.runs.model_result import model_summary, pinned_indices

__all__ = [
    "STEP_KINDS",
    "RunControl",
    "as_config",
    "confused_pairs",
    "fit_timed",
    "load_data",
    "model_summary",
    "n_classes",
    "pinned_indices",
    "progress",
    "result_rows",
    "run_model",
    "sub_problem_progress",
    "step_events",
    "steps_total",
]

#: Event kinds that are steps of a model's training (what Step advances by one).
STEP_KINDS = ("iteration", "half_step", "epoch")


def as_config(config: RunConfig | Mapping[str, Any]) -> RunConfig:
    """A RunConfig from a RunConfig or a plain dict (as jobs receive it)."""
    if isinstance(config, RunConfig):
        return config
    return RunConfig(**dict(config))


def load_data(config: RunConfig | Mapping[str, Any], data_dir: str | None = None):
    """The pair (or the classes) a configuration names (cached inside :mod:`csvm.data`).

    Parameters
    ----------
    config : RunConfig or dict
        Dataset, classes, protocol, training size and seed are used.
    data_dir : str, optional
        Where the file datasets live (default: ``CSVM_DATA_DIR`` or the user cache).

    Returns
    -------
    csvm.data.PairData or csvm.data.MulticlassData
        A pair run: labels -1 / +1.  A multi-class run (``classes`` set): the chosen
        classes labelled 0..k-1 in the order given.
    """
    from csvm.data import load_classes, load_pair

    c = as_config(config)
    if c.multiclass:
        return load_classes(
            c.dataset,
            c.class_list(_dataset_classes(c.dataset)),
            protocol=c.protocol,
            data_dir=data_dir,
            n_train=c.n_train,
            random_state=c.seed,
        )
    return load_pair(
        c.dataset,
        c.class_a,
        c.class_b,
        protocol=c.protocol,
        data_dir=data_dir,
        n_train=c.n_train,
        random_state=c.seed,
    )


def _dataset_classes(dataset: str) -> tuple[str, ...]:
    from csvm.data.registry import spec

    return tuple(spec(dataset).classes)


def n_classes(config: RunConfig) -> int:
    """Classes a run trains: 2 for a pair, else those ``classes`` names in its dataset."""
    if not config.multiclass:
        return 2
    return len(config.class_list(_dataset_classes(config.dataset)))


class RunControl:
    """Pause, Resume, Step and Stop for a job, read from the commands its owner sends.

    The worker's ``emit`` (see :mod:`csvm.jobs`) may offer ``receive(timeout)``; without
    it (a plain callable, as in tests and the CLI) the run is never paused.  After each
    training step :meth:`after_step` is called: it applies waiting commands and, while
    paused, blocks in ``receive`` — a paused run holds no CPU.

    Commands are dicts ``{"cmd": "pause" | "resume" | "step" | "stop"}``; "step" lets
    exactly one more step run, then pauses again.
    """

    def __init__(self, emit: Callable[..., Any], paused: bool = False):
        self._receive = getattr(emit, "receive", None)
        self._emit = emit
        self.paused = bool(paused) and self._receive is not None
        self.stopped = False
        self._steps_allowed = 0

    def _apply(self, command: Mapping[str, Any] | None) -> None:
        cmd = (command or {}).get("cmd")
        if cmd == "pause":
            self.paused = True
        elif cmd == "resume":
            self.paused = False
        elif cmd == "step":
            self.paused = True
            self._steps_allowed += 1
        elif cmd == "stop":
            self.stopped = True

    def after_step(self) -> bool:
        """Apply commands; wait while paused.  Returns False when the run must stop."""
        if self._receive is None:
            return True
        while (command := self._receive(0)) is not None:
            self._apply(command)
        if self._steps_allowed:
            self._steps_allowed -= 1
            return not self.stopped
        while self.paused and not self.stopped:
            self._emit({"kind": "paused"})
            self._apply(self._receive(None))
            if self._steps_allowed:
                self._steps_allowed -= 1
                break
        return not self.stopped


def _divergence(exc: DivergenceError) -> dict[str, Any]:
    return {"message": str(exc), "suggested_eta": exc.suggested_eta, "cause": exc.cause}


def fit_timed(clf, data, callback: Callable[..., Any] | None = None):
    """Fit ``clf`` on ``data``'s training split, timed; a divergence is returned, not raised
    (the estimator keeps its best state, which is then scored like any other).

    Returns
    -------
    seconds : float
    divergence : DivergenceError or None
    """
    start = time.perf_counter()
    try:
        clf.fit(data.X_train, data.y_train, callback=callback)
    except DivergenceError as exc:
        return time.perf_counter() - start, exc
    return time.perf_counter() - start, None


def _status(diverged: Any, control: RunControl) -> str:
    return "diverged" if diverged else ("stopped" if control.stopped else "done")


def _train_csvm(emit, c: RunConfig, data, control: RunControl) -> dict[str, Any]:
    clf = c.build_estimator(data.image_shape)
    pinned = data.X_train[pinned_indices(data.y_train)]
    first: list[np.ndarray] = []  # the random start, for the ablation view
    network = _network_of(c, data.image_shape)
    first_layers: list[np.ndarray] = []  # every layer's start, for a stack's ablation

    def callback(event: dict[str, Any]) -> bool:
        if event["kind"] == "divergence":  # no step: nothing to draw or to wait for
            emit(event)
            return True
        filters = event["filters"]
        if not first:
            first.append(np.array(filters))
            if event.get("layer_filters") is not None:
                first_layers.extend(np.array(f) for f in event["layer_filters"])
        maps = correlate(pinned, filters.astype(np.float32))
        extra = {}
        if network is not None and event.get("layer_filters") is not None:
            # Every layer's maps of the first two pinned images (one of each class).
            theta = network.pack(event["layer_filters"])
            extra["layer_maps"] = network.layer_outputs(pinned[[0, len(pinned) // 2]], theta)
        emit({**event, "filters": filters, "pinned_maps": maps, **extra})
        return control.after_step()

    seconds, exc = fit_timed(clf, data, callback)
    diverged = None if exc is None else _divergence(exc)
    result = model_summary(c.model, clf, data, seconds)
    a = np.asarray(clf.dual_coef_, dtype=float).ravel()
    order = np.argsort(-np.abs(a))[:24] if len(a) else np.zeros(0, dtype=int)
    result.update(
        {
            "filters": np.asarray(clf.filters_[0]),
            # The same layout as "filters" (one sub-problem, channels dropped when 1).
            "start_filters": first[0].reshape(np.shape(clf.filters_[0])) if first else None,
            "layer_filters": clf.layer_filters_[0] if network is not None else None,
            "start_layer_filters": first_layers or None,
            "support": np.asarray(clf.support_).ravel()[order].tolist(),
            "support_alpha": np.abs(a[order]).tolist() if len(a) else [],
            "n_support": int(np.asarray(clf.support_).size),
            "diverged": diverged,
            "history": clf.history_,
            "status": _status(diverged, control),
        }
    )
    return result


def _network_of(c: RunConfig, image_shape: tuple[int, ...]):
    """The run's stack of layers (None for the one-layer model)."""
    if c.model != "kcsvm" or not c.layers:
        return None
    from csvm.model.layers import Network, parse_layers

    specs = parse_layers(c.layers)
    if len(specs) == 1 and specs[0].is_plain:
        return None
    return Network(specs, tuple(image_shape))


def _train_csvm_multi(emit, c: RunConfig, data, control: RunControl) -> dict[str, Any]:
    """Every sub-problem of a multi-class CSVM, one after the other.

    ``n_jobs`` stays 1: a job has one core, and sub-problems in sequence keep Pause and
    Step meaningful (a step is one step of the sub-problem training now).  A stop ends
    the current sub-problem; the later ones see the stop after their first step, so the
    model can still predict (their filters are the random start).
    """
    clf = c.build_estimator(data.image_shape)
    names = [str(n) for n in data.class_names]

    def callback(event: dict[str, Any]) -> bool:
        if event["kind"] == "divergence":
            emit(event)
            return True
        # The filters go to the page (the grid); the gradient, support vectors and alphas
        # of 45 sub-problems would only weigh on the pipe.
        emit({k: v for k, v in event.items() if k not in ("gradient", "support", "alpha")})
        return control.after_step()

    seconds, exc = fit_timed(clf, data, callback)
    diverged = None if exc is None else _divergence(exc)
    result = model_summary(c.model, clf, data, seconds)
    steps = np.bincount(
        [e["classifier"] for e in clf.history_ if e.get("kind") in STEP_KINDS],
        minlength=len(clf.pairs_),
    )
    result.update(
        {
            "filters": np.asarray(clf.filters_),
            "pairs": [[names[v] if v != "rest" else "rest" for v in p] for p in clf.pairs_],
            "multi_class": c.multi_class,
            "sub_steps": steps.tolist(),
            "n_support": np.asarray(clf.n_support_).tolist(),
            "confused": confused_pairs(result["confusion"], c.multi_class),
            "diverged": diverged,
            "history": clf.history_,
            "status": _status(diverged, control),
        }
    )
    return result


def _train_svm(emit, c: RunConfig, data) -> dict[str, Any]:
    from csvm.model.plain_svm import make_plain_svm

    start = time.perf_counter()
    if c.model == "lcsvm":
        clf = make_plain_svm(linear=True, lam_w=c.lam_w, n_samples=len(data.X_train))
    else:
        clf = make_plain_svm(kernel=c.kernel, degree=c.degree, gamma=c.gamma, coef0=c.coef0, C=c.C)
    clf.fit(data.X_train, data.y_train)
    result = model_summary("svm", clf, data, time.perf_counter() - start)
    emit(
        {
            "kind": "result",
            "model": "svm",
            "seconds": result["seconds"],
            "train_accuracy": result["train_accuracy"],
            "test_accuracy": result["test_accuracy"],
        }
    )
    return result


def _train_cnn(emit, c: RunConfig, data, control: RunControl) -> dict[str, Any]:
    from csvm.model.baselines import SmallCNN

    clf = SmallCNN(
        image_shape=data.image_shape,
        filter_shape=(c.filter_size, c.filter_size),
        n_filters=c.n_filters,
        hidden=c.cnn_hidden or None,
        lr=c.cnn_lr,
        epochs=c.cnn_epochs,
        random_state=c.seed,
    )

    def callback(event: dict[str, Any]) -> bool:
        emit({k: v for k, v in event.items() if k != "filters"})
        return control.after_step()

    seconds, exc = fit_timed(clf, data, callback)
    diverged = None if exc is None else _divergence(exc)
    result = model_summary("cnn", clf, data, seconds)
    result.update(
        diverged=diverged,
        history=clf.history_,
        status=_status(diverged, control),
    )
    return result


def run_model(
    emit: Callable[[dict[str, Any]], Any],
    config: RunConfig | Mapping[str, Any],
    model: str,
    data_dir: str | None = None,
    paused: bool = False,
) -> dict[str, Any]:
    """Train one model of a run, emitting typed events; the job target of the explorer.

    Parameters
    ----------
    emit : callable
        Receives each event (see :mod:`csvm.events`): a ``"start"`` event once the data
        are loaded, then the CSVM's ``"iteration"`` or ``"half_step"`` events (with
        ``"filters"`` and ``"pinned_maps"``: the six pinned images' feature maps), the
        CNN's ``"epoch"`` events, or the plain SVM's ``"result"``.  If it has
        ``receive`` (a worker of :class:`csvm.jobs.JobPool`), the owner's pause, resume,
        step and stop commands are obeyed between steps (:class:`RunControl`).
    config : RunConfig or dict
    model : {"csvm", "svm", "cnn", "mkl", "hog", "mlsvm", "recommended"}
        The CSVM, a baseline, or a comparison model (:mod:`csvm.runs.comparison_models`).
    paused : bool
        Start paused: the first step waits for a "step" or "resume" command.

    Returns
    -------
    dict
        Accuracies, test predictions, seconds, confusion matrix, misclassified test
        indices and ``status`` ("done", "stopped" or "diverged"); for a CSVM also the
        final filters, the support vectors and their alpha, the history, and
        ``"diverged"`` (the message and a safer eta) when training diverged.  A stopped or
        diverged run is evaluated with its best state.
    """
    from csvm.runs.comparison_models import COMPARISON_MODELS, train_comparison

    if model not in ("csvm", "svm", "cnn", *COMPARISON_MODELS):
        raise ValueError(
            f"Unknown model {model!r}: expected 'csvm', 'svm', 'cnn' or one of "
            f"{', '.join(COMPARISON_MODELS)}."
        )
    c = as_config(config)
    data = load_data(c, data_dir)
    emit({"kind": "start", "model": model, "n_train": int(len(data.y_train))})
    control = RunControl(emit, paused=paused)
    if model == "csvm":
        if c.multiclass:
            return _train_csvm_multi(emit, c, data, control)
        return _train_csvm(emit, c, data, control)
    if model == "svm":
        return _train_svm(emit, c, data)
    if model in COMPARISON_MODELS:
        return train_comparison(emit, c, data, model)
    return _train_cnn(emit, c, data, control)


# -- what the pages show ------------------------------------------------------------------
def steps_total(config: RunConfig) -> int:
    """Recorded steps of a CSVM run: one per iteration, two per L-CSVM iteration, for
    every sub-problem of a multi-class run."""
    per_problem = config.n_iter * (2 if config.model == "lcsvm" else 1)
    return per_problem * config.n_sub_problems(n_classes(config))


def step_events(
    events: Sequence[Mapping[str, Any]], every_sub_problem: bool = False
) -> list[Mapping[str, Any]]:
    """The training-step events of a model, in order: the first sub-problem's, or (a
    multi-class run) every sub-problem's."""
    return [
        e
        for e in events
        if e.get("kind") in STEP_KINDS and (every_sub_problem or e.get("classifier", 0) == 0)
    ]


def sub_problem_progress(
    config: RunConfig, events: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Where each sub-problem of a multi-class CSVM run is, from its step events.

    Returns
    -------
    list of dict
        One per sub-problem (classifier order): ``classifier``, ``pair`` (labels as in
        the events; None before its first step), ``steps``, ``total``, ``objective`` and
        ``train_accuracy`` of its latest step (None before it), and ``filters``: those
        of its latest step that has them (the pool may thin arrays on long runs).
    """
    per_problem = config.n_iter * (2 if config.model == "lcsvm" else 1)
    m = config.n_sub_problems(n_classes(config))
    rows = [
        {
            "classifier": k,
            "pair": None,
            "steps": 0,
            "total": per_problem,
            "objective": None,
            "train_accuracy": None,
            "filters": None,
        }
        for k in range(m)
    ]
    for e in step_events(events, every_sub_problem=True):
        k = int(e.get("classifier", 0))
        if k >= m:
            continue
        row = rows[k]
        row["steps"] += 1
        row["pair"] = e.get("pair")
        row["objective"] = e.get("objective")
        row["train_accuracy"] = e.get("train_accuracy")
        if e.get("filters") is not None:
            row["filters"] = e["filters"]
    return rows


def progress(
    config: RunConfig, events: Sequence[Mapping[str, Any]], running: bool
) -> tuple[float, str]:
    """How far a CSVM run is, as a fraction and a line of text with the time left.

    The time left extrapolates the seconds per step so far (shown only while running).
    """
    steps = step_events(events, every_sub_problem=config.multiclass)
    total = steps_total(config)
    if not steps:
        return 0.0, "Starting…"
    done = len(steps)
    # Each sub-problem counts its seconds from its own start: sum their latest values.
    latest = {e.get("classifier", 0): float(e.get("seconds", 0.0)) for e in steps}
    elapsed = sum(latest.values())
    text = f"step {done} of {total} · {format_elapsed(elapsed)}"
    if running and done < total:
        text += f" · about {elapsed / done * (total - done):.0f} s left"
    return min(done / max(total, 1), 1.0), text


def result_rows(
    config: RunConfig, outcomes: Mapping[str, Mapping[str, Any] | None]
) -> list[dict[str, Any]]:
    """One row per model of a run for the comparison table.

    Parameters
    ----------
    config : RunConfig
    outcomes : mapping
        Model key ("csvm", "svm", "cnn") -> ``{"state", "result", "events"}`` (the job's
        state, its result or None, its events), or None for a job no longer on the
        server.

    Returns
    -------
    list of dict
        ``model``, ``train accuracy`` and ``test accuracy`` (percent, or None where it
        does not exist), ``95 % interval`` of the test accuracy (Wilson; "–" where there is
        none), ``seconds``, ``status``.
    """
    from csvm.analysis.stats import format_interval, wilson_interval

    rows = []
    for key, outcome in outcomes.items():
        result = (outcome or {}).get("result")
        label = (result or {}).get("label") or MODEL_LABELS[config.model if key == "csvm" else key]
        row = {
            "model": label,
            "train accuracy": None,
            "test accuracy": None,
            "95 % interval": "–",
            "seconds": None,
        }
        if outcome is None:
            rows.append({**row, "status": "no longer on the server"})
            continue
        result = outcome.get("result")
        frozen = outcome.get("suspended_seconds", 0.0)  # its clock ran on while suspended
        if result is not None:
            n = int(result["n_test"])
            low, high = wilson_interval(round(result["test_accuracy"] * n), n)
            row["95 % interval"] = format_interval(low, high)
            rows.append(
                {
                    **row,
                    "train accuracy": round(100 * result["train_accuracy"], 2),
                    "test accuracy": round(100 * result["test_accuracy"], 2),
                    "seconds": round(max(result["seconds"] - frozen, 0.0), 2),
                    "status": result.get("status", "done")
                    + (" (paused for a fair share)" * bool(frozen)),
                }
            )
            continue
        steps = [e for e in outcome.get("events", ()) if "train_accuracy" in e]
        state = outcome.get("state", "lost")
        if steps:
            last = steps[-1]
            state += f" at step {len(step_events(steps)) or 1}"
            row["train accuracy"] = round(100 * last["train_accuracy"], 2)
            row["seconds"] = round(float(last.get("seconds", 0.0)), 2)
        rows.append({**row, "status": state})
    return rows
