"""The Train page's "Download run" zip, built once per run and kept for a while.

Streamlit's deferred download (a callable as ``data``) registers a new id on every page
run and forgets the old one when the run ends, so a click that reached the server while
the page reran (each second while a run or its ablation trains) fetched nothing: the
browser never saw a file.  A zip handed over as bytes keeps one id for the same bytes
across page runs, so building it once and handing the same bytes to every page run (the
owner's and each viewer's) is both cheap and safe to click at any moment.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

__all__ = ["cached_zip"]

# A zip is tens of kB (a reloaded run at the bundle's bounds about 1 MB): a class's
# recent runs fit easily, and a run's page asks for its own zip on every page run.
_MAX_KEPT = 32
_kept: OrderedDict[Hashable, bytes] = OrderedDict()
_lock = threading.Lock()


def cached_zip(key: Hashable, build: Callable[[], bytes]) -> bytes:
    """The bytes ``build`` gives for ``key``, built the first time and kept (the least
    recently used of more than ``_MAX_KEPT`` keys forgotten)."""
    with _lock:
        if key in _kept:
            _kept.move_to_end(key)
            return _kept[key]
    data = build()  # outside the lock: another session's page need not wait for it
    with _lock:
        _kept[key] = data
        _kept.move_to_end(key)
        while len(_kept) > _MAX_KEPT:
            _kept.popitem(last=False)
    return data
