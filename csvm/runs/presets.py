"""The presets: named RunConfigs (the thesis's tables and the classroom runs), shipped as
package data in ``csvm/runs/presets.json`` so the app, the tests and an installed library
read the same file."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["PRESETS_PATH", "load_presets"]

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
