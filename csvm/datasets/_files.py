"""Small helpers shared by the file readers."""

from __future__ import annotations

from pathlib import Path


def file_key(path: Path) -> tuple[str, int, int]:
    """Resolved path, mtime and size: a cache key that notices a replaced file."""
    st = path.stat()
    return str(path.resolve()), st.st_mtime_ns, st.st_size
