"""The app's run store: every Train run kept in :mod:`csvm.store`, and shown again from it.

One store per server process, held in this module like the worker pool
(:func:`explorer.pool.get_pool`), never in ``st.cache_resource``: any browser can clear
that cache, and a store rebuilt there would lose this server's heartbeat and the runs it
is recording.

Writing: :func:`track` (called when a run starts) hands the run to a server thread that
checkpoints it every couple of seconds while it trains and saves it whole once every job
has ended ("done", "stopped", "diverged" or "error"), with its settings, results, history,
filters, the owner's id (already a hash, and hashed again by the store), a display name
and a class code.  The thread, not the owner's page, does it: a run whose tab was closed
is recorded all the same, and no page tick waits for the database.

Reading: :func:`restore` shows a stored run on the Train page when the pool no longer
knows its jobs (the server restarted, or the run came from another server on the same
store).  It goes the way of "Reload a run" (:mod:`explorer.reload`): the stored results
are checked against the export schema and rescored against this server's test images
(:func:`csvm.runs.bundle.rescore`), then replayed through the pool.  A run cut off while
it trained replays its last checkpoint and says "interrupted at step k".
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st

from csvm.exceptions import CSVMError
from csvm.jobs import QuotaExceeded
from csvm.runs.bundle import RunBundle, expected_filter_shape, rescore
from csvm.runs.bundle_schema import HISTORY_COLUMNS, check_result, read_history
from csvm.runs.config import RunConfig
from csvm.runs.persistence import BundleError, digest_test_set, history_csv
from csvm.runs.replay import replay_model
from csvm.runs.targets import step_events
from csvm.store import RunStore, StoredRun, StoreError, open_store
from explorer.datasets import data_for
from explorer.owner_cookie import owner
from explorer.playback import playback
from explorer.pool import FINAL_STATES, get_pool
from explorer.reload import bundle_replays
from explorer.runs import runs, start_run
from explorer.state import Run
from explorer.stored_replay import replay_ended

__all__ = [
    "CHECKPOINT_SECONDS",
    "earlier_runs",
    "get_store",
    "reopen_store",
    "restore",
    "restore_runs",
    "status_of",
    "store_problem",
    "track",
]

log = logging.getLogger(__name__)

#: Least seconds between two checkpoints of one run (a step's time at the paced default).
CHECKPOINT_SECONDS = 2.0
#: How often the recording thread looks at the runs it records.
_WATCH_SECONDS = 1.0
#: Saves tried before a run that cannot be stored is given up (and logged).
_SAVE_TRIES = 3
#: Seconds of silence after which a peer server's running runs count as interrupted.
STALE_SECONDS = 120.0

_LOCK = threading.Lock()
_STORE: RunStore | None = None
_PROBLEM: str | None = None
_OPENED = False
_THREAD: threading.Thread | None = None
_LAST_RECOVER = 0.0
_TRIED = 0.0
#: Seconds before a store that could not be opened is tried again.
RETRY_SECONDS = 300.0

_GONE = (
    "The run in this link is no longer on the server, nor in its run store: the link may "
    "be cut short or mistyped, or the run was removed to make room. Press Start to train "
    "it again."
)
_GONE_NO_STORE = (
    "The run in this link is no longer on the server (it finished long ago, or the server "
    "restarted: this server keeps no run store). Press Start to train it again."
)


def server_id() -> str:
    """This server's id in the store: ``CSVM_SERVER_ID``, else host and port.

    The same id after a restart on the same port lets the new server mark the runs its
    predecessor left "running" as interrupted at once (not after :data:`STALE_SECONDS`);
    two servers on one machine differ by their port.
    """
    chosen = os.environ.get("CSVM_SERVER_ID", "").strip()
    if chosen:
        return chosen[:100]
    try:
        port = int(st.get_option("server.port"))
    except Exception:  # noqa: BLE001 - no Streamlit config (a bare import)
        port = 0
    return f"{socket.gethostname()[:60]}:{port}"


def get_store() -> RunStore | None:
    """The server's run store, opened (and its left-over runs marked interrupted) on the
    first call; None when it cannot be opened (:func:`store_problem` says why).

    The app runs without its store: training is never refused for it.
    """
    global _STORE, _PROBLEM, _OPENED, _THREAD, _TRIED
    with _LOCK:
        # A store that could not be opened is tried again now and then (a database that
        # starts after the app); each try may wait for the connection's 10 s timeout.
        if not _OPENED or (_STORE is None and time.monotonic() - _TRIED > RETRY_SECONDS):
            _OPENED, _TRIED = True, time.monotonic()
            _STORE, _PROBLEM = _open()
            if _STORE is not None and (_THREAD is None or not _THREAD.is_alive()):
                _THREAD = threading.Thread(
                    target=_record_forever, name="csvm-run-store", daemon=True
                )
                _THREAD.start()
        return _STORE


def _open() -> tuple[RunStore | None, str | None]:
    """The store ``CSVM_RUN_STORE`` names, its left-overs marked interrupted; or why not."""
    store = None
    try:
        store = open_store(server_id=server_id())
        store.recover(stale_after=STALE_SECONDS)
    except StoreError as exc:
        if store is not None:
            store.close()
        log.warning("The run store is off: %s", exc)
        return None, str(exc)
    return store, None


def reopen_store() -> RunStore | None:
    """Close the store and open the one ``CSVM_RUN_STORE`` names now (for tests that try
    both back ends in one process; a server opens its store once).  Runs being recorded
    are let go."""
    global _STORE, _PROBLEM, _OPENED
    with _LOCK:
        old, _STORE, _PROBLEM, _OPENED = _STORE, None, None, False
        _RECORDING.clear()
    if old is not None:
        old.close()
    return get_store()


def store_problem() -> str | None:
    """Why the run store could not be opened (None: it is open, or not tried yet)."""
    return _PROBLEM


def recover_now(every: float = 60.0) -> list[str]:
    """Mark as interrupted the running runs of servers silent for :data:`STALE_SECONDS`
    (at most once per ``every`` seconds; a peer may die while this one runs)."""
    global _LAST_RECOVER
    store = get_store()
    now = time.monotonic()
    if store is None or now - _LAST_RECOVER < every:
        return []
    _LAST_RECOVER = now
    try:
        return store.recover(stale_after=STALE_SECONDS)
    except StoreError as exc:
        log.warning("Could not mark interrupted runs: %s", exc)
        return []


# -- recording ----------------------------------------------------------------------------
@dataclass
class _Recorded:
    """A run being recorded: what to store with it, and how far it was written."""

    run_id: str
    config: RunConfig
    jobs: dict[str, str]
    owner: str | None
    name: str
    class_code: str | None
    test_set: dict[str, Any] | None
    image_shape: tuple[int, ...]
    written_step: int = -1
    written_at: float = -1e18
    failures: int = 0


_RECORDING: dict[str, _Recorded] = {}


def track(run: Run, name: str = "", class_code: str | None = None) -> None:
    """Record ``run`` in the store from now on (its checkpoints, then its whole save).

    Called on the page's script thread when the run starts; the data's test images are
    digested here (cached), so a run shown again from the store is checked against them.
    Does nothing when the store is off.
    """
    if get_store() is None:
        return
    test_set, shape = None, ()
    try:
        pair = data_for(run.config)
        test_set = {"sha256": digest_test_set(pair.X_test, pair.y_test), "n": len(pair.y_test)}
        shape = tuple(pair.image_shape)
    except Exception:  # noqa: BLE001 - the run itself reports a data problem
        pass
    entry = _Recorded(
        run.id, run.config, dict(run.jobs), run.owner, name, class_code, test_set, shape
    )
    with _LOCK:
        _RECORDING[run.id] = entry


#: Whether the thread records (tests turn it off under :data:`_ROUND` and call
#: :func:`record_once` themselves, with their own clock).
_BACKGROUND = True
_ROUND = threading.Lock()


def _record_forever() -> None:
    while True:
        time.sleep(_WATCH_SECONDS)
        with _ROUND:
            if not _BACKGROUND:
                continue
            try:
                record_once()
            except Exception:  # noqa: BLE001 - the thread must outlive one bad round
                log.exception("Recording runs failed this round")


def record_once(now: float | None = None) -> None:
    """One round of the recording thread: checkpoint the runs that moved on, save the
    runs that ended (and stop recording them), and say this server is alive."""
    store = _STORE
    if store is None:
        return
    now = time.monotonic() if now is None else now
    pool = get_pool()
    if pool.closed:
        # The server is stopping (SIGTERM): its pool marked every job "stopped", which is
        # not how those runs ended.  Left "running", the next server marks them interrupted.
        return
    with _LOCK:
        entries = list(_RECORDING.values())
    for entry in entries:
        views = {m: pool.get(j) for m, j in entry.jobs.items()}
        try:
            if any(v is not None and v.state not in FINAL_STATES for v in views.values()):
                _checkpoint(store, entry, views, now)
                continue
            _save(store, entry, views)
        except (StoreError, CSVMError, ValueError) as exc:
            entry.failures += 1
            log.warning("Run %s not stored (%d): %s", entry.run_id, entry.failures, exc)
            if entry.failures < _SAVE_TRIES:
                continue
        with _LOCK:
            _RECORDING.pop(entry.run_id, None)
    try:
        store.heartbeat()
    except StoreError as exc:
        log.warning("Run store heartbeat failed: %s", exc)


def _scalar_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A history's step fields (the columns an export's history.csv may have)."""
    keep = (bool, int, float, str, np.integer, np.floating, np.bool_)
    return [
        {k: v for k, v in row.items() if k in HISTORY_COLUMNS and isinstance(v, keep)}
        for row in rows
    ]


