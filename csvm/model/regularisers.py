"""Filter regularisers r(f) and their (sub)gradients (MATH.md, table of regularisers).

Every regulariser takes the filter(s) as one array of any shape and the strength ``lam``;
norms are taken over the whole array (all filters together), which is eq. 4.12's choice
for several filters.  The DFO_p penalties ("distance from one") keep the filter near
the unit sphere without pinning it there: ``lam * max(0, ||f||_p - 1)^2``.

Erratum 3 of the thesis (eq. 4.10) is corrected here: the DFO_1 derivative is
``2 lam (||f||_1 - 1) sign(f)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "REGULARISERS",
    "Regulariser",
    "check_regulariser",
    "regulariser_gradient",
    "regulariser_value",
]


@dataclass(frozen=True)
class Regulariser:
    """One filter penalty: add an entry to :data:`REGULARISERS` and only there.

    The estimators' parameter checks, RunConfig's choices (so the app's select box, the
    CLI's ``--regulariser`` and the URL parsing) and the explorer's labels read the
    registry when asked, so a new entry is offered everywhere at once.

    Parameters
    ----------
    name : str
        The key (lower case, no ``_`` or ``-``: :func:`check_regulariser` drops them).
    description : str
        One line: the penalty as a formula and what it does.
    value : callable ``(f, lam) -> float``
        ``r(f)`` for the filter(s) ``f`` (float64, any shape) and strength ``lam``.
    gradient : callable ``(f, lam) -> array``
        A (sub)gradient ``dr/df`` shaped like ``f``.
    """

    name: str
    description: str
    value: Callable[[np.ndarray, float], float]
    gradient: Callable[[np.ndarray, float], np.ndarray]


def _l1(f: np.ndarray) -> float:
    return float(np.abs(f).sum())


def _l2(f: np.ndarray) -> float:
    return float(np.sqrt(np.sum(np.square(f, dtype=np.float64))))


def _safe_unit(f: np.ndarray) -> np.ndarray:
    norm = _l2(f)
    return f / norm if norm > 0 else np.zeros_like(f)


def _entries(*rows: tuple) -> dict[str, Regulariser]:
    return {row[0]: Regulariser(*row) for row in rows}


#: name -> entry: every regulariser the estimators, the CLI, the URLs and the app offer.
REGULARISERS: dict[str, Regulariser] = _entries(
    ("none", "no penalty", lambda f, lam: 0.0, lambda f, lam: np.zeros_like(f)),
    ("l1", "lam * ||f||_1 (sparse filters)", lambda f, lam: lam * _l1(f),
     lambda f, lam: lam * np.sign(f)),
    ("l2", "lam * ||f||_2", lambda f, lam: lam * _l2(f), lambda f, lam: lam * _safe_unit(f)),
    ("l1sq", "lam * ||f||_1^2", lambda f, lam: lam * _l1(f) ** 2,
     lambda f, lam: 2.0 * lam * _l1(f) * np.sign(f)),
    ("l2sq", "lam * ||f||_2^2 (weight decay)", lambda f, lam: lam * _l2(f) ** 2,
     lambda f, lam: 2.0 * lam * f),
    ("dfo1", "lam * max(0, ||f||_1 - 1)^2 (only an L1 norm above one)",
     lambda f, lam: lam * max(0.0, _l1(f) - 1.0) ** 2,
     lambda f, lam: 2.0 * lam * max(0.0, _l1(f) - 1.0) * np.sign(f)),
    ("dfo2", "lam * max(0, ||f||_2 - 1)^2 (only an L2 norm above one)",
     lambda f, lam: lam * max(0.0, _l2(f) - 1.0) ** 2,
     lambda f, lam: 2.0 * lam * max(0.0, _l2(f) - 1.0) * _safe_unit(f)),
)  # fmt: skip


def check_regulariser(name: str) -> str:
    """Return the canonical name of a regulariser or raise a ValueError listing the valid ones."""
    key = str(name).lower().replace("²", "sq").replace("_", "").replace("-", "")
    if key not in REGULARISERS:
        raise ValueError(f"Unknown regulariser {name!r}: choose one of {', '.join(REGULARISERS)}.")
    return key


def regulariser_value(name: str, f: np.ndarray, lam: float) -> float:
    """Value of ``r(f)`` for regulariser ``name`` with strength ``lam``."""
    entry = REGULARISERS[check_regulariser(name)]
    return float(entry.value(np.asarray(f, dtype=np.float64), float(lam)))


def regulariser_gradient(name: str, f: np.ndarray, lam: float) -> np.ndarray:
    """(Sub)gradient ``dr/df``, same shape as ``f`` (float64)."""
    entry = REGULARISERS[check_regulariser(name)]
    return entry.gradient(np.asarray(f, dtype=np.float64), float(lam))
