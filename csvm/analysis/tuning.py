"""Baselines tuned on the validation split, with a stated budget of fits.

A K-CSVM whose kernel was chosen for it compared with a plain SVM that keeps the K-CSVM's
own γ or degree flatters the K-CSVM: the plain SVM was never given the chance to choose its
settings.  These functions give each baseline that chance, on the validation images only:

* :func:`tune_plain_svm` — C and γ (RBF), C and the degree (polynomial) or C alone (linear),
  a grid of at most ``budget`` SVM fits.  The default budget, 25 fits, is one plain-SVM fit
  per SVM solve of a 25-iteration K-CSVM (thesis tables 4.1 and 4.4), so neither side gets
  more solves of the same problem than the other.
* :func:`tune_cnn` — the learning rate and the number of epochs of :class:`SmallCNN`:
  ``budget`` training runs (one per learning rate), each scored on the validation images
  after every epoch count in the grid, so the epoch axis costs no extra runs.

Every function takes the training and validation arrays only: the test images cannot be
looked at.  Each returns a :class:`TuningResult` with the chosen parameters, every grid cell
with its validation accuracy, and the chosen model refitted on the training images.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from csvm.exceptions import CSVMWarning, DivergenceError
from csvm.model.kernel_registry import Kernel, get_kernel
from csvm.model.kernels import KernelSpec, from_dots

__all__ = [
    "CNN_BUDGET",
    "SVM_BUDGET",
    "TuningResult",
    "svm_grid",
    "tune_cnn",
    "tune_plain_svm",
]

#: Plain-SVM fits: one per SVM solve of the thesis's 25-iteration K-CSVM.
SVM_BUDGET = 25
#: CNN training runs (learning rates), each to the largest epoch count of the grid.
CNN_BUDGET = 5
#: LIBSVM iterations per fit: a hard margin on data that are not separable would otherwise
#: run for hours.  A fit that stops here is flagged ``converged=False`` in the grid.
SVM_MAX_ITER = 1_000_000
_HARD_MARGIN_C = 1e10  # csvm.model.kernelised.HARD_MARGIN_C, without importing the estimator


@dataclass
class TuningResult:
    """What a tuning run chose, and why.

    Attributes
    ----------
    model : {"svm", "cnn"}
    params : dict
        The chosen parameters (``C=None`` is the hard margin).
    val_accuracy : float
        The chosen cell's validation accuracy (the grid's maximum).
    grid : list of dict
        Every cell scored: its parameters, ``val_accuracy`` and flags (``converged`` for
        the SVM, ``diverged`` for the CNN).
    estimator : object
        The chosen model refitted on the training images (a ``Pipeline`` for the SVM, a
        :class:`~csvm.model.baselines.SmallCNN`).
    budget : int
        The largest number of fits allowed.
    n_fits : int
        Fits the search made (at most ``budget``); the refit is one more.
    seconds : float
        Wall-clock time of the search and the refit together.
    """

    model: str
    params: dict[str, Any]
    val_accuracy: float
    grid: list[dict[str, Any]]
    estimator: Any = field(repr=False)
    budget: int
    n_fits: int
    seconds: float

    def summary(self) -> dict[str, Any]:
        """Everything but the fitted model, as plain (JSON-ready) values."""
        return {
            "model": self.model,
            "params": dict(self.params),
            "val_accuracy": self.val_accuracy,
            "grid": [dict(cell) for cell in self.grid],
            "budget": self.budget,
            "n_fits": self.n_fits,
            "seconds": self.seconds,
        }


# -- plain SVM ----------------------------------------------------------------------------
def _split_budget(budget: int, second_axis: bool) -> tuple[int, int]:
    """(number of C values, number of values of the second axis) within ``budget``."""
    if not second_axis:
        return budget, 1
    n_second = min(5, max(1, int(np.sqrt(budget))))
    return budget // n_second, n_second


def _typical_kernel_value(sq_norms: np.ndarray, spec: KernelSpec) -> float:
    """The median of K(x, x) over the training images: C is meaningful relative to it."""
    sq = sq_norms[:, None]
    return float(np.median(from_dots(sq.copy(), spec, sq, sq)))


def svm_grid(
    X_train: np.ndarray,
    *,
    kernel: str = "rbf",
    degree: int = 2,
    gamma: float | None = None,
    coef0: float = 1.0,
    budget: int = SVM_BUDGET,
) -> list[dict[str, Any]]:
    """The default candidate settings of :func:`tune_plain_svm` (at most ``budget``).

    The second axis (RBF γ or the polynomial degree) takes up to 5 values: γ from a tenth
    to ten times ``gamma`` (default: scikit-learn's "scale", ``1 / (D var(X))``) on a log
    scale, or degrees 1, 2, ….  C takes the remaining factor of the budget: decades from
    ``0.1 / K`` upwards, ``K`` the median of ``K(x, x)`` over the training images (so the
    grid means the same at any kernel scale), and always the hard margin (``C=None``).

    Returns
    -------
    list of dict
        Each with ``kernel``, ``degree``, ``gamma``, ``coef0`` and ``C``; ordered simplest
        first (smaller γ or degree, then smaller C), the order ties are broken in.
    """
    budget = _check_budget(budget)
    entry = get_kernel(kernel)  # a ValueError naming the kernels for an unknown one
    kernel = entry.name
    X = np.asarray(X_train, dtype=np.float64).reshape(len(X_train), -1)
    n_C, n_second = _split_budget(budget, entry.tuned is not None)
    if gamma is None:
        gamma = _default_gamma(X, entry)
    if entry.tuned == "gamma":
        spread = np.linspace(-1, 1, n_second) if n_second > 1 else np.zeros(1)
        seconds = [{"gamma": float(gamma * 10**s), "degree": degree} for s in spread]
    elif entry.tuned == "degree":
        seconds = [{"gamma": float(gamma), "degree": d} for d in range(1, n_second + 1)]
    else:
        seconds = [{"gamma": float(gamma), "degree": degree}]
    sq = np.einsum("ij,ij->i", X, X)
    cells = []
    for second in seconds:
        spec = KernelSpec(kernel, second["degree"], second["gamma"], coef0)
        scale = _typical_kernel_value(sq, spec)
        Cs = [float(10.0 ** (k - 1) / max(scale, 1e-300)) for k in range(n_C - 1)]
        for C in [*Cs, None]:
            cells.append({"kernel": kernel, **second, "coef0": float(coef0), "C": C})
    return cells


def _default_gamma(X: np.ndarray, entry: Kernel) -> float:
    """scikit-learn's "scale" ``1 / (D var(X))`` where γ is the tuned axis (RBF), else 1."""
    if entry.tuned == "gamma":
        return 1.0 / (X.shape[1] * float(X.var()) or 1.0)
    return 1.0


def _check_budget(budget: Any) -> int:
    if isinstance(budget, bool) or not isinstance(budget, int | np.integer) or budget < 1:
        raise ValueError(f"budget must be a whole number of fits >= 1, got {budget!r}.")
    return int(budget)


def _kernels_from_gram(G_tt, G_vt, sq_t, sq_v, cell):
    """Training and validation kernels of one cell from the shared Gram matrices."""
    spec = KernelSpec.of(cell)
    cols = sq_t[None, :]
    K_tt = from_dots(G_tt.copy(), spec, sq_t[:, None], cols)
    K_vt = from_dots(G_vt.copy(), spec, sq_v[:, None], cols)
    return K_tt, K_vt


def _svc(cell: dict[str, Any], **kwargs) -> SVC:
    C = _HARD_MARGIN_C if cell["C"] is None else float(cell["C"])
    return SVC(C=C, max_iter=SVM_MAX_ITER, **kwargs)


def _score_svm_grid(Xt, Xv, y_train, y_val, cells, fixed, callback) -> list[dict[str, Any]]:
    """Validation accuracy of every cell; a warning if some fits hit LIBSVM's bound."""
    # One Gram matrix serves every cell: each fit then costs only LIBSVM's own time.
    G_tt, G_vt = Xt @ Xt.T, Xv @ Xt.T
    sq_t, sq_v = np.einsum("ij,ij->i", Xt, Xt), np.einsum("ij,ij->i", Xv, Xv)
    scored = []
    for cell in cells:
        cell = {**fixed, **cell}
        K_tt, K_vt = _kernels_from_gram(G_tt, G_vt, sq_t, sq_v, cell)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            svc = _svc(cell, kernel="precomputed").fit(K_tt, y_train)
        converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
        accuracy = float(np.mean(svc.predict(K_vt) == y_val))
        scored.append({**cell, "val_accuracy": accuracy, "converged": converged})
        if callback is not None:
            callback(dict(scored[-1]))
    if not all(c["converged"] for c in scored):
        warnings.warn(
            f"{sum(not c['converged'] for c in scored)} of {len(scored)} SVM fits stopped at "
            f"LIBSVM's {SVM_MAX_ITER:,} iterations without converging (a hard margin on "
            "data that are not separable, or unscaled inputs); they are flagged "
            "converged=False in the grid.",
            ConvergenceWarning,
            stacklevel=3,
        )
    return scored


def _refit_svm(params: dict[str, Any], Xt: np.ndarray, y_train: np.ndarray):
    """The chosen cell refitted on raw pixels: ``FlattenImages`` + ``SVC``."""
    from sklearn.pipeline import Pipeline

    from csvm.model.plain_svm import FlattenImages, svc_kernel

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # already reported in the grid
        svc = _svc(params, **svc_kernel(KernelSpec.of(params)))
        return Pipeline([("flatten", FlattenImages()), ("svc", svc)]).fit(Xt, y_train)


# Over 80 lines only through its numpydoc docstring: the body is about 45 lines.
def _svm_cells(Xt, grid, spec: KernelSpec, budget: int) -> list[dict[str, Any]]:
    """The cells to score: the given grid, else :func:`svm_grid`'s; within the budget."""
    cells = list(grid) if grid is not None else svm_grid(Xt, **spec, budget=budget)
    if not cells or len(cells) > budget:
        raise ValueError(
            f"The grid has {len(cells)} cells for a budget of {budget} fits: give between 1 "
            "and budget cells, or raise the budget."
        )
    return cells


def tune_plain_svm(
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_val: np.ndarray,
    y_val: np.ndarray,
    *,
    kernel: str = "rbf",
    degree: int = 2,
    gamma: float | None = None,
    coef0: float = 1.0,
    budget: int = SVM_BUDGET,
    grid: Sequence[dict[str, Any]] | None = None,
    callback: Callable[[dict[str, Any]], Any] | None = None,
) -> TuningResult:
    """Choose the plain SVM's C and γ (or degree) by validation accuracy.

    Parameters
    ----------
    X_train, y_train : arrays
        Training images (any shape ``(n, ...)``; flattened) and labels.
    X_val, y_val : arrays
        Validation images and labels: the only data the choice looks at.
    kernel : {"rbf", "poly", "linear"}
        The kernel family; tuned axes are C and γ (RBF), C and degree (poly), C (linear).
    degree, gamma, coef0 : numbers
        Fixed values of the parameters that are not tuned (see :func:`svm_grid`); ``gamma``
        is also the centre of the RBF γ axis.
    budget : int, default=SVM_BUDGET
        The most SVM fits the search may make.
    grid : sequence of dict, optional
        Explicit cells (keys as :func:`svm_grid`'s) instead of the default grid; at most
        ``budget`` of them.
    callback : callable, optional
        Called with each scored cell.

    Returns
    -------
    TuningResult
        ``estimator`` is ``FlattenImages`` + ``SVC`` on raw pixels, refitted with the chosen
        cell; ties in validation accuracy go to the earliest cell (simplest first).

    Raises
    ------
    ValueError
        When the grid is larger than the budget or empty, or the validation split is empty.
    """
    budget = _check_budget(budget)
    start = time.perf_counter()
    if len(X_val) == 0:
        raise ValueError("Tuning needs validation images; this split has none.")
    Xt = np.asarray(X_train, dtype=np.float64).reshape(len(X_train), -1)
    Xv = np.asarray(X_val, dtype=np.float64).reshape(len(X_val), -1)
    y_train, y_val = np.asarray(y_train), np.asarray(y_val)
    if gamma is None:  # scikit-learn's "scale" where γ is tuned (RBF), else the usual 1
        gamma = _default_gamma(Xt, get_kernel(kernel))
    spec = KernelSpec(kernel, degree, gamma, coef0)
    cells = _svm_cells(Xt, grid, spec, budget)
    scored = _score_svm_grid(Xt, Xv, y_train, y_val, cells, dict(spec), callback)
    best = scored[int(np.argmax([c["val_accuracy"] for c in scored]))]
    params = {k: best[k] for k in ("kernel", "degree", "gamma", "coef0", "C")}
    estimator = _refit_svm(params, Xt, y_train)
    return TuningResult(
        model="svm",
        params=params,
        val_accuracy=best["val_accuracy"],
        grid=scored,
        estimator=estimator,
        budget=budget,
        n_fits=len(scored),
        seconds=time.perf_counter() - start,
    )


# -- small CNN ----------------------------------------------------------------------------
def _score_cnn_rate(rate, epochs, cnn_params, X_train, y_train, X_val, y_val) -> list[dict]:
    """One training run at learning rate ``rate``, scored on validation after each of
    ``epochs`` (a divergence leaves the later epochs unscored)."""
    from csvm.model.baselines import SmallCNN

    cnn = SmallCNN(lr=rate, epochs=epochs[-1], **cnn_params)
    found: dict[int, float] = {}

    def score(event: dict[str, Any]) -> None:
        # params_ holds the weights after this epoch: score them before they change.
        if event["kind"] == "epoch" and event["epoch"] + 1 in epochs:
            found[event["epoch"] + 1] = float(np.mean(cnn.predict(X_val) == y_val))

    try:
        # A search tries rates that fail: the grid reports them, a warning each is noise
        # (the chosen network, refitted, still warns if it learned nothing).
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "SmallCNN learned nothing", CSVMWarning)
            cnn.fit(X_train, y_train, callback=score)
    except DivergenceError:
        pass  # the epochs it did not reach stay unscored
    return [
        {"lr": rate, "epochs": e, "val_accuracy": found.get(e), "diverged": e not in found}
        for e in epochs
    ]