def _last_filters(steps: list[dict[str, Any]], entry: _Recorded) -> np.ndarray | None:
    """The newest step's filters in the shape a result has (None: none, or a multi-class
    run, whose sub-problems' filters arrive one after the other)."""
    if entry.config.multiclass or not entry.image_shape:
        return None
    for step in reversed(steps):
        filters = step.get("filters")
        if filters is not None:
            shape = expected_filter_shape(entry.config, entry.image_shape)
            array = np.asarray(filters, dtype=np.float32)
            return array.reshape(shape) if array.size == np.prod(shape) else None
    return None


def _checkpoint(store: RunStore, entry: _Recorded, views: dict, now: float) -> None:
    if now - entry.written_at < CHECKPOINT_SECONDS:
        return
    view = views.get("csvm")
    steps = step_events(view.events, every_sub_problem=entry.config.multiclass) if view else []
    if len(steps) == entry.written_step:
        return  # paused, or between steps: nothing new
    store.checkpoint(
        entry.run_id,
        entry.config,
        step=len(steps),
        history=_scalar_rows(steps),
        filters=_last_filters(steps, entry),
        owner=entry.owner,
        name=entry.name,
        class_code=entry.class_code,
    )
    entry.written_step, entry.written_at = len(steps), now


def status_of(views: dict) -> str:
    """How a run whose jobs have all ended ended: its CSVM's "done", "stopped",
    "diverged" or "error" (a CSVM the pool forgot counts as stopped)."""
    view = views.get("csvm")
    if view is None or view.state == "stopped":
        return "stopped"
    if view.state == "error":
        return "error"
    result = view.result or {}
    if result.get("diverged"):
        return "diverged"
    return result.get("status") if result.get("status") in ("stopped", "diverged") else "done"


