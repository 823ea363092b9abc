"""A run bundle read back: the Train page's export zip, checked, for the run to be shown
again (issue 23, "Reload a run").

Everything in the file is untrusted: every member is read with a bound on the bytes
actually inflated (:func:`csvm.runs.persistence._read_member`), the settings go through
the same :func:`csvm.runs.config.parse` as a link, the filters through
:func:`csvm.analysis.lab_filters.load_filters`, and of each model's result only known
fields of the right type and range are kept.  Nothing is unpickled.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from csvm.analysis.lab_filters import load_filters
from csvm.exceptions import CSVMError
from csvm.runs.config import RunConfig, parse
from csvm.runs.persistence import MAX_IMPORT_BYTES, BundleError, _read_member

__all__ = ["RunBundle", "load_bundle"]

#: The models a bundle may hold results of.
MODELS = ("csvm", "svm", "cnn")
#: Most steps, and most test images, a bundle may hold.
MAX_STEPS = 20_000
MAX_TEST = 100_000
_STATUSES = ("done", "stopped", "diverged")


@dataclass
class RunBundle:
    """What a run export holds, checked.

    Attributes
    ----------
    config : RunConfig
    problems : list of str
        Settings that could not be read and kept their default (as for a link).
    results : dict
        Model -> its result (only known fields), or None where the run had none.
    history : list of dict
        The CSVM's recorded steps (scalars only), in order.
    filters : ndarray or None
        The CSVM's final filters as the run returned them: (k, p, q) for grey images,
        (k, C, p, q) for colour ones.
    """

    config: RunConfig
    problems: list[str]
    results: dict[str, dict[str, Any] | None]
    history: list[dict[str, Any]] = field(default_factory=list)
    filters: np.ndarray | None = None


def _number(value: Any, low: float = -math.inf, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BundleError(f"results.json holds {value!r} where a number belongs.")
    if not math.isfinite(value) or not low <= value <= high:
        raise BundleError(f"results.json holds {value!r}, outside [{low:g}, {high:g}].")
    return value


def _int_list(value: Any, name: str, limit: int) -> list[int]:
    if not isinstance(value, list) or len(value) > limit:
        raise BundleError(f"{name} in results.json is not a list of at most {limit:,} values.")
    return [int(_number(v, -1e9, 1e9)) for v in value]


def _checked_result(model: str, raw: Any) -> dict[str, Any] | None:
    """The known fields of one model's result, each of the right type and range."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise BundleError(f"results.json: the {model} result is not a mapping.")
    out: dict[str, Any] = {"model": model}
    for key in ("test_accuracy", "train_accuracy"):
        out[key] = None if raw.get(key) is None else _number(raw[key], 0.0, 1.0)
    out["seconds"] = _number(raw.get("seconds", 0.0), 0.0, 1e7)
    status = raw.get("status", "done")
    if status not in _STATUSES:
        raise BundleError(f"results.json: the {model} result's status {status!r} is unknown.")
    out["status"] = status
    for key in ("n_test", "n_misclassified", "n_support"):
        if raw.get(key) is not None:
            out[key] = int(_number(raw[key], 0, MAX_TEST))
    for key in ("test_predictions", "misclassified"):
        if raw.get(key) is not None:
            out[key] = _int_list(raw[key], key, MAX_TEST)
    if raw.get("confusion") is not None:
        rows = raw["confusion"]
        if not isinstance(rows, list) or len(rows) > 100:
            raise BundleError("confusion in results.json is not a small matrix.")
        out["confusion"] = [_int_list(r, "a confusion row", 100) for r in rows]
    if isinstance(raw.get("label"), str):
        out["label"] = raw["label"][:80]
    diverged = raw.get("diverged")
    if isinstance(diverged, Mapping) and isinstance(diverged.get("message", ""), str):
        eta = diverged.get("suggested_eta")
        out["diverged"] = {
            "message": str(diverged.get("message", ""))[:500],
            "suggested_eta": None if eta is None else _number(eta, 0.0, 1e6),
        }
    return out


def _cell(text: str) -> Any:
    """One history.csv value back to its type (bool, int, float or a short string)."""
    if text in ("True", "False"):
        return text == "True"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return text[:50]
    if not math.isfinite(value):
        raise BundleError(f"history.csv holds {text!r}: every step's numbers must be finite.")
    return value


def _history(text: str) -> list[dict[str, Any]]:
    rows = []
    for k, row in enumerate(csv.DictReader(io.StringIO(text))):
        if k >= MAX_STEPS:
            raise BundleError(f"history.csv holds more than {MAX_STEPS:,} steps.")
        rows.append({key: _cell(v) for key, v in row.items() if key and v not in ("", None)})
    return rows


def load_bundle(data: bytes) -> RunBundle:
    """A run export (zip) read back and checked.

    Parameters
    ----------
    data : bytes
        The zip the Train page's "Download run" button gave.

    Returns
    -------
    RunBundle

    Raises
    ------
    BundleError
        Too large, not a run export, or holding values of the wrong kind; the message
        says which.

    Examples
    --------
    >>> from csvm.runs.persistence import export_run
    >>> from csvm.runs.config import RunConfig
    >>> zipped = export_run(RunConfig(), {"csvm": None})
    >>> load_bundle(zipped).config == RunConfig()
    True
    """
    if len(data) > MAX_IMPORT_BYTES:
        raise BundleError(
            f"The file is {len(data):,} bytes; a run export takes at most {MAX_IMPORT_BYTES:,}."
        )
    if data[:4] != b"PK\x03\x04":
        raise BundleError("Not a zip file: upload the zip that the Train page's Download gave.")
    try:
        values = json.loads(_read_member(data, "config.json").decode("utf-8"))
        results = json.loads(_read_member(data, "results.json").decode("utf-8"))
        history = _history(_read_member(data, "history.csv").decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError, csv.Error) as exc:
        raise BundleError(f"A file in the zip is not what a run export holds ({exc}).") from None
    if not isinstance(values, Mapping) or not isinstance(results, Mapping):
        raise BundleError("config.json or results.json does not hold a mapping.")
    config, problems = parse(values, source="the file")
    checked = {m: _checked_result(m, results[m]) for m in MODELS if m in results}
    if "csvm" not in checked:
        raise BundleError("results.json has no CSVM result: this is not a Train run's export.")
    filters = None
    if checked["csvm"] is not None:
        try:
            filters = load_filters(data, max_bytes=MAX_IMPORT_BYTES)
        except CSVMError:
            filters = None  # a run stopped before its first step has none
        if filters is not None and filters.shape[1] == 1:
            filters = filters[:, 0]  # grey filters as a run returns them, (k, p, q)
    return RunBundle(config, [p.message for p in problems], checked, history, filters)
