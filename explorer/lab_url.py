"""The Filter lab's filter in the URL, so a reload keeps what was edited by hand.

The lab's filter lives in the session, which a reload replaces: a filter edited weight by
weight went back to a random start.  The URL carries it as ``lab_f`` (the weights, six
significant digits, ``_`` between them) and ``lab_src`` (where it came from), like the
playground's points.  A filter too large for an address (more than :data:`MAX_WEIGHTS`
weights) is not carried; one whose size no longer fits the settings is not restored.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

import numpy as np

__all__ = [
    "FILTER_PARAM",
    "SOURCE_PARAM",
    "carry_lab",
    "filters_param",
    "linked",
    "parse_filters",
    "remember_link",
]

FILTER_PARAM = "lab_f"
SOURCE_PARAM = "lab_src"
#: Weights carried at most: four 5 × 5 filters of three colour planes are 300.
MAX_WEIGHTS = 300
#: Characters of the source's words kept (a run's name with its settings is ~100).
MAX_SOURCE = 160
_MAX_CHARS = MAX_WEIGHTS * 16


def filters_param(filters: np.ndarray) -> str | None:
    """The weights as URL text, or None when there are too many.

    >>> filters_param(np.array([[[[0.5, -1.0], [0.0, 1e-7]]]]))
    '0.5_-1_0_1e-07'
    """
    if filters.size > MAX_WEIGHTS:
        return None
    return "_".join(f"{w:.6g}" for w in np.ravel(filters))


def parse_filters(text: Any, shape: tuple[int, ...]) -> np.ndarray | None:
    """The filters a URL's text holds, if it holds exactly ``shape``'s finite weights.

    >>> parse_filters("0.5_-1_0_0.25", (1, 1, 2, 2))[0, 0]
    array([[ 0.5 , -1.  ],
           [ 0.  ,  0.25]])
    >>> parse_filters("0.5_nan", (1, 1, 1, 2)) is None
    True
    """
    if not isinstance(text, str) or len(text) > _MAX_CHARS:
        return None
    try:
        weights = np.array([float(w) for w in text.split("_")], dtype=np.float64)
    except ValueError:
        return None
    if weights.size != int(np.prod(shape)) or not np.all(np.isfinite(weights)):
        return None
    return weights.reshape(shape)


def remember_link(session: MutableMapping[str, Any], query: Mapping[str, Any]) -> None:
    """On a session's first run, keep the URL's filter in the session (``lab_linked``,
    empty when it has none): a reload on another page, then the link to the lab, cleared
    the address on the way (Streamlit's page switch does), and the lab started from a
    random filter."""
    if "lab_linked" in session:
        return
    session["lab_linked"] = {
        key: query[key][:limit]
        for key, limit in ((FILTER_PARAM, _MAX_CHARS), (SOURCE_PARAM, MAX_SOURCE))
        if isinstance(query.get(key), str)
    }


def linked(session: Mapping[str, Any]) -> dict[str, str]:
    """The filter the session's first URL gave (:func:`remember_link`), as URL text."""
    return dict(session.get("lab_linked") or {})


def carry_lab(session: Mapping[str, Any]) -> dict[str, str]:
    """The lab's URL entries: the session's filter once the lab has one, else the one a
    link gave (a reload whose lab has not run yet keeps it, bounded)."""
    filters = session.get("lab_filters")
    if isinstance(filters, np.ndarray):
        text = filters_param(filters)
        if text is None:
            return {}
        return {FILTER_PARAM: text, SOURCE_PARAM: str(session.get("lab_source", ""))[:MAX_SOURCE]}
    return linked(session)
