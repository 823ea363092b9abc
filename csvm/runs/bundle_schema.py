"""The schema a run export is checked against on upload: its ``history.csv`` columns and
their types, and each model's result in ``results.json``.

Everything here is read once, when the file is uploaded, and in time linear in its size:
the history's shape is bounded before its rows are parsed (no more columns than a step
event has fields, no more rows than the run's settings record), each value is parsed by
its column's type, and a result keeps only known fields of the right type, range and
shape.  What passes cannot make the Train page's views (the owner's or a viewer's)
raise; what fails is refused with a message naming the file, the field and the fix.

The history's columns and their types come from the step events' own declarations
(:mod:`csvm.events`), so a field a trainer adds there is known here too.
"""

from __future__ import annotations

import csv
import io
import math
import re
import types
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from csvm.events import DivergenceEvent, HalfStepEvent, IterationEvent
from csvm.runs.config import MODEL_LABELS, RunConfig
from csvm.runs.fields import tuned_label
from csvm.runs.persistence import BundleError

__all__ = ["HISTORY_COLUMNS", "check_result", "read_history"]

#: The kind of a CSVM's step events, by its model.
STEP_KIND = {"kcsvm": "iteration", "lcsvm": "half_step"}
_EVENTS = {"iteration": IterationEvent, "half_step": HalfStepEvent, "divergence": DivergenceEvent}
_STATUSES = ("done", "stopped", "diverged")
#: Most test images a result may hold predictions for.
MAX_TEST = 100_000
#: The largest magnitude of a number in a history: far beyond any run's, and far enough
#: below float's limit that a figure's arithmetic on it cannot overflow.
MAX_MAGNITUDE = 1e100
_HELP = "was this file made by the Train page's Download run?"


def _scalar(hint: Any) -> tuple[type, tuple[Any, ...]] | None:
    """A field's CSV type and allowed values (empty: any), or None for arrays and dicts."""
    origin = get_origin(hint)
    if origin is Literal:
        values = get_args(hint)
        return type(values[0]), values
    if origin in (Union, types.UnionType):
        inner = [a for a in get_args(hint) if a is not type(None)]
        return _scalar(inner[0]) if len(inner) == 1 else None
    return (hint, ()) if hint in (bool, int, float, str) else None


#: kind -> column -> (type, allowed values), from the events' TypedDicts.
FIELDS: dict[str, dict[str, tuple[type, tuple[Any, ...]]]] = {
    kind: {n: s for n, h in get_type_hints(event).items() if (s := _scalar(h)) is not None}
    for kind, event in _EVENTS.items()
}
#: Every column a run export's history.csv may have.
HISTORY_COLUMNS: frozenset[str] = frozenset().union(*FIELDS.values())
#: What each step must hold for the figures (csvm.figures.training_svg) to draw it.
_REQUIRED = ("iteration", "objective")
#: Numbers with a narrower range than ±MAX_MAGNITUDE (every int's is [0, 1e9]).
_RANGES = {
    "train_accuracy": (0.0, 1.0),
    "seconds": (0.0, 1e7),
    "eta": (0.0, MAX_MAGNITUDE),
    "suggested_eta": (0.0, MAX_MAGNITUDE),
}
#: Text columns: longest value and the characters allowed (None: any).
_TEXT = {"message": (500, None), "model": (20, r"[a-z]+"), "cause": (40, r"[a-z-]+")}
_INT = re.compile(r"[+-]?\d{1,12}")
_FLOATS = (-MAX_MAGNITUDE, MAX_MAGNITUDE)


def _out_of_range(text: str, name: str, low: float, high: float, where: str) -> BundleError:
    try:
        finite = math.isfinite(float(text))
    except ValueError:
        finite = False
    if not finite:
        return BundleError(
            f"history.csv, {where}: {name} is {text[:40]!r}, not a finite number; every "
            f"step's numbers must be finite ({_HELP})"
        )
    return BundleError(f"history.csv, {where}: {name} is {text[:40]}, outside [{low:g}, {high:g}].")


