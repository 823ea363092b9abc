"""Crafted run exports are refused by a named BundleError in plain words, never by an
exception that replaces the page: members that are encrypted, compressed with Deflate64
or damaged; JSON with a 5,000-digit number or nested too deeply; a member too large,
named for what it holds and not wrapped in a second refusal."""

from __future__ import annotations

import io
import zipfile

import pytest

from csvm.runs.bundle import load_bundle
from csvm.runs.config import RunConfig
from csvm.runs.persistence import (
    MAX_IMPORT_BYTES,
    BundleError,
    export_run,
    load_config,
    read_member,
)
from csvm.runs.targets import load_data, run_model
from tests._crafted_zips import CRAFTS, SAYS, crafted_zip

#: Words of Python's own errors that must not reach a person.
JARGON = ("Exceeds the limit", "set_int_max_str_digits", "recursion", "ZipInfo", "Error -3")
TINY = RunConfig(n_iter=1, n_train=20, baselines=())


@pytest.fixture(scope="module")
def trained() -> bytes:
    """A real export of a short run: its CSVM has filters, so filters.npy is read."""
    data = load_data(TINY)
    result = run_model(lambda e: None, TINY, "csvm")
    return export_run(TINY, {"csvm": result}, test_set=(data.X_test, data.y_test))


def _members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def _rezip(data: bytes, **members: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, value in {**_members(data), **members}.items():
            zf.writestr(name, value)
    return out.getvalue()


def _refusal(call, *args) -> str:
    with pytest.raises(BundleError) as caught:
        call(*args)
    message = str(caught.value)
    assert not any(word in message for word in JARGON), message
    return message


@pytest.mark.parametrize("craft", CRAFTS)
@pytest.mark.parametrize("member", ["config.json", "results.json", "history.csv", "filters.npy"])
def test_an_unreadable_member_is_refused_by_name(trained, craft, member):
    data = crafted_zip(_members(trained), member, craft)
    message = _refusal(load_bundle, data)
    assert message.startswith(f"{member} in the zip cannot be read ({SAYS[craft]}")
    assert "export the run again" in message
    assert _refusal(read_member, data, member) == message


@pytest.mark.parametrize("craft", CRAFTS)
def test_load_config_refuses_an_unreadable_config_by_name(craft):
    data = crafted_zip(_members(export_run(RunConfig(), {"csvm": None})), "config.json", craft)
    assert SAYS[craft] in _refusal(load_config, data)


def test_a_number_of_thousands_of_digits_is_refused_in_plain_words():
    settings = b'{"seed": ' + b"7" * 5000 + b"}"
    assert "thousands of digits" in _refusal(load_config, settings)
    exported = export_run(RunConfig(), {"csvm": None})
    message = _refusal(load_bundle, _rezip(exported, **{"config.json": settings}))
    assert message.startswith("config.json is not what a run export holds")


@pytest.mark.parametrize("opener", [b"[", b'{"a":'])
def test_json_nested_too_deeply_is_refused_in_plain_words(opener):
    deep = opener * 100_000
    assert "nested too deeply to be a run export" in _refusal(load_config, deep)
    exported = export_run(RunConfig(), {"csvm": None})
    message = _refusal(load_bundle, _rezip(exported, **{"results.json": deep}))
    assert message.startswith("results.json is not what a run export holds")


@pytest.mark.parametrize(
    ("member", "holds"),
    [
        ("config.json", "a run's settings"),
        ("results.json", "scores and test predictions"),
        ("history.csv", "recorded steps"),
        ("filters.npy", "learned filters"),
    ],
)
def test_a_member_too_large_is_named_for_what_it_holds_and_refused_once(trained, member, holds):
    bomb = _rezip(trained, **{member: b" " * (MAX_IMPORT_BYTES + 10)})
    message = _refusal(load_bundle, bomb)
    assert message.startswith(f"{member} in the zip unpacks to more than"), message
    assert holds in message
    # One refusal: not wrapped in "A file in the zip is not ..." nor "filters.npy: ...".
    assert message.count("in the zip") == 1 and "A file in the zip" not in message
    if member != "config.json":
        assert "settings" not in message
