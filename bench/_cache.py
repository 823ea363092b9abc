"""The resumable benchmarks' JSON caches: read, write atomically, and test correctness
per image packed as bits."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import numpy as np


def load_cache(path: Path) -> dict[str, Any]:
    """The cache at ``path`` ({} when there is none yet)."""
    return json.loads(path.read_text()) if path.exists() else {}


def save_cache(path: Path, cache: dict[str, Any], indent: int = 1) -> None:
    """Write ``cache`` to ``path``; a kill mid-write never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(cache, indent=indent, sort_keys=True))
    os.replace(tmp, path)


def pack_correct(correct: np.ndarray) -> str:
    """Which test images were right, as base64 bits."""
    return base64.b64encode(np.packbits(correct.astype(bool)).tobytes()).decode()


def unpack_correct(text: str, n: int) -> np.ndarray:
    """:func:`pack_correct`'s ``n`` booleans back."""
    bits = np.unpackbits(np.frombuffer(base64.b64decode(text), dtype=np.uint8))
    return bits[:n].astype(bool)
