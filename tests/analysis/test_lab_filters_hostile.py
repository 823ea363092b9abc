"""Hostile filter files are refused by name, in bounded memory: zip members that inflate
past their header, .npy headers that declare huge shapes, deeply nested JSON, huge weights."""

from __future__ import annotations

import io
import json
import re
import resource
import zipfile

import numpy as np
import pytest

from csvm.analysis.lab_filters import MAX_ABS_WEIGHT, load_filters
from csvm.data.images import UploadError


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _lying_zip(inflated: int, declared: int = 100) -> bytes:
    """A zip whose filters.npy header declares ``declared`` bytes but inflates to
    ``inflated`` (the central directory and local header both lie)."""
    payload = b"\x93NUMPY" + b"0" * (inflated - 6)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("filters.npy", payload)
    data = bytearray(buffer.getvalue())
    real = len(payload).to_bytes(4, "little")
    fake = declared.to_bytes(4, "little")
    # uncompressed size: local header offset 22, central directory entry offset 24
    local = data.index(b"PK\x03\x04")
    data[local + 22 : local + 26] = fake
    central = data.index(b"PK\x01\x02")
    assert data[central + 24 : central + 28] == real
    data[central + 24 : central + 28] = fake
    return bytes(data)


def test_a_zip_member_that_inflates_past_its_header_is_refused_in_bounded_memory():
    data = _lying_zip(inflated=300 * 2**20)
    assert len(data) < 1_000_000  # a 300 MB bomb in under a megabyte
    before = _peak_mb()
    with pytest.raises(UploadError, match="filters.npy in the zip"):
        load_filters(data, max_bytes=1_000_000)
    assert _peak_mb() - before < 100  # never inflated past the limit


def test_an_npy_header_declaring_a_huge_shape_is_refused():
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": "<f8", "fortran_order": False, "shape": (2**40,)}
    )
    data = buffer.getvalue() + b"\0" * 64  # the header (with its magic), then 64 bytes
    with pytest.raises(UploadError, match=r"declares shape \(1099511627776,\)"):
        load_filters(data)


def test_deeply_nested_json_is_refused():
    with pytest.raises(UploadError, match="nested too deeply"):
        load_filters(b"[" * 100_000 + b"]" * 100_000, max_bytes=1_000_000)


def test_huge_weights_are_refused_with_the_limit():
    data = json.dumps({"filters": [[1e308, 0, 0], [0, 1, 0], [0, 0, 1]]}).encode()
    with pytest.raises(UploadError, match=re.escape(f"up to {MAX_ABS_WEIGHT:g}")):
        load_filters(data)


def test_an_honest_npy_still_loads():
    buffer = io.BytesIO()
    np.save(buffer, np.eye(3)[None], allow_pickle=False)
    assert load_filters(buffer.getvalue()).shape == (1, 1, 3, 3)