def _value(text: str, name: str, spec: tuple[type, tuple[Any, ...]], where: str) -> Any:
    """One history.csv cell, parsed by its column's type and checked against its range."""
    kind, allowed = spec
    if kind is float:  # most cells: first, and the range check also refuses NaN
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        low, high = _RANGES.get(name, _FLOATS)
        if low <= value <= high:
            return value
        raise _out_of_range(text, name, low, high, where)
    if kind is int:
        if not _INT.fullmatch(text):
            raise BundleError(f"history.csv, {where}: {name} is {text[:40]!r}, not a whole number.")
        if 0 <= int(text) <= 1e9:
            return int(text)
        raise _out_of_range(text, name, 0, 1e9, where)
    if kind is bool:
        if text not in ("True", "False"):
            raise BundleError(f"history.csv, {where}: {name} is {text[:40]!r}, not True or False.")
        return text == "True"
    longest, pattern = _TEXT.get(name, (50, None))
    if len(text) > longest or (pattern and not re.fullmatch(pattern, text)):
        raise BundleError(f"history.csv, {where}: {name} {text[:40]!r} is not one we know.")
    if allowed and text not in allowed:
        raise BundleError(
            f"history.csv, {where}: {name} is {text[:40]!r}; expected "
            + " or ".join(repr(a) for a in allowed)
            + "."
        )
    return text


def _header(text: str) -> tuple[list[str], list[str], Iterator[list[str]]]:
    """The columns, those dropped as unknown, and a reader of the rows after them.

    The column count is bounded on the raw first line before csv reads it: a 68 kB zip
    can hold a header of 400,000 names.
    """
    first = text.partition("\n")[0]
    if first.count(",") + 1 > len(HISTORY_COLUMNS):
        raise BundleError(
            f"history.csv has {first.count(',') + 1:,} columns; a run export has at most "
            f"{len(HISTORY_COLUMNS)}: {_HELP}"
        )
    rows = csv.reader(io.StringIO(text))
    header = next(rows, [])
    if len(set(header)) != len(header):
        twice = next(n for n in header if header.count(n) > 1)
        raise BundleError(f"history.csv names the column {twice[:40]!r} twice: {_HELP}")
    unknown = [n for n in header if n not in HISTORY_COLUMNS]
    return header, unknown, rows


def _row(
    cells: list[str], header: list[str], config: RunConfig, n_sub: int, where: str
) -> dict[str, Any]:
    """One step (or divergence) of the history, checked against the run's settings."""
    if len(cells) > len(header):
        raise BundleError(
            f"history.csv, {where}: {len(cells)} values for {len(header)} columns ({_HELP})"
        )
    raw = {n: v for n, v in zip(header, cells, strict=False) if v != ""}
    kind = raw.get("kind")
    step_kind = STEP_KIND[config.model]
    if kind not in (step_kind, "divergence"):
        raise BundleError(
            f"history.csv, {where}: kind is {str(kind)[:40]!r}; a {MODEL_LABELS[config.model]} "
            f"run records {step_kind!r} steps (and 'divergence'): {_HELP}"
        )
    fields = FIELDS[kind]
    # A column of another kind (an iteration's field on a divergence row) is left empty
    # by the export; one that is not is not this row's and is left out.
    row = {n: _value(v, n, fields[n], where) for n, v in raw.items() if n in fields}
    if kind != "divergence":
        missing = [n for n in _REQUIRED if n not in row]
        if missing:
            raise BundleError(f"history.csv, {where}: the step has no {missing[0]} ({_HELP})")
    # A divergence names the iteration whose step failed: at most one past the last.
    if row.get("iteration", 0) >= config.n_iter + (kind == "divergence"):
        raise BundleError(
            f"history.csv, {where}: iteration {row['iteration']}, but the run's settings "
            f"train {config.n_iter} iterations."
        )
    if row.get("classifier", 0) >= n_sub:
        raise BundleError(
            f"history.csv, {where}: sub-problem {row['classifier']}, but the run's settings "
            f"have {n_sub}."
        )
    return row


