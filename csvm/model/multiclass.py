"""Shared estimator machinery: input checks, one-vs-one / one-vs-rest, parallel sub-problems.

Both CSVMs learn one filter set per binary sub-problem (the thesis learns "a different
filter for each pair of targets").  The sub-problems run in a joblib thread pool (``n_jobs``
threads, one BLAS thread each): LIBSVM, BLAS and the numpy kernels release the GIL, and
threads let the callbacks of every sub-problem reach the caller live.  Inside
:func:`csvm.parallel.backend` they run on a Dask cluster instead, with the same results;
there callbacks receive each sub-problem's events when it finishes, not live.
Prediction evaluates all sub-problems at once (:mod:`csvm.model.prediction`).
"""

from __future__ import annotations

import threading
from itertools import combinations
from numbers import Integral
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin, clone
from sklearn.utils import TransformerTags, check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from csvm.events import Callback, Recorder
from csvm.exceptions import CSVMError, DivergenceError
from csvm.model._sklearn import StrOptions, fit_context
from csvm.model.conv import map_shape
from csvm.model.prediction import decisions as batched_decisions
from csvm.model.prediction import labels_from_decision, stacked_correlate
from csvm.model.validation import (
    Shape,
    Whole,
    check_images,
    check_init_filters,
    check_two_classes,
    resolve_filter_shape,
)
from csvm.parallel import current_client, run_tasks

__all__ = ["COMMON_CONSTRAINTS", "BaseCSVM", "binary_tasks", "ovo_decision"]

