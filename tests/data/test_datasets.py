"""Datasets: the offline default, file formats, corrupt and hostile files, the CLI and
the thesis's exact counts on the real files."""

import os
import pickle
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import platformdirs
import pytest

from csvm import data as ds
from csvm.__main__ import main as cli_main
from csvm.data import (
    DEFAULT_DATASET,
    available,
    data_home,
    list_datasets,
    load_images,
    load_multiclass,
    load_pair,
    offline,
    registry,
)
from csvm.exceptions import DatasetError
from tests._dataset_files import (
    ROOT,
    SHARED,
    cifar_batch,
    idx_bytes,
    idx_files,
    isolate,
    needs_cifar,
    needs_mnist,
    write_cifar,
    write_idx,
)


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    isolate(monkeypatch, tmp_path)


# -- IDX ----------------------------------------------------------------------------------
@pytest.mark.parametrize("gz", [True, False])
def test_idx_files_load_raw_and_gz(tmp_path, gz):
    write_idx(tmp_path / "mnist", gz)
    d = load_pair("mnist", 3, 5, data_dir=tmp_path)
    assert d.X_train.shape == (6, 1, 28, 28) and d.X_train.dtype == np.float32
    assert d.y_train.dtype == np.int64 and set(d.y_train) == {-1, 1}
    assert 0.0 <= d.X_train.min() and d.X_train.max() <= 1.0
    assert d.counts == {"train": (3, 3), "validation": (0, 0), "test": (1, 1)}
    assert d.classes == (3, 5) and d.class_names == ("3", "5") and d.dataset == "mnist"
    # The pixels are the file's bytes / 255, in file order, -1 for a and +1 for b.
    raw = np.frombuffer(idx_files()["train-images-idx3-ubyte"], np.uint8, offset=16)
    raw = raw.reshape(30, 28, 28)
    np.testing.assert_allclose(d.X_train[0, 0], raw[3] / 255.0, rtol=1e-6)
    assert d.y_train[0] == -1 and d.y_train[1] == 1  # images 3 then 5


def test_idx_dotted_names_directly_in_data_dir(tmp_path):
    write_idx(tmp_path, gz=False, dotted=True)
    assert available("mnist", tmp_path) and available("fashion-mnist", tmp_path)
    d = load_pair("fashion-mnist", "t-shirt/top", "ANKLE BOOT", data_dir=tmp_path)
    assert d.class_names == ("T-shirt/top", "Ankle boot") and d.classes == (0, 9)


@pytest.mark.parametrize("gz", [True, False])
@pytest.mark.parametrize("case", ["truncated", "magic", "count", "label-range", "empty"])
def test_corrupt_idx_files_name_the_file(tmp_path, gz, case):
    good = idx_bytes(np.zeros((30, 28, 28)))
    role, bad = {
        "truncated": ("train-images-idx3-ubyte", good[:-100]),
        "magic": ("train-images-idx3-ubyte", b"\x01\x02" + good[2:]),
        "count": ("train-labels-idx1-ubyte", idx_bytes(np.zeros(29))),
        "label-range": ("train-labels-idx1-ubyte", idx_bytes(np.full(30, 12))),
        "empty": ("train-images-idx3-ubyte", b""),
    }[case]
    write_idx(tmp_path / "mnist", gz, **{role: bad})
    with pytest.raises(DatasetError, match=role.replace("-labels", "-(images|labels)")):
        load_pair("mnist", 3, 5, data_dir=tmp_path)


def test_broken_gzip_stream_names_the_file(tmp_path):
    write_idx(tmp_path / "mnist", gz=True)
    path = tmp_path / "mnist" / "t10k-images-idx3-ubyte.gz"
    path.write_bytes(path.read_bytes()[:-30])  # cut inside the deflate stream
    with pytest.raises(DatasetError, match="t10k-images-idx3-ubyte.gz is corrupt"):
        load_pair("mnist", 3, 5, data_dir=tmp_path)


