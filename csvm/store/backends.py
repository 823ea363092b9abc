"""The two databases behind a run store: one connection each, its SQL dialect, its errors.

The store's SQL is written once, with ``:name`` parameters, a ``:now`` that reads the
database's clock, and ``{blob}``, ``{real}``, ``{int}`` for the column types;
:meth:`Backend.sql` turns it into each database's spelling.  Every statement runs inside
:meth:`Backend.transaction`, so a write is all or nothing.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import platformdirs

from csvm.store.records import StoreError

__all__ = [
    "ENV_VAR",
    "Backend",
    "PostgresBackend",
    "SqliteBackend",
    "Tx",
    "connect",
    "default_url",
    "redact",
]

#: The environment variable that names the run store.
ENV_VAR = "CSVM_RUN_STORE"
_SCHEMES = "sqlite:///absolute/path/runs.sqlite or postgresql://user@host:port/database"
# An application lock id for schema migrations on PostgreSQL ("csvm" in ASCII).
_MIGRATION_LOCK = 0x6373766D


def default_url() -> str:
    """``$CSVM_RUN_STORE``, else a SQLite file in the per-user data folder.

    The folder is ``platformdirs.user_data_dir("csvm")``: ``~/.local/share/csvm`` on Linux
    (``$XDG_DATA_HOME/csvm`` when set), ``~/Library/Application Support/csvm`` on macOS,
    the roaming application data folder on Windows.  Not the dataset cache
    (:func:`csvm.data.registry.data_home`): a cache may be wiped, and ``CSVM_DATA_DIR``
    may be a read-only copy of the datasets.
    """
    url = os.environ.get(ENV_VAR, "").strip()
    if url:
        return url
    return "sqlite:///" + str(Path(platformdirs.user_data_dir("csvm")) / "runs.sqlite")


def redact(url: str) -> str:
    """``url`` without its password, fit for messages and logs."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<an unreadable URL>"
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = (parts.username or "") + ":***"
    return urlunsplit(parts._replace(netloc=f"{user}@{netloc[-1]}"))


class Tx:
    """The statements of one transaction (rows come back as tuples)."""

    def __init__(self, backend: Backend, cursor: Any):
        self._backend, self._cursor = backend, cursor

    def run(self, sql: str, params: dict[str, Any] | None = None) -> int:
        """Execute one statement; the number of rows it changed."""
        params = dict(params or {})
        if self._backend.now_param:
            params["now"] = time.time()
        self._cursor.execute(self._backend.sql(sql), params)
        return self._cursor.rowcount

    def all(self, sql: str, params: dict[str, Any] | None = None) -> list[tuple]:
        """Every row of a query."""
        self.run(sql, params)
        return list(self._cursor.fetchall())

    def one(self, sql: str, params: dict[str, Any] | None = None) -> tuple | None:
        """The first row of a query, or None."""
        self.run(sql, params)
        return self._cursor.fetchone()


class Backend:
    """One connection to a store's database (subclasses: SQLite, PostgreSQL).

    One lock serialises the store object's transactions: Streamlit runs every session's
    script in its own thread, and neither driver's connection may be used by two at once.
    """

    name = ""
    now_param = False  # True: ":now" is a parameter filled from this machine's clock
    _types: dict[str, str] = {}
    _now_sql = ":now"

    def __init__(self, url: str):
        self.url = url
        self._lock = threading.RLock()
        self._spelled: dict[str, str] = {}

    def sql(self, text: str) -> str:
        """``text`` in this database's spelling (remembered: the store's SQL is fixed)."""
        spelled = self._spelled.get(text)
        if spelled is None:
            spelled = self._spelled[text] = self._spell(text)
        return spelled

    def _spell(self, text: str) -> str:
        return text.format(**self._types).replace(":now", self._now_sql)

    @contextmanager
    def transaction(self, write: bool = True) -> Iterator[Tx]:
        """A transaction: committed when the block ends, rolled back if it raises."""
        raise NotImplementedError

    def lock_for_migration(self, tx: Tx) -> None:
        """Make concurrent openers of one database migrate one after the other."""

    def is_lost_connection(self, exc: BaseException) -> bool:
        """Whether ``exc`` means the connection died (worth one retry on a new one)."""
        return False

    def is_database_error(self, exc: BaseException) -> bool:
        """Whether ``exc`` came from the database driver."""
        return False

    def reconnect(self) -> None:
        """Drop the connection and open a new one (only PostgreSQL's can be lost)."""

    def error(self, exc: BaseException, doing: str) -> StoreError:
        """A StoreError for a database error met while ``doing`` something."""
        return StoreError(f"The run store {redact(self.url)} failed while {doing}: {exc}")

    def close(self) -> None:
        """Close the connection (the object may not be used again)."""


#: How long an opener retries a new file's switch to WAL while another opener holds it.
_WAL_SWITCH_SECONDS = 10.0


