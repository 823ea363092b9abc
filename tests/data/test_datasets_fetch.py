"""Downloads through pooch: the registry of names and md5s, verified files put in place,
wrong hashes refused, retries and mirrors, the CLI.  No test touches the network: sources
are file:// folders, a local HTTP server on 127.0.0.1, or a monkeypatched downloader."""

import gzip
import hashlib
import http.server
import io
import re
import tarfile
import threading
import time
from functools import partial
from pathlib import Path

import numpy as np
import pytest
import requests

from csvm.data import DATASETS, fetch, load_pair, main_data
from csvm.data import downloads as dl
from csvm.exceptions import DatasetError
from tests._dataset_files import SHARED, idx_files, isolate, needs_mnist, write_cifar


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    isolate(monkeypatch, tmp_path)


def _md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def _serve(monkeypatch, tmp_path, name: str, files: dict[str, bytes], md5s=None) -> str:
    """Write ``files`` to a folder, register their md5s (or ``md5s``) for ``name``, and
    return the folder's file:// base URL."""
    served = tmp_path / "served"
    served.mkdir(exist_ok=True)
    registry = {}
    for filename, data in files.items():
        (served / filename).write_bytes(data)
        registry[filename] = "md5:" + (md5s or {}).get(filename, _md5(data))
    monkeypatch.setitem(dl.REGISTRY, name, registry)
    return served.as_uri() + "/"


def _mnist_gz() -> dict[str, bytes]:
    return {k + ".gz": gzip.compress(v) for k, v in idx_files().items()}


# -- the registry -------------------------------------------------------------------------
def test_registry_names_and_md5s():
    for name in ("mnist", "fashion-mnist"):
        assert list(dl.REGISTRY[name]) == list(DATASETS[name].files)
        assert dl.MIRRORS[name] and all(m.endswith("/") for m in dl.MIRRORS[name])
    for name, files in dl.REGISTRY.items():
        for filename, known in files.items():
            assert re.fullmatch(r"md5:[0-9a-f]{32}", known), (name, filename, known)
    train_images = "md5:f68b3c2dcbeaaa9fbdd348bbdeb94873"  # the published md5
    assert dl.REGISTRY["mnist"]["train-images-idx3-ubyte.gz"] == train_images


def test_mnist_md5s_equal_the_shared_readme():
    readme = SHARED / "README.md"
    if not readme.is_file():
        pytest.skip(f"{readme} is absent (it exists only in the development checkout)")
    # Rows of the form | `mnist/<file>` | size | md5 | ...
    rows = re.findall(
        r"\|\s*`mnist/([\w.-]+)`\s*\|\s*\d+\s*\|\s*([0-9a-f]{32})\s*\|", readme.read_text()
    )
    assert len(rows) == 4, rows
    assert {f: "md5:" + h for f, h in rows} == dl.REGISTRY["mnist"]


@needs_mnist
def test_fetch_real_mnist_from_a_file_mirror_with_the_real_registry(tmp_path):
    # The shipped registry (no monkeypatching) against the byte-exact files: a dead
    # mirror first, then a shared folder, as a classroom without internet would use.
    dead = (tmp_path / "nowhere").as_uri() + "/"
    out = io.StringIO()
    folder = fetch("mnist", tmp_path / "data", out=out, mirrors=[dead, (SHARED / "mnist").as_uri()])
    assert folder == tmp_path / "data" / "mnist"
    assert sorted(p.name for p in folder.iterdir()) == sorted(dl.REGISTRY["mnist"])
    for filename, known in dl.REGISTRY["mnist"].items():
        assert "md5:" + hashlib.md5((folder / filename).read_bytes()).hexdigest() == known
    assert out.getvalue().count("100 %") == 4
    d = load_pair("mnist", 3, 5, protocol="thesis", data_dir=tmp_path / "data")
    assert d.counts["train"] == (1032, 863)
    again = io.StringIO()
    fetch("mnist", tmp_path / "data", out=again, mirrors=[dead])  # nothing downloaded
    assert again.getvalue().count("already here and intact") == 4


# -- fetch --------------------------------------------------------------------------------
def test_fetch_verifies_and_then_loads(tmp_path, monkeypatch):
    files = _mnist_gz()
    served = _serve(monkeypatch, tmp_path, "mnist", files)
    dead = (tmp_path / "missing").as_uri() + "/"
    out = io.StringIO()
    folder = fetch("mnist", data_dir=tmp_path / "data", out=out, mirrors=[dead, served])
    assert folder == tmp_path / "data" / "mnist"
    assert sorted(p.name for p in folder.iterdir()) == sorted(files)  # no temporary left
    assert "100 %" in out.getvalue()
    assert load_pair("mnist", 3, 5, data_dir=tmp_path / "data").counts["train"] == (3, 3)


