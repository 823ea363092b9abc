"""What a stored run holds, and how each part becomes a column and back.

The settings are the RunConfig's query string (:func:`csvm.runs.query.to_query`, the
same text a shared link carries), results and history are JSON (through the export's
JSON-able conversion, :mod:`csvm.runs.persistence`), filters are little-endian float32
bytes with their shape as JSON.  Owners are stored as a hash (:func:`owner_hash`), never
as the cookie that proves them.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

import numpy as np

from csvm.analysis.stats import wilson_interval
from csvm.exceptions import CSVMError
from csvm.runs.config import RunConfig, parse
from csvm.runs.persistence import jsonable
from csvm.runs.query import to_query

__all__ = [
    "FINAL",
    "RUNNING",
    "RunSummary",
    "StoreError",
    "StoredRun",
    "board_fields",
    "check_class_code",
    "check_id",
    "check_name",
    "config_from_text",
    "config_text",
    "decode_array",
    "dumps",
    "encode_array",
    "history_list",
    "owner_hash",
    "split_results",
    "thumbnail",
]

#: The status of a run whose progress is being checkpointed.
RUNNING = "running"
#: The statuses a run can end with ("interrupted": its server died while it trained).
FINAL = ("done", "stopped", "diverged", "error", "interrupted")

_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
_CLASS_CODE = re.compile(r"[A-Za-z0-9_-]{1,40}")
_MAX_NAME = 200
#: Thumbnails keep this many filters of at most this many pixels a side.
_THUMB_FILTERS, _THUMB_SIDE = 4, 16


class StoreError(CSVMError, RuntimeError):
    """The run store cannot be opened, read or written; the message says what to do."""


@dataclass(frozen=True)
class RunSummary:
    """One line of a board: what a list of runs shows without loading whole runs.

    ``owner`` is the owner's hash (compare with :func:`owner_hash`); ``interval`` the 95 %
    Wilson interval of ``accuracy`` (both None until the run has a test accuracy);
    ``thumbnail`` a few of the learned filters, float32 ``(k, h, w)``, or None; ``query``
    the settings as a URL query string (the run's link opens them).
    """

    id: str
    name: str
    owner: str | None
    class_code: str | None
    status: str
    step: int
    model: str
    dataset: str
    pair: str
    accuracy: float | None
    interval: tuple[float, float] | None
    thumbnail: np.ndarray | None
    query: str
    created: float
    updated: float
    hidden: bool


@dataclass(frozen=True)
class StoredRun:
    """A whole stored run, as :meth:`RunStore.get` returns it.

    ``config`` is always a valid RunConfig; ``config_problems`` lists what could not be read
    back (a setting a newer or older version spelled differently), empty as a rule.
    ``results`` maps a model ("csvm", "svm", "cnn") to its result as JSON values (arrays
    are lists; ``history`` and ``filters`` have fields of their own).  ``filters`` are
    float32.  ``status`` is "running" while a server checkpoints it, else one of
    :data:`FINAL`; an "interrupted" run stopped at ``step`` with the last checkpointed
    history and filters.  Times are seconds since the epoch, from the database's clock.
    """

    id: str
    name: str
    owner: str | None
    class_code: str | None
    status: str
    step: int
    config: RunConfig
    results: dict[str, Any]
    history: list[dict[str, Any]]
    filters: np.ndarray | None
    created: float
    updated: float
    finished: float | None
    hidden: bool
    server: str | None
    nbytes: int
    config_problems: list[str] = field(default_factory=list)

    @property
    def interrupted(self) -> bool:
        """Whether its server died while it trained (it stopped at :attr:`step`)."""
        return self.status == "interrupted"

    def owned_by(self, owner: str | None) -> bool:
        """Whether ``owner`` (the app's owner id, not its hash) made this run."""
        return owner is not None and self.owner == owner_hash(owner)


def owner_hash(owner: str | None) -> str | None:
    """The form an owner id is stored in: a SHA-256 of it (32 hex digits), or None.

    The owner cookie proves who may stop a run; the store keeps only this hash, so a
    reader of the database cannot pose as a browser.
    """
    if owner is None:
        return None
    return hashlib.sha256(b"csvm-run-owner\0" + str(owner).encode()).hexdigest()[:32]


def check_id(run_id: Any) -> str:
    """``run_id`` if it is a usable run id, else a StoreError saying what one looks like."""
    if not isinstance(run_id, str) or not _ID.fullmatch(run_id):
        raise StoreError(
            f"Run id {str(run_id)[:80]!r} cannot be stored: use 1 to 64 letters, digits "
            "or . _ : - (the app's run ids are like that)."
        )
    return run_id


def check_class_code(code: Any) -> str | None:
    """``code`` if it is None or a usable class code, else a StoreError."""
    if code is None:
        return None
    if not isinstance(code, str) or not _CLASS_CODE.fullmatch(code):
        raise StoreError(
            f"Class code {str(code)[:80]!r} is not allowed: use 1 to 40 letters, digits, "
            "'-' or '_' (for example 'maths-7b')."
        )
    return code


def check_name(name: Any) -> str:
    """A display name cut to 200 characters (control characters become spaces)."""
    text = "" if name is None else str(name)
    return re.sub(r"[\x00-\x1f\x7f]", " ", text)[:_MAX_NAME]


def config_text(config: RunConfig) -> str:
    """The settings as the query string a link carries ("" for the defaults)."""
    if not isinstance(config, RunConfig):
        raise StoreError(
            f"A run's config must be a csvm.RunConfig, not {type(config).__name__}: build "
            "one with csvm.runs.config.parse(values)."
        )
    return urlencode(to_query(config))


def config_from_text(text: str) -> tuple[RunConfig, list[str]]:
    """The RunConfig of a stored query string, and the problems met reading it."""
    # parse, not from_query: a stored run holds settings only, so an unknown name is news
    # (a setting renamed since), where a page's URL also carries other keys.
    values = dict(parse_qsl(text or "", keep_blank_values=True))
    config, problems = parse(values, source="the stored run")
    return config, [p.message for p in problems]


def dumps(value: Any) -> str:
    """JSON text of a result or history (arrays become lists)."""
    # A value JSON cannot hold is kept as its text: a run is never lost for one odd field.
    return json.dumps(jsonable(value), default=str, separators=(",", ":"))


def encode_array(array: Any) -> tuple[bytes | None, str | None]:
    """Little-endian float32 bytes and the shape as JSON (None, None for no array)."""
    if array is None:
        return None, None
    try:
        a = np.ascontiguousarray(np.asarray(array, dtype="<f4"))
    except (TypeError, ValueError):
        raise StoreError(
            "A run's filters must be one numeric array (e.g. shape (n_filters, 5, 5)); "
            f"got {type(array).__name__} that is not."
        ) from None
    return a.tobytes(), json.dumps(list(a.shape))


def decode_array(data: bytes | memoryview | None, shape: str | None) -> np.ndarray | None:
    """The float32 array of :func:`encode_array` (a StoreError if bytes and shape differ)."""
    if data is None or shape is None:
        return None
    dims = tuple(int(d) for d in json.loads(shape))
    raw = bytes(data)
    if len(raw) != 4 * math.prod(dims):
        raise StoreError(
            f"A stored filter array holds {len(raw)} bytes but its shape {dims} needs "
            f"{4 * math.prod(dims)}: the run store is damaged; delete this run."
        )
    return np.frombuffer(raw, dtype="<f4").reshape(dims).astype(np.float32)


def thumbnail(filters: Any) -> np.ndarray | None:
    """A few filters, small: float32 ``(k, h, w)`` with k <= 4 and h, w <= 16 (or None)."""
    if filters is None:
        return None
    a = np.asarray(filters, dtype=np.float32)
    if a.ndim < 2 or a.size == 0:
        return None
    tiles = a.reshape(-1, a.shape[-2], a.shape[-1])[:_THUMB_FILTERS]
    # Larger filters are sampled with a stride, so a thumbnail stays a few hundred bytes.
    sy = max(1, math.ceil(tiles.shape[1] / _THUMB_SIDE))
    sx = max(1, math.ceil(tiles.shape[2] / _THUMB_SIDE))
    return np.ascontiguousarray(tiles[:, ::sy, ::sx])


def _headline(results: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The result a board shows: the CSVM's, else the first with a test accuracy."""
    if isinstance(results.get("csvm"), Mapping):
        return results["csvm"]
    for value in results.values():
        if isinstance(value, Mapping) and "test_accuracy" in value:
            return value
    return None


def board_fields(config: RunConfig, results: Mapping[str, Any] | None) -> dict[str, Any]:
    """The columns a board lists: model, dataset, pair, accuracy and its interval."""
    pair = config.classes if config.multiclass else f"{config.class_a} vs {config.class_b}"
    out: dict[str, Any] = {
        "model": config.model,
        "dataset": config.dataset,
        "pair": str(pair),
        "accuracy": None,
        "acc_low": None,
        "acc_high": None,
    }
    headline = _headline(results or {})
    if headline is None or headline.get("test_accuracy") is None:
        return out
    accuracy = float(headline["test_accuracy"])
    if not math.isfinite(accuracy):
        return out
    out["accuracy"] = accuracy
    n = int(headline.get("n_test") or 0)
    if n > 0 and 0.0 <= accuracy <= 1.0:
        out["acc_low"], out["acc_high"] = wilson_interval(round(accuracy * n), n)
    return out


def split_results(
    results: Mapping[str, Any] | None,
) -> tuple[dict[str, Any], list[dict[str, Any]] | None, Any]:
    """Results without the headline model's history and filters, and those two."""
    if results is None:
        return {}, None, None
    if not isinstance(results, Mapping):
        raise StoreError(
            f"A run's results must be a mapping of model -> result, not {type(results).__name__}."
        )
    kept: dict[str, Any] = {}
    history, filters = None, None
    for key, value in results.items():
        if isinstance(value, Mapping) and key == "csvm":
            history, filters = value.get("history"), value.get("filters")
            value = {k: v for k, v in value.items() if k not in ("history", "filters")}
        kept[str(key)] = value
    return kept, history, filters


def history_list(history: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """A history as a list of plain dicts (a StoreError for anything else)."""
    if history is None:
        return []
    if isinstance(history, str | bytes) or not all(isinstance(r, Mapping) for r in history):
        raise StoreError("A run's history must be a sequence of dicts, one per recorded step.")
    return [dict(r) for r in history]
