"""The resumable benchmarks' JSON caches: read, write atomically, and test correctness
per image packed as bits (the saved runs' format: csvm.analysis.reproduced)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from csvm.analysis.reproduced import pack_correct, unpack_correct

__all__ = ["load_cache", "pack_correct", "save_cache", "unpack_correct"]


def load_cache(path: Path) -> dict[str, Any]:
    """The cache at ``path`` ({} when there is none yet)."""
    return json.loads(path.read_text()) if path.exists() else {}


def save_cache(path: Path, cache: dict[str, Any], indent: int = 1) -> None:
    """Write ``cache`` to ``path``; a kill mid-write never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(cache, indent=indent, sort_keys=True))
    os.replace(tmp, path)
