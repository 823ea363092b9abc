"""Small helpers shared by the file readers."""

from __future__ import annotations

import errno
from pathlib import Path

from csvm.exceptions import DatasetError

__all__ = [
    "file_key",
    "os_error",
]


def file_key(path: Path) -> tuple[str, int, int]:
    """Resolved path, mtime and size: a cache key that notices a replaced file."""
    st = path.stat()
    return str(path.resolve()), st.st_mtime_ns, st.st_size


def os_error(path: Path, exc: OSError) -> DatasetError:
    """A DatasetError that says what the operating system refused, and what to do.

    The file's content is not at fault here, so the message never calls it corrupt.
    """
    if isinstance(exc, PermissionError):
        return DatasetError(
            f"{path}: permission denied: this user may not read the file. Make it "
            f"readable (for example `chmod a+r {path}`) or point data_dir / CSVM_DATA_DIR "
            "at a copy you can read."
        )
    if isinstance(exc, FileNotFoundError):
        return DatasetError(
            f"{path} disappeared while it was being read (file not found): was a fetch or a "
            "clean-up running at the same time? Try again."
        )
    if isinstance(exc, IsADirectoryError):
        return DatasetError(f"{path} is a folder, not a data file: move it out of the way.")
    name = errno.errorcode.get(exc.errno, "") if exc.errno is not None else ""
    reason = exc.strerror or str(exc) or type(exc).__name__
    code = f" ({name})" if name else ""
    return DatasetError(
        f"{path} cannot be read: {reason}{code}. This is the operating system's error, "
        "not a problem with the data: check the disk or network share and try again."
    )
