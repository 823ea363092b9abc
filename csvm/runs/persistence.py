"""Export and import of runs: JSON, CSV and ``.npy`` in a zip — never pickle.

A run bundle holds ``config.json`` (the RunConfig), ``results.json`` (accuracies, status,
timings of every model), ``history.csv`` (one row per recorded step), ``filters.npy``
and ``reproduce.py`` (a script that reproduces the run with the library).  The settings
load back with :func:`load_config`, the filters with :func:`csvm.analysis.lab.load_filters`
(``allow_pickle=False``).
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from csvm.exceptions import CSVMError
from csvm.runs.config import RunConfig, parse
from csvm.runs.snippet import python_snippet

__all__ = ["BundleError", "export_run", "history_csv", "load_config"]

#: The largest upload read as a run bundle.
MAX_IMPORT_BYTES = 5_000_000


class BundleError(CSVMError, ValueError):
    """A file given to :func:`load_config` cannot be used."""


def history_csv(history: Sequence[Mapping[str, Any]]) -> str:
    """Per-step records as CSV: every scalar column, in first-seen order."""
    columns: list[str] = []
    for record in history:
        for key, value in record.items():
            if key not in columns and not isinstance(value, dict | list | tuple | np.ndarray):
                columns.append(key)
    out = io.StringIO()
    writer = csv.DictWriter(out, columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(history)
    return out.getvalue()


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def export_run(
    config: RunConfig,
    results: Mapping[str, Mapping[str, Any] | None],
    extra: Mapping[str, Any] | None = None,
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
    """
    summary = {
        key: None
        if r is None
        else {
            k: _jsonable(v)
            for k, v in r.items()
            # Test predictions stay: a run loaded back tests its models against each
            # other with them (McNemar); history and filters have files of their own.
            if k not in ("history", "filters", "start_filters")
        }
        for key, r in results.items()
    }
    csvm_result = results.get("csvm") or {}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("config.json", json.dumps(config.to_dict(), indent=2))
        zf.writestr("results.json", json.dumps({**summary, **_jsonable(extra or {})}, indent=2))
        zf.writestr("history.csv", history_csv(csvm_result.get("history", [])))
        if csvm_result.get("filters") is not None:
            npy = io.BytesIO()
            np.save(npy, np.asarray(csvm_result["filters"], dtype=np.float64), allow_pickle=False)
            zf.writestr("filters.npy", npy.getvalue())
        zf.writestr("reproduce.py", python_snippet(config))
    return buffer.getvalue()


def _read_member(data: bytes, name: str) -> bytes:
    """One member of a zip, reading at most :data:`MAX_IMPORT_BYTES` inflated bytes
    whatever its header declares (a 0.3 MB zip can inflate to gigabytes)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf, zf.open(name) as member:
            content = member.read(MAX_IMPORT_BYTES + 1)
    except (KeyError, zipfile.BadZipFile) as exc:
        raise BundleError(f"Not a run bundle with {name}: {exc}") from None
    if len(content) > MAX_IMPORT_BYTES:
        raise BundleError(
            f"{name} in the zip unpacks to more than {MAX_IMPORT_BYTES:,} bytes: a run's "
            "settings are a few hundred bytes; this is not a run bundle."
        )
    return content


def load_config(data: bytes) -> tuple[RunConfig, list[str]]:
    """The RunConfig of a run bundle or ``config.json``, and the problems met reading it."""
    if len(data) > MAX_IMPORT_BYTES:
        raise BundleError(
            f"The file is {len(data):,} bytes; a run takes at most {MAX_IMPORT_BYTES:,}."
        )
    if data[:4] == b"PK\x03\x04":
        data = _read_member(data, "config.json")
    try:
        values = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BundleError("config.json is not JSON.") from None
    if not isinstance(values, Mapping):
        raise BundleError("config.json does not hold a mapping of settings.")
    config, problems = parse(values, source="the file")
    return config, [p.message for p in problems]
