"""Helpers shared by the tests/test_datasets*.py files: tiny data files written on the spot,
the location of the real files, and the isolation every dataset test needs."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import numpy as np
import pytest

from csvm import data as ds
from csvm.data.registry import CIFAR

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
needs_mnist = pytest.mark.skipif(
    not (SHARED / "mnist").is_dir(),
    reason=f"the real MNIST IDX files are not at {SHARED}/mnist (they exist only in this "
    "project's development checkout, see shared/data/README.md)",
)
needs_cifar = pytest.mark.skipif(
    not (SHARED / "cifar10" / "cifar-10-batches-py").is_dir(),
    reason=f"the real CIFAR-10 batches are not at {SHARED}/cifar10 (development checkout only)",
)


def isolate(monkeypatch, tmp_path: Path) -> None:
    """Never read or write the developer's own cache; start with cold caches."""
    monkeypatch.delenv("CSVM_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    ds.clear_cache()


def idx_header(shape: tuple[int, ...]) -> bytes:
    """The magic number and dimensions of an IDX file of unsigned bytes."""
    return bytes([0, 0, 0x08, len(shape)]) + b"".join(int(s).to_bytes(4, "big") for s in shape)


def idx_bytes(array: np.ndarray) -> bytes:
    """A whole IDX file holding ``array`` as unsigned bytes."""
    return idx_header(np.shape(array)) + np.asarray(array).astype(np.uint8).tobytes()


def idx_files(n_train: int = 30, n_test: int = 10) -> dict[str, bytes]:
    """The four MNIST-layout files, random images, labels 0..9 in turn."""
    rng = np.random.default_rng(0)
    return {
        "train-images-idx3-ubyte": idx_bytes(rng.integers(0, 256, (n_train, 28, 28))),
        "train-labels-idx1-ubyte": idx_bytes(np.arange(n_train) % 10),
        "t10k-images-idx3-ubyte": idx_bytes(rng.integers(0, 256, (n_test, 28, 28))),
        "t10k-labels-idx1-ubyte": idx_bytes(np.arange(n_test) % 10),
    }


def write_idx(folder: Path, gz: bool, dotted: bool = False, **replace: bytes) -> None:
    """Write :func:`idx_files` (with some replaced) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {**idx_files(), **replace}
    for stem, data in files.items():
        name = stem.replace("-idx", ".idx") if dotted else stem
        if gz:
            (folder / (name + ".gz")).write_bytes(gzip.compress(data))
        else:
            (folder / name).write_bytes(data)


def cifar_batch(n=20, seed=0, str_keys=False) -> dict:
    """A CIFAR-10 batch dict of ``n`` random images, labels 0..9 in turn."""
    rng = np.random.default_rng(seed)
    batch = {
        b"batch_label": b"test batch",
        b"labels": [i % 10 for i in range(n)],
        b"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
        b"filenames": [b"x.png"] * n,
    }
    return {k.decode(): v for k, v in batch.items()} if str_keys else batch


def write_cifar(folder: Path, first: bytes | None = None, str_keys=False, meta=True) -> Path:
    """Three batches (the first replaced by ``first``) and batches.meta in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, name in enumerate(["data_batch_1", "data_batch_2", "test_batch"]):
        data = pickle.dumps(cifar_batch(seed=i, str_keys=str_keys), protocol=2)
        (folder / name).write_bytes(first if first is not None and i == 0 else data)
    if meta:
        names = [n.encode() for n in CIFAR]
        meta_dict = {b"label_names": names, b"num_cases_per_batch": 20, b"num_vis": 3072}
        (folder / "batches.meta").write_bytes(pickle.dumps(meta_dict, protocol=2))
    return folder
