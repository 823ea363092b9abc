"""Fixtures of the run store's tests: a SQLite file, and one throwaway PostgreSQL server per
test session with a fresh schema per test (skipped, with the reason, where no server can
be started: see tests/_postgres.py)."""

from __future__ import annotations

import pytest

from tests._postgres import fresh_schema, throwaway_postgres, why_no_postgres


@pytest.fixture(scope="session")
def postgres_server():
    """The URL of a PostgreSQL server started for this test session."""
    reason = why_no_postgres()
    if reason is not None:
        pytest.skip(f"no PostgreSQL for the run store's tests: {reason}")
    with throwaway_postgres() as url:
        yield url


@pytest.fixture
def pg_url(postgres_server):
    """A store URL on the session's server, in a schema of its own (dropped afterwards)."""
    with fresh_schema(postgres_server) as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path):
    """A store URL of each back end: a new SQLite file, or a new PostgreSQL schema."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/runs.sqlite"
    return request.getfixturevalue("pg_url")


@pytest.fixture
def stores(store_url):
    """``stores(**kwargs)`` opens a store on ``store_url``; every one is closed afterwards."""
    from csvm.store import open_store

    opened = []

    def make(**kwargs):
        store = open_store(store_url, **kwargs)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()
