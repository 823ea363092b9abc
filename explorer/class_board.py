"""The Class board's rules: display names, the class code, the teacher key, the rows.

The drawing is :mod:`explorer.class_board_view`; the page, ``pages/class_board.py``.

* A display name is what a student types on the Train page: at most
  :data:`MAX_NAME` printable characters, kept as text and never rendered as markup (the
  view escapes it for markdown with :func:`explorer.settings.md_escape`).
* The class code the teacher sets is kept in the run store (so every server on one store
  shares it): runs started afterwards carry it, and the board lists that class's runs.
  Without one the board lists every run of the store.
* Teacher actions (hide a run, clear the board, set the class code) need the key in
  ``CSVM_TEACHER_KEY``, typed into a password box and compared with
  :func:`hmac.compare_digest`.  Without the variable they are off, and the board says how
  to turn them on.  Students have no action on anyone's run.
* After :data:`MAX_TRIES` wrong keys from one network address, that address waits
  :data:`LOCK_SECONDS`.  The count is kept on the server, not in the session, so a
  reload, a new tab or cleared cookies do not reset it (without an address, as in
  AppTest, it is the session's).
"""

from __future__ import annotations

import base64
import hmac
import io
import os
import threading
import time
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import streamlit as st

from csvm.store import RunSummary, StoreError
from csvm.store.records import check_class_code
from explorer.owner_cookie import client_address
from explorer.run_store import get_store, track
from explorer.state import Run

__all__ = [
    "MAX_NAME",
    "TEACHER_ENV",
    "check_display_name",
    "class_code",
    "clear_board",
    "display_name",
    "hide_run",
    "record_run",
    "set_class_code",
    "teacher_problem",
]

#: Longest display name, in characters.
MAX_NAME = 40
#: The environment variable that holds the teacher key.
TEACHER_ENV = "CSVM_TEACHER_KEY"
#: Shortest teacher key accepted (a shorter one leaves the teacher actions off).
MIN_KEY = 8
#: Wrong keys one network address may type before it must wait :data:`LOCK_SECONDS`.
MAX_TRIES = 5
LOCK_SECONDS = 60.0
#: Addresses whose wrong keys the server remembers at once; past it, those with no wrong
#: key go first, then those not locked out, then the locked, oldest first in each.
MAX_ADDRESSES = 4096
#: The store's class settings entry that holds the board's class code (a leading "_":
#: no code a teacher may set starts with one).
_BOARD = "_csvm_board"
#: The session's display name, kept apart from the widget's key: Streamlit forgets a
#: widget's value on a page that does not draw it.
NAME_KEY = "_display_name"


def check_display_name(text: object) -> tuple[str, str | None]:
    """A display name as stored, and what was wrong with it (None: nothing).

    Spaces at either end are dropped and inner runs of spaces become one.  Refused (the
    name is then ""): more than :data:`MAX_NAME` characters, or a character that is not
    printable (line breaks, tabs, control and formatting characters such as the
    right-to-left override, which would turn the board's text around).

    Examples
    --------
    >>> check_display_name("  Ada   L. ")
    ('Ada L.', None)
    >>> check_display_name("<b>Bob</b>")  # kept as text; the board shows it literally
    ('<b>Bob</b>', None)
    >>> check_display_name("a\\u202eb")[1].split(": ")[1]
    'remove the invisible or control character U+202E.'
    """
    name = " ".join(part for part in str(text or "").split(" ") if part)
    for ch in name:
        if not ch.isprintable() or unicodedata.category(ch) in ("Cf", "Co", "Cn", "Zl", "Zp"):
            return "", (
                "A display name takes printable characters only: remove the invisible or "
                f"control character U+{ord(ch):04X}."
            )
    if len(name) > MAX_NAME:
        return "", (
            f"A display name is at most {MAX_NAME} characters; this one has {len(name)}. "
            "Shorten it (a first name is enough)."
        )
    return name, None


def display_name() -> str:
    """This session's display name, checked ("" when none or refused)."""
    return check_display_name(st.session_state.get(NAME_KEY, ""))[0]


def class_code() -> str | None:
    """The class code the teacher set for the board (None: none, or the store is off)."""
    store = get_store()
    if store is None:
        return None
    try:
        code = store.class_settings(_BOARD).get("class_code")
    except StoreError:
        return None
    try:
        return check_class_code(code) if code else None
    except StoreError:  # written by hand into the database: not a code the board uses
        return None