def test_fetch_replaces_a_damaged_file(tmp_path, monkeypatch):
    files = _mnist_gz()
    served = _serve(monkeypatch, tmp_path, "mnist", files)
    folder = tmp_path / "data" / "mnist"
    folder.mkdir(parents=True)
    (folder / "t10k-labels-idx1-ubyte.gz").write_bytes(b"half a download")
    out = io.StringIO()
    fetch("mnist", tmp_path / "data", out=out, mirrors=[served])
    assert (folder / "t10k-labels-idx1-ubyte.gz").read_bytes() == files["t10k-labels-idx1-ubyte.gz"]


def test_fetch_refuses_a_file_with_a_wrong_hash(tmp_path, monkeypatch, capsys):
    files = _mnist_gz()
    served = _serve(
        monkeypatch, tmp_path, "mnist", files, md5s={"train-images-idx3-ubyte.gz": "0" * 32}
    )
    with pytest.raises(DatasetError) as info:
        fetch("mnist", tmp_path / "data", out=io.StringIO(), mirrors=[served], retries=0)
    message = str(info.value)
    assert "Could not download train-images-idx3-ubyte.gz" in message
    assert served + "train-images-idx3-ubyte.gz" in message
    assert "does not match the known hash" in message and "0" * 32 in message
    folder = tmp_path / "data" / "mnist"
    # The bad file was deleted, not put in place; nothing temporary is left behind.
    assert not (folder / "train-images-idx3-ubyte.gz").exists()
    assert sorted(p.name for p in folder.iterdir()) == []  # it stopped at the first file
    # Through the CLI (default retries; pooch's waits between them skipped): exit 2.
    monkeypatch.setattr(time, "sleep", lambda s: None)
    status = main_data(["fetch", "mnist", "--data-dir", str(tmp_path / "data"), "--mirror", served])
    assert status == 2
    assert "error: Could not download train-images-idx3-ubyte.gz" in capsys.readouterr().err


def test_cli_fetch_with_a_mirror(tmp_path, monkeypatch, capsys):
    served = _serve(monkeypatch, tmp_path, "mnist", _mnist_gz())
    status = main_data(["fetch", "mnist", "--data-dir", str(tmp_path / "d"), "--mirror", served])
    assert status == 0
    assert f"mnist is in {tmp_path / 'd' / 'mnist'}" in capsys.readouterr().out


def test_cli_fetch_from_a_folder_as_the_readme_writes_it(tmp_path, monkeypatch, capsys):
    """``--mirror DIR``: a plain folder (not a URL) holding the files works."""
    served = _serve(monkeypatch, tmp_path, "mnist", _mnist_gz())
    folder = Path(served.removeprefix("file://"))
    assert folder.is_dir()
    status = main_data(
        ["fetch", "mnist", "--data-dir", str(tmp_path / "d"), "--mirror", str(folder)]
    )
    assert status == 0, capsys.readouterr().err
    assert f"mnist is in {tmp_path / 'd' / 'mnist'}" in capsys.readouterr().out


def test_a_missing_mirror_folder_is_named(tmp_path, capsys):
    missing = tmp_path / "no-such-folder"
    status = main_data(
        ["fetch", "mnist", "--data-dir", str(tmp_path / "d"), "--mirror", str(missing)]
    )
    assert status == 2
    assert f"--mirror {missing}: no such folder" in capsys.readouterr().err


def test_the_offline_message_names_mirror(tmp_path, monkeypatch):
    monkeypatch.setattr(time, "sleep", lambda s: None)
    dead = (tmp_path / "missing").as_uri() + "/"
    with pytest.raises(DatasetError, match="--mirror DIR"):
        fetch("mnist", tmp_path / "data", out=io.StringIO(), mirrors=[dead], retries=0)


class _Flaky:
    """A pooch downloader that fails ``failures`` times, then serves ``data``."""

    def __init__(self, data: bytes, failures: int, calls: list):
        self.data, self.failures, self.calls = data, failures, calls

    def __call__(self, url, output_file, pooch, check_only=False):
        self.calls.append(url)
        if len(self.calls) <= self.failures:
            raise requests.ConnectionError(f"connection reset ({len(self.calls)})")
        Path(output_file).write_bytes(self.data)


@pytest.mark.parametrize("retries, failures, mirrors_used", [(2, 2, 1), (1, 2, 2), (0, 0, 1)])
def test_retries_then_the_next_mirror(tmp_path, monkeypatch, retries, failures, mirrors_used):
    monkeypatch.setattr(time, "sleep", lambda s: None)  # pooch waits between attempts
    data = gzip.compress(idx_files()["t10k-labels-idx1-ubyte"])
    monkeypatch.setitem(dl.REGISTRY, "mnist", {"t10k-labels-idx1-ubyte.gz": "md5:" + _md5(data)})
    calls: list[str] = []
    monkeypatch.setattr(dl, "_downloader", lambda url, out: _Flaky(data, failures, calls))
    mirrors = ["https://a.invalid/", "https://b.invalid/"]
    fetch("mnist", tmp_path, out=io.StringIO(), mirrors=mirrors, retries=retries)
    assert (tmp_path / "mnist" / "t10k-labels-idx1-ubyte.gz").read_bytes() == data
    assert len(calls) == failures + 1
    assert len({c.split("/")[2] for c in calls}) == mirrors_used  # hosts tried


