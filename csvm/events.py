"""The events that trainers emit to callbacks and keep in ``history_``, one type per kind.

Every event is a plain dict (it pickles through a process pipe and serialises to JSON) with
a ``kind`` field naming its type below; consumers dispatch on ``kind``, never on which keys
happen to be there.

========== =========================================== ==================================
kind       type                                        emitted by
========== =========================================== ==================================
iteration  :class:`IterationEvent`                     K-CSVM, once per outer iteration
half_step  :class:`HalfStepEvent` (``step`` "svm" or   L-CSVM, twice per alternation
           "filter")
epoch      :class:`EpochEvent`                         SmallCNN, once per epoch
batch      :class:`BatchEvent`                         SmallCNN, every ``events_every``
                                                       mini-batches (callback only)
divergence :class:`DivergenceEvent`                    any trainer, just before it raises
                                                       :class:`~csvm.DivergenceError`
start      :class:`StartEvent`                         the app's run code, data loaded
result     :class:`ResultEvent`                        the app's run code, model scored
paused     :class:`PausedEvent`                        the app's run code, waiting for the
                                                       owner's next command
ablation   :class:`AblationEvent`                      the ablation job
                                                       (:func:`csvm.runs.ablation.run_ablation`),
                                                       once per fixed filter set scored
tuning     :class:`TuningEvent`                        the tuning job
                                                       (:func:`csvm.runs.tuned.run_tuned_model`),
                                                       once per grid cell scored
========== =========================================== ==================================

``history_`` keeps the trainer's events without the arrays: the callback's copy of an
event also holds ``filters`` (the current filters, ``(n_filters, C, p, q)``; the CNN's
``(n_filters, C, p, q)`` convolution weights), and a K-CSVM callback event also holds
``gradient``, ``support`` and ``alpha`` (see :class:`IterationEvent`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypedDict

import numpy as np

__all__ = [
    "AblationEvent",
    "BatchEvent",
    "Callback",
    "DivergenceEvent",
    "EpochEvent",
    "Event",
    "HalfStepEvent",
    "IterationEvent",
    "PausedEvent",
    "Recorder",
    "ResultEvent",
    "StartEvent",
    "TuningEvent",
]

Callback = Callable[[dict[str, Any]], Any]


class _TrainerEvent(TypedDict):
    """Keys of every event a trainer emits."""

    model: str  # "kcsvm", "lcsvm" or "cnn"
    n_iter: int  # iterations (CSVMs) or epochs (CNN) asked for
    iteration: int  # 0-based outer iteration (the epoch for the CNN)
    seconds: float  # wall-clock seconds since fit started


class _SubProblemEvent(_TrainerEvent):
    classifier: int  # index of the binary sub-problem
    pair: list[Any]  # its two class labels (negative, positive); "rest" in one-vs-rest


class _IterationRequired(_SubProblemEvent):
    kind: Literal["iteration"]
    step: Literal["iteration"]
    objective: float  # T(f) = sum_alpha - margin_term + regulariser
    sum_alpha: float
    margin_term: float  # 1/2 a^T K a
    regulariser: float  # r(f)
    filter_norm: float  # L2 norm of all filters of this sub-problem
    n_support: int
    train_accuracy: float
    svm_iterations: int  # the solve's iterations (LIBSVM's, or the warm solver's systems)
    svm_hit_max_iter: bool  # it stopped at svm_max_iter instead of converging
    svm_at_hard_cap: bool  # a hard-margin solve put an alpha at the cap: not separable
    eta: float  # the step size that will move the filter next
    timings: dict[str, float]  # seconds spent on "kernel", "svm", "gradient"


class IterationEvent(_IterationRequired, total=False):
    """One K-CSVM outer iteration: the SVM solved at the current filters.

    The callback's copy also holds ``filters``; ``gradient``, dT/df at these filters
    (their shape; None on the last iteration, where no step follows); ``support``, the
    indices of the support vectors among this sub-problem's training rows; and ``alpha``,
    their ``|a_i|``.
    """

    filters: np.ndarray
    gradient: np.ndarray | None
    support: np.ndarray
    alpha: np.ndarray


class _HalfStepRequired(_SubProblemEvent):
    kind: Literal["half_step"]
    step: Literal["svm", "filter"]
    objective: float  # E(w, f, b), the corrected eq. 3.2
    data_term: float
    w_term: float
    f_term: float
    rose: bool  # E rose since the previous half-step
    filter_norm: float
    n_support: int
    train_accuracy: float
    svm_hit_max_iter: bool  # LIBSVM stopped at svm_max_iter instead of converging
    timings: dict[str, float]


class HalfStepEvent(_HalfStepRequired, total=False):
    """One L-CSVM half-step (the SVM step or the filter step); the callback's copy also
    holds ``filters``."""

    filters: np.ndarray


class _EpochRequired(_TrainerEvent):
    kind: Literal["epoch"]
    step: Literal["epoch"]
    epoch: int
    loss: float  # mean training loss over the epoch's mini-batches
    train_accuracy: float  # of the mini-batches as they were trained on


class EpochEvent(_EpochRequired, total=False):
    """One SmallCNN epoch; the callback's copy also holds ``filters``."""

    filters: np.ndarray


class _BatchRequired(_TrainerEvent):
    kind: Literal["batch"]
    step: Literal["batch"]
    epoch: int
    batch: int  # mini-batches done since fit started
    epoch_progress: float  # epochs done, fractional
    loss: float  # mean loss of the epoch's batches so far


