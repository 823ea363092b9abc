"""Learn the filters on a subsample, then solve the SVMs on every image.

Learning a K-CSVM's filters costs a kernel, an SVM solve and a gradient per step; the
final classifier needs only one kernel and one solve.  On full MNIST (about 12,000 images
per one-vs-one pair) a pooled stack of 16 filters costs minutes per pair and step, so the
filters are learned on a stratified subsample and :func:`refit_all` then solves every
sub-problem's SVM once on all of its training images with those filters fixed (the same
kernel, regulariser and C).  :func:`csvm.model.virtual.refit_virtual` can follow: the new
``support_`` indexes the full training set.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from csvm.parallel import run_tasks

__all__ = ["refit_all", "report_to", "solve_fixed", "solver_settings"]


def report_to(on_done: Callable[[int], Any] | None) -> Callable[[int, Any], None] | None:
    """:func:`csvm.parallel.run_tasks`'s ``on_result`` that tells ``on_done`` each finished
    sub-problem's index and never stops the others (None when there is no ``on_done``)."""
    if on_done is None:
        return None

    def report(index: int, _result: Any) -> None:
        on_done(index)

    return report


def solver_settings(estimator: Any) -> tuple[float, dict[str, Any]]:
    """A fitted K-CSVM's C (the final one when ``C_last_only``) and what a solve needs of
    it (regulariser, lam, svm_tol, max_iter, solver), so a cluster is not sent the
    estimator."""
    from csvm.model.kernelised import HARD_MARGIN_C
    from csvm.model.regularisers import check_regulariser

    C = HARD_MARGIN_C if estimator.C is None else float(estimator.C)
    return C, {
        "regulariser": check_regulariser(estimator.regulariser),
        "lam": float(estimator.lam),
        "svm_tol": estimator.svm_tol,
        "max_iter": estimator.svm_max_iter,
        "solver": estimator.solver,
    }


def solve_fixed(model: Any, images: np.ndarray, labels: np.ndarray, C: float, solver: dict):
    """One sub-problem's SVM on ``images`` (labels +-1) with its learned filters fixed:
    the solved state and its kernel / SVM seconds.

    With ``solver["solver"]`` "auto" (the estimator's default), a problem of more than
    :data:`csvm.model.kernel_state.WARM_FROM` images is solved by the warm solver from
    zero, which forms only the kernel columns it visits: on MNIST 3 v 5's 11,552 images and
    the ten-class stack's filters, 3.0 CPU s against LIBSVM's 10.9 on the whole kernel
    (1 GiB in float64), the same support vectors to one and T to 3e-7 (docs/benchmarks.md).
    """
    from csvm.model.kernel_state import resolve_solver, solve_state

    choice = resolve_solver(solver.get("solver", "libsvm"), len(images))

    state, timings = solve_state(
        images,
        labels,
        np.asarray(model.theta, dtype=np.float64),
        model.kernel_params,
        C,
        solver["regulariser"],
        solver["lam"],
        solver["svm_tol"],
        max_iter=solver["max_iter"],
        network=model.network,
        solver=choice,
    )
    # The support vectors' kernel serves only a filter step, and none follows: 45 of
    # them held ~3 GB on full MNIST with 8 virtual shifts.
    state.K_sv = np.empty((0, 0))
    return state, timings


def refit_all(
    estimator: Any,
    X: Any,
    y: Any,
    n_jobs: int | None = None,
    on_done: Callable[[int], Any] | None = None,
) -> Any:
    """Solve every sub-problem's SVM again on ``X, y`` with its learned filters fixed.

    Parameters
    ----------
    estimator : KernelCSVM
        Fitted (on a subsample of ``X`` or on other images of the same classes).
    X : array-like
        Training images, shaped as for ``fit``.
    y : array-like
        Their labels: the classes the estimator was fitted on, each present.
    n_jobs : int, optional
        Sub-problems solved at once (threads; a cluster inside
        :func:`csvm.parallel.backend`).
    on_done : callable, optional
        Called with each sub-problem's index as it finishes (a progress bar).

    Returns
    -------
    estimator
        Changed in place: new ``estimators_``, ``support_`` (rows of ``X``),
        ``dual_coef_``, ``intercept_`` and ``n_support_``; ``refit_timings_`` holds each
        sub-problem's kernel and SVM seconds.  It predicts, but takes no further filter
        step (the sub-problems keep no support-vector kernel).

    Examples
    --------
    >>> import numpy as np
    >>> from csvm import KernelCSVM
    >>> from csvm.model.refit import refit_all
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((60, 8, 8)).astype(np.float32)
    >>> y = np.repeat([0, 1], 30)
    >>> X[y == 1, 2:6, 2:6] += 1.0
    >>> clf = KernelCSVM(filter_shape=(3, 3), kernel="rbf", gamma=0.1, n_iter=2)
    >>> clf = refit_all(clf.fit(X[::3], y[::3]), X, y)
    >>> int(clf.support_.max()) < len(y)
    True
    """
    from csvm.model.kernelised import KernelCSVM
    from csvm.model.multiclass import binary_tasks

    if not isinstance(estimator, KernelCSVM):
        raise TypeError(f"refit_all needs a fitted KernelCSVM, got {type(estimator).__name__}.")
    check_is_fitted(estimator, "estimators_")
    X4 = estimator._images(X, reset=False)
    y = np.asarray(y)
    if len(y) != len(X4):
        raise ValueError(f"X has {len(X4)} images but y has {len(y)} labels.")
    missing = set(estimator.classes_.tolist()) - set(np.unique(y).tolist())
    extra = set(np.unique(y).tolist()) - set(estimator.classes_.tolist())
    if missing or extra:
        raise ValueError(
            f"y must hold exactly the fitted classes {estimator.classes_.tolist()}: "
            f"missing {sorted(missing)}, unknown {sorted(extra)}."
        )
    tasks = binary_tasks(y, estimator.classes_, estimator.multi_class)
    C, solver = solver_settings(estimator)
    args = [
        (model, X4[task["index"]], task["y"], C, solver)
        for model, task in zip(estimator.estimators_, tasks, strict=True)
    ]
    results = run_tasks(solve_fixed, args, n_jobs, on_result=report_to(on_done))
    estimator.estimators_ = [state for state, _ in results]
    estimator.refit_timings_ = [timings for _, timings in results]
    estimator._set_sub_problem_attributes(tasks)
    return estimator
