"""Opening a run store: which URL, migrations, and clear messages when it cannot be used."""

from __future__ import annotations

import socket
import sqlite3

import pytest

from csvm.runs.config import RunConfig
from csvm.store import SCHEMA_VERSION, StoreError, StoreLimits, default_url, open_store, redact
from csvm.store.backends import connect
from csvm.store.schema import MIGRATIONS, migrate, schema_version


def test_the_default_store_is_a_file_in_the_user_data_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("CSVM_RUN_STORE", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_url() == f"sqlite:///{tmp_path}/data/csvm/runs.sqlite"
    with open_store() as store:
        assert store.backend == "sqlite"
    assert (tmp_path / "data" / "csvm" / "runs.sqlite").is_file()
    monkeypatch.setenv("CSVM_RUN_STORE", "postgresql://teacher@db.school:5432/runs")
    assert default_url() == "postgresql://teacher@db.school:5432/runs"


def test_sqlite_urls_absolute_sqlalchemy_style_and_relative(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    for url, path in (
        (f"sqlite://{tmp_path}/a.sqlite", tmp_path / "a.sqlite"),  # sqlite:///abs
        (f"sqlite:///{tmp_path}/b.sqlite", tmp_path / "b.sqlite"),  # sqlite:////abs
        ("sqlite://c.sqlite", tmp_path / "c.sqlite"),
    ):
        with open_store(url) as store:
            store.save("r", RunConfig(), None)
        assert path.is_file(), url


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://root@host/db", "not a run store URL: write sqlite:///absolute/path"),
        ("runs.sqlite", "not a run store URL"),
        ("sqlite:///", "names no file"),
    ],
)
def test_a_url_that_is_no_store_says_what_to_write(url, message):
    with pytest.raises(StoreError, match=message):
        open_store(url)


def test_a_file_that_is_not_a_store_is_named_with_what_to_do(tmp_path):
    path = tmp_path / "runs.sqlite"
    path.write_bytes(b"this is not a database, it is a text file " * 100)
    with pytest.raises(StoreError, match=r"not a readable SQLite run store.*Move it aside"):
        open_store(f"sqlite:///{path}")


def test_an_unreachable_postgres_is_named_without_its_password():
    pytest.importorskip("psycopg", reason="psycopg is not installed")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    with pytest.raises(StoreError) as caught:
        open_store(f"postgresql://teacher:hunter2@127.0.0.1:{port}/runs")
    text = str(caught.value)
    assert "Cannot connect to the run store postgresql://teacher:***@127.0.0.1" in text
    assert "hunter2" not in text and "CSVM_RUN_STORE" in text
    assert redact("postgresql://u@h/db") == "postgresql://u@h/db"


def test_limits_from_the_environment():
    env = {"CSVM_RUN_STORE_MAX_RUNS": "300", "CSVM_RUN_STORE_MAX_BYTES": "64M"}
    assert StoreLimits.from_env(env) == StoreLimits(max_runs=300, max_bytes=64 * 2**20)
    with pytest.raises(StoreError, match="CSVM_RUN_STORE_MAX_BYTES='lots' is not a number"):
        StoreLimits.from_env({"CSVM_RUN_STORE_MAX_BYTES": "lots"})
    with pytest.raises(StoreError, match="must be positive"):
        StoreLimits.from_env({"CSVM_RUN_STORE_MAX_RUNS": "0"})


def test_reopening_keeps_the_runs_and_migrates_nothing_twice(store_url):
    with open_store(store_url) as store:
        store.save("r", RunConfig(), None, class_code="7b")
    with open_store(store_url) as store:
        assert store.get("r").class_code == "7b"
        with store._backend.transaction() as tx:
            assert schema_version(tx) == SCHEMA_VERSION == len(MIGRATIONS)


def test_a_new_migration_is_applied_once_and_a_newer_store_is_refused(store_url):
    backend = connect(store_url)
    try:
        extra = [*MIGRATIONS, ["CREATE TABLE csvm_extra (x TEXT)"]]
        assert migrate(backend) == SCHEMA_VERSION
        assert migrate(backend, extra) == SCHEMA_VERSION + 1
        assert migrate(backend, extra) == SCHEMA_VERSION + 1  # no "table exists" error
        with backend.transaction() as tx:
            assert tx.all("SELECT x FROM csvm_extra") == []
        with pytest.raises(StoreError, match="made by a newer csvm .* upgrade csvm"):
            migrate(backend)
    finally:
        backend.close()
    with pytest.raises(StoreError, match="newer csvm"):
        open_store(store_url)


def test_a_lost_postgres_connection_is_reopened(pg_url, postgres_server):
    import psycopg

    with open_store(pg_url) as store:
        store.save("r", RunConfig(), None)
        pid = store._backend._conn.info.backend_pid
        with psycopg.connect(postgres_server, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        assert [r.id for r in store.list_runs()] == ["r"]
        assert store._backend._conn.info.backend_pid != pid


def test_two_servers_opening_a_new_store_at_once_both_work(store_url):
    """The migration lock: the second opener waits, then finds the tables made."""
    import threading

    errors, stores = [], []

    def open_one():
        try:
            stores.append(open_store(store_url))
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    try:
        assert errors == [] and len(stores) == 3
        stores[0].save("r", RunConfig(), None)
        assert [r.id for r in stores[2].list_runs()] == ["r"]
    finally:
        for s in stores:
            s.close()


class _LockedTwice:
    """A connection whose first two switches to WAL meet another opener's lock."""

    def __init__(self, error: str = "database is locked"):
        self.calls, self.error = 0, error

    def execute(self, sql):
        self.calls += 1
        if self.calls <= 2:
            raise sqlite3.OperationalError(self.error)


def test_a_new_files_switch_to_wal_waits_for_another_opener():
    from csvm.store.backends import _switch_to_wal

    conn = _LockedTwice()
    _switch_to_wal(conn)
    assert conn.calls == 3
    other = _LockedTwice("disk I/O error")  # not a lock: said at once
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        _switch_to_wal(other)
    assert other.calls == 1
