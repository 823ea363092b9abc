"""The two-layer SVM of Wiering & Schomaker ("Multi-Layer Support Vector Machines", 2014).

A hidden layer of ``n_hidden`` regression SVMs (RBF kernel K1 on the inputs) maps each
input x to ``f(x)``; one output SVM per class (one-vs-all; one for two classes) classifies
``f(x)`` with an RBF kernel K2.  Training is the chapter's min-max on the output SVMs' dual

    min_theta  sum_c max_alpha  J_c = sum_i alpha_i - 1/2 sum_ij a_i a_j K2(f_i, f_j),

with ``a_i = alpha_i y_i^c``:

1. pre-train hidden SVM h on perturbed targets ``y^c + U(-p, p)`` of class ``c = h mod
   n_classes`` (symmetry breaking, the chapter's initialisation), clipped to [-1, 1];
2. every epoch: solve each output SVM exactly (LIBSVM, ``SVC(kernel="precomputed")``; the
   chapter uses a few gradient-ascent sweeps with a bias penalty instead), then take one
   gradient step on the hidden outputs against ``sum_c dJ_c/df`` (the chapter's
   back-propagated targets ``f - mu dJ/df``, clipped to [-1, 1]) and re-fit the hidden
   SVMs (``SVR(kernel="precomputed")``) to those targets;
3. finally solve the output SVMs once more on the last hidden outputs.

For the RBF kernel ``K2 = exp(-gamma ||f_i - f_j||^2)`` (the chapter's eq. 1.15 up to the
factor 2 it folds into mu):

    dJ_c/df_i = 2 gamma a_i sum_j a_j K2_ij (f_i - f_j).
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.svm import SVC, SVR
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from csvm.model._sklearn import Interval, StrOptions, fit_context
from csvm.model.kernels import kernel_matrix
from csvm.model.validation import as_rows, check_two_classes

__all__ = ["MultiLayerSVM", "output_dual", "output_dual_gradient"]


def _rbf(A: np.ndarray, B: np.ndarray | None, gamma: float) -> np.ndarray:
    # float64 throughout: the tables are small, and predictions must not depend on batching.
    A = np.asarray(A, dtype=np.float64)
    return kernel_matrix(
        A, None if B is None else np.asarray(B, np.float64), kernel="rbf", gamma=gamma
    )


def _scale(F: np.ndarray) -> float:
    var = float(np.var(F)) * F.shape[1]
    return 1.0 / var if var > 0 else 1.0


def output_dual(F: np.ndarray, a: np.ndarray, gamma: float) -> float:
    """``J = sum|a| - 1/2 a^T K2(F) a`` of one output SVM at fixed ``a = alpha * y``."""
    K = _rbf(F, None, gamma)
    return float(np.abs(a).sum() - 0.5 * a @ K @ a)


def output_dual_gradient(F: np.ndarray, a: np.ndarray, gamma: float) -> np.ndarray:
    """``dJ/dF`` (n, d) at fixed ``a``: ``2 gamma a_i (s_i f_i - u_i)`` with
    ``s = K2 a`` and ``u_i = sum_j K2_ij a_j f_j`` (one n x n by n x d product)."""
    K = _rbf(F, None, gamma)
    s = K @ a
    u = K @ (a[:, None] * F)
    return 2.0 * gamma * a[:, None] * (s[:, None] * F - u)


class MultiLayerSVM(ClassifierMixin, BaseEstimator):
    """Two-layer SVM: regression SVMs extract features, SVMs classify them (min-max).

    Parameters
    ----------
    n_hidden : int >= 1 or None, default=None
        Hidden-layer SVMs; None gives two per class (hidden SVM h starts from class
        ``h mod n_classes``).
    gamma_hidden : "scale" or float > 0, default="scale"
        Width of the hidden layer's RBF on the inputs ("scale": ``1 / (D var(X))``).
    C_hidden : float > 0, default=1.0
        The hidden SVRs' bound on each dual coefficient (soft margin of the hidden layer).
    epsilon : float >= 0, default=0.01
        The hidden SVRs' insensitive zone; small, so that they follow the hidden step
        (0.1 ignored most steps of mu = 0.1 on Iris: 4.0 % error against 3.0 % on 20
        splits kept apart from the benchmark's).
    perturbation : float >= 0, default=0.5
        Half-width p of the uniform noise added to the pre-training targets.
    gamma_out : "scale" or float > 0, default="scale"
        Width of the output RBF on the hidden outputs; "scale" is fixed after
        pre-training at ``1 / (n_hidden var(f))``.
    C : float > 0, default=1.0
        The output SVMs' bound.
    mu : float >= 0, default=0.1
        Step of the hidden outputs against ``sum_c dJ_c/df`` (0: stacking, no min-max).
    n_epochs : int >= 0, default=10
        Min-max epochs (output solve + hidden step); 0 is the chapter's stacking baseline.
    svm_tol : float > 0, default=1e-3
        Stopping tolerance of every LIBSVM solve (hidden SVRs and output SVMs).
    random_state : int, RandomState or None, default=None
        Seeds the pre-training noise.

    Attributes
    ----------
    classes_, n_features_in_
    hidden_ : list of fitted ``SVR(kernel="precomputed")``
    output_ : list of fitted ``SVC(kernel="precomputed")``, one per class (one for two)
    gamma_hidden_, gamma_out_ : float
    n_hidden_ : int
    history_ : list of dict
        Per epoch: ``epoch``, ``dual`` (sum of the output SVMs' dual objectives after
        their solve), ``dual_after_step`` (the same alphas on the new hidden outputs),
        ``train_accuracy``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from csvm import MultiLayerSVM
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = MultiLayerSVM(random_state=0).fit(X, y)
    >>> clf.hidden_outputs(X).shape
    (150, 6)
    >>> clf.score(X, y) > 0.9
    True
    """

    _parameter_constraints: dict = {
        "n_hidden": [None, Interval(Integral, 1, None, closed="left")],
        "gamma_hidden": [StrOptions({"scale"}), Interval(Real, 0, None, closed="neither")],
        "C_hidden": [Interval(Real, 0, None, closed="neither")],
        "epsilon": [Interval(Real, 0, None, closed="left")],
        "perturbation": [Interval(Real, 0, None, closed="left")],
        "gamma_out": [StrOptions({"scale"}), Interval(Real, 0, None, closed="neither")],
        "C": [Interval(Real, 0, None, closed="neither")],
        "mu": [Interval(Real, 0, None, closed="left")],
        "n_epochs": [Interval(Integral, 0, None, closed="left")],
        "svm_tol": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        n_hidden: int | None = None,
        gamma_hidden: str | float = "scale",
        C_hidden: float = 1.0,
        epsilon: float = 0.01,
        perturbation: float = 0.5,
        gamma_out: str | float = "scale",
        C: float = 1.0,
        mu: float = 0.1,
        n_epochs: int = 10,
        svm_tol: float = 1e-3,
        random_state: int | np.random.RandomState | None = None,
    ):
        self.n_hidden = n_hidden
        self.gamma_hidden = gamma_hidden
        self.C_hidden = C_hidden
        self.epsilon = epsilon
        self.perturbation = perturbation
        self.gamma_out = gamma_out
        self.C = C
        self.mu = mu
        self.n_epochs = n_epochs
        self.svm_tol = svm_tol
        self.random_state = random_state

    # -- fitting --------------------------------------------------------------------------
    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any) -> MultiLayerSVM:
        """Pre-train the hidden SVMs, then alternate output solves and hidden steps.

        Parameters
        ----------
        X : array (n, n_features), or images (n, H, W) or (n, C, H, W), read as flat rows
        y : array (n,), two or more classes

        Returns
        -------
        self
        """
        X, y = validate_data(self, as_rows(X), y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        check_two_classes(self.classes_)
        self._X = X
        self.gamma_hidden_ = _scale(X) if self.gamma_hidden == "scale" else float(self.gamma_hidden)
        K1 = _rbf(X, None, self.gamma_hidden_)
        Y = self._targets(y)  # (n, n_outputs) of +-1
        self.n_hidden_ = int(self.n_hidden or 2 * len(self.classes_))
        rng = check_random_state(self.random_state)
        start = Y[:, np.arange(self.n_hidden_) % len(self.classes_) % Y.shape[1]]
        noise = rng.uniform(-self.perturbation, self.perturbation, start.shape)
        F = self._fit_hidden(K1, np.clip(start + noise, -1.0, 1.0))
        self.gamma_out_ = _scale(F) if self.gamma_out == "scale" else float(self.gamma_out)
        self.history_ = []
        for epoch in range(int(self.n_epochs)):
            duals = self._fit_output(F, Y)
            grad = sum(output_dual_gradient(F, a, self.gamma_out_) for a in duals)
            F = self._fit_hidden(K1, np.clip(F - self.mu * grad, -1.0, 1.0))
            self.history_.append(
                {
                    "epoch": epoch,
                    "dual": sum(self._last_duals),
                    "dual_after_step": sum(output_dual(F, a, self.gamma_out_) for a in duals),
                    "train_accuracy": float(np.mean(self._predict_F(F) == y)),
                }
            )
        self._fit_output(F, Y)
        self._F = F
        return self

    def _targets(self, y: np.ndarray) -> np.ndarray:
        """One-vs-all targets, one column per output SVM (one column for two classes)."""
        Y = np.where(y[:, None] == self.classes_[None, :], 1.0, -1.0)
        return Y[:, 1:] if len(self.classes_) == 2 else Y

    def _fit_hidden(self, K1: np.ndarray, T: np.ndarray) -> np.ndarray:
        """Fit every hidden SVR to its column of targets; their outputs on the training set."""
        self.hidden_ = [
            SVR(kernel="precomputed", C=self.C_hidden, epsilon=self.epsilon, tol=self.svm_tol).fit(
                K1, T[:, h]
            )
            for h in range(T.shape[1])
        ]
        return np.column_stack([svr.predict(K1) for svr in self.hidden_])

    def _fit_output(self, F: np.ndarray, Y: np.ndarray) -> list[np.ndarray]:
        """Solve every output SVM exactly on the hidden outputs F; their full ``a`` vectors."""
        K2 = _rbf(F, None, self.gamma_out_)
        self.output_, duals, values = [], [], []
        for c in range(Y.shape[1]):
            svc = SVC(kernel="precomputed", C=self.C, tol=self.svm_tol).fit(K2, Y[:, c])
            a = np.zeros(len(F))
            a[svc.support_] = svc.dual_coef_[0]
            # LIBSVM orders classes -1 < +1, so dual_coef_ is already alpha * y.
            self.output_.append(svc)
            duals.append(a)
            values.append(float(np.abs(a).sum() - 0.5 * a @ K2 @ a))
        self._last_duals = values
        self._train_F_for_output = F
        return duals

    # -- prediction -----------------------------------------------------------------------
    def hidden_outputs(self, X: Any) -> np.ndarray:
        """The hidden layer's outputs f(x), shape (n, n_hidden_)."""
        check_is_fitted(self, "output_")
        X = validate_data(self, as_rows(X), reset=False, dtype=np.float64)
        K1 = _rbf(X, self._X, self.gamma_hidden_)
        return np.column_stack([svr.predict(K1) for svr in self.hidden_])

    def _decision_F(self, F: np.ndarray) -> np.ndarray:
        K2 = _rbf(F, self._train_F_for_output, self.gamma_out_)
        scores = np.column_stack([svc.decision_function(K2) for svc in self.output_])
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def _predict_F(self, F: np.ndarray) -> np.ndarray:
        scores = self._decision_F(F)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def decision_function(self, X: Any) -> np.ndarray:
        """(n,) for two classes (positive: ``classes_[1]``), else (n, n_classes): each
        class's one-vs-all output SVM.

        Parameters
        ----------
        X : array-like of shape (n, n_features), or images (flattened)
            As ``fit`` took them.

        Returns
        -------
        ndarray of shape (n,) or (n, n_classes)
            As described above.
        """
        return self._decision_F(self.hidden_outputs(X))

    def predict(self, X: Any) -> np.ndarray:
        """Class labels: the output SVM with the largest score.

        Parameters
        ----------
        X : array-like of shape (n, n_features), or images (flattened)
            As ``fit`` took them.

        Returns
        -------
        ndarray of shape (n,)
            The predicted class of each image (one of ``classes_``).
        """
        return self._predict_F(self.hidden_outputs(X))