def _save(store: RunStore, entry: _Recorded, views: dict) -> None:
    results: dict[str, Any] = {m: (v.result if v is not None else None) for m, v in views.items()}
    csvm = views.get("csvm")
    steps = step_events(csvm.events, every_sub_problem=entry.config.multiclass) if csvm else []
    own = (results.get("csvm") or {}).get("history")
    history = _scalar_rows(list(own) if own else steps)
    filters = None if results.get("csvm") else _last_filters(steps, entry)
    if entry.test_set is not None:
        results["test_set"] = entry.test_set  # as an export's results.json has it
    store.save(
        entry.run_id,
        entry.config,
        results,
        status=status_of(views),
        history=history,
        filters=filters,
        # Steps as the Train page counts them (its events), not the result's history
        # rows: a diverged fit's history ends with a row for the step that diverged, so
        # the board said "diverged at step 2" where the page said "step 1".
        step=len(steps) if steps else None,
        owner=entry.owner,
        name=entry.name,
        class_code=entry.class_code,
    )


# -- showing a stored run -----------------------------------------------------------------
def _labels(config: RunConfig, n_classes: int) -> tuple[int, ...]:
    return tuple(range(n_classes)) if config.multiclass else (-1, 1)


def bundle_of(stored: StoredRun, pair: Any) -> RunBundle:
    """A stored run as a checked, rescored :class:`~csvm.runs.bundle.RunBundle`: the
    same schema and rescoring as an uploaded export (its results are only shown as this
    server's test images confirm them).

    Raises
    ------
    BundleError
        A stored result or history that an export would be refused for, or results
        scored on other test images than this server gives for the run's settings.
    """
    config, k = stored.config, len(pair.class_names)
    n_sub = config.n_sub_problems(k) if config.multiclass else 1
    results = dict(stored.results)
    test_set = results.pop("test_set", None)
    checked = {
        m: check_result(m, results[m], config, _labels(config, k), n_sub)
        for m in ("csvm", "svm", "cnn")
        if m in results
    }
    checked.setdefault("csvm", None)
    history, notes = read_history(history_csv(stored.history), config, n_sub)
    filters = stored.filters
    if filters is not None and filters.shape != expected_filter_shape(config, pair.image_shape, k):
        filters = None  # a checkpoint of another shape: the steps are still shown
    bundle = RunBundle(
        config,
        list(stored.config_problems) + notes,
        checked,
        history,
        filters,
        test_set.get("sha256") if isinstance(test_set, dict) else None,
    )
    if all(r is None for r in checked.values()):
        return bundle  # nothing to score: an interrupted run's last steps
    return rescore(bundle, pair)


