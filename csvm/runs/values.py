"""One setting's value from a raw one (URL text, a preset, a form, a typed value).

Never trusts its input: each refusal is a ValueError whose message says why, without the
setting's name, so callers can word it for their source (a link, a flag, a constructor).
"""

from __future__ import annotations

import math
import re
from typing import Any

from csvm.model.layers import format_layers, parse_layers
from csvm.runs.fields import MAX_CLASSES, MAX_RAW_LENGTH, MIN_CLASSES, SPECS, Spec, fmt

__all__ = [
    "none_is_typed",
    "parse_classes",
    "parse_layers_value",
    "parse_number",
    "parse_value",
    "show",
    "shorten",
]


def none_is_typed(spec) -> bool:
    """Whether typing "none" gives a text setting its None (protocol: a random split); a
    choice called "none" (the regulariser's) stays that choice.  (Other kinds always read
    "none" as None.)"""
    return spec.none_label is not None and "none" not in (spec.choices or ())


def shorten(raw: str, limit: int = 40) -> str:
    """``raw`` cut to ``limit`` characters, saying how long it was (messages quote it)."""
    return raw if len(raw) <= limit else raw[:limit] + f"… ({len(raw)} characters)"


def show(name: str, value: Any) -> str:
    """A setting's value in words: its none label, a comma list, or the number."""
    if value is None:
        return SPECS[name].none_label or "none"
    if isinstance(value, tuple):
        return ", ".join(value) or "none"
    return fmt(value)


def parse_number(spec: Spec, raw: Any) -> float | int:
    """A finite number of the spec's kind, or ValueError saying why not."""
    if isinstance(raw, bool):
        raise ValueError("is not a number")
    if isinstance(raw, int | float):
        value = float(raw)
    else:
        text = str(raw).strip()
        try:
            value = float(text)
        except ValueError:
            raise ValueError("is not a number") from None
    if not math.isfinite(value):
        raise ValueError("is not a finite number")
    if spec.kind == "int":
        if value != int(value):
            raise ValueError("is not a whole number")
        return int(value)
    return value


def parse_value(name: str, raw: Any) -> Any:
    """The value of one setting from a raw value (str from a URL, or a typed value).

    Raises ValueError with the reason (without the parameter's name) when it cannot be used.
    """
    spec = SPECS[name]
    if isinstance(raw, str) and len(raw) > MAX_RAW_LENGTH:
        raise ValueError(f"is too long ({len(raw)} characters)")
    # "none" is None, except for a text setting where it is a choice (regulariser "none");
    # a text setting with a None of its own (protocol's "random split") takes it too.
    is_none = raw is None or (
        isinstance(raw, str)
        and raw.strip().lower() in ("none", "null")
        and (spec.kind != "str" or none_is_typed(spec))
    )
    if spec.kind == "classes":
        return parse_classes(raw)
    if spec.kind == "layers":
        return parse_layers_value(raw)
    if spec.none_label is not None and (
        is_none or (isinstance(raw, str) and raw.strip() == spec.none_label)
    ):
        return None
    if raw is None and spec.kind != "set":
        raise ValueError("cannot be empty")
    if spec.kind == "bool":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise ValueError("is not true or false")
    if spec.kind == "set":
        if raw is None:
            items: list[str] = []
        elif isinstance(raw, str):
            # "-" (a URL's empty set) or "none" (a command line's) leave it empty.
            items = [s.strip() for s in raw.split(",") if s.strip() not in ("", "-", "none")]
        else:
            items = [str(s) for s in raw]
        unknown = [s for s in items if s not in spec.choices]
        if unknown:
            raise ValueError(f"holds an unknown choice {shorten(unknown[0])!r}")
        return tuple(c for c in spec.choices if c in items)  # canonical order, no repeats
    if spec.kind == "str":
        if not isinstance(raw, str | int) or isinstance(raw, bool):
            raise ValueError("is not text")
        value = str(raw).strip()
        allowed = spec.pattern is not None and re.fullmatch(spec.pattern, value)
        if spec.choices is not None and value not in spec.choices and not allowed:
            raise ValueError("is not a known choice")
        if not value or len(value) > 64 or not value.isprintable():
            raise ValueError("is not a valid name")
        return value
    value = parse_number(spec, raw)
    if (spec.low is not None and value < spec.low) or (spec.high is not None and value > spec.high):
        raise ValueError("is out of range")
    return value


def parse_layers_value(raw: Any) -> str | None:
    """The canonical ``layers`` value: None (one layer) or the stack written back in its
    canonical form ("5x5x2-abs-avg2,3x3x4")."""
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise ValueError("is not text")
    text = raw.strip()
    if text.lower() in ("", "none", "null"):
        return None
    try:
        return format_layers(parse_layers(text))
    except ValueError as err:
        # parse_layers's message quotes the value and shows the format; keep its reason.
        reason = str(err).split(": ", 1)[-1].split(". ", 1)[0]
        raise ValueError(f"cannot be read ({reason})") from None


def parse_classes(raw: Any) -> str | None:
    """The canonical ``classes`` value: None (a pair), "all", or "a,b,c" (3 to 10 different
    names, stripped, in the order given).  Which names exist depends on the dataset: that
    is checked by :meth:`RunConfig.class_list`."""
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise ValueError("is not text")
    text = raw.strip()
    if text.lower() in ("", "none", "null", "pair", SPECS["classes"].none_label):
        return None
    if text.lower() == "all":
        return "all"
    items = [s.strip() for s in text.split(",")]
    if any(not s or len(s) > 64 or not s.isprintable() for s in items):
        raise ValueError("holds an empty or invalid class name")
    seen: set[str] = set()
    for item in items:
        if item.lower() in seen:
            raise ValueError(f"names the class {shorten(item)!r} twice")
        seen.add(item.lower())
    if not MIN_CLASSES <= len(items) <= MAX_CLASSES:
        raise ValueError(f"names {len(items)} class{'es' if len(items) != 1 else ''}")
    return ",".join(items)
