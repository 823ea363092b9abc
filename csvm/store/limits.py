"""How much a run store keeps: a count, a size, and when a run counts as abandoned."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from csvm.store.records import StoreError

__all__ = ["LIMIT_ENV_VARS", "StoreLimits"]

#: StoreLimits field -> the environment variable that overrides it.
LIMIT_ENV_VARS = {
    "max_runs": "CSVM_RUN_STORE_MAX_RUNS",
    "max_bytes": "CSVM_RUN_STORE_MAX_BYTES",
    "keep_seconds": "CSVM_RUN_STORE_KEEP_SECONDS",
}
_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30}


def _parse_size(text: str) -> int:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmg]?)(?:i?b)?\s*", text, flags=re.IGNORECASE)
    if match is None:
        raise ValueError(text)
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


@dataclass(frozen=True)
class StoreLimits:
    """How much a store keeps.

    Parameters
    ----------
    max_runs : int
        Runs kept (``CSVM_RUN_STORE_MAX_RUNS``, 5000).
    max_bytes : int
        Their stored size (``CSVM_RUN_STORE_MAX_BYTES``, 512 MiB; "512M", "1G" work).
    keep_seconds : float
        A run nobody has written or opened (:meth:`RunStore.touch`) for this long, or a
        hidden one, is *abandoned* (``CSVM_RUN_STORE_KEEP_SECONDS``, 3 days).  Over a
        bound, the owner holding the most runs (or bytes, over ``max_bytes``) loses a
        run first: its oldest abandoned one, else its oldest other.  One owner filling
        the store so forgets its own runs before anyone else's
        (:mod:`csvm.store.eviction`).  A run still running is never forgotten.
    """

    max_runs: int = 5000
    max_bytes: int = 512 * 2**20
    keep_seconds: float = 3 * 86400.0

    def __post_init__(self) -> None:
        if int(self.max_runs) < 1 or int(self.max_bytes) < 1 or float(self.keep_seconds) < 0:
            raise StoreError(
                f"Run store limits must be positive: got max_runs={self.max_runs}, "
                f"max_bytes={self.max_bytes}, keep_seconds={self.keep_seconds}."
            )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> StoreLimits:
        """The defaults, overridden by the ``CSVM_RUN_STORE_*`` variables that are set."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for name, var in LIMIT_ENV_VARS.items():
            raw = env.get(var, "").strip()
            if not raw:
                continue
            try:
                values[name] = _parse_size(raw) if name == "max_bytes" else float(raw)
            except ValueError:
                raise StoreError(
                    f"{var}={raw[:40]!r} is not a number; write e.g. "
                    f"{'512M' if name == 'max_bytes' else '5000'}."
                ) from None
        if "max_runs" in values:
            values["max_runs"] = int(values["max_runs"])
        return cls(**values)
