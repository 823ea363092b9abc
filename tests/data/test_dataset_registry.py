"""A built-in dataset is one registry entry: its loader in ``DATASETS`` is all it takes."""

import numpy as np

from csvm.data import load_pair, registry
from csvm.data.registry import DatasetSpec, list_datasets, offline_arrays


def _tiny() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(2), 50)
    X = rng.random((100, 1, 6, 6), dtype=np.float32)
    X[y == 1, :, 2:4, :] = 1.0  # a bar: the classes differ
    return X, y.astype(np.int64)


def test_a_registered_built_in_dataset_is_listed_split_and_loaded(monkeypatch):
    entry = DatasetSpec("tiny", "a test set", (1, 6, 6), ("dark", "bar"), arrays=_tiny)
    monkeypatch.setitem(registry.DATASETS, "tiny", entry)
    registry.offline_split.cache_clear()
    try:
        listed = {d["name"]: d for d in list_datasets()}
        assert listed["tiny"]["available"]
        assert registry.fetch_command("tiny") == ""
        assert offline_arrays("tiny")[0].shape == (100, 1, 6, 6)
        pair = load_pair("tiny", "dark", "bar")
        assert set(np.unique(pair.y_train)) == {-1, 1}
        assert len(pair.y_train) + len(pair.y_val) + len(pair.y_test) == 100
    finally:
        registry.offline_split.cache_clear()