#: Constraints of the parameters every CSVM has; each estimator's ``_parameter_constraints``
#: table starts from these.
COMMON_CONSTRAINTS: dict[str, list[Any]] = {
    "image_shape": [None, Shape((2, 3), "a tuple (H, W) or (C, H, W) of positive integers")],
    "filter_shape": [None, Shape((2,), "a tuple (p, q) of positive integers")],
    "n_filters": [Whole(1, 256, closed="both")],
    "n_iter": [Whole(1, 100_000, closed="both")],
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


def _fit_task(
    estimator: BaseCSVM,
    X4: np.ndarray,
    y: np.ndarray,
    rng: np.random.Generator,
    base: dict[str, Any],
    collect: bool,
) -> tuple[Any, DivergenceError | None, list, bool, list]:
    """One sub-problem in a worker process: model, error, history, stopped, and the
    callback events (with their filters) to replay in the caller."""
    events: list[dict[str, Any]] = []
    recorder = Recorder(events.append if collect else None, base, kind=estimator._event_kind)
    try:
        model, error = estimator._fit_binary(X4, y, rng, recorder), None
    except DivergenceError as exc:
        model, error = exc.model, exc
    return model, error, recorder.history, recorder.stopped, events


class BaseCSVM(ClassifierMixin, TransformerMixin, BaseEstimator):
    """Common base of :class:`~csvm.KernelCSVM` and :class:`~csvm.LinearCSVM`.

    Subclasses define ``_parameter_constraints`` (from :data:`COMMON_CONSTRAINTS`),
    optionally ``_check_dependent_params()``, and
    ``_fit_binary(X, y, rng, recorder) -> model`` where ``model`` has ``filters``
    (k, C, p, q), ``history`` and ``decision_function(X)``; a DivergenceError raised there
    must carry the best model so far as its ``model`` attribute.

    Fitted attributes of the sub-problems (one binary SVM per classifier):

    ``pairs_``
        (negative, positive) class of each classifier; "rest" in one-vs-rest.
    ``support_``, ``dual_coef_``
        Two classes: the support vectors' row indices in the training set and their
        ``a_i = alpha_i y_i``.  More classes: a list with one such array per classifier.
    ``n_support_``
        Support vectors per classifier, shape (n_classifiers,).
    ``intercept_``
        Two classes: the bias b; more: an array (n_classifiers,).
    ``coef_`` (L-CSVM only)
        Two classes: w, the SVM weights on the feature maps; more: (n_classifiers, D).
        A K-CSVM has none (its weights live in the kernel's feature space), as in
        scikit-learn's SVC with a non-linear kernel.
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

    #: Attributes that fit() resolves before dispatching and a worker's clone needs.
    _resolved_for_workers: tuple[str, ...] = ()

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
    @fit_context(prefer_skip_nested_validation=True)
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
            the current ``"filters"``; returning ``False`` stops training cleanly.  On a
            Dask cluster (:func:`csvm.parallel.backend`) the events of a sub-problem
            arrive together when it finishes, and a stop cancels the sub-problems not
            yet finished and raises CSVMError (there is no model to keep).

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
        check_two_classes(self.classes_)
        tasks = binary_tasks(y, self.classes_, self.multi_class)
        seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(len(tasks))]
        bases = [
            {
                "model": self._model_name,
                "classifier": k,
                "pair": [v.item() if hasattr(v, "item") else v for v in task["pair"]],
                "n_iter": int(self.n_iter),
            }
            for k, task in enumerate(tasks)
        ]
        if current_client() is not None and len(tasks) > 1:
            results = self._fit_on_cluster(X4, tasks, rngs, bases, callback)
        else:
            results = self._fit_in_threads(X4, tasks, rngs, bases, callback)
        self.estimators_ = [model for model, _, _, _ in results]
        self.history_ = [event for _, _, history, _ in results for event in history]
        self.stopped_ = any(stopped for _, _, _, stopped in results)
        filters = np.stack([m.filters for m in self.estimators_])
        self.filters_ = filters[:, :, 0] if filters.shape[2] == 1 else filters
        self._set_sub_problem_attributes(tasks)
        errors = [err for _, err, _, _ in results if err is not None]
        if errors:
            raise errors[0]
        return self

    def _fit_in_threads(self, X4, tasks, rngs, bases, callback) -> list[tuple]:
        """Sub-problems in local threads; callbacks stream live and can stop them all."""
        stop = threading.Event()

        def run(k: int) -> tuple[Any, DivergenceError | None, list, bool]:
            recorder = Recorder(callback, bases[k], kind=self._event_kind, should_stop=stop.is_set)
            try:
                model = self._fit_binary(X4[tasks[k]["index"]], tasks[k]["y"], rngs[k], recorder)
                error = None
            except DivergenceError as exc:
                model, error = exc.model, exc
            if recorder.stopped:
                stop.set()
            return model, error, recorder.history, recorder.stopped

        if len(tasks) == 1:  # one binary problem: BLAS's own threads are the parallelism
            return [run(0)]
        return run_tasks(run, [(k,) for k in range(len(tasks))], self.n_jobs)

    def _fit_on_cluster(self, X4, tasks, rngs, bases, callback) -> list[tuple]:
        """Sub-problems on the Dask cluster of :func:`csvm.parallel.backend`.

        Each worker gets only its sub-problem's rows.  Callback events cannot stream from
        another process: they come back with the sub-problem and are replayed, in order,
        as each one finishes; returning False cancels the sub-problems not yet started.
        """
        worker = clone(self)
        # What fit() resolved before dispatching: the workers get an unfitted clone.
        worker._image_shape, worker.n_features_in_ = self._image_shape, self.n_features_in_
        worker._start_filters, worker.filter_shape_ = self._start_filters, self.filter_shape_
        # A subclass's own resolved state (the K-CSVM's stack of layers) travels too.
        for name in self._resolved_for_workers:
            setattr(worker, name, getattr(self, name))
        collect = callback is not None
        args = [
            (worker, X4[t["index"]], t["y"], rngs[k], bases[k], collect)
            for k, t in enumerate(tasks)
        ]

        def replay(k: int, result: tuple) -> bool:
            answers = [callback(event) for event in result[4]] if collect else []
            return not any(answer is False for answer in answers)

        results = run_tasks(_fit_task, args, self.n_jobs, on_result=replay)
        if any(r is None for r in results):
            done = sum(r is not None for r in results)
            raise CSVMError(
                f"Training stopped by the callback after {done} of {len(results)} "
                "sub-problems had finished on the cluster; the others were cancelled, so "
                "there is no model. Locally (outside csvm.parallel.backend) a stop keeps "
                "every sub-problem's current state."
            )
        return [(model, error, history, stopped) for model, error, history, stopped, _ in results]

    # -- prediction -----------------------------------------------------------------------
    def decision_function(self, X: Any) -> np.ndarray:
        """Signed distances: shape (n,) for two classes (positive means ``classes_[1]``),
        else (n, n_classes) (one-vs-one votes plus confidence, or one-vs-rest scores).

        Parameters
        ----------
        X : array-like of shape (n, H*W), (n, H, W) or (n, C, H, W)
            As ``fit`` took them.

        Returns
        -------
        ndarray of shape (n,) or (n, n_classes)
            As described above.
        """
        check_is_fitted(self, "estimators_")
        X4 = self._images(X, reset=False)
        # All sub-problems at once (csvm.model.prediction): one BLAS product per chunk of rows
        # instead of one correlation and one kernel per sub-problem; same signs.
        decisions = batched_decisions(self.estimators_, X4)
        if len(self.classes_) == 2:
            return decisions[:, 0]
        if self.multi_class == "ovo":
            return ovo_decision(decisions, len(self.classes_))
        return decisions

    def predict(self, X: Any) -> np.ndarray:
        """Class labels of the images in X.

        Parameters
        ----------
        X : array-like of shape (n, H*W), (n, H, W) or (n, C, H, W)
            As ``fit`` took them.

        Returns
        -------
        ndarray of shape (n,)
            The predicted class of each image (one of ``classes_``).
        """
        decision = self.decision_function(X)  # first: it checks that the model is fitted
        return labels_from_decision(self.classes_, decision)

    def transform(self, X: Any) -> np.ndarray:
        """The feature maps of X flattened to one row per image, ``(n, n_features)``: the
        2-D table a :class:`~sklearn.pipeline.Pipeline` step passes on (the maps as images
        come from :meth:`feature_maps`).

        Parameters
        ----------
        X : array-like of shape (n, H*W), (n, H, W) or (n, C, H, W)
            As ``fit`` took them.

        Returns
        -------
        ndarray of shape (n, n_features_out)
        """
        maps = self.feature_maps(X)
        return maps.reshape(len(maps), -1)

    def feature_maps(self, X: Any) -> np.ndarray:
        """Feature maps as images: (n, n_filters, H', W') for two classes, else
        (n, n_classifiers, n_filters, H', W')."""
        check_is_fitted(self, "estimators_")
        X4 = self._images(X, reset=False)
        filters = np.stack([m.filters for m in self.estimators_])  # (m, k, C, p, q)
        n_clf, k = filters.shape[:2]
        maps = stacked_correlate(X4, filters.reshape(n_clf * k, *filters.shape[2:]))
        maps = maps.reshape(n_clf, k, *maps.shape[1:]).transpose(2, 0, 1, 3, 4)
        return np.ascontiguousarray(maps[:, 0] if n_clf == 1 else maps)

    # -- fitted attributes ----------------------------------------------------------------
    def _set_sub_problem_attributes(self, tasks: list[dict[str, Any]]) -> None:
        """Every sub-problem's support vectors, dual coefficients, bias (and w for L-CSVM).

        Two classes keep the flat layout of one binary SVM.  With more, each attribute
        holds one entry per classifier (``pairs_`` order): unlike scikit-learn's SVC, whose
        sub-problems share one feature space, every CSVM sub-problem has its own filter, so
        the same training image is a different vector in each and the per-classifier
        arrays cannot be merged into one matrix.
        """
        models = self.estimators_
        self.pairs_ = [tuple(task["pair"]) for task in tasks]
        # Support indices refer to the rows passed to fit, not to the sub-problem's rows.
        support = [
            np.asarray(task["index"])[np.asarray(m.support, dtype=np.intp)]
            for task, m in zip(tasks, models, strict=True)
        ]
        dual = [np.asarray(m.dual_coef, dtype=np.float64) for m in models]
        intercept = np.array([m.intercept for m in models], dtype=np.float64)
        self.n_support_ = np.array([len(s) for s in support], dtype=np.intp)
        if len(models) == 1:
            self.support_, self.dual_coef_, self.intercept_ = support[0], dual[0], intercept[0]
        else:
            self.support_, self.dual_coef_, self.intercept_ = support, dual, intercept
        if all(hasattr(m, "w") for m in models):
            w = np.stack([np.asarray(m.w, dtype=np.float64) for m in models])
            self.coef_ = w[0] if len(models) == 1 else w

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        # transform() gives feature maps; they keep the input's float precision.
        tags.transformer_tags = TransformerTags(preserves_dtype=["float32"])
        return tags