def _cnn_axes(lr, lr_values, epoch_values, budget, cnn_params) -> tuple[list, list]:
    """The learning rates (a decade either side of ``lr`` by default) and epoch counts
    to try, checked against the budget."""
    if lr_values is None:
        lr_values = [float(lr * 10**s) for s in np.linspace(-1, 1, budget)] if budget > 1 else [lr]
    lr_values = [float(v) for v in lr_values]
    epochs = sorted({int(e) for e in epoch_values})
    if not lr_values or len(lr_values) > budget:
        raise ValueError(
            f"{len(lr_values)} learning rates for a budget of {budget} training runs: give "
            "between 1 and budget values, or raise the budget."
        )
    if not epochs or epochs[0] < 1:
        raise ValueError(f"epoch_values must be epoch counts >= 1, got {list(epoch_values)!r}.")
    for key in ("lr", "epochs"):
        if key in cnn_params:
            raise ValueError(f"{key} is tuned here: pass lr_values / epoch_values instead.")
    return lr_values, epochs


# Over 80 lines only through its numpydoc docstring: the body is about 45 lines.
def _best_cnn_cell(scored: list[dict[str, Any]], lr_values: list[float]) -> dict[str, Any]:
    """The scored cell with the best validation accuracy (the earliest among ties)."""
    candidates = [c for c in scored if c["val_accuracy"] is not None]
    if not candidates:
        raise DivergenceError(
            f"Every learning rate tried ({', '.join(f'{v:g}' for v in lr_values)}) diverged "
            "before its first scored epoch: try smaller learning rates.",
            cause="non-finite",
            suggested_eta=min(lr_values) / 10,
        )
    return candidates[int(np.argmax([c["val_accuracy"] for c in candidates]))]


