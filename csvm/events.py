"""The per-step records that trainers emit to callbacks and keep in ``history_``.

Every record is a plain dict so that it pickles through a process queue and serialises to
JSON.  Keys common to all models:

``model``        "kcsvm", "lcsvm" or "cnn"
``classifier``   index of the binary sub-problem (one-vs-one pair or one-vs-rest class)
``pair``         the two class labels of that sub-problem (negative, positive)
``iteration``    0-based outer iteration
``n_iter``       the number of iterations asked for
``step``         "iteration" (K-CSVM), "svm" or "filter" (L-CSVM half-steps), "epoch" (CNN)
``objective``    the objective after this step
``filter_norm``  L2 norm of all filters of this sub-problem
``n_support``    number of support vectors (CSVMs)
``train_accuracy``
``seconds``      wall-clock seconds since ``fit`` started

The dict given to a callback also holds ``"filters"``: a copy of the current filters,
shape (n_filters, C, p, q).  ``history_`` keeps the records without it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["Callback", "Recorder"]

Callback = Callable[[dict[str, Any]], Any]


class Recorder:
    """Collect records for ``history_`` and forward them, with the filters, to a callback.

    Parameters
    ----------
    callback : callable or None
        Called with each record plus ``"filters"``; returning ``False`` asks to stop.
    base : dict
        Keys added to every record (model, classifier, pair, n_iter).
    should_stop : callable, optional
        Returns True when training must stop for an outside reason (another sub-problem's
        callback asked to stop).
    """

    def __init__(
        self,
        callback: Callback | None,
        base: dict[str, Any],
        should_stop: Callable[[], bool] | None = None,
    ):
        self.callback = callback
        self.base = dict(base)
        self.history: list[dict[str, Any]] = []
        self.stopped = False
        self._should_stop = should_stop

    def record(self, filters: np.ndarray, **values: Any) -> bool:
        """Store one record; return True when training should go on."""
        event = {**self.base, **values}
        self.history.append(event)
        if self.callback is not None:
            answer = self.callback({**event, "filters": np.array(filters, copy=True)})
            if answer is False:
                self.stopped = True
        if self._should_stop is not None and self._should_stop():
            self.stopped = True
        return not self.stopped