def set_class_code(code: str | None) -> str | None:
    """Set (or with ``None``/"" clear) the board's class code; returns the problem, if any.
    Needs the teacher key (typed in this session)."""
    if not _teacher_now():
        return "Only the teacher can set the class code: type the teacher key first."
    store = get_store()
    if store is None:
        return "The run store is off, so there is no board to set a class code for."
    code = (code or "").strip() or None
    if code is not None and code.startswith("_"):
        return "A class code starts with a letter or a digit, e.g. 'maths-7b'."
    try:
        store.set_class_settings(_BOARD, {"class_code": check_class_code(code)})
    except StoreError as exc:
        return str(exc)
    return None


def record_run(run: Run) -> None:
    """Keep ``run`` in the run store, under this session's display name and the board's
    class code (called when the Train page starts a run)."""
    track(run, name=display_name(), class_code=class_code())


# -- the teacher key ------------------------------------------------------------------------
def teacher_problem() -> str | None:
    """Why teacher actions are off on this server (None: they are on)."""
    key = os.environ.get(TEACHER_ENV, "")
    if not key:
        return (
            f"Teacher actions are off: start the server with {TEACHER_ENV} set to a "
            f"passphrase of {MIN_KEY} or more characters (for example "
            f"`{TEACHER_ENV}='a long passphrase' streamlit run app.py`), then type it here "
            "to hide runs, clear the board or set a class code."
        )
    if len(key) < MIN_KEY:
        return (
            f"Teacher actions are off: {TEACHER_ENV} is shorter than {MIN_KEY} characters, "
            "too easy to guess. Set a longer passphrase and restart the server."
        )
    return None


@dataclass
class _Tries:
    failures: int = 0
    locked_until: float = 0.0


# Wrong keys per network address, shared by every session of this server: a counter in
# the session was reset by a reload.  Sessions run in threads, hence the lock.
_TRIES: OrderedDict[str, _Tries] = OrderedDict()
_TRIES_LOCK = threading.Lock()


def _tries_of(address: str | None, now: float) -> _Tries:
    """The wrong-key count of ``address`` (None: this session's); call under the lock."""
    if address is None:
        return st.session_state.setdefault("_teacher_tries", _Tries())
    tries = _TRIES.get(address)
    if tries is not None:
        _TRIES.move_to_end(address)
        return tries
    if len(_TRIES) >= MAX_ADDRESSES:
        # Forgetting an idle count loses nothing, a counting one a few tries; a locked one
        # goes only when every remembered address is locked.  Oldest first in each.
        idle = [a for a, t in _TRIES.items() if not t.failures and t.locked_until <= now]
        counting = [a for a, t in _TRIES.items() if t.failures and t.locked_until <= now]
        for doomed in idle + counting + list(_TRIES):
            if len(_TRIES) < MAX_ADDRESSES:
                break
            _TRIES.pop(doomed, None)
    tries = _TRIES[address] = _Tries()
    return tries


def teacher_ok(entered: str, now: float | None = None) -> tuple[bool, str | None]:
    """Whether ``entered`` is the teacher key, and what to say when it is not.

    Compared in constant time (:func:`hmac.compare_digest`).  After :data:`MAX_TRIES`
    wrong keys from one network address (:func:`explorer.owner_cookie.client_address`;
    without one, this session) it waits :data:`LOCK_SECONDS` before the next try counts,
    whichever session, tab or reload tries.  The right key clears the count.
    """
    problem = teacher_problem()
    if problem is not None:
        return False, problem
    if not entered:
        return False, None
    now = time.monotonic() if now is None else now
    address = client_address()
    key = os.environ[TEACHER_ENV]
    # One lock around check and count: two tabs trying at once count as two tries.
    with _TRIES_LOCK:
        tries = _tries_of(address, now)
        if now < tries.locked_until:
            return False, f"Too many wrong keys: try again in {tries.locked_until - now:.0f} s."
        if hmac.compare_digest(entered.encode("utf-8"), key.encode("utf-8")):
            tries.failures, tries.locked_until = 0, 0.0
            return True, None
        tries.failures += 1
        if tries.failures >= MAX_TRIES:
            tries.failures, tries.locked_until = 0, now + LOCK_SECONDS
    return False, "That is not the teacher key."


