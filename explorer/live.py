"""The one live-jobs fragment: every page that watches jobs of the pool draws through it.

DESIGN.md ("Background work"): poll with one top-level ``@st.fragment(run_every=...)``,
about a second while anything is active and ``None`` when idle, ``st.rerun()`` when the
work ends; no nested ``run_every`` fragments and no widgets inside it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from explorer.owner_cookie import heartbeat, owner
from explorer.pool import FINAL_STATES, get_pool
from explorer.tick_load import TickLoad

#: Seconds between two polls while a job is active (on a server that is not busy).
EVERY = 1.0
#: The server's page ticks, shared by every session (see :mod:`explorer.tick_load`).
LOAD = TickLoad()
# A fragment's ``run_every`` is set when the whole page runs (Start, the end of a run): the
# interval follows the load from one to the next.  Extra whole-page reruns to follow it
# more closely left pages of a 20-session class stuck before their results (4 of 20).


def _page_key() -> str:
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "bare"


def _walk(jobs: Any, fetch: Callable[[str], Any]) -> Any:
    if jobs is None:
        return None
    if isinstance(jobs, str):
        return fetch(jobs)
    if isinstance(jobs, Mapping):
        return {k: _walk(v, fetch) for k, v in jobs.items()}
    return [_walk(v, fetch) for v in jobs]


def poll_views(jobs: Any) -> Any:
    """The pool's views of ``jobs`` (draining their new events), in the same shape: a job
    id gives its view (None: forgotten), a list or a dict of ids a list or a dict of
    views, nested as deep as needed."""
    return _walk(jobs, get_pool().poll)


def get_views(jobs: Any) -> Any:
    """As :func:`poll_views`, with the pool's snapshots that renew no lease (``get``)."""
    return _walk(jobs, get_pool().get)


def flatten(views: Any) -> Iterator[Any]:
    """Every view of a (nested) list or dict of views."""
    if isinstance(views, Mapping):
        for v in views.values():
            yield from flatten(v)
    elif isinstance(views, (list, tuple)):
        for v in views:
            yield from flatten(v)
    else:
        yield views


def is_busy(views: Any) -> bool:
    """Whether any of the views (nested as in :func:`poll_views`) is queued or running."""
    return any(v is not None and v.state not in FINAL_STATES for v in flatten(views))


def group_busy(group: str, futures: Any = ()) -> bool:
    """Whether this browser has work of ``group`` ("sweep", "curve", …) queued or running
    on the pool, or cluster ``futures`` not yet done: what the page's Stop button would
    stop.  A Stop with nothing to stop is drawn disabled, so nobody wonders whether a
    sweep that ended minutes ago is still going."""
    if any(not f.done() for f in futures):
        return True
    return any(v.state not in FINAL_STATES for v in get_pool().jobs(owner=owner(), group=group))


def live_jobs(
    jobs: Any,
    render: Callable[[Any], bool | None],
    *,
    views: Callable[[Any], Any] = poll_views,
    busy: Callable[[Any], bool] = is_busy,
    every: float = EVERY,
) -> bool:
    """Draw ``render(views of jobs)`` in a fragment that refreshes while work is active.

    Parameters
    ----------
    jobs
        The job ids to watch (an id, a list or a dict of them, nested), or a function
        returning them (read on every tick: for a page whose jobs come and go).
    render
        Draws the current views; no widgets.  It may return True to ask for a full rerun
        of the page (e.g. it collected a finished job's result that the page draws
        elsewhere).
    views
        Turns ``jobs`` into views: the pool's :func:`poll_views` by default;
        :func:`get_views`, or a page's own function (a sweep's Dask futures).
    busy
        Whether there is still something to show, called on the views before the first
        draw and after each (the Train page: a job running, or steps still to play).
    every
        Seconds between ticks while busy (``None`` once idle), stretched on a busy server
        (:class:`explorer.tick_load.TickLoad`).

    Each tick renews the session's heartbeat.  When the work that was busy as the page
    was drawn is over, the whole page reruns (so it can draw the results).  Returns
    whether the fragment is ticking.
    """
    ids: Callable[[], Any] = jobs if callable(jobs) else lambda: jobs
    live = busy(views(ids()))
    tick = LOAD.interval(every) if live else None

    def _live() -> None:
        started = time.perf_counter()
        heartbeat()
        now = views(ids())
        asked = render(now)
        if tick is not None:
            LOAD.record(_page_key(), time.perf_counter() - started)
        if asked or (live and not busy(now)):
            st.rerun()

    if live:
        st.fragment(run_every=tick)(_live)()
    else:
        # Idle work is drawn as part of the page, not as a fragment: under load a tick of
        # the fragment the page had while busy could arrive after the whole-page run that
        # drew the results, and the browser then dropped them (bench_classroom --chromium
        # 20: the server had drawn every lost page's results).  An auto-rerun of a
        # fragment this run did not register is skipped by Streamlit.
        _live()
    return live
