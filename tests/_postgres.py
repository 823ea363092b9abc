"""A throwaway PostgreSQL server for the run store's tests and bench: ``initdb`` in a new
temporary folder, one server on 127.0.0.1 at a free port, everything removed afterwards.

It needs PostgreSQL's server programs (Debian: ``apt-get install postgresql``; found in
``$CSVM_PG_BINDIR``, ``/usr/lib/postgresql/*/bin`` or on the PATH) and the psycopg
package.  ``initdb`` refuses to run as root, so as root the server runs as the user
``nobody`` through ``runuser``.  ``$CSVM_TEST_POSTGRES_URL`` (a server where its user
may create databases) is used instead of starting one.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

__all__ = ["fresh_schema", "postgres_bindir", "throwaway_postgres", "why_no_postgres"]

#: Settings of the throwaway server: loopback only, no Unix socket, and no flushes to
#: disk (the tests kill clients, never the server, so nothing they check needs fsync).
_CONF = """
listen_addresses = '127.0.0.1'
port = {port}
unix_socket_directories = ''
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 40
shared_buffers = 16MB
"""


def postgres_bindir() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``, or None."""
    if os.environ.get("CSVM_PG_BINDIR"):
        return Path(os.environ["CSVM_PG_BINDIR"])
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _run_as() -> list[str]:
    """The command prefix that runs the server's programs as a user initdb accepts."""
    if os.geteuid() != 0:
        return []
    return ["runuser", "-u", "nobody", "--"]


def why_no_postgres() -> str | None:
    """Why a throwaway server cannot be started here (None: it can)."""
    if os.environ.get("CSVM_TEST_POSTGRES_URL"):
        return None
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install -r requirements-dev.txt)"
    bindir = postgres_bindir()
    if bindir is None or not (bindir / "initdb").exists():
        return "PostgreSQL's server programs are absent (Debian: apt-get install postgresql)"
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            return "running as root without runuser, and initdb refuses root"
        try:
            pwd.getpwnam("nobody")
        except KeyError:
            return "running as root with no user 'nobody' to run initdb as"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _call(args: list[str], folder: Path, what: str, log: Path | None = None) -> None:
    done = subprocess.run(
        _run_as() + args,
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "LC_ALL": "C", "LANG": "C"},
    )
    if done.returncode != 0:
        tail = log.read_text()[-2000:] if log is not None and log.exists() else ""
        raise RuntimeError(f"{what} failed: {done.stdout[-2000:]}{done.stderr[-2000:]}{tail}")


@contextmanager
def throwaway_postgres() -> Iterator[str]:
    """A running server for the duration of the block; yields its URL (user postgres,
    trust authentication, database postgres)."""
    if os.environ.get("CSVM_TEST_POSTGRES_URL"):
        yield os.environ["CSVM_TEST_POSTGRES_URL"]
        return
    bindir = postgres_bindir()
    folder = Path(tempfile.mkdtemp(prefix="csvm-pg-"))
    data, log = folder / "data", folder / "server.log"
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(folder, nobody.pw_uid, nobody.pw_gid)
    try:
        _call(
            [str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust",
             "-E", "UTF8", "--no-locale", "--no-sync", "--no-instructions"],
            folder,
            "initdb",
        )  # fmt: skip
        port = _free_port()
        with open(data / "postgresql.conf", "a") as conf:
            conf.write(_CONF.format(port=port))
        pg_ctl = str(bindir / "pg_ctl")
        _call([pg_ctl, "-D", str(data), "-l", str(log), "-w", "-t", "60", "start"],
              folder, "starting PostgreSQL", log)  # fmt: skip
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            _call([pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"],
                  folder, "stopping PostgreSQL", log)  # fmt: skip
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def fresh_schema(server_url: str) -> Iterator[str]:
    """A new empty schema on the server for the block; yields a URL whose connections use
    it (libpq's ``options=-csearch_path=...``), then drops it with all it holds.

    A schema, not a database: ``CREATE DATABASE`` copies a template (half a second on a
    busy machine), a schema is a row in a catalogue."""
    import psycopg

    name = f"csvm_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    parts = urlsplit(server_url)
    query = "&".join(q for q in (parts.query, f"options=-csearch_path%3D{name}") if q)
    try:
        yield urlunsplit(parts._replace(query=query))
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