def _teacher_now() -> bool:
    """Whether this session's typed teacher key is right now (checked again at every
    action, not only when the buttons were drawn)."""
    return teacher_ok(st.session_state.get("teacher_key", ""))[0]


def hide_run(run_id: str) -> bool:
    """Take a run off the board (its link still opens it); teacher only."""
    store = get_store()
    if store is None or not _teacher_now():
        return False
    try:
        return store.hide(run_id)
    except StoreError:
        return False


def clear_board() -> int:
    """Take every run off the board: the class's runs, or without a class code every run
    listed; teacher only.  Returns how many."""
    store = get_store()
    if store is None or not _teacher_now():
        return 0
    code = class_code()
    try:
        if code is not None:
            return store.clear_class(code)
        listed = store.list_runs(None, limit=5000)
        return sum(store.hide(r.id) for r in listed)
    except StoreError:
        return 0


# -- the board's rows -----------------------------------------------------------------------
SORTS = ("newest first", "accuracy, best first")


def board_runs(sort: str = SORTS[0], limit: int = 200) -> tuple[list[RunSummary], str | None]:
    """The board's runs (the class code's, else every run), sorted; and a problem."""
    store = get_store()
    if store is None:
        return [], None
    try:
        rows = store.list_runs(class_code(), limit=limit)
    except StoreError as exc:
        return [], str(exc)
    if sort == SORTS[1]:
        # Runs without an accuracy (interrupted, failed) go last, newest first among them.
        rows = sorted(rows, key=lambda r: (r.accuracy is None, -(r.accuracy or 0.0)))
    return rows, None


def best(rows: list[RunSummary], n: int = 4) -> list[RunSummary]:
    """The ``n`` runs with the highest test accuracy on the task of the newest run that
    has one (ties: the newer first).

    One task, the one the class is on: ranked together, the teaching set's 99 % always
    took the four places from a digits exercise's 92 %.
    """
    scored = [r for r in rows if r.accuracy is not None]
    if not scored:
        return []
    task = best_task(scored)
    same = [r for r in scored if (r.dataset, r.pair) == task]
    return sorted(same, key=lambda r: (-r.accuracy, -r.created))[:n]


def best_task(rows: list[RunSummary]) -> tuple[str, str]:
    """The dataset and pair of the newest run with a test accuracy (the class's task)."""
    newest = max((r for r in rows if r.accuracy is not None), key=lambda r: r.created)
    return newest.dataset, newest.pair


def thumbnail_rgb(thumb: np.ndarray, cell: int = 6) -> np.ndarray | None:
    """A stored thumbnail ``(k, h, w)`` as one RGB picture: the filters side by side,
    ``cell`` pixels per weight, red above zero and blue below on one symmetric scale (the
    Train page's colours), white at zero.  None when it holds nothing finite to draw.

    Examples
    --------
    >>> pic = thumbnail_rgb(np.array([[[1.0, -1.0]]]), cell=2)
    >>> pic.shape, pic[0, 0].tolist(), pic[0, 2].tolist()
    ((2, 4, 3), [178, 24, 43], [33, 102, 172])
    """
    a = np.asarray(thumb, dtype=np.float64)
    if a.ndim != 3 or a.size == 0 or not np.isfinite(a).all():
        return None
    k, h, w = a.shape
    limit = float(np.abs(a).max()) or 1.0
    # One pixel of white between filters.
    tiles = np.full((h, k * (w + 1) - 1), 0.0)
    for i in range(k):
        tiles[:, i * (w + 1) : i * (w + 1) + w] = a[i] / limit
    red, blue, white = np.array([178, 24, 43]), np.array([33, 102, 172]), np.array([255, 255, 255])
    t = tiles[..., None]
    rgb = np.where(t >= 0, white + t * (red - white), white - t * (blue - white))
    picture = np.round(rgb).astype(np.uint8)
    return picture.repeat(cell, axis=0).repeat(cell, axis=1)


def png_data_uri(picture: np.ndarray) -> str:
    """An RGB picture (``uint8``, ``(h, w, 3)``) as a ``data:image/png;base64,...`` URI."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(picture, dtype=np.uint8), "RGB").save(buffer, "PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
