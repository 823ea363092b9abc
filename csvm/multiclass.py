"""Shared estimator machinery: input checks, one-vs-one / one-vs-rest, parallel sub-problems.

Both CSVMs learn one filter set per binary sub-problem (the thesis learns "a different
filter for each pair of targets").  The sub-problems run in a joblib thread pool: LIBSVM,
BLAS and the numpy kernels release the GIL, and threads let the callbacks of every
sub-problem reach the caller live (a process pool would swallow them).
"""

from __future__ import annotations

import threading
from itertools import combinations
from numbers import Integral
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils import TransformerTags, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from csvm.conv import correlate, map_shape
from csvm.events import Callback, Recorder
from csvm.exceptions import DivergenceError
from csvm.validation import Shape, check_images, check_init_filters, resolve_filter_shape

__all__ = ["COMMON_CONSTRAINTS", "BaseCSVM", "binary_tasks", "ovo_decision"]

#: Constraints of the parameters every CSVM has; each estimator's ``_parameter_constraints``
#: table starts from these.
COMMON_CONSTRAINTS: dict[str, list[Any]] = {
    "image_shape": [None, Shape((2, 3), "a tuple (H, W) or (C, H, W) of positive integers")],
    "filter_shape": [None, Shape((2,), "a tuple (p, q) of positive integers")],
    "n_filters": [Interval(Integral, 1, 256, closed="both")],
    "n_iter": [Interval(Integral, 1, 100_000, closed="both")],
    "multi_class": [StrOptions({"ovo", "ovr"})],
    "n_jobs": [None, Integral],
    "random_state": ["random_state"],
    "init_filters": [None, "array-like"],
}


def binary_tasks(y: np.ndarray, classes: np.ndarray, strategy: str) -> list[dict[str, Any]]:
    """The binary sub-problems of a multi-class problem.

    Each task holds ``index`` (rows of the training set), ``y`` (labels +-1) and ``pair``
    (negative label, positive label; "rest" stands for all other classes in one-vs-rest).
    Two classes always give one task, with +1 for ``classes[1]``.
    """
    if len(classes) == 2:
        index = np.arange(len(y))
        return [
            {
                "index": index,
                "y": np.where(y == classes[1], 1, -1),
                "pair": (classes[0], classes[1]),
            }
        ]
    tasks = []
    if strategy == "ovo":
        for i, j in combinations(range(len(classes)), 2):
            index = np.flatnonzero((y == classes[i]) | (y == classes[j]))
            tasks.append(
                {
                    "index": index,
                    "y": np.where(y[index] == classes[j], 1, -1),
                    "pair": (classes[i], classes[j]),
                }
            )
    else:
        for c in classes:
            tasks.append(
                {"index": np.arange(len(y)), "y": np.where(y == c, 1, -1), "pair": ("rest", c)}
            )
    return tasks


def ovo_decision(decisions: np.ndarray, n_classes: int) -> np.ndarray:
    """One-vs-one votes turned into an (n, n_classes) decision, ties broken by confidence.

    ``decisions[:, k]`` is the k-th pair's decision (pairs in ``combinations`` order;
    positive votes for the second class).  As in LIBSVM, each class's score is its number
    of votes plus its summed confidence squashed into (-1/3, 1/3), so that the argmax
    follows the votes and only breaks ties by confidence.
    """
    n = decisions.shape[0]
    votes = np.zeros((n, n_classes))
    confidence = np.zeros((n, n_classes))
    for k, (i, j) in enumerate(combinations(range(n_classes), 2)):
        positive = decisions[:, k] > 0
        votes[:, j] += positive
        votes[:, i] += ~positive
        confidence[:, j] += decisions[:, k]
        confidence[:, i] -= decisions[:, k]
    return votes + confidence / (3 * (np.abs(confidence) + 1))