def tune_cnn(
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_val: np.ndarray,
    y_val: np.ndarray,
    *,
    lr: float = 0.1,
    lr_values: Sequence[float] | None = None,
    epoch_values: Sequence[int] = (5, 10, 20),
    budget: int = CNN_BUDGET,
    callback: Callable[[dict[str, Any]], Any] | None = None,
    **cnn_params: Any,
) -> TuningResult:
    """Choose the small CNN's learning rate and number of epochs by validation accuracy.

    Parameters
    ----------
    X_train, y_train, X_val, y_val : arrays
        As for :func:`tune_plain_svm`.
    lr : float, default=0.1
        Centre of the default learning-rate axis: ``budget`` values from ``lr / 10`` to
        ``10 lr`` on a log scale.
    lr_values : sequence of float, optional
        Explicit learning rates (at most ``budget``).
    epoch_values : sequence of int, default=(5, 10, 20)
        Epoch counts scored: each run trains to the largest and is scored on the
        validation images after each of these epochs (training with fewer epochs gives the
        same weights: the shuffles are drawn epoch by epoch from the same seed).
    budget : int, default=CNN_BUDGET
        The most training runs the search may make.
    callback : callable, optional
        Called with each scored cell.
    **cnn_params
        Passed to :class:`~csvm.model.baselines.SmallCNN` (``image_shape``, ``hidden``,
        ``random_state``, …); not ``lr`` or ``epochs``.

    Returns
    -------
    TuningResult
        ``params`` holds ``lr`` and ``epochs``; a run that diverges scores its epochs
        after the divergence as ``None`` (never chosen).

    Raises
    ------
    ValueError
        For more learning rates than the budget, bad epoch counts or no validation images.
    """
    from csvm.model.baselines import SmallCNN

    budget = _check_budget(budget)
    start = time.perf_counter()
    if len(y_val) == 0:
        raise ValueError("Tuning needs validation images; this split has none.")
    lr_values, epochs = _cnn_axes(lr, lr_values, epoch_values, budget, cnn_params)
    y_val = np.asarray(y_val)
    scored: list[dict[str, Any]] = []
    for rate in lr_values:
        cells = _score_cnn_rate(rate, epochs, cnn_params, X_train, y_train, X_val, y_val)
        for cell in cells:
            scored.append(cell)
            if callback is not None:
                callback(dict(cell))
    best = _best_cnn_cell(scored, lr_values)
    params = {"lr": best["lr"], "epochs": best["epochs"]}
    estimator = SmallCNN(**params, **cnn_params).fit(X_train, y_train)
    return TuningResult(
        model="cnn",
        params=params,
        val_accuracy=best["val_accuracy"],
        grid=scored,
        estimator=estimator,
        budget=budget,
        n_fits=len(lr_values),
        seconds=time.perf_counter() - start,
    )
