"""Export and import of runs: JSON, CSV and ``.npy`` in a zip — never pickle.

A run bundle holds ``config.json`` (the RunConfig), ``results.json`` (accuracies, status,
timings of every model), ``history.csv`` (one row per recorded step), ``filters.npy``
and ``reproduce.py`` (a script that reproduces the run with the library).  The settings
load back with :func:`load_config`, the filters with :func:`csvm.analysis.lab.load_filters`
(``allow_pickle=False``).

``results.json`` also holds ``test_set``: the SHA-256 of the test images and labels the
run was scored on (:func:`digest_test_set`), so that a reload can check that this
server's data for the run's settings are the same images before it shows the results.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import weakref
import zipfile
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from csvm.data.own_images import MEMBER_ERRORS, member_problem
from csvm.exceptions import CSVMError
from csvm.runs.config import RunConfig, parse
from csvm.runs.snippet import python_snippet

__all__ = [
    "MAX_IMPORT_BYTES",
    "BundleError",
    "digest_test_set",
    "export_run",
    "history_csv",
    "jsonable",
    "load_config",
    "parse_json",
    "read_member",
]

#: The largest upload read as a run bundle.
MAX_IMPORT_BYTES = 5_000_000


class BundleError(CSVMError, ValueError):
    """A file given to :func:`load_config` cannot be used."""


#: What each member of a run export holds, for the message that refuses one too large.
_HOLDS = {
    "config.json": "a run's settings, a few hundred bytes",
    "results.json": "each model's scores and test predictions, well under a megabyte",
    "history.csv": "the CSVM's recorded steps, one row of numbers each",
    "filters.npy": "the CSVM's learned filters, a few kilobytes",
}
#: What to do about a file that is not a run export.
_UPLOAD_EXPORT = "Upload the zip that the Train page's Download run gave."


#: Values that are not a history.csv column (arrays, the per-step timings, the pair).
_ARRAYS = (dict, list, tuple, np.ndarray)


def history_csv(history: Sequence[Mapping[str, Any]]) -> str:
    """Per-step records as CSV: every scalar column, in first-seen order.

    Linear in the number of cells: the columns seen so far are a dict, not a list (a
    reloaded run with 30,000 columns took 24 s per page run to export with a list).
    """
    columns: dict[str, None] = {}
    for record in history:
        for key, value in record.items():
            if key not in columns and not isinstance(value, _ARRAYS):
                columns[key] = None
    out = io.StringIO()
    writer = csv.DictWriter(out, list(columns), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(history)
    return out.getvalue()


#: (id(images), id(labels)) -> (weak references to both, their digest): the Train page
#: exports on every page run, and hashing 31 MB of test images each time would be felt.
_DIGESTS: dict[tuple[int, int], tuple[Any, Any, str]] = {}


def digest_test_set(images: np.ndarray, labels: np.ndarray) -> str:
    """The SHA-256 (hex) of a test set: its images as float32 and labels as int64.

    Fixed dtypes, so two servers that load the same images agree whatever dtype their
    loaders give.  Cached per pair of arrays (the explorer's data are cached objects).

    Examples
    --------
    >>> x, y = np.zeros((2, 1, 3, 3)), np.array([-1, 1])
    >>> digest_test_set(x, y) == digest_test_set(x.astype(np.float32), y.astype(np.int8))
    True
    >>> digest_test_set(x, y) == digest_test_set(x, -y)
    False
    """
    key = (id(images), id(labels))
    hit = _DIGESTS.get(key)
    if hit is not None and hit[0]() is images and hit[1]() is labels:
        return hit[2]
    h = hashlib.sha256()
    for array, dtype in ((images, "<f4"), (labels, "<i8")):
        a = np.ascontiguousarray(array, dtype=dtype)
        h.update(f"{a.shape}".encode())
        h.update(a.tobytes())
    digest = h.hexdigest()
    try:
        refs = (weakref.ref(images), weakref.ref(labels))
    except TypeError:  # not weak-referenceable (a list): not cached
        return digest
    if len(_DIGESTS) > 64:  # forget the arrays that have gone
        for stale in [k for k, v in _DIGESTS.items() if v[0]() is None or v[1]() is None]:
            del _DIGESTS[stale]
    _DIGESTS[key] = (*refs, digest)
    return digest


def jsonable(value: Any) -> Any:
    """``value`` with NumPy arrays and scalars as lists and Python numbers, mapping keys as
    strings, tuples as lists, nested at any depth: what ``json.dumps`` takes.

    Examples
    --------
    >>> jsonable({1: (np.int64(2), np.zeros(2))})
    {'1': [2, [0.0, 0.0]]}
    """
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def export_run(
    config: RunConfig,
    results: Mapping[str, Mapping[str, Any] | None],
    extra: Mapping[str, Any] | None = None,
    test_set: tuple[np.ndarray, np.ndarray] | None = None,
) -> bytes:
    """A run bundle (zip bytes).

    Parameters
    ----------
    config : RunConfig
    results : mapping
        Model key ("csvm", "svm", "cnn") -> its result dict (None when it has none).  The
        CSVM's ``history`` and ``filters`` become ``history.csv`` and ``filters.npy``.
    extra : mapping, optional
        More JSON-able facts for ``results.json`` (e.g. significance tests).
    test_set : (images, labels), optional
        The test images and labels the results were scored on: their digest
        (:func:`digest_test_set`) goes into ``results.json`` as ``test_set``, and a reload
        checks it.  Without it a reloaded run is shown as unverified.

    Returns
    -------
    bytes
        The zip: ``config.json``, ``results.json``, ``history.csv``, ``reproduce.py`` and,
        when the CSVM has filters, ``filters.npy``.
    """
    summary = {
        key: None
        if r is None
        else {
            k: jsonable(v)
            for k, v in r.items()
            # Test predictions stay: a run loaded back tests its models against each
            # other with them (McNemar); history and filters have files of their own.
            if k not in ("history", "filters", "start_filters")
        }
        for key, r in results.items()
    }
    facts = jsonable(extra or {})
    if test_set is not None:
        images, labels = test_set
        facts["test_set"] = {"sha256": digest_test_set(images, labels), "n": int(len(labels))}
    csvm_result = results.get("csvm") or {}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("config.json", json.dumps(config.to_dict(), indent=2))
        zf.writestr("results.json", json.dumps({**summary, **facts}, indent=2))
        zf.writestr("history.csv", history_csv(csvm_result.get("history", [])))
        if csvm_result.get("filters") is not None:
            npy = io.BytesIO()
            np.save(npy, np.asarray(csvm_result["filters"], dtype=np.float64), allow_pickle=False)
            zf.writestr("filters.npy", npy.getvalue())
        zf.writestr("reproduce.py", python_snippet(config))
    return buffer.getvalue()


def read_member(data: bytes, name: str) -> bytes:
    """One member of a zip, reading at most :data:`MAX_IMPORT_BYTES` inflated bytes
    whatever its header declares (a 0.3 MB zip can inflate to gigabytes).

    Raises
    ------
    BundleError
        ``data`` is no zip, has no member ``name``, the member cannot be read (encrypted,
        compressed with a method this server does not read, damaged), or it inflates
        beyond the bound; the message names the member.
    """
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (*MEMBER_ERRORS, ValueError):
        raise BundleError(
            f"The file cannot be opened as a zip (it is damaged, or not a zip). {_UPLOAD_EXPORT}"
        ) from None
    with zf:
        if name not in zf.namelist():
            raise BundleError(
                f"The zip has no {name}, which every run export holds. {_UPLOAD_EXPORT}"
            )
        try:
            with zf.open(name) as member:
                content = member.read(MAX_IMPORT_BYTES + 1)
        except MEMBER_ERRORS as exc:
            raise BundleError(f"{member_problem(name, exc)}: export the run again.") from None
    if len(content) > MAX_IMPORT_BYTES:
        holds = _HOLDS.get(name, "part of a run")
        raise BundleError(
            f"{name} in the zip unpacks to more than {MAX_IMPORT_BYTES:,} bytes, the most this "
            f"server reads of it: a run export's {name} holds {holds}, so this is not one. "
            f"{_UPLOAD_EXPORT}"
        )
    return content


def parse_json(data: bytes, name: str) -> Any:
    """A JSON member of an uploaded run export, parsed; every way it can fail is a
    :class:`BundleError` in plain words.

    Parameters
    ----------
    data : bytes
        The member's bytes (bounded by :func:`read_member`).
    name : str
        The member's name ("config.json", "results.json"), for the message.

    Returns
    -------
    Any
        What the JSON holds; its shape is the caller's to check.

    Raises
    ------
    BundleError
        The bytes are not UTF-8 JSON, are nested too deeply, or hold a whole number too
        long to read (Python refuses to read one of more than 4,300 digits).

    Examples
    --------
    >>> parse_json(b'{"seed": 1}', "config.json")
    {'seed': 1}
    >>> parse_json(b"[" * 100_000, "config.json")
    Traceback (most recent call last):
    ...
    csvm.runs.persistence.BundleError: config.json is not what a run export holds: its JSON
    is nested too deeply to be a run export's. ...
    """
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        why = "it is not JSON text"
    except RecursionError:
        why = "its JSON is nested too deeply to be a run export's"
    except ValueError:  # not a JSONDecodeError: an integer of more than 4,300 digits
        why = "it holds a whole number thousands of digits long, which no run holds"
    raise BundleError(f"{name} is not what a run export holds: {why}. {_UPLOAD_EXPORT}")


def load_config(data: bytes) -> tuple[RunConfig, list[str]]:
    """The RunConfig of a run bundle or ``config.json``, and the problems met reading it."""
    if len(data) > MAX_IMPORT_BYTES:
        raise BundleError(
            f"The file is {len(data):,} bytes; a run takes at most {MAX_IMPORT_BYTES:,}."
        )
    if data[:4] == b"PK\x03\x04":
        data = read_member(data, "config.json")
    values = parse_json(data, "config.json")
    if not isinstance(values, Mapping):
        raise BundleError("config.json does not hold a mapping of settings.")
    config, problems = parse(values, source="the file")
    return config, [p.message for p in problems]
