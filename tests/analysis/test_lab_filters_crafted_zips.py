"""Crafted filter uploads are refused by a named UploadError in plain words, never by an
exception that replaces the page: zip members that are encrypted, compressed with
Deflate64 or damaged; JSON with a number of 5,000 digits, or of 400 (beyond a float)."""

from __future__ import annotations

import io

import numpy as np
import pytest

from csvm.analysis.lab_filters import load_filters
from csvm.data.images import UploadError
from tests._crafted_zips import CRAFTS, SAYS, crafted_zip

#: Words of Python's own errors that must not reach a person.
JARGON = ("Exceeds the limit", "set_int_max_str_digits", "ZipInfo", "Error -3", "password")


def _npy() -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.eye(3)[None], allow_pickle=False)
    return buffer.getvalue()


def _refusal(data: bytes) -> str:
    with pytest.raises(UploadError) as caught:
        load_filters(data)
    message = str(caught.value)
    assert not any(word in message for word in JARGON), message
    return message


@pytest.mark.parametrize("craft", CRAFTS)
@pytest.mark.parametrize("member", ["filters.npy", "results.json"])
def test_an_unreadable_member_of_a_zip_is_refused_by_name(craft, member):
    # The JSON is padded: the damage overwrites 8 bytes, which must lie within the member.
    json_filters = b"[[1]]" + b" " * 100
    files = {"config.json": b"{}", member: _npy() if member.endswith(".npy") else json_filters}
    message = _refusal(crafted_zip(files, member, craft))
    assert message.startswith(f"{member} in the zip cannot be read ({SAYS[craft]})")


def test_a_readable_zip_still_gives_its_filters():
    zipped = crafted_zip({"filters.npy": _npy(), "x.json": b"{}"}, "x.json", "encrypted")
    assert load_filters(zipped).shape == (1, 1, 3, 3)  # filters.npy is read first


def test_a_number_of_thousands_of_digits_is_refused_in_plain_words():
    message = _refusal(b'{"filters": [' + b"9" * 5000 + b"]}")
    assert "thousands of digits" in message


def test_a_number_beyond_a_float_is_refused_as_not_numbers():
    # 400 digits: Python reads it as an int, NumPy cannot make it a float (OverflowError).
    assert "not an array of numbers" in _refusal(b'{"filters": [[' + b"9" * 400 + b"]]}")


@pytest.mark.parametrize("data", [b'[[1], "\xff"]', b"[" * 100_000])
def test_json_that_is_not_text_or_nested_too_deeply_is_refused_in_plain_words(data):
    message = _refusal(data)
    assert "codec" not in message and "recursion" not in message
