"""Your own images: the sidebar box that turns a zip of class folders into this session's
dataset (the checks and the storage are :mod:`csvm.data.own_images`), and how long the
server keeps such a dataset.

Streamlit has no public hook for a session's end, so the server asks, every
:data:`SWEEP_SECONDS`, which uploads are still in use, and removes the others once they
have been unused for the grace time (``CSVM_UPLOAD_GRACE_SECONDS``).  In use means:

- held by a session that is still connected (``Runtime.is_active_session``): its dataset
  and the datasets of its runs, recorded on each of its script runs (:func:`hold`);
- named by a job of the worker pool, finished or not, until the pool forgets it (a run
  keeps its data while anyone can still open it: its owner, a viewer of its link);
- uploaded by a browser that has a job queued or running (a sweep or a lab job carries no
  settings, but it may load the images).

A reload (F5) starts a new session in the same browser: :func:`adopt` finds the upload the
URL names again when that browser uploaded it, within the grace time.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import streamlit as st
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from csvm.data.images import UploadError
from csvm.data.own_images import (
    MAX_CLASSES,
    MAX_IMAGES,
    MAX_TOTAL_PIXELS,
    MAX_ZIP_BYTES,
    MIN_PER_CLASS,
    UploadQuota,
    is_own,
    own_meta,
    own_usage,
    read_image_zip,
    remove_own,
    remove_unused,
    store_own,
)
from csvm.exceptions import DatasetError
from explorer.settings import current_config, md_escape, set_config

#: The session's own dataset (its ``own-…`` name) in ``st.session_state``.
OWN_KEY = "own_dataset"
#: Seconds between two sweeps of unused uploads (a server-wide thread).
SWEEP_SECONDS = 15.0
_LOG = logging.getLogger(__name__)

#: Session id -> (the own datasets it uses, when it was last seen connected).
_HELD: dict[str, tuple[frozenset[str], float]] = {}
_HELD_LOCK = threading.Lock()
_SWEEPER: threading.Thread | None = None
_SWEEPER_LOCK = threading.Lock()


def quota() -> UploadQuota:
    """The disk quota of uploads (``CSVM_UPLOAD_*`` variables; ValueError names a bad one)."""
    return UploadQuota.from_env()


def _session_id() -> str | None:
    ctx = get_script_run_ctx()
    return None if ctx is None else ctx.session_id


def _session_alive(session_id: str) -> bool:
    """Whether the session is connected now (a closed tab's is not, at once)."""
    return Runtime.exists() and Runtime.instance().is_active_session(session_id)


def hold(names: Iterable[str | None]) -> None:
    """Record the own datasets this session uses now (one call per script run)."""
    session = _session_id()
    if session is None:
        return
    mine = frozenset(n for n in names if n and is_own(n))
    with _HELD_LOCK:
        if mine:
            _HELD[session] = (mine, time.monotonic())
        else:
            _HELD.pop(session, None)


def _own_names(value: Any) -> set[str]:
    """Every own dataset's name inside a job's ``meta`` (settings nest in dicts)."""
    if isinstance(value, str):
        return {value} if is_own(value) else set()
    if isinstance(value, dict):
        return set().union(*(_own_names(v) for v in value.values()))
    if isinstance(value, list | tuple):
        return set().union(*(_own_names(v) for v in value))
    return set()


def in_use(
    alive: Callable[[str], bool] = _session_alive,
    ignore_session: str | None = None,
) -> set[str]:
    """The own datasets that must stay (see the module's docstring).

    Parameters
    ----------
    alive : callable
        Whether a session id is connected now (tests pass their own).
    ignore_session : str, optional
        A session whose holds do not count (the one replacing its upload).
    """
    from explorer.pool import FINAL_STATES, get_pool

    grace = quota().grace_seconds
    now = time.monotonic()
    used: set[str] = set()
    with _HELD_LOCK:
        for session, (names, seen) in list(_HELD.items()):
            if alive(session):
                _HELD[session] = (names, now)
            elif now - seen > grace:
                del _HELD[session]  # ended: its holds go with it
                continue
            if session != ignore_session:
                used |= names
    busy: set[str] = set()
    for view in get_pool().jobs():
        used |= _own_names(view.meta)
        if view.state not in FINAL_STATES and view.owner:
            busy.add(view.owner)
    used |= {name for name, (who, _) in own_usage().items() if who and who in busy}
    return used


def sweep(alive: Callable[[str], bool] = _session_alive) -> list[str]:
    """Remove every upload nothing uses and nothing touched for the grace time."""
    return remove_unused(in_use(alive), quota().grace_seconds)


def _sweep_forever() -> None:
    while True:
        time.sleep(SWEEP_SECONDS)
        try:
            gone = sweep()
        except Exception:  # noqa: BLE001 - a failed sweep must not end the thread
            _LOG.exception("sweeping unused uploads failed")
            continue
        if gone:
            _LOG.info("removed %d unused upload(s): %s", len(gone), ", ".join(gone))


def start_sweeper() -> None:
    """Start the server's one sweeping thread, on a real server's first page (not in
    AppTest, whose sessions are never connected: tests call :func:`sweep` themselves)."""
    global _SWEEPER
    session = _session_id()
    if _SWEEPER is not None or session is None or not _session_alive(session):
        return
    with _SWEEPER_LOCK:
        if _SWEEPER is None:
            _SWEEPER = threading.Thread(target=_sweep_forever, name="csvm-uploads", daemon=True)
            _SWEEPER.start()


def adopt() -> str | None:
    """After a reload: this browser's upload that the URL (or the settings) names, made the
    session's dataset again; None when there is none to adopt."""
    from explorer.owner_cookie import owner

    if st.session_state.get(OWN_KEY):
        return st.session_state[OWN_KEY]
    named = st.query_params.get("dataset") or getattr(current_config(), "dataset", "")
    if not is_own(named):
        return None
    try:
        meta = own_meta(named)
    except DatasetError:
        return None
    if not meta.get("owner") or meta["owner"] != owner():
        return None  # another browser's upload: its name alone gives no access
    st.session_state[OWN_KEY] = named
    st.session_state["own_summary"] = _summary(named, meta.get("counts") or {})
    return named


def _summary(name: str, counts: dict[str, int]) -> str:
    listed = ", ".join(f"{k}: {v}" for k, v in counts.items())
    return f"Using your {sum(counts.values())} images ({listed}) as the dataset {name}."


def own_images_box() -> None:
    """The sidebar's "Your own images" box."""
    grace = quota_or_default().grace_seconds
    with st.sidebar.expander("Your own images", icon=":material/photo_library:"):
        st.file_uploader(
            "A zip with one folder of PNG/JPEG images per class",
            type=["zip"],
            key="own_file",
            help=f"2 to {MAX_CLASSES} folders (the class names), at least {MIN_PER_CLASS} "
            f"images each, at most {MAX_IMAGES:,} images, {MAX_TOTAL_PIXELS // 10**6} million "
            f"pixels and {MAX_ZIP_BYTES // 2**20} MB in all. They become 28×28 images "
            "of a dataset that only this browser's links name. The server keeps them while "
            "this browser's page or one of its runs uses them (a reload finds them again) "
            f"and removes them about {grace:.0f} s after.",
        )
        st.checkbox("Keep colour (three channels)", key="own_colour")
        st.button(
            "Use these images",
            key="own_go",
            on_click=_use_upload,
            disabled=st.session_state.get("own_file") is None,
        )
        problem = st.session_state.get("own_problem")
        if problem:
            st.error(md_escape(problem))
        summary = st.session_state.get("own_summary")
        if summary and st.session_state.get(OWN_KEY):
            st.caption(md_escape(summary))


def quota_or_default() -> UploadQuota:
    """:func:`quota`, or the defaults while a variable is wrong (the upload names it)."""
    try:
        return quota()
    except ValueError:
        return UploadQuota()


def _use_upload() -> None:
    """The button's callback (before the settings' widgets are drawn, so they can change)."""
    from explorer.owner_cookie import owner

    upload = st.session_state.get("own_file")
    if upload is None:
        return
    try:
        limits = quota()
        images = read_image_zip(upload.getvalue(), colour=bool(st.session_state.get("own_colour")))
        sweep()  # what ended sessions left behind makes room first
        previous = st.session_state.get(OWN_KEY)
        # The images it replaces go at once unless a run (or another tab) still uses them.
        used = in_use(ignore_session=_session_id()) if previous else set()
        free = previous if previous and previous not in used else None
        name = store_own(images, owner(), limits, replacing=free)
    except (UploadError, ValueError) as err:
        st.session_state["own_problem"] = str(err)
        return
    if free:
        remove_own(free)
    st.session_state[OWN_KEY] = name
    hold([name])
    st.session_state["own_problem"] = ""
    st.session_state["own_summary"] = _summary(name, images.counts())
    names = images.class_names
    set_config(
        current_config().replace(
            dataset=name,
            classes=None,
            class_a=names[0],
            class_b=names[1],
            protocol=None,
            n_train=None,
        )
    )