def _switch_to_wal(conn: sqlite3.Connection) -> None:
    """``PRAGMA journal_mode=WAL``, retried while another process opens the same new file:
    the switch needs the file alone for a moment, and SQLite answers "database is locked"
    at once there instead of waiting out the connection's busy timeout (two servers
    starting together on a loaded machine met it)."""
    deadline = time.monotonic() + _WAL_SWITCH_SECONDS
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            busy = "locked" in str(exc) or "busy" in str(exc)
            if not busy or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class SqliteBackend(Backend):
    """A SQLite file: WAL journal, so readers never wait for a writer and a killed
    writer leaves the last committed state.

    ``synchronous=NORMAL``: a killed process loses nothing committed; a power cut may lose
    the last few commits, never the file (SQLite's documented WAL guarantee).
    """

    name = "sqlite"
    now_param = True
    _types = {"blob": "BLOB", "real": "REAL", "int": "INTEGER"}

    def __init__(self, url: str, path: Path):
        super().__init__(url)
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                str(path), timeout=10.0, isolation_level=None, check_same_thread=False
            )
            _switch_to_wal(self._conn)
            self._conn.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.DatabaseError as exc:
            if "not a database" in str(exc) or "malformed" in str(exc):
                raise self.error(exc, "opening it") from None
            raise self._cannot_open(exc) from None
        except (OSError, sqlite3.Error) as exc:
            raise self._cannot_open(exc) from None

    def _cannot_open(self, exc: BaseException) -> StoreError:
        return StoreError(
            f"Cannot open the run store file {self.path}: {exc}. Make its folder writable, "
            f"or set {ENV_VAR} to another sqlite:/// path or a postgresql:// URL."
        )

    @contextmanager
    def transaction(self, write: bool = True) -> Iterator[Tx]:
        with self._lock:
            # IMMEDIATE takes the write lock first: two writers queue instead of one
            # failing halfway when it tries to upgrade a read lock.
            self._conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield Tx(self, self._conn.cursor())
                self._conn.execute("COMMIT")
            except BaseException:
                # SQLite may have rolled back already (some errors do); a failed COMMIT
                # leaves the transaction open, and the next BEGIN would fail.
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise

    def is_database_error(self, exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.Error)

    def error(self, exc: BaseException, doing: str) -> StoreError:
        text = str(exc)
        if "not a database" in text or "malformed" in text:
            return StoreError(
                f"{self.path} is not a readable SQLite run store ({text}). Move it aside "
                f"(a new empty store is made in its place) or set {ENV_VAR} elsewhere."
            )
        if "locked" in text or "busy" in text:
            return StoreError(
                f"The run store {self.path} stayed locked by another process for 10 s "
                f"while {doing}; try again, or give each server its own file."
            )
        return super().error(exc, doing)

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class PostgresBackend(Backend):
    """A PostgreSQL database through psycopg 3 (one connection, reopened when lost)."""

    name = "postgresql"
    _types = {"blob": "BYTEA", "real": "DOUBLE PRECISION", "int": "BIGINT"}
    # The server's clock, so servers on machines whose clocks differ agree on times.
    _now_sql = "CAST(EXTRACT(EPOCH FROM statement_timestamp()) AS DOUBLE PRECISION)"

    def __init__(self, url: str):
        super().__init__(url)
        try:
            import psycopg
        except ImportError:
            raise StoreError(
                f"{ENV_VAR} names a PostgreSQL store, which needs the psycopg package: "
                "pip install 'psycopg[binary]>=3.1.4'."
            ) from None
        self._psycopg = psycopg
        self._conn = self._connect()

    def _connect(self) -> Any:
        try:
            return self._psycopg.connect(
                self.url, autocommit=True, connect_timeout=10, application_name="csvm"
            )
        except self._psycopg.Error as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise StoreError(
                f"Cannot connect to the run store {redact(self.url)}: {reason}. Check "
                f"{ENV_VAR} and that the PostgreSQL server is running and reachable."
            ) from None

    def _spell(self, text: str) -> str:
        # ":name" parameters become psycopg's "%(name)s" (the "::" of a cast is left).
        return re.sub(r"(?<![:\w]):([A-Za-z_]\w*)", r"%(\1)s", super()._spell(text))

    @contextmanager
    def transaction(self, write: bool = True) -> Iterator[Tx]:
        with self._lock:
            if self._conn.closed:
                self._conn = self._connect()
            with self._conn.transaction(), self._conn.cursor() as cursor:
                yield Tx(self, cursor)

    def lock_for_migration(self, tx: Tx) -> None:
        tx.run(f"SELECT pg_advisory_xact_lock({_MIGRATION_LOCK})")

    def is_lost_connection(self, exc: BaseException) -> bool:
        return isinstance(exc, self._psycopg.OperationalError) or bool(
            getattr(self._conn, "closed", False)
        )

    def is_database_error(self, exc: BaseException) -> bool:
        return isinstance(exc, self._psycopg.Error)

    def reconnect(self) -> None:
        with self._lock:
            try:
                self._conn.close()
            finally:
                self._conn = self._connect()

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _sqlite_path(url: str) -> Path:
    rest = url[len("sqlite://") :]
    if rest.startswith("/") and rest[1:2] == "/":
        rest = rest[1:]  # sqlite:////abs/path, as SQLAlchemy writes absolute paths
    if not rest or rest == "/":
        raise StoreError(f"{ENV_VAR}={url!r} names no file: write {_SCHEMES}.")
    return Path(rest).expanduser()


def connect(url: str) -> Backend:
    """The backend for a store URL.

    ``sqlite:///abs/path/runs.sqlite`` (``sqlite:////abs/path`` and a relative
    ``sqlite://runs.sqlite`` work too) or ``postgresql://user:password@host:port/db``
    (``postgres://`` and libpq's query options such as ``?sslmode=require`` too).
    """
    text = str(url).strip()
    scheme = text.split(":", 1)[0].lower() if ":" in text else ""
    if scheme == "sqlite" and text[len("sqlite:") :].startswith("//"):
        return SqliteBackend(text, _sqlite_path(text))
    if scheme in ("postgresql", "postgres"):
        return PostgresBackend(text)
    raise StoreError(f"{ENV_VAR}={redact(text)!r} is not a run store URL: write {_SCHEMES}.")
