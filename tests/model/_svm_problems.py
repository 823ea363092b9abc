"""Small two-class problems on which a solver is compared with LIBSVM: a kernel's
parameters and a labelling rule it can follow (the linear rule for the linear kernel, a
circle otherwise)."""

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
