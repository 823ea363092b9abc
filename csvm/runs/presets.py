"""The presets: named RunConfigs (the thesis's tables and the classroom runs), shipped as
package data in ``csvm/runs/presets.json`` so the app, the tests and an installed library
read the same file."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from csvm.runs.config import RunConfig, parse

__all__ = ["PRESETS_PATH", "find_preset", "load_presets", "preset_config", "preset_key"]

#: The presets file (package data).
PRESETS_PATH = Path(__file__).with_name("presets.json")


@lru_cache(maxsize=1)
def _read() -> str:
    return PRESETS_PATH.read_text(encoding="utf-8")


def load_presets() -> list[dict[str, Any]]:
    """Every preset as written in the file: ``name``, ``description``, ``config`` (a
    mapping of RunConfig fields) and whatever else the file holds; a fresh list each call.

    Examples
    --------
    >>> from csvm.runs.presets import load_presets
    >>> "config" in load_presets()[0]
    True
    """
    return json.loads(_read())


def preset_key(name: str) -> str:
    """A preset's name as a command-line word: lower case, words joined by hyphens.

    Examples
    --------
    >>> preset_key("Shapes: filters find the bars")
    'shapes-filters-find-the-bars'
    >>> preset_key("Thesis 4.1: MNIST 3 vs 5")
    'thesis-4-1-mnist-3-vs-5'
    """
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def find_preset(wanted: str) -> dict[str, Any]:
    """The preset named ``wanted``: its name, its key (:func:`preset_key`) or the start
    of one key ("shapes", "thesis-4-4").

    Raises
    ------
    ValueError
        When no preset, or more than one, answers to ``wanted``; the message lists the keys.

    Examples
    --------
    >>> find_preset("shapes")["name"]
    'Shapes: filters find the bars'
    >>> find_preset("Thesis 4.4: CIFAR-10")["config"]["dataset"]
    'cifar10'
    """
    presets = load_presets()
    key = preset_key(wanted)
    exact = [p for p in presets if preset_key(p["name"]) == key]
    found = exact or [p for p in presets if key and preset_key(p["name"]).startswith(key)]
    if len(found) == 1:
        return found[0]
    keys = ", ".join(preset_key(p["name"]) for p in presets)
    if not found:
        raise ValueError(f"No preset is called {wanted!r}; the presets are: {keys}.")
    names = ", ".join(preset_key(p["name"]) for p in found)
    raise ValueError(f"{wanted!r} names several presets ({names}): give more of one.")


def preset_config(wanted: str) -> RunConfig:
    """The settings of the preset :func:`find_preset` finds for ``wanted``.

    Raises
    ------
    ValueError
        As :func:`find_preset`, or when the preset's settings cannot be read.
    """
    preset = find_preset(wanted)
    config, problems = parse(preset["config"], source=f"the preset {preset['name']!r}")
    if problems:
        raise ValueError(" ".join(p.message for p in problems))
    return config