def read_history(
    text: str, config: RunConfig, n_sub: int
) -> tuple[list[dict[str, Any]], list[str]]:
    """A run export's ``history.csv``, bounded and checked against the run's settings.

    Parameters
    ----------
    text : str
        The file, decoded (at most :data:`csvm.runs.persistence.MAX_IMPORT_BYTES`).
    config : RunConfig
        The run's settings (from its ``config.json``): they bound the number of steps.
    n_sub : int
        The run's binary sub-problems (1 for a pair).

    Returns
    -------
    rows : list of dict
        One per step (or divergence), each value of its column's type.
    notes : list of str
        Columns that are not step fields, left out (empty for the app's own exports).

    Raises
    ------
    BundleError
        More columns than a step has fields, more rows than the settings record, a value
        of the wrong type or range, a row that is not a step of this model; the message
        names the row and column.
    """
    header, unknown, rows = _header(text)
    per_problem = config.n_iter * (2 if config.model == "lcsvm" else 1)
    most = (per_problem + 1) * n_sub  # every step, and a divergence per sub-problem
    out = []
    for k, cells in enumerate(rows):
        if k >= most:
            raise BundleError(
                f"history.csv has more than {most:,} rows; a run with these settings "
                f"records at most {most:,}: {_HELP}"
            )
        if cells:
            out.append(_row(cells, header, config, n_sub, f"row {k + 1}"))
    notes = []
    if unknown:
        shown = ", ".join(repr(n[:40]) for n in unknown[:5])
        notes.append(f"history.csv: the columns {shown} are not step fields and were left out.")
    return out, notes