class BaseCSVM(ClassifierMixin, BaseEstimator):
    """Common base of :class:`~csvm.KernelCSVM` and :class:`~csvm.LinearCSVM`.

    Subclasses define ``_parameter_constraints`` (from :data:`COMMON_CONSTRAINTS`),
    optionally ``_check_dependent_params()``, and
    ``_fit_binary(X, y, rng, recorder) -> model`` where ``model`` has ``filters``
    (k, C, p, q), ``history`` and ``decision_function(X)``; a DivergenceError raised there
    must carry the best model so far as its ``model`` attribute.
    """

    _model_name = ""
    _event_kind = ""  # the ``kind`` of the step events in history_ (csvm.events)

    # -- input handling -------------------------------------------------------------------
    def _images(self, X: Any, *, reset: bool) -> np.ndarray:
        return check_images(self, X, reset=reset)

    def _check_params(self) -> None:
        """Check every parameter: its own range (``_parameter_constraints``), then the
        rules that tie parameters together (``_check_dependent_params``)."""
        self._validate_params()
        self._check_dependent_params()

    def _check_dependent_params(self) -> None:
        """Rules between parameters that a per-parameter table cannot state."""

    def _resolve_filters(self, image_shape: tuple[int, ...]) -> None:
        """Set ``filter_shape_`` (and the checked ``init_filters``) for these images."""
        self._start_filters = None
        if self.init_filters is not None:
            self._start_filters = check_init_filters(
                self.init_filters, self.n_filters, image_shape[0], self.filter_shape
            )
            self.filter_shape_ = tuple(int(s) for s in self._start_filters.shape[-2:])
        else:
            self.filter_shape_ = resolve_filter_shape(self.filter_shape, image_shape)
        map_shape(image_shape[-2:], self.filter_shape_)

    def _first_filters(self, rng: np.random.Generator, n_channels: int) -> np.ndarray:
        """``init_filters`` when given, else uniform random weights with unit L1 norm: each
        map starts as a local weighted average of the image, the scale at which the
        thesis's eta = 0.1 works."""
        if self._start_filters is not None:
            return self._start_filters.copy()
        filters = rng.random((int(self.n_filters), n_channels, *self.filter_shape_))
        return filters / np.abs(filters).sum()

    # -- fitting --------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any, callback: Callback | None = None) -> BaseCSVM:
        """Learn the filters and the SVM(s).

        Parameters
        ----------
        X : array of shape (n, H*W), (n, H, W) or (n, C, H, W)
            Training images, ideally scaled to [0, 1].
        y : array of shape (n,)
            Class labels; two or more classes.
        callback : callable, optional
            Called once per recorded step with the record (see :mod:`csvm.events`) plus
            the current ``"filters"``; returning ``False`` stops training cleanly.

        Returns
        -------
        self

        Raises
        ------
        DivergenceError
            When training diverges; the estimator keeps the best state so far and can
            still predict.
        """
        self._check_dependent_params()
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None."
            )
        X4 = self._images(X, reset=True)
        y = column_or_1d(y, warn=True)
        if len(y) != len(X4):
            raise ValueError(f"y has {len(y)} labels for {len(X4)} images: give one per image.")
        check_classification_targets(y)
        self._resolve_filters(X4.shape[1:])
        self.classes_ = np.unique(y)
        if len(self.classes_) < 2:
            raise ValueError(
                f"y holds one class only ({self.classes_[0]!r}): training needs examples of "
                "at least two classes."
            )
        tasks = binary_tasks(y, self.classes_, self.multi_class)
        seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(len(tasks))]
        stop = threading.Event()

        def run(k: int) -> tuple[Any, DivergenceError | None, bool]:
            task = tasks[k]
            pair = [v.item() if hasattr(v, "item") else v for v in task["pair"]]
            recorder = Recorder(
                callback,
                {
                    "model": self._model_name,
                    "classifier": k,
                    "pair": pair,
                    "n_iter": int(self.n_iter),
                },
                kind=self._event_kind,
                should_stop=stop.is_set,
            )
            try:
                model = self._fit_binary(X4[task["index"]], task["y"], rngs[k], recorder)
                error = None
            except DivergenceError as exc:
                model, error = exc.model, exc
            if recorder.stopped:
                stop.set()
            return model, error, recorder

        results = Parallel(n_jobs=self.n_jobs, prefer="threads")(
            delayed(run)(k) for k in range(len(tasks))
        )
        self.estimators_ = [model for model, _, _ in results]
        self.history_ = [event for _, _, rec in results for event in rec.history]
        self.stopped_ = any(rec.stopped for _, _, rec in results)
        filters = np.stack([m.filters for m in self.estimators_])
        self.filters_ = filters[:, :, 0] if filters.shape[2] == 1 else filters
        errors = [err for _, err, _ in results if err is not None]
        if errors:
            raise errors[0]
        return self

    # -- prediction -----------------------------------------------------------------------
    def decision_function(self, X: Any) -> np.ndarray:
        """Signed distances: shape (n,) for two classes (positive means ``classes_[1]``),
        else (n, n_classes) (one-vs-one votes plus confidence, or one-vs-rest scores)."""
        check_is_fitted(self, "estimators_")
        X4 = self._images(X, reset=False)
        decisions = np.column_stack([m.decision_function(X4) for m in self.estimators_])
        if len(self.classes_) == 2:
            return decisions[:, 0]
        if self.multi_class == "ovo":
            return ovo_decision(decisions, len(self.classes_))
        return decisions

    def predict(self, X: Any) -> np.ndarray:
        """Class labels of the images in X."""
        decision = self.decision_function(X)
        if decision.ndim == 1:
            return self.classes_[(decision > 0).astype(int)]
        return self.classes_[np.argmax(decision, axis=1)]

    def transform(self, X: Any) -> np.ndarray:
        """Feature maps: (n, n_filters, H', W') for two classes, else
        (n, n_classifiers, n_filters, H', W')."""
        check_is_fitted(self, "estimators_")
        X4 = self._images(X, reset=False)
        maps = np.stack(
            [correlate(X4, m.filters.astype(np.float32)) for m in self.estimators_], axis=1
        )
        return maps[:, 0] if len(self.estimators_) == 1 else maps

    @property
    def support_(self) -> np.ndarray:
        """Indices of the support vectors in the training set (two-class problems)."""
        check_is_fitted(self, "estimators_")
        return self.estimators_[0].support

    @property
    def dual_coef_(self) -> np.ndarray:
        """``a_i = alpha_i y_i`` of the support vectors (two-class problems)."""
        check_is_fitted(self, "estimators_")
        return self.estimators_[0].dual_coef

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        # transform() gives feature maps; they keep the input's float precision.
        tags.transformer_tags = TransformerTags(preserves_dtype=["float32"])
        return tags