def test_missing_files_say_which_where_and_how(tmp_path):
    with pytest.raises(DatasetError) as info:
        load_pair("mnist", 3, 5, data_dir=tmp_path)
    message = str(info.value)
    assert "train-images-idx3-ubyte.gz" in message and "t10k-labels-idx1-ubyte.gz" in message
    assert str(tmp_path / "mnist") in message and str(tmp_path) in message
    assert f"python -m csvm data fetch mnist --data-dir {tmp_path}" in message
    # Half a download: the message says what is there.
    write_idx(tmp_path / "mnist", gz=True)
    (tmp_path / "mnist" / "t10k-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(DatasetError, match="Partly there.*train-images-idx3-ubyte.gz"):
        load_pair("mnist", 3, 5, data_dir=tmp_path)
    with pytest.raises(DatasetError, match="cifar-10-batches-py.*data fetch cifar10"):
        load_pair("cifar10", 0, 1, data_dir=tmp_path)


def test_replaced_file_is_reloaded(tmp_path):
    write_idx(tmp_path / "mnist", gz=False)
    first = load_pair("mnist", 3, 5, data_dir=tmp_path)
    labels = tmp_path / "mnist" / "train-labels-idx1-ubyte"
    labels.write_bytes(idx_bytes(np.full(30, 3)))
    os.utime(labels, ns=(0, 1))  # a different mtime, as a fresh download would have
    second = load_pair("mnist", 3, 5, data_dir=tmp_path)
    assert first.counts["train"] == (3, 3) and second.counts["train"] == (30, 0)


# -- CIFAR-10 -----------------------------------------------------------------------------
@pytest.mark.parametrize("nested", [True, False])
@pytest.mark.parametrize("str_keys", [False, True])
def test_cifar_batches_in_every_colour_mode(tmp_path, nested, str_keys):
    sub = tmp_path / "cifar10" if nested else tmp_path
    write_cifar(sub / "cifar-10-batches-py", str_keys=str_keys)
    raw = cifar_batch(seed=0)[b"data"]
    planes = raw.reshape(-1, 3, 32, 32) / 255.0
    expected = {
        "stacked": ((1, 96, 32), raw.reshape(-1, 1, 96, 32)[0] / 255.0),
        "rgb": ((3, 32, 32), planes[0]),
        "gray": ((1, 32, 32), np.tensordot([0.299, 0.587, 0.114], planes[0], axes=1)[None]),
    }
    for color, (shape, first_image) in expected.items():
        d = load_pair("cifar10", "Airplane", "automobile", data_dir=tmp_path, color=color)
        assert d.X_train.shape == (4, *shape) and d.image_shape == shape
        assert d.X_train.dtype == np.float32
        np.testing.assert_allclose(d.X_train[0], first_image, rtol=1e-5, atol=1e-6)
        assert d.class_names == ("airplane", "automobile")
        assert d.counts == {"train": (2, 2), "validation": (2, 2), "test": (2, 2)}


def test_cifar_class_names_come_from_batches_meta(tmp_path):
    folder = write_cifar(tmp_path / "cifar-10-batches-py")
    meta = {b"label_names": [f"thing{i}".encode() for i in range(10)]}
    (folder / "batches.meta").write_bytes(pickle.dumps(meta, protocol=2))
    d = load_pair("cifar10", 0, "THING7", data_dir=tmp_path)
    assert d.class_names == ("thing0", "thing7")


class _Evil:
    """Pickles as a call to os.system: loading it with plain pickle would run a command."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"echo pwned > {self.marker}",))


def test_malicious_pickle_is_refused_and_never_runs(tmp_path):
    marker = tmp_path / "PWNED"
    evil = pickle.dumps({b"data": _Evil(marker), b"labels": [0]}, protocol=2)
    write_cifar(tmp_path / "cifar-10-batches-py", first=evil)
    with pytest.raises(DatasetError, match=r"data_batch_1.*system.*refused") as info:
        load_pair("cifar10", 0, 1, data_dir=tmp_path)
    assert "nothing was run" in str(info.value)
    assert not marker.exists(), "the pickle must not run code"
    # The same in batches.meta, which is read too.
    folder = write_cifar(tmp_path / "other" / "cifar-10-batches-py")
    (folder / "batches.meta").write_bytes(evil)
    with pytest.raises(DatasetError, match="batches.meta"):
        load_pair("cifar10", 0, 1, data_dir=tmp_path / "other")
    assert not marker.exists()


@pytest.mark.parametrize(
    "case", ["builtins-eval", "truncated", "not-a-dict", "bad-shape", "bad-dtype", "count"]
)
def test_corrupt_batches_name_the_file(tmp_path, case):
    good = pickle.dumps(cifar_batch(), protocol=2)
    bad = {
        "builtins-eval": b"cbuiltins\neval\n(S'1+1'\ntR.",
        "truncated": good[: len(good) // 2],
        "not-a-dict": pickle.dumps([1, 2, 3], protocol=2),
        "bad-shape": pickle.dumps({b"data": np.zeros((2, 5), np.uint8), b"labels": [0, 1]}),
        "bad-dtype": pickle.dumps({b"data": np.zeros((2, 3072)), b"labels": [0, 1]}),
        "count": pickle.dumps({b"data": np.zeros((2, 3072), np.uint8), b"labels": [0]}),
    }[case]
    write_cifar(tmp_path / "cifar-10-batches-py", first=bad)
    with pytest.raises(DatasetError, match="data_batch_1"):
        load_pair("cifar10", 0, 1, data_dir=tmp_path)


# -- arguments ----------------------------------------------------------------------------
def test_bad_arguments_say_what_is_valid():
    with pytest.raises(DatasetError, match="choose one of 0, 1, 2.*9"):
        load_pair("mnist-5k", "3", "eleven")
    with pytest.raises(DatasetError, match="Unknown class 10"):
        load_pair("mnist-5k", 3, 10)
    with pytest.raises(DatasetError, match="two different classes"):
        load_pair("mnist-5k", 3, "3")
    with pytest.raises(DatasetError, match="Unknown dataset 'imagenet'.*mnist-5k.*cifar10"):
        load_pair("imagenet", 0, 1)
    with pytest.raises(DatasetError, match="Unknown protocol"):
        load_pair("mnist-5k", 0, 1, protocol="paper")
    with pytest.raises(DatasetError, match="thesis protocol needs the full datasets"):
        load_pair("mnist-5k", 3, 5, protocol="thesis")
    with pytest.raises(DatasetError, match="n_train=1 is too small"):
        load_pair("mnist-5k", 3, 5, n_train=1)
    with pytest.raises(DatasetError, match="Unknown color"):
        load_pair("mnist-5k", 3, 5, color="sepia")
    with pytest.raises(DatasetError, match="Unknown split"):
        load_images("digits", "dev")


def test_class_names_by_name_and_cifar_classes(tmp_path):
    write_cifar(tmp_path / "cifar-10-batches-py")
    with pytest.raises(DatasetError, match="airplane, automobile, bird"):
        load_pair("cifar10", "plane", "truck", data_dir=tmp_path)
    d = load_pair("cifar10", "truck", 1, data_dir=tmp_path)
    assert d.classes == (9, 1) and d.class_names == ("truck", "automobile")


# -- the offline datasets -----------------------------------------------------------------
def test_default_dataset_offline_and_deterministic(monkeypatch):
    def no_network(*args, **kwargs):
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    offline.mnist_5k.cache_clear()
    registry.offline_split.cache_clear()
    assert DEFAULT_DATASET == "mnist-5k"
    full = load_pair(DEFAULT_DATASET, 3, 5)
    assert full.counts == {"train": (350, 350), "validation": (50, 50), "test": (100, 100)}
    for X, y in [(full.X_train, full.y_train), (full.X_val, full.y_val)]:
        assert X.dtype == np.float32 and X.shape[1:] == (1, 28, 28) and X.flags.c_contiguous
        assert 0.0 <= X.min() and X.max() <= 1.0 and X.max() > 0.99
        assert y.dtype == np.int64 and set(np.unique(y)) == {-1, 1}
    # Train, validation and test are disjoint.
    rows = {
        split: {x.tobytes() for x in getattr(full, f"X_{split}")}
        for split in ("train", "val", "test")
    }
    assert not rows["train"] & rows["test"] and not rows["train"] & rows["val"]
    # The split never depends on the run's seed; the n_train subsample does, reproducibly.
    registry.offline_split.cache_clear()
    again = load_pair(DEFAULT_DATASET, 3, 5, random_state=7)
    np.testing.assert_array_equal(full.X_test, again.X_test)
    np.testing.assert_array_equal(full.X_train, again.X_train)
    a = load_pair(DEFAULT_DATASET, 3, 5, n_train=200, random_state=1)
    b = load_pair(DEFAULT_DATASET, 3, 5, n_train=200, random_state=1)
    c = load_pair(DEFAULT_DATASET, 3, 5, n_train=200, random_state=2)
    np.testing.assert_array_equal(a.X_train, b.X_train)
    assert not np.array_equal(a.X_train, c.X_train)
    assert a.counts["train"] == (100, 100)
    assert load_pair(DEFAULT_DATASET, 3, 5, n_train=10**6).counts["train"] == (350, 350)


def test_digits_multiclass_and_images():
    d = load_pair("digits", "0", 1)
    assert d.image_shape == (1, 8, 8) and d.X_train.max() <= 1.0
    m = load_multiclass("digits", protocol=None)
    assert m.X_train.shape[1:] == (1, 8, 8) and m.class_names[3] == "3"
    assert sum(m.counts["train"]) + sum(m.counts["validation"]) + sum(m.counts["test"]) == 1797
    assert set(np.unique(m.y_test)) == set(range(10))
    X, y = load_images("mnist-5k", "test")
    assert X.shape == (1000, 1, 28, 28) and np.bincount(y).tolist() == [100] * 10
    # The default protocol is load_pair's (None), so a built-in set loads as it is.
    assert load_multiclass("digits").counts == m.counts
    with pytest.raises(DatasetError, match="thesis protocol"):
        load_multiclass("digits", protocol="thesis")


# -- where files live ---------------------------------------------------------------------
def test_data_home_precedence(monkeypatch, tmp_path):
    # The default is platformdirs' per-user cache folder for "csvm", which on Linux
    # honours XDG_CACHE_HOME.
    assert data_home() == Path(platformdirs.user_cache_dir("csvm"))
    if sys.platform.startswith("linux"):
        assert data_home() == tmp_path / "xdg-cache" / "csvm"
        monkeypatch.delenv("XDG_CACHE_HOME")
        assert data_home() == Path.home() / ".cache" / "csvm"
    monkeypatch.setenv("CSVM_DATA_DIR", str(tmp_path / "env"))
    assert data_home() == tmp_path / "env"
    assert data_home(tmp_path / "arg") == tmp_path / "arg"


def test_listing_reports_availability_and_location(tmp_path, monkeypatch):
    write_idx(tmp_path / "mnist", gz=True)
    monkeypatch.setenv("CSVM_DATA_DIR", str(tmp_path))
    rows = {row["name"]: row for row in list_datasets()}
    assert set(rows) == set(ds.DATASETS)
    assert rows["mnist-5k"]["available"] and rows["digits"]["available"]
    assert rows["mnist"]["available"] and rows["mnist"]["location"] == str(tmp_path / "mnist")
    assert not rows["cifar10"]["available"]
    assert rows["cifar10"]["fetch_command"] == "python -m csvm data fetch cifar10"
    assert rows["fashion-mnist"]["classes"][0] == "T-shirt/top"
    assert rows["cifar10"]["image_shape"] == (1, 96, 32)


# -- command line -------------------------------------------------------------------------
def test_cli_data_list(tmp_path, capsys):
    write_cifar(tmp_path / "cifar10" / "cifar-10-batches-py")
    assert cli_main(["data", "list", "--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"data folder: {tmp_path}" in out
    assert "mnist-5k" in out and "built in" in out
    assert str(tmp_path / "cifar10" / "cifar-10-batches-py") in out
    assert f"python -m csvm data fetch mnist --data-dir {tmp_path}" in out
    assert cli_main([]) == 2 and cli_main(["nonsense"]) == 2


def test_python_dash_m_csvm(tmp_path):
    env = {**os.environ, "CSVM_DATA_DIR": str(tmp_path)}
    run = subprocess.run(
        [sys.executable, "-m", "csvm", "data", "list"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert "python -m csvm data fetch cifar10" in run.stdout


# -- the real files -----------------------------------------------------------------------
@needs_mnist
def test_thesis_counts_mnist_3_vs_5():
    d = load_pair("mnist", 3, 5, protocol="thesis", data_dir=SHARED)
    # The canonical files hold 1,032 threes and 863 fives among the first 10,000 training
    # images; the thesis prints 1,020 and 882 (see docs/datasets.md).
    assert d.counts == {"train": (1032, 863), "validation": (1044, 912), "test": (1010, 892)}
    assert d.X_train.shape == (1895, 1, 28, 28) and d.image_shape == (1, 28, 28)
    assert abs(float(load_images("mnist", "test", SHARED)[0].mean()) - 0.1325) < 1e-3


@needs_mnist
def test_table_3_1_split_mnist():
    m = load_multiclass("mnist", protocol="thesis", data_dir=SHARED)
    assert (len(m.y_train), len(m.y_val), len(m.y_test)) == (50_000, 10_000, 10_000)
    assert m.counts["test"] == (980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009)
    assert m.counts["validation"][:3] == (991, 1064, 990)


@needs_cifar
def test_thesis_counts_cifar_airplane_vs_automobile():
    d = load_pair("cifar10", "airplane", "automobile", protocol="thesis", data_dir=SHARED)
    assert d.counts == {"train": (1005, 974), "validation": (984, 1007), "test": (1000, 1000)}
    assert d.image_shape == (1, 96, 32) and d.X_train.dtype == np.float32
    assert d.class_names == ("airplane", "automobile")


def test_a_whole_float_label_is_its_class_and_a_colour_for_grey_images_is_refused():
    """3.0 was "Unknown class 3.0"; color='rgb' on a grey set was ignored without a word."""
    assert load_pair("mnist-5k", 3.0, np.float32(5)).class_names == ("3", "5")
    with pytest.raises(DatasetError, match="Unknown class 3.5"):
        load_pair("mnist-5k", 3.5, 5)
    with pytest.raises(DatasetError, match="color='rgb' is for CIFAR-10's colour images"):
        load_pair("mnist-5k", 3, 5, color="rgb")
