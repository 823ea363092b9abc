"""The small CNN trained on the same split as a CSVM (numpy); the plain SVM beside it is
:func:`csvm.model.plain_svm.make_plain_svm`.

:class:`SmallCNN` is the thesis's comparison network: one (or a few) valid convolution
filters with identity activation and no subsampling, an optional hidden layer, and a
sigmoid (two classes) or softmax output, trained by mini-batch SGD with momentum.  It
shares the convolution of :mod:`csvm.model.conv`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from numbers import Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.utils import TransformerTags, check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d
from threadpoolctl import threadpool_limits

from csvm.exceptions import DivergenceError
from csvm.model._sklearn import Interval, StrOptions, fit_context
from csvm.model.cnn_advice import warn_if_nothing_learned, warn_if_unscaled
from csvm.model.cnn_ops import ACTIVATIONS, activate, activation_grad, add_scaled, sigmoid
from csvm.model.conv import correlate, correlate_transpose, map_shape
from csvm.model.validation import (
    Shape,
    Whole,
    check_images,
    check_two_classes,
    resolve_filter_shape,
)

__all__ = ["SmallCNN"]


class SmallCNN(ClassifierMixin, TransformerMixin, BaseEstimator):
    """The thesis's comparison CNN, in numpy.

    Every parameter is keyword-only and checked by ``fit`` against
    ``_parameter_constraints``.  The defaults are the thesis's network for MNIST (5x5
    filter, 500 sigmoid hidden units, lr 0.1), which expects pixels scaled to [0, 1]:
    ``fit`` warns when X's values reach beyond ±2 (on raw 0-16 digits three seeds in five
    ended near chance), and says what to change when training ends at chance.

    Parameters
    ----------
    image_shape : tuple of int or None, default=None
        Shape of one image, (H, W) or (C, H, W).  None reads it from X: 3-D/4-D input
        gives it, and a flat X of ``n_features`` is read as a square image when
        ``n_features`` is a perfect square (else as one row of pixels, with a warning).
    filter_shape : tuple of int or None, default=None
        (p, q) of each filter.  None is the thesis's 5x5 (half the image side on images
        under 9 pixels a side).
    n_filters : int, default=1
        Valid convolution filters (identity activation, no subsampling), 1 to 256.
    hidden : int or None, default=500
        Units of the hidden layer; None or 0 gives the linear CNN of table 3.1.
    activation : {"sigmoid", "relu", "tanh"}, default="sigmoid"
        Activation of the hidden layer.
    lr : float, default=0.1
        Learning rate of mini-batch SGD, in (0, 10].  The thesis's 0.1 suits MNIST's
        thousands of images; on 400 images of three digits (8x8) one seed in five ended
        at chance with it, none with 0.03.
    momentum : float, default=0.9
        Momentum of SGD, in [0, 1).
    nesterov : bool, default=True
        Nesterov's form of the momentum.
    weight_decay : float, default=1e-5
        L2 penalty ``weight_decay / 2 * ||W||^2`` on every weight (not on biases).
    epochs : int, default=10
        Passes over the training set.
    batch_size : int, default=32
        Images per SGD step.
    events_every : int, default=0
        Also report every ``events_every`` mini-batches (0: once per epoch only).
    dtype : {"float32", "float64"}, default="float32"
        Precision of the weights and the arithmetic.
    random_state : int, RandomState instance or None, default=None
        Seeds the first weights and the order of the batches.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    filters_ : ndarray of shape (1, n_filters, p, q)
        The convolution filters ((1, n_filters, C, p, q) in colour), laid out like the
        CSVMs' ``filters_``.
    filter_shape_ : tuple of int
        (p, q) used (``filter_shape`` resolved for the images).
    params_ : dict of ndarray
        Every weight and bias: ``conv_W``, ``conv_b``, ``hid_W``, ``hid_b`` (with a hidden
        layer), ``out_W``, ``out_b``.
    history_ : list of dict
        One event per epoch (``loss``, ``train_accuracy``, ``seconds``, ...), and a
        ``"divergence"`` event if training diverged.
    n_features_in_ : int
        Number of features (pixels) of X seen in ``fit``.
    stopped_ : bool
        Whether a callback stopped training before the last epoch.

    See Also
    --------
    csvm.KernelCSVM : the kernelised convolutional SVM it is compared with.
    csvm.analysis.tuning.tune_cnn : lr and epochs chosen on a validation split.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from csvm import SmallCNN
    >>> X, y = load_digits(return_X_y=True)
    >>> X = X / 16  # pixels in [0, 1], as the defaults expect
    >>> clf = SmallCNN(image_shape=(8, 8), filter_shape=(3, 3), hidden=100, random_state=0)
    >>> clf.fit(X[:500], y[:500]).filters_.shape  # ten classes, one shared filter
    (1, 1, 3, 3)
    >>> clf.score(X[500:1000], y[500:1000]) > 0.8
    True
    """

    _parameter_constraints: dict = {
        "image_shape": [None, Shape((2, 3), "a tuple (H, W) or (C, H, W) of positive integers")],
        "filter_shape": [None, Shape((2,), "a tuple (p, q) of positive integers")],
        "n_filters": [Whole(1, 256, closed="both")],
        "hidden": [None, Whole(0, 100_000, closed="both")],
        "activation": [StrOptions(set(ACTIVATIONS))],
        "lr": [Interval(Real, 0, 10, closed="right")],
        "momentum": [Interval(Real, 0, 1, closed="left")],
        "nesterov": ["boolean"],
        "weight_decay": [Interval(Real, 0, 1e6, closed="both")],
        "epochs": [Whole(1, 100_000, closed="both")],
        "batch_size": [Whole(1, None, closed="left")],
        "events_every": [Whole(0, None, closed="left")],
        "dtype": [StrOptions({"float32", "float64"})],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        image_shape: tuple[int, ...] | None = None,
        filter_shape: tuple[int, int] | None = None,
        n_filters: int = 1,
        hidden: int | None = 500,
        activation: str = "sigmoid",
        lr: float = 0.1,
        momentum: float = 0.9,
        nesterov: bool = True,
        weight_decay: float = 1e-5,
        epochs: int = 10,
        batch_size: int = 32,
        events_every: int = 0,
        dtype: str = "float32",
        random_state: Any = None,
    ):
        self.image_shape = image_shape
        self.filter_shape = filter_shape
        self.n_filters = n_filters
        self.hidden = hidden
        self.activation = activation
        self.lr = lr
        self.momentum = momentum
        self.nesterov = nesterov
        self.weight_decay = weight_decay
        self.epochs = epochs
        self.batch_size = batch_size
        self.events_every = events_every
        self.dtype = dtype
        self.random_state = random_state

    # -- input ----------------------------------------------------------------------------
    def _images(self, X: Any, *, reset: bool) -> np.ndarray:
        return check_images(self, X, reset=reset, dtype=self.dtype)

    def _check_params(self) -> None:
        """Check every parameter against ``_parameter_constraints``."""
        self._validate_params()

    # -- the network ----------------------------------------------------------------------
    def _init(self, rng: np.random.Generator, channels: int, n_out: int) -> dict:
        p, q = self.filter_shape_
        k = self.n_filters
        h2, w2 = map_shape(self._image_shape[-2:], (p, q))
        d = k * h2 * w2

        def glorot(fan_in, fan_out, shape):
            limit = np.sqrt(6.0 / (fan_in + fan_out))
            return rng.uniform(-limit, limit, shape).astype(self.dtype)

        params = {
            "conv_W": glorot(channels * p * q, k * p * q, (k, channels, p, q)),
            "conv_b": np.zeros(k, self.dtype),
        }
        width = d
        if self.hidden:
            params["hid_W"] = glorot(d, self.hidden, (d, self.hidden))
            params["hid_b"] = np.zeros(self.hidden, self.dtype)
            width = self.hidden
        params["out_W"] = glorot(width, n_out, (width, n_out))
        params["out_b"] = np.zeros(n_out, self.dtype)
        return params

    def _forward(self, params: dict, X: np.ndarray) -> tuple[np.ndarray, dict]:
        Z = correlate(X, params["conv_W"]) + params["conv_b"][None, :, None, None]
        a0 = Z.reshape(len(X), -1)
        cache = {"X": X, "a0": a0, "z_shape": Z.shape}
        a = a0
        if "hid_W" in params:
            h = a0 @ params["hid_W"] + params["hid_b"]
            a = activate(self.activation, h)
            cache.update(h=h, a1=a)
        return a @ params["out_W"] + params["out_b"], cache

    def _loss_grad(
        self, params: dict, X: np.ndarray, t: np.ndarray
    ) -> tuple[float, dict, np.ndarray]:
        """Mean loss (plus weight decay), its gradient and the logits for targets ``t``.

        ``t`` is 0/1 of shape (B,) for two classes, else one-hot (B, K).
        """
        s, cache = self._forward(params, X)
        logits = s
        B = len(X)
        if s.shape[1] == 1:
            s = s[:, 0]
            loss = float(np.mean(np.logaddexp(0, s) - t * s))
            ds = ((sigmoid(s) - t) / B)[:, None]
        else:
            shifted = s - s.max(axis=1, keepdims=True)
            log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
            loss = float(-np.mean(np.sum(t * log_p, axis=1)))
            ds = (np.exp(log_p) - t) / B
        ds = ds.astype(X.dtype, copy=False)
        wd = float(self.weight_decay)
        if wd:
            # A BLAS dot per weight array: squaring into a float64 copy of the hidden
            # layer's weights took 7 % of an epoch.
            loss += (
                0.5
                * wd
                * sum(
                    float(np.vdot(params[k].ravel(), params[k].ravel()))
                    for k in params
                    if k.endswith("_W")
                )
            )
        grads = {}
        a_last = cache.get("a1", cache["a0"])
        grads["out_W"] = a_last.T @ ds
        grads["out_b"] = ds.sum(axis=0)
        da = ds @ params["out_W"].T
        if "hid_W" in params:
            dh = da * activation_grad(self.activation, cache["h"], cache["a1"])
            grads["hid_W"] = cache["a0"].T @ dh
            grads["hid_b"] = dh.sum(axis=0)
            da = dh @ params["hid_W"].T
        dZ = da.reshape(cache["z_shape"])
        grads["conv_W"] = correlate_transpose(X, dZ, self.filter_shape_, sum_samples=True)
        grads["conv_b"] = dZ.sum(axis=(0, 2, 3))
        for key in grads:
            grads[key] = grads[key].astype(self.dtype, copy=False)
            if wd and key.endswith("_W"):
                add_scaled(grads[key], wd, params[key])
        return loss, grads, logits

    def _targets(self, y_index: np.ndarray) -> np.ndarray:
        if len(self.classes_) == 2:
            return y_index.astype(self.dtype)
        return np.eye(len(self.classes_), dtype=self.dtype)[y_index]

    # -- fitting --------------------------------------------------------------------------
    @fit_context(prefer_skip_nested_validation=True)
    def fit(
        self, X: Any, y: Any, callback: Callable[[dict], bool | None] | None = None
    ) -> SmallCNN:
        """Train by mini-batch SGD with momentum and weight decay.

        Parameters
        ----------
        X : array of shape (n, H*W), (n, C*H*W), (n, H, W) or (n, C, H, W)
            Training images; 2-D rows are read with ``image_shape``.
        y : array of shape (n,)
            Class labels (at least two classes).
        callback : callable, optional
            Called with each event dict (``model``, ``step`` "epoch" or "batch",
            ``iteration``, ``epoch``, ``loss``, ``seconds``, ``train_accuracy`` on epoch
            events, ``batch`` on batch events, and ``filters``, a copy of the conv
            filters).  Returning False stops training cleanly and sets ``stopped_``.

        Returns
        -------
        self : SmallCNN

        Raises
        ------
        DivergenceError
            When the loss becomes non-finite; the last weights with a finite loss are kept,
            so the estimator can still predict.
        ValueError
            For invalid parameters or input, with a message saying what to change.
        """
        # Mini-batch products are too small to split across cores: with two BLAS threads
        # an epoch of the thesis's network took 0.60 s here, with one 0.106 s.
        # Overflow on the way to a non-finite loss is expected and reported as a
        # DivergenceError, so numpy's own warnings would only repeat it.
        with (
            threadpool_limits(limits=1, user_api="blas"),
            np.errstate(over="ignore", invalid="ignore"),
        ):
            return self._fit(X, y, callback)

    def _fit_data(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        """The checked images (n, C, H, W) and each label's class index; sets
        ``filter_shape_`` and ``classes_``."""
        if y is None:
            raise ValueError("SmallCNN requires y to be passed, but the target y is None.")
        X4 = self._images(X, reset=True)
        y = column_or_1d(y, warn=True)
        if len(y) != len(X4):
            raise ValueError(f"y has {len(y)} labels for {len(X4)} images.")
        check_classification_targets(y)
        self.filter_shape_ = resolve_filter_shape(self.filter_shape, X4.shape[1:])
        map_shape(X4.shape[-2:], self.filter_shape_)
        warn_if_unscaled(X4, stacklevel=5)  # _fit_data, _fit, fit, the wrapper, caller
        self.classes_, y_index = np.unique(y, return_inverse=True)
        check_two_classes(self.classes_)
        return X4, y_index

    def _step(
        self,
        params: dict[str, np.ndarray],
        velocity: dict[str, np.ndarray],
        spare: dict[str, np.ndarray],
        grads: dict[str, np.ndarray],
        lr: float,
        mu: float,
    ) -> None:
        """One momentum step: the new weights go into ``spare``; ``params`` is left intact.

        ``velocity`` is updated and ``grads`` overwritten, in place.
        """
        for key, g in grads.items():
            p, v, new = params[key], velocity[key], spare[key]
            # v <- mu v - lr g, then new p = p + mu v - lr g (Nesterov, in the form
            # that needs only this gradient) or p + v, in place: fresh temporaries
            # the size of the hidden layer cost as much as the arithmetic.
            g *= lr
            v *= mu
            v -= g
            if self.nesterov:
                np.subtract(p, g, out=new)
                np.multiply(v, mu, out=g)
                new += g
            else:
                np.add(p, v, out=new)

    def _fit(self, X: Any, y: Any, callback) -> SmallCNN:
        # One SGD loop whose in-place updates share a dozen buffers (weights, spare
        # weights, velocities); the input checks and the update step are helpers.
        X4, y_index = self._fit_data(X, y)
        seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        rng = np.random.default_rng(seed)
        n_out = 1 if len(self.classes_) == 2 else len(self.classes_)
        params = self._init(rng, X4.shape[1], n_out)
        velocity = {k: np.zeros_like(v) for k, v in params.items()}
        # Two sets of weights, swapped after every step: the update writes the new weights
        # into the spare set, which leaves the previous (finite-loss) weights intact for a
        # DivergenceError without copying them each step.
        spare = {k: v.copy() for k, v in params.items()}
        targets = self._targets(y_index)
        self.params_ = params
        self.history_ = []
        self.stopped_ = False
        start = time.perf_counter()
        n = len(X4)
        batch = 0
        mu, lr = float(self.momentum), float(self.lr)
        for epoch in range(int(self.epochs)):
            order = rng.permutation(n)
            losses = []
            correct = 0
            for first in range(0, n, int(self.batch_size)):
                idx = order[first : first + int(self.batch_size)]
                loss, grads, logits = self._loss_grad(params, X4[idx], targets[idx])
                if not np.isfinite(loss) or not all(np.all(np.isfinite(g)) for g in grads.values()):
                    # The weights of the previous step still gave a finite loss.
                    self.params_ = spare
                    raise self._diverged(callback, epoch, lr, spare["conv_W"])
                self._step(params, velocity, spare, grads, lr, mu)
                params, spare = spare, params
                self.params_ = params
                losses.append(loss)
                # Accuracy of the batches as they were trained on: a whole extra forward
                # pass over the training set each epoch would cost a third of the epoch.
                guess = (logits[:, 0] > 0) if logits.shape[1] == 1 else logits.argmax(1)
                correct += int(np.sum(guess == y_index[idx]))
                batch += 1
                if self.events_every and batch % int(self.events_every) == 0:
                    if not self._emit(
                        callback,
                        {
                            "kind": "batch",
                            "step": "batch",
                            "batch": batch,
                            "iteration": epoch,
                            "epoch": epoch,
                            "epoch_progress": epoch + first / n,
                            "loss": float(np.mean(losses)),
                            "seconds": time.perf_counter() - start,
                        },
                        params,
                    ):
                        return self
            accuracy = correct / n
            if not self._emit(
                callback,
                {
                    "kind": "epoch",
                    "step": "epoch",
                    "iteration": epoch,
                    "epoch": epoch,
                    "loss": float(np.mean(losses)),
                    "train_accuracy": accuracy,
                    "seconds": time.perf_counter() - start,
                },
                params,
            ):
                return self
        self._check_learned(X4, y_index)
        return self

    def _check_learned(self, X4: np.ndarray, y_index: np.ndarray) -> None:
        """Warn when the final weights score no better than chance (csvm.model.cnn_advice)."""
        warn_if_nothing_learned(
            self.history_,
            X4,
            y_index,
            lambda: self._accuracy(X4, y_index),
            float(self.lr),
            stacklevel=5,  # this, _fit, fit, scikit-learn's fit wrapper, the caller
        )

    def _accuracy(self, X4: np.ndarray, y_index: np.ndarray) -> float:
        """Training accuracy of the current weights, in chunks (bounded memory)."""
        correct = 0
        for first in range(0, len(X4), 1024):
            s, _ = self._forward(self.params_, X4[first : first + 1024])
            guess = (s[:, 0] > 0) if s.shape[1] == 1 else s.argmax(1)
            correct += int(np.sum(guess == y_index[first : first + 1024]))
        return correct / len(X4)

    def _diverged(self, callback, epoch: int, lr: float, filters: np.ndarray) -> DivergenceError:
        """The DivergenceError to raise; its DivergenceEvent goes to history_ and callback."""
        error = DivergenceError(
            f"The CNN diverged: its loss became non-finite at epoch {epoch + 1} "
            f"with learning rate lr={lr:g}. The last finite weights were kept. "
            f"Try a smaller learning rate such as lr={lr / 10:g}.",
            cause="non-finite",
            suggested_eta=lr / 10,
        )
        event = {
            "kind": "divergence",
            "model": "cnn",
            "classifier": 0,
            "iteration": int(epoch),
            "cause": error.cause,
            "message": str(error),
            "suggested_eta": error.suggested_eta,
            "filter_norm_before": float(np.linalg.norm(filters)),
        }
        self.history_.append(event)
        if callback is not None:
            callback(dict(event))
        return error

    def _emit(self, callback, values: dict, params: dict) -> bool:
        event = {"model": "cnn", "n_iter": int(self.epochs), **values}
        if values["kind"] == "epoch":
            self.history_.append(event)
        if (
            callback is not None
            and callback({**event, "filters": params["conv_W"].copy()}) is False
        ):
            self.stopped_ = True
            return False
        return True

    # -- prediction -----------------------------------------------------------------------
    def decision_function(self, X: Any) -> np.ndarray:
        """Logits: (n,) for two classes (positive means ``classes_[1]``), else (n, K).

        Parameters
        ----------
        X : array-like of shape (n, H*W), (n, H, W) or (n, C, H, W)
            As ``fit`` took them.

        Returns
        -------
        ndarray of shape (n,) or (n, n_classes)
            As described above.
        """
        check_is_fitted(self, "params_")
        s, _ = self._forward(self.params_, self._images(X, reset=False))
        return s[:, 0] if s.shape[1] == 1 else s

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, (n, n_classes).

        Parameters
        ----------
        X : array-like of shape (n, H*W), (n, H, W) or (n, C, H, W)
            As ``fit`` took them.

        Returns
        -------
        ndarray of shape (n, n_classes)
            Columns in the order of ``classes_``.
        """
        s = self.decision_function(X).astype(np.float64)
        if s.ndim == 1:
            p = sigmoid(s)
            return np.column_stack([1 - p, p])
        e = np.exp(s - s.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def predict(self, X: Any) -> np.ndarray:
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n, H*W), (n, H, W) or (n, C, H, W)
            As ``fit`` took them.

        Returns
        -------
        ndarray of shape (n,)
            The predicted class of each image (one of ``classes_``).
        """
        s = self.decision_function(X)
        return self.classes_[(s > 0).astype(int) if s.ndim == 1 else np.argmax(s, axis=1)]

    def transform(self, X: Any) -> np.ndarray:
        """The convolution layer's maps flattened to one row per image, ``(n, n_features)``
        (the maps as images come from :meth:`feature_maps`).

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
        """Feature maps after the convolution layer, (n, n_filters, H', W')."""
        check_is_fitted(self, "params_")
        X4 = self._images(X, reset=False)
        return correlate(X4, self.params_["conv_W"]) + self.params_["conv_b"][None, :, None, None]

    @property
    def filters_(self) -> np.ndarray:
        """The convolution filters, (1, n_filters, p, q) ((1, n_filters, C, p, q) in
        colour), laid out like the CSVMs' ``filters_``."""
        check_is_fitted(self, "params_")
        f = self.params_["conv_W"][None]
        return f[:, :, 0] if f.shape[2] == 1 else f

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        tags.transformer_tags = TransformerTags(preserves_dtype=["float32"])
        return tags
