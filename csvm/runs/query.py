"""The URL round trip of a run's settings: only those that differ from the defaults.

The format is fixed by links already shared (tests/fixtures/url_v0.1.json): ``None`` is
"none", the baselines a comma list ("-" for none), floats their ``repr``.
"""

from __future__ import annotations

from collections.abc import Mapping

from csvm.runs.config import DEFAULTS, SPECS, Problem, RunConfig, parse

__all__ = ["from_query", "to_query"]


def to_query(config: RunConfig) -> dict[str, str]:
    """The settings that differ from the defaults, as URL query parameters.

    ``None`` is written "none", the baselines comma-separated ("-" for none); numbers with
    ``repr`` so that they read back exactly.
    """
    out = {}
    for name in SPECS:
        value = getattr(config, name)
        if value == getattr(DEFAULTS, name):
            continue
        if value is None:
            out[name] = "none"
        elif isinstance(value, tuple):
            out[name] = ",".join(value) or "-"
        elif isinstance(value, bool):
            out[name] = "true" if value else "false"
        else:
            out[name] = repr(value) if isinstance(value, float) else str(value)
    return out


def from_query(
    query: Mapping[str, str], base: RunConfig | None = None
) -> tuple[RunConfig, list[Problem]]:
    """Settings from URL query parameters; keys that are not settings are skipped.

    Parameters
    ----------
    query : mapping of str to str
        The page's query parameters (it may hold other keys, such as the run id).
    base : RunConfig, optional
        Values for settings the URL does not name (default: the defaults).
    """
    return parse({k: v for k, v in query.items() if k in SPECS}, base)
