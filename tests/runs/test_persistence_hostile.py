"""A run bundle that inflates to far more than it weighs is refused in bounded memory."""

from __future__ import annotations

import io
import resource
import zipfile

import pytest

from csvm.runs.persistence import MAX_IMPORT_BYTES, BundleError, load_config


def test_a_config_bomb_is_refused_in_bounded_memory():
    buffer = io.BytesIO()
    chunk = b" " * 2**20
    # Written a megabyte at a time, so the test itself never holds the inflated 200 MB.
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("config.json", "w", force_zip64=True) as member:
            member.write(b"{")
            for _ in range(200):
                member.write(chunk)
            member.write(b"}")
    data = buffer.getvalue()
    assert len(data) < MAX_IMPORT_BYTES  # small enough to pass the upload-size check
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(BundleError, match="unpacks to more than"):
        load_config(data)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 100, grown_mb