def ending(stored: StoredRun) -> str | None:
    """What the Train page says of a stored run beyond its own headline (None: nothing)."""
    if stored.interrupted:
        return (
            f"This run was interrupted at step {stored.step}: the server stopped while it "
            "trained. Its last saved state is shown; press Start to train it again."
        )
    if stored.status == "running":
        return (
            f"This run is still training on another server, at step {stored.step} when it "
            "was last saved: that state is shown. Reload the page to see a newer one."
        )
    return None


def _replay_jobs(stored: StoredRun, bundle: RunBundle, n_train: int) -> dict[str, tuple]:
    """Each model's replay job: its recorded events and result (as "Reload a run" shows a
    bundle); a CSVM without a result replays its steps and ends saying how it ended."""
    targets: dict[str, tuple] = {}
    for model, job in bundle_replays(bundle, n_train).items():
        if model == "csvm" and job["result"] is None:
            kwargs = {"events": job["events"], "status": stored.status, "step": stored.step}
            targets[model] = (replay_ended, kwargs)
        else:
            targets[model] = (replay_model, job)
    return targets


def restore(run_id: str) -> str | None:
    """Show the stored run ``run_id`` as this session's current run (for a link whose
    jobs the pool no longer has).

    It is the owner's (Stop, Step, Rerun) only in the browser that started it; anyone
    else gets the read-only shared view.  Returns None when it is shown with nothing to
    add, else a sentence for the page: why it cannot be shown, or how it ended
    ("interrupted at step k").
    """
    store = get_store()
    if store is None:
        return _GONE_NO_STORE
    try:
        stored = store.get(run_id)
    except StoreError as exc:
        return f"The run store could not be read ({exc}). Press Start to train a run."
    if stored is None:
        return _GONE
    try:
        pair = data_for(stored.config)
        bundle = bundle_of(stored, pair)
    except (CSVMError, BundleError) as exc:
        return f"This run is stored, but it cannot be shown on this server: {exc}"
    try:
        run = start_run(
            stored.config, _replay_jobs(stored, bundle, len(pair.y_train)), run_id=stored.id
        )
    except QuotaExceeded as exc:
        return str(exc)
    run.owner = owner() if stored.owned_by(owner()) else None
    run.stored = True
    playback(run).jump = True  # an ended run: its last step and results at once
    try:
        store.touch(run_id)  # opened: not an abandoned run
    except StoreError:
        pass
    # Settings a newer or older version spelled otherwise kept their defaults: say so.
    return ending(stored) or (" ".join(stored.config_problems[:2]) or None)


def restore_runs(run_ids: list[str]) -> tuple[str, str] | None:
    """:func:`restore` each stored run this session does not show yet; returns the last
    (run id, sentence) that one of them gave, or None."""
    said = None
    for run_id in run_ids:
        if run_id in runs():
            continue
        problem = restore(run_id)
        if problem:
            said = (run_id, problem)
    return said


def earlier_runs(limit: int = 8) -> list[str]:
    """The ids of this browser's stored runs that this session does not show (a reload
    starts a new session, which holds only the run of its link), oldest first; at most
    ``limit``, the newest."""
    store = get_store()
    if store is None:
        return []
    try:
        mine = store.list_runs(owner=owner(), limit=limit + len(runs()))
    except StoreError:
        return []
    return [r.id for r in mine if r.id not in runs()][:limit][::-1]
