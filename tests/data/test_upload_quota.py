"""Disk quotas of uploaded images and their removal once unused (issue 37, row 4).

40 uploads from fresh sessions wrote 472 MB in 27 s and nothing removed them: the server's
and each client's uploads are now bounded (``CSVM_UPLOAD_QUOTA_MB``,
``CSVM_UPLOAD_QUOTA_PER_CLIENT_MB``) and an upload nothing uses goes after the grace time.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from csvm.data.images import UploadError
from csvm.data.own_images import (
    OwnImages,
    UploadQuota,
    load_own,
    own_meta,
    own_usage,
    remove_unused,
    store_own,
)

MB = 2**20


@pytest.fixture(autouse=True)
def own_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CSVM_OWN_DIR", str(tmp_path / "own"))
    return tmp_path / "own"


def _images(n=400, seed=0) -> OwnImages:
    """Noise: incompressible, so each upload takes about n × 784 bytes on disk."""
    X = np.random.default_rng(seed).integers(0, 256, (n, 1, 28, 28), dtype=np.uint8)
    return OwnImages(X, np.arange(n) % 2, ["a", "b"])


def test_the_quota_reads_its_variables_and_names_a_bad_one():
    assert UploadQuota.from_env({}) == UploadQuota()
    quota = UploadQuota.from_env(
        {
            "CSVM_UPLOAD_QUOTA_MB": "100",
            "CSVM_UPLOAD_QUOTA_PER_CLIENT_MB": "2.5",
            "CSVM_UPLOAD_GRACE_SECONDS": "5",
        }
    )
    assert quota == UploadQuota(100 * MB, int(2.5 * MB), 5.0)
    for bad in ("lots", "-1", "nan", "inf"):
        with pytest.raises(ValueError, match=f"CSVM_UPLOAD_QUOTA_MB={bad!r} is not a number"):
            UploadQuota.from_env({"CSVM_UPLOAD_QUOTA_MB": bad})


def test_fresh_clients_stop_at_the_server_quota_with_a_message(own_dir):
    quota = UploadQuota(total_bytes=1 * MB, per_client_bytes=10 * MB)
    kept = []
    with pytest.raises(UploadError) as refused:
        for k in range(40):  # 40 fresh sessions, each its own client
            kept.append(store_own(_images(seed=k), f"client{k}", quota))
    assert 2 <= len(kept) <= 4  # ~0.3 MB each within 1 MB
    message = str(refused.value)
    assert "the server keeps at most 1 MB (CSVM_UPLOAD_QUOTA_MB)" in message
    assert "try again in a few minutes" in message
    assert sum(size for _, size in own_usage().values()) <= quota.total_bytes
    assert sorted(p.name for p in own_dir.iterdir()) == sorted(kept)  # nothing half-written


def test_one_client_stops_at_its_own_quota_but_may_replace_its_upload():
    quota = UploadQuota(total_bytes=100 * MB, per_client_bytes=int(0.7 * MB))
    first = store_own(_images(), "alice", quota)
    second = store_own(_images(seed=1), "alice", quota)
    with pytest.raises(UploadError, match="each browser may keep 0.7 MB"):
        store_own(_images(seed=2), "alice", quota)
    # Replacing an upload it gives up does not count the one given up.
    third = store_own(_images(seed=3), "alice", quota, replacing=second)
    assert own_meta(third)["owner"] == "alice"
    store_own(_images(seed=4), "bob", quota)  # another client has room of its own
    assert {first, second, third} <= set(own_usage())


def test_an_unused_upload_goes_after_the_grace_time_and_a_used_one_stays(own_dir):
    quota = UploadQuota()
    used = store_own(_images(), "alice", quota)
    unused = store_own(_images(seed=1), "bob", quota)
    assert remove_unused(set(), grace_seconds=60) == []  # both just written
    old = time.time() - 120
    for name in (used, unused):
        os.utime(own_dir / name, (old, old))
    assert remove_unused({used}, grace_seconds=60) == [unused]
    X, y, classes = load_own(used)
    assert X.shape == (400, 1, 28, 28) and classes == ("a", "b")
