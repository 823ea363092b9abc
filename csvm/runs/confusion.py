"""Confusion matrices and the pairs of classes a multi-class model mixes up most."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["confused_pairs", "confusion_counts"]


def confusion_counts(
    y_true: np.ndarray, y_pred: np.ndarray, labels: Sequence[int]
) -> list[list[int]]:
    """Counts of (true, predicted) label pairs: rows true, columns predicted."""
    labels = np.asarray(labels)
    k = len(labels)
    t = np.searchsorted(labels, y_true)  # labels are sorted: (-1, 1) or 0..k-1
    p = np.searchsorted(labels, y_pred)
    return np.bincount(t * k + p, minlength=k * k).reshape(k, k).tolist()


def confused_pairs(
    confusion: Sequence[Sequence[int]], multi_class: str, top: int = 3
) -> list[dict[str, Any]]:
    """The pairs of classes most often mistaken for each other, and their filters.

    Parameters
    ----------
    confusion : (k, k) counts
        Rows true class, columns predicted (labels 0..k-1).
    multi_class : {"ovo", "ovr"}
        How the sub-problems were built: one-vs-one has one classifier per pair (in
        ``itertools.combinations`` order, as :attr:`BaseCSVM.pairs_`), one-vs-rest one
        per class.
    top : int
        How many pairs at most; pairs never confused are left out.

    Returns
    -------
    list of dict
        ``classes`` (i, j) with i < j, ``count`` (mistakes both ways), ``i_as_j``,
        ``j_as_i``, and ``classifiers``: the indices of the filters that separate them
        (one in one-vs-one, the two classes' own in one-vs-rest), most confused first.
    """
    m = np.asarray(confusion, dtype=np.int64)
    k = len(m)
    i, j = np.triu_indices(k, 1)  # the same order as itertools.combinations(range(k), 2)
    both = m[i, j] + m[j, i]
    order = [n for n in np.argsort(-both, kind="stable")[:top] if both[n] > 0]
    return [
        {
            "classes": (int(i[n]), int(j[n])),
            "count": int(both[n]),
            "i_as_j": int(m[i[n], j[n]]),
            "j_as_i": int(m[j[n], i[n]]),
            "classifiers": [int(n)] if multi_class == "ovo" else [int(i[n]), int(j[n])],
        }
        for n in order
    ]
