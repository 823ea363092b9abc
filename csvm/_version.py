"""The package's version, written once: in pyproject.toml.

An installed package reads it from its metadata (``importlib.metadata``).  A checkout
imported without installing (``PYTHONPATH=.``, the app run from the repository) has no
metadata, or an older install's, so there ``pyproject.toml`` beside the package is read
instead: the code that runs is the checkout's, and so is its version.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

__all__ = ["DISTRIBUTION", "UNKNOWN", "version"]

#: The name ``pip install`` knows the project by (pyproject.toml's ``[project] name``).
DISTRIBUTION = "csvm-explorer"
#: When neither a checkout's pyproject.toml nor installed metadata is found.
UNKNOWN = "0+unknown"


def _checkout_version(pyproject: Path) -> str | None:
    """``[project] version`` of a checkout's pyproject.toml that names this project."""
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        return None
    # A regex, not tomllib: the library supports Python 3.10, which has no tomllib.
    name = re.search(r'^name\s*=\s*"([^"]+)"', text, re.MULTILINE)
    found = re.search(r'^version\s*=\s*"([^"]+)"', text, re.MULTILINE)
    if name is None or name.group(1) != DISTRIBUTION or found is None:
        return None
    return found.group(1)


def version() -> str:
    """The version of the code being run (see the module's docstring for the order)."""
    checkout = _checkout_version(Path(__file__).resolve().parent.parent / "pyproject.toml")
    if checkout is not None:
        return checkout
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return UNKNOWN
