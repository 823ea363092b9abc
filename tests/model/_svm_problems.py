"""Small two-class problems on which a solver is compared with LIBSVM: a kernel's
parameters and a labelling rule it can follow (the linear rule for the linear kernel, a
circle otherwise), and how their solutions are compared."""

import numpy as np

KERNELS = {
    "linear": {},
    "poly": {"degree": 2, "gamma": 0.5, "coef0": 1.0},
    "rbf": {"gamma": 0.5},
}
RULES = {
    "linear": lambda X: X[:, 0] + 0.5 * X[:, 1],
    "poly": lambda X: X[:, 0] ** 2 + X[:, 1] ** 2 - 1.4,
    "rbf": lambda X: X[:, 0] ** 2 + X[:, 1] ** 2 - 1.4,
}


def dual(alpha: np.ndarray, y: np.ndarray, K: np.ndarray) -> float:
    """The SVM's dual objective ``sum(alpha) - (alpha y)' K (alpha y) / 2``."""
    a = alpha * y
    return float(alpha.sum() - 0.5 * a @ K @ a)


def close(ours, theirs, rtol: float) -> None:
    """Equal to ``rtol`` relative to the reference's largest value (at least 1)."""
    ours, theirs = np.atleast_1d(ours), np.atleast_1d(theirs)
    scale = max(1.0, float(np.max(np.abs(theirs))))
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=rtol * scale)