class BatchEvent(_BatchRequired, total=False):
    """SmallCNN progress within an epoch (``events_every``); callback only."""

    filters: np.ndarray


class _DivergenceRequired(TypedDict):
    kind: Literal["divergence"]
    model: str
    classifier: int
    iteration: int  # the iteration (epoch) whose step diverged
    cause: str  # "non-finite", "norm-explosion" or "objective-rising"
    message: str  # the DivergenceError's message
    suggested_eta: float | None  # a safer step size (lr for the CNN)


class DivergenceEvent(_DivergenceRequired, total=False):
    """Training diverged; emitted just before :class:`~csvm.DivergenceError` is raised.

    ``filter_norm_before`` and ``filter_norm_after`` (the norms around the failed step)
    are there when known.
    """

    filter_norm_before: float
    filter_norm_after: float


class StartEvent(TypedDict):
    """A run's data are loaded and training starts (emitted by the app's run code)."""

    kind: Literal["start"]
    model: str
    n_train: int


class ResultEvent(TypedDict):
    """A model is trained and scored (emitted by the app's run code)."""

    kind: Literal["result"]
    model: str
    seconds: float
    train_accuracy: float
    test_accuracy: float


class PausedEvent(TypedDict):
    """A run waits for its owner's next command (pause or step) and holds no CPU."""

    kind: Literal["paused"]


class _TuningRequired(TypedDict):
    kind: Literal["tuning"]
    model: Literal["svm", "cnn"]
    step: Literal["tuning"]
    val_accuracy: float | None  # None: a CNN run diverged before this epoch


class TuningEvent(_TuningRequired, total=False):
    """One cell of a baseline's validation grid, scored (the tuning job).

    A plain SVM's cell names its kernel parameters; a CNN's its learning rate and epochs.
    """

    kernel: str
    degree: int
    gamma: float
    coef0: float
    C: float | None
    converged: bool  # False: LIBSVM stopped at its iteration bound
    lr: float
    epochs: int
    diverged: bool


class _AblationRequired(TypedDict):
    kind: Literal["ablation"]
    model: Literal["ablation"]
    step: str  # the filter set: "learned", "start", "delta", "gaussian", ...
    name: str
    label: str
    norm: float
    test_accuracy: float
    n_correct: int
    interval: tuple[float, float]  # Wilson 95 %


class AblationEvent(_AblationRequired, total=False):
    """One fixed filter set scored with the learned run's kernel and SVM (the ablation job).

    ``mcnemar`` (the exact test's fields) and ``verdict`` compare it with the learned filter;
    both are None/empty on the learned filter's own row.
    """

    val_accuracy: float | None
    mcnemar: dict[str, Any] | None
    verdict: str


Event = (
    IterationEvent
    | HalfStepEvent
    | EpochEvent
    | BatchEvent
    | DivergenceEvent
    | StartEvent
    | ResultEvent
    | PausedEvent
    | TuningEvent
    | AblationEvent
)


class Recorder:
    """Collect events for ``history_`` and forward them, with their arrays, to a callback.

    Parameters
    ----------
    callback : callable or None
        Called with each event plus its arrays; returning ``False`` asks to stop.
    base : dict
        Keys added to every event (model, classifier, pair, n_iter).
    kind : str
        The ``kind`` of this trainer's step events ("iteration" or "half_step").
    should_stop : callable, optional
        Returns True when training must stop for an outside reason (another sub-problem's
        callback asked to stop).
    """

    def __init__(
        self,
        callback: Callback | None,
        base: dict[str, Any],
        kind: str = "iteration",
        should_stop: Callable[[], bool] | None = None,
    ):
        self.callback = callback
        self.base = dict(base)
        self.kind = kind
        self.history: list[dict[str, Any]] = []
        self.stopped = False
        self._should_stop = should_stop

    def record(
        self, filters: np.ndarray, arrays: dict[str, Any] | None = None, **values: Any
    ) -> bool:
        """Store one step event; return True when training should go on.

        ``arrays`` (callback only, never in ``history_``) are added to the callback's copy
        beside a copy of ``filters``.
        """
        event = {"kind": self.kind, **self.base, **values}
        self.history.append(event)
        if self.callback is not None:
            answer = self.callback(
                {**event, "filters": np.array(filters, copy=True), **(arrays or {})}
            )
            if answer is False:
                self.stopped = True
        if self._should_stop is not None and self._should_stop():
            self.stopped = True
        return not self.stopped

    def diverged(
        self,
        iteration: int,
        error: Any,
        filter_norm_before: float | None = None,
        filter_norm_after: float | None = None,
    ) -> None:
        """Emit the :class:`DivergenceEvent` for ``error`` (a DivergenceError about to be
        raised): kept in ``history_`` and passed to the callback, whose answer is ignored
        (training stops anyway)."""
        event: dict[str, Any] = {
            "kind": "divergence",
            "model": self.base.get("model", ""),
            "classifier": self.base.get("classifier", 0),
            "iteration": int(iteration),
            "cause": error.cause,
            "message": str(error),
            "suggested_eta": error.suggested_eta,
        }
        for key, value in (
            ("filter_norm_before", filter_norm_before),
            ("filter_norm_after", filter_norm_after),
        ):
            if value is not None:
                event[key] = float(value)
        self.history.append(event)
        if self.callback is not None:
            self.callback(dict(event))
