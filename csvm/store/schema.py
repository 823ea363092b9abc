"""The store's tables, and the migrations that bring any older store up to date.

A store records its schema version in ``csvm_store_meta``.  Opening a store applies, in
one transaction, every migration above that version (so a store is never half migrated),
holding a lock so two servers opening one PostgreSQL database at once migrate it once.
A store written by a newer csvm (a version above :data:`SCHEMA_VERSION`) is refused
with a message, never altered.

To change the schema, append a migration (never edit one that has shipped): each is a
list of statements in the dialect-neutral spelling of :mod:`csvm.store.backends`.
"""

from __future__ import annotations

from csvm.store.backends import Backend, Tx, redact
from csvm.store.records import StoreError

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "migrate", "schema_version"]

#: Migration n (1-based) takes a store from version n - 1 to version n.
MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE csvm_runs (
            id TEXT PRIMARY KEY,
            owner TEXT,
            name TEXT NOT NULL,
            class_code TEXT,
            status TEXT NOT NULL,
            step {int} NOT NULL,
            config TEXT NOT NULL,
            model TEXT NOT NULL,
            dataset TEXT NOT NULL,
            pair TEXT NOT NULL,
            accuracy {real},
            acc_low {real},
            acc_high {real},
            results TEXT NOT NULL,
            history TEXT NOT NULL,
            filters {blob},
            filters_shape TEXT,
            thumb {blob},
            thumb_shape TEXT,
            nbytes {int} NOT NULL,
            hidden {int} NOT NULL DEFAULT 0,
            server TEXT,
            created {real} NOT NULL,
            updated {real} NOT NULL,
            touched {real} NOT NULL,
            finished {real}
        )""",
        # The board lists a class's runs newest first; startup finds the running ones.
        "CREATE INDEX csvm_runs_board ON csvm_runs (class_code, created)",
        "CREATE INDEX csvm_runs_status ON csvm_runs (status)",
        """CREATE TABLE csvm_servers (
            id TEXT PRIMARY KEY,
            started {real} NOT NULL,
            heartbeat {real} NOT NULL
        )""",
        """CREATE TABLE csvm_classes (
            code TEXT PRIMARY KEY,
            settings TEXT NOT NULL,
            updated {real} NOT NULL
        )""",
    ],
]

#: The version this csvm writes.
SCHEMA_VERSION = len(MIGRATIONS)

_META = "CREATE TABLE IF NOT EXISTS csvm_store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"


def schema_version(tx: Tx) -> int:
    """The store's schema version (0 for a new, empty database)."""
    row = tx.one("SELECT value FROM csvm_store_meta WHERE key = 'schema_version'")
    return 0 if row is None else int(row[0])


def migrate(backend: Backend, migrations: list[list[str]] | None = None) -> int:
    """Bring the store up to date; its version afterwards.

    Parameters
    ----------
    backend : Backend
    migrations : list of list of str, optional
        The migrations to apply (default :data:`MIGRATIONS`; tests pass their own).
    """
    steps = MIGRATIONS if migrations is None else migrations
    with backend.transaction() as tx:
        backend.lock_for_migration(tx)
        tx.run(_META)
        version = schema_version(tx)
        if version > len(steps):
            raise StoreError(
                f"The run store {redact(backend.url)} has schema version {version}, "
                f"made by a newer csvm (this one knows up to {len(steps)}): upgrade csvm, "
                "or point CSVM_RUN_STORE at another store."
            )
        for statements in steps[version:]:
            for statement in statements:
                tx.run(statement)
        if version < len(steps):
            tx.run("DELETE FROM csvm_store_meta WHERE key = 'schema_version'")
            tx.run(
                "INSERT INTO csvm_store_meta (key, value) VALUES ('schema_version', :v)",
                {"v": str(len(steps))},
            )
    return len(steps)
