"""The relative step: a fraction of the filter norm per step, halved when T rises, and one
eta that works from 600 to 11,552 MNIST images (issue 13, item 4; docs/step_size.md)."""

import numpy as np
import pytest

from csvm import DivergenceError, KernelCSVM
from tests.data.test_datasets import SHARED, needs_cifar, needs_mnist


def _blobs(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 10, 10)) * 0.6
    y = np.arange(n) % 2
    X[y == 1, 2:5, 2:5] += 0.4
    return X, y


def _moves(n, step, eta, **kw):
    """Filters seen by the callback, and the fitted model."""
    X, y = _blobs(n)
    seen = []
    clf = KernelCSVM(
        image_shape=(10, 10), filter_shape=(3, 3), step=step, eta=eta, random_state=0, **kw
    )
    clf.fit(X, y, callback=seen.append)
    return seen, clf


def test_relative_step_moves_the_filter_by_eta_times_its_norm():
    seen, _ = _moves(60, "relative", 0.1, n_iter=6)
    for before, after in zip(seen, seen[1:]):
        move = np.linalg.norm(after["filters"] - before["filters"])
        assert move == pytest.approx(before["eta"] * before["filter_norm"], rel=1e-9)


def test_relative_step_does_not_grow_with_n_where_the_constant_one_does():
    """T sums the alphas, so dT/df and the constant step grow with N; the relative one is
    eta * ||f|| at any N."""
    first = {}
    for n in (40, 320):
        for step in ("constant", "relative"):
            seen, _ = _moves(n, step, 0.01, n_iter=2)
            first[step, n] = np.linalg.norm(seen[1]["filters"] - seen[0]["filters"])
    assert first["constant", 320] > 3 * first["constant", 40]
    assert first["relative", 320] == pytest.approx(first["relative", 40], rel=1e-9)


def test_eta_is_halved_exactly_when_t_rises():
    seen, clf = _moves(60, "relative", 0.8, n_iter=12)  # large: some steps overshoot
    T = [e["objective"] for e in clf.history_]
    etas = [e["eta"] for e in clf.history_]
    rises = 0
    for t in range(len(T) - 1):
        rose = T[t + 1] > T[t]
        rises += rose
        assert etas[t + 1] == pytest.approx(etas[t] / 2 if rose else etas[t])
    assert rises >= 1  # the case was chosen so the safeguard acts


def test_relative_step_with_zero_eta_keeps_the_filter_and_refuses_a_zero_filter():
    seen, _ = _moves(40, "relative", 0.0, n_iter=3)
    np.testing.assert_array_equal(seen[0]["filters"], seen[-1]["filters"])
    X, y = _blobs(40)
    clf = KernelCSVM(image_shape=(10, 10), step="relative", n_iter=2, init_filters=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="must not be all zeros"):
        clf.fit(X, y)


def test_defaults_are_the_scale_free_ones_and_the_thesis_is_explicit():
    """KernelCSVM() steps relatively with a finite C (it must work on any data); the
    thesis's raw step and hard margin are one argument away."""
    default = KernelCSVM()
    assert (default.step, default.eta, default.C) == ("relative", 0.1, 1.0)
    thesis = _thesis_kcsvm("constant", 25)
    assert (thesis.step, thesis.eta, thesis.C) == ("constant", 0.1, None)


# --- real data (the thesis's protocol) --------------------------------------------------
def _mnist_35(n_train):
    from csvm.data import load_images, load_pair

    if n_train != "all":
        d = load_pair("mnist", 3, 5, protocol="thesis", data_dir=SHARED, n_train=n_train)
        return d.X_train, d.y_train, d.X_test, d.y_test
    # All 3s and 5s of the 60,000 training images: the "train" and "validation" splits.
    parts = [load_images("mnist", split, SHARED) for split in ("train", "validation", "test")]
    X = np.concatenate([parts[0][0], parts[1][0]])
    y = np.concatenate([parts[0][1], parts[1][1]])
    keep, keep_test = np.isin(y, (3, 5)), np.isin(parts[2][1], (3, 5))
    return X[keep], y[keep], parts[2][0][keep_test], parts[2][1][keep_test]


def _thesis_kcsvm(step, n_iter):
    return KernelCSVM(
        image_shape=(28, 28),
        filter_shape=(5, 5),
        kernel="poly",
        degree=2,
        regulariser="dfo1",
        lam=0.01,
        C=None,
        step=step,
        eta=0.1,
        n_iter=n_iter,
        random_state=0,
    )


@needs_mnist
@pytest.mark.parametrize("n_train", [600, None])  # None: the thesis's 1,895
def test_relative_step_converges_at_600_and_1895_mnist_images(n_train):
    X, y, Xt, yt = _mnist_35(n_train)
    assert len(X) == (600 if n_train else 1895)
    clf = _thesis_kcsvm("relative", 6).fit(X, y)  # raises DivergenceError on failure
    T = [e["objective"] for e in clf.history_]
    assert T[-1] < 0.5 * T[0]
    assert clf.score(Xt, yt) > 0.96


@pytest.mark.slow
@needs_mnist
def test_relative_step_does_not_diverge_on_all_11552_mnist_images_where_constant_does():
    X, y, Xt, yt = _mnist_35("all")
    assert len(X) == 11_552
    with pytest.raises(DivergenceError, match="norm-explosion|filter norm grew"):
        _thesis_kcsvm("constant", 2).fit(X, y)  # the thesis's raw eta: first step explodes
    clf = _thesis_kcsvm("relative", 5).fit(X, y)
    norms = [e["filter_norm"] for e in clf.history_]
    assert len(norms) == 5 and max(norms) < 2 * norms[0]
    assert clf.history_[-1]["objective"] < clf.history_[0]["objective"]
    assert clf.score(Xt, yt) > 0.97


@pytest.mark.slow
@needs_cifar
def test_relative_step_moves_the_filter_on_cifar10():
    """The constant step barely moves it there (T is tiny at this kernel scale)."""
    from csvm.data import load_pair

    d = load_pair("cifar10", "airplane", "automobile", protocol="thesis", data_dir=SHARED)
    clf = KernelCSVM(
        image_shape=d.X_train.shape[1:],
        filter_shape=(5, 5),
        degree=3,
        regulariser="dfo2",
        lam=0.1,
        C=1e-11,
        C_last_only=True,
        step="relative",
        eta=0.1,
        n_iter=5,
        random_state=0,
    )
    clf.fit(d.X_train, d.y_train)
    norms = [e["filter_norm"] for e in clf.history_]
    assert norms[-1] > 1.3 * norms[0]  # four steps of up to 10 % each