def test_every_mirror_failing_lists_each(tmp_path, monkeypatch):
    monkeypatch.setattr(time, "sleep", lambda s: None)
    monkeypatch.setitem(dl.REGISTRY, "mnist", {"t10k-labels-idx1-ubyte.gz": "md5:" + "1" * 32})
    calls: list[str] = []
    monkeypatch.setattr(dl, "_downloader", lambda url, out: _Flaky(b"", 99, calls))
    with pytest.raises(DatasetError) as info:
        fetch("mnist", tmp_path, out=io.StringIO(), mirrors=["https://a.invalid/x", "ftp://b/"])
    message = str(info.value)
    assert "https://a.invalid/x/t10k-labels-idx1-ubyte.gz: connection reset (3)" in message
    assert len(calls) == 3 + 3  # 1 + RETRIES attempts on each mirror


def test_unsupported_scheme_and_bad_arguments(tmp_path):
    with pytest.raises(DatasetError, match="unsupported URL scheme 'ftp'"):
        fetch("mnist", tmp_path, out=io.StringIO(), mirrors=["ftp://example.org/"])
    with pytest.raises(DatasetError, match="mirrors is empty"):
        fetch("mnist", tmp_path, out=io.StringIO(), mirrors=[])
    with pytest.raises(DatasetError, match="retries=-1"):
        fetch("mnist", tmp_path, out=io.StringIO(), retries=-1)
    with pytest.raises(DatasetError, match="Unknown source"):
        fetch("mnist", tmp_path, source="torrent")


def test_unwritable_data_folder_says_permission_denied(tmp_path, monkeypatch):
    monkeypatch.setattr(dl.os, "access", lambda path, mode: False)
    with pytest.raises(DatasetError, match="Cannot write to the data folder .*permission denied"):
        fetch("mnist", tmp_path, out=io.StringIO(), mirrors=["file:///nowhere/"])


class _Logged(http.server.SimpleHTTPRequestHandler):
    requests: list[str] = []

    def log_message(self, format, *args):  # record instead of printing
        self.requests.append(f"{self.path} {args[1] if len(args) > 1 else ''}")


def test_fetch_over_http_from_a_local_server(tmp_path, monkeypatch):
    # pooch's own HTTP downloader, against a server on 127.0.0.1 (never the internet).
    served = Path(_serve(monkeypatch, tmp_path, "mnist", _mnist_gz())[len("file://") :])
    _Logged.requests = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_Logged, directory=served))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        out = io.StringIO()
        fetch("mnist", tmp_path / "d", out=out, mirrors=[base + "/absent/", base + "/"], retries=0)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    assert "/absent/train-images-idx3-ubyte.gz 404" in _Logged.requests
    assert "/train-images-idx3-ubyte.gz 200" in _Logged.requests
    assert out.getvalue().count("100 %") == 4
    assert load_pair("mnist", 3, 5, data_dir=tmp_path / "d").counts["test"] == (1, 1)


def test_fetch_cifar_archive(tmp_path, monkeypatch):
    folder = write_cifar(tmp_path / "build" / "cifar-10-batches-py")
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz") as tar:
        tar.add(folder, arcname="cifar-10-batches-py")
    served = _serve(
        monkeypatch, tmp_path, "cifar10", {"cifar-10-python.tar.gz": archive.getvalue()}
    )
    where = fetch("cifar10", data_dir=tmp_path / "data", out=io.StringIO(), mirrors=[served])
    assert where == tmp_path / "data" / "cifar10" / "cifar-10-batches-py"
    assert not (tmp_path / "data" / "cifar-10-python.tar.gz").exists()
    assert load_pair("cifar10", 0, 1, data_dir=tmp_path / "data").counts["test"] == (2, 2)


def test_fetch_openml_writes_idx(tmp_path, monkeypatch):
    import sklearn.datasets
    from sklearn.utils import Bunch

    X = np.zeros((70_000, 784), np.uint8)
    X[:, 400] = np.arange(70_000) % 256
    y = (np.arange(70_000) % 10).astype(str)
    calls = []

    def fake_fetch_openml(name, **kwargs):
        calls.append(name)
        return Bunch(data=X, target=y)

    monkeypatch.setattr(sklearn.datasets, "fetch_openml", fake_fetch_openml)
    fetch("fashion-mnist", data_dir=tmp_path, source="openml", out=io.StringIO())
    assert calls == ["Fashion-MNIST"]
    d = load_pair("fashion-mnist", "Bag", "Coat", data_dir=tmp_path)
    assert d.counts["test"] == (1000, 1000) and d.counts["train"] == (5000, 5000)
    # The first test image of the pair is test image 4, a Coat.
    np.testing.assert_allclose(d.X_test[0].ravel() * 255, X[60_004], atol=1e-4)
    # For MNIST the canonical md5s are known: data in another order is refused.
    with pytest.raises(DatasetError, match="does not reproduce the canonical"):
        fetch("mnist", data_dir=tmp_path, source="openml", out=io.StringIO())