# -- results.json --------------------------------------------------------------------------
def _number(value: Any, low: float = -math.inf, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BundleError(f"results.json holds {str(value)[:60]} where a number belongs.")
    if not math.isfinite(value) or not low <= value <= high:
        raise BundleError(f"results.json holds {value!r}, outside [{low:g}, {high:g}].")
    return value


def _whole(value: Any, low: float, high: float) -> int:
    number = _number(value, low, high)
    if number != int(number):
        raise BundleError(f"results.json holds {number!r} where a whole number belongs.")
    return int(number)


def _int_list(value: Any, name: str, limit: int, low: float = -1e9, high: float = 1e9) -> list:
    if not isinstance(value, list) or len(value) > limit:
        raise BundleError(f"{name} in results.json is not a list of at most {limit:,} values.")
    return [_whole(v, low, high) for v in value]


def _confusion(raw: Any, model: str, k: int) -> list[list[int]]:
    """A k×k matrix of counts, or a refusal naming what is wrong with it."""
    shape = f"{k}×{k} matrix of counts"
    if not isinstance(raw, list) or len(raw) != k:
        raise BundleError(f"results.json: the {model} result's confusion is not a {shape}.")
    rows = []
    for i, row in enumerate(raw):
        if not isinstance(row, list) or len(row) != k:
            raise BundleError(
                f"results.json: the {model} result's confusion is not a {shape} (row {i + 1} "
                f"has {len(row) if isinstance(row, list) else 'no'} values)."
            )
        rows.append(_int_list(row, "a confusion row", k, 0, MAX_TEST))
    return rows


def _label(model: str, config: RunConfig, raw: Any) -> str:
    """The model's name: its own, or its tuned form; nothing else a file claims."""
    plain = MODEL_LABELS[config.model if model == "csvm" else model]
    return raw if raw == tuned_label(plain) else plain


def _diverged(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("message", ""), str):
        return None
    eta = raw.get("suggested_eta")
    return {
        "message": str(raw.get("message", ""))[:500],
        "suggested_eta": None if eta is None else _number(eta, 0.0, 1e6),
    }


def _n_support(raw: Any, n_sub: int) -> int | list[int]:
    """One count, or one per sub-problem (a multi-class CSVM's)."""
    if isinstance(raw, list):
        return _int_list(raw, "n_support", n_sub, 0, 1e9)
    return _whole(raw, 0, 1e9)


def check_result(
    model: str, raw: Any, config: RunConfig, labels: Sequence[int], n_sub: int
) -> dict[str, Any] | None:
    """One model's result from ``results.json``: only known fields, each checked.

    Parameters
    ----------
    model : {"csvm", "svm", "cnn"}
    raw : Any
        What the file holds for it (None: the model has no result).
    config : RunConfig
    labels : sequence of int
        The run's class labels: (-1, 1) for a pair, 0..k-1 for k classes.
    n_sub : int
        The run's binary sub-problems (a multi-class CSVM has one n_support each).

    Returns
    -------
    dict or None
        ``model``, ``label``, ``status``, ``seconds``, ``train_accuracy``,
        ``test_accuracy``, ``n_test``, ``confusion``, ``misclassified``,
        ``n_misclassified`` and, when the file has them, ``test_predictions`` (always
        for several classes), ``n_support``, ``per_class_accuracy`` and ``diverged``:
        as the file claims them (:func:`csvm.runs.bundle.rescore` recomputes the scores).

    Raises
    ------
    BundleError
        A field missing, of the wrong type, range or shape; the message names it.
    """
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise BundleError(f"results.json: the {model} result is not a mapping.")
    status = raw.get("status", "done")
    if status not in _STATUSES:
        raise BundleError(
            f"results.json: the {model} result's status {str(status)[:40]!r} is unknown."
        )
    out: dict[str, Any] = {"model": model, "label": _label(model, config, raw.get("label"))}
    out["status"] = status
    out["seconds"] = _number(raw.get("seconds", 0.0), 0.0, 1e7)
    for key in ("test_accuracy", "train_accuracy"):
        if raw.get(key) is not None:
            out[key] = _number(raw[key], 0.0, 1.0)
    if raw.get("test_predictions") is not None:
        out["test_predictions"] = _int_list(raw["test_predictions"], "test_predictions", MAX_TEST)
        if set(out["test_predictions"]) - set(labels):
            raise BundleError(
                f"results.json: the {model} result's test_predictions hold labels other than "
                f"{', '.join(str(v) for v in labels)}, the classes of its settings."
            )
    n_pred = len(out.get("test_predictions", ()))
    if raw.get("n_test") is not None:
        out["n_test"] = _whole(raw["n_test"], 1, MAX_TEST)
        if n_pred and out["n_test"] != n_pred:
            raise BundleError(
                f"results.json: the {model} result has {n_pred:,} test predictions for "
                f"n_test = {out['n_test']:,} test images."
            )
    n_test = out.get("n_test", n_pred)
    if raw.get("misclassified") is not None:
        out["misclassified"] = _int_list(raw["misclassified"], "misclassified", MAX_TEST, 0, 1e9)
        outside = [i for i in out["misclassified"] if i >= n_test]
        if outside:
            raise BundleError(
                f"results.json: the {model} result's misclassified holds image {outside[0]:,},"
                f" but the run has {n_test:,} test images."
            )
    if raw.get("n_misclassified") is not None:
        out["n_misclassified"] = _whole(raw["n_misclassified"], 0, n_test)
    if raw.get("confusion") is not None:
        out["confusion"] = _confusion(raw["confusion"], model, len(labels))
    return _rest(model, raw, out, len(labels), n_sub)


def _rest(model: str, raw: Mapping, out: dict, k: int, n_sub: int) -> dict[str, Any]:
    """The optional fields, then the required ones that are missing, by name."""
    if raw.get("per_class_accuracy") is not None:
        per_class = raw["per_class_accuracy"]
        if not isinstance(per_class, list) or len(per_class) != k:
            raise BundleError(
                f"results.json: the {model} result's per_class_accuracy is not {k} numbers."
            )
        out["per_class_accuracy"] = [_number(v, 0.0, 1.0) for v in per_class]
    if raw.get("n_support") is not None:
        out["n_support"] = _n_support(raw["n_support"], n_sub)
    diverged = _diverged(raw.get("diverged"))
    if diverged is not None:
        out["diverged"] = diverged
    required = ["test_accuracy", "train_accuracy", "confusion", "misclassified"]
    # Exports before test predictions were kept (v0.1) are read on their confusion;
    # a multi-class view needs the predictions, and its exports always had them.
    required += ["n_misclassified", "n_test"] + ["test_predictions"] * (k > 2)
    for key in required:
        if key not in out:
            raise BundleError(
                f"results.json: the {model} result has no {key}; every result of a run "
                f"export holds it: {_HELP}"
            )
    total = sum(map(sum, out["confusion"]))
    if total != out["n_test"]:
        raise BundleError(
            f"results.json: the {model} result's confusion counts {total:,} test images, "
            f"but n_test is {out['n_test']:,}."
        )
    return out
