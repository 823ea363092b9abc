"""The run store: every run that ended (or was cut off) kept in SQLite or PostgreSQL.

Which store
-----------
``CSVM_RUN_STORE`` names it: ``sqlite:///absolute/path/runs.sqlite`` or
``postgresql://user:password@host:port/database``.  Unset, it is a SQLite file in the
per-user data folder, ``platformdirs.user_data_dir("csvm")/runs.sqlite``
(``~/.local/share/csvm/runs.sqlite`` on Linux): nothing to install or start.  Several
servers that share one PostgreSQL database (or one SQLite file on one machine) see each
other's runs.

Why the standard ``sqlite3`` and psycopg 3, not SQLAlchemy and Alembic: the store is
four tables and a dozen statements, which both databases spell alike but for column types,
parameters and the clock (:mod:`csvm.store.backends` spells those three); an ORM and a
migration tool would add two large dependencies, and Alembic's scripts folder and
configuration file would have to ship in the wheel, for less than a page of SQL.  The
default SQLite store needs nothing beyond Python; psycopg (``psycopg[binary]``, with its
own libpq) is imported only for a ``postgresql://`` URL.  Migrations are a numbered list
applied in one transaction under a lock (:mod:`csvm.store.schema`).

Use
---
::

    from csvm.store import open_store

    store = open_store()              # CSVM_RUN_STORE, else the default SQLite file
    store.recover()                   # at server start: runs left "running" by a dead
                                      # server become "interrupted" (their ids returned)

    # while a run trains, as often as every step (one small transaction; also a heartbeat)
    store.checkpoint(run_id, config, step=k, history=history, filters=filters,
                     owner=owner_id, name="Ada's run", class_code="maths-7b")
    # when it ends: whole, in one transaction ("done", "stopped", "diverged", "error")
    store.save(run_id, config, results, status="done", owner=owner_id, name="Ada's run",
               class_code="maths-7b")
    store.heartbeat()                 # now and then (it skips calls within 5 s)

    run = store.get(run_id)           # StoredRun or None: config (RunConfig), results,
                                      # history, filters (float32), status, step, times
    run.interrupted, run.step         # "interrupted at step k", with its last state
    run.owned_by(owner_id)

    store.list_runs("maths-7b")       # RunSummary list, newest first: name, model,
                                      # dataset, pair, accuracy, interval, thumbnail,
                                      # query (the settings as a link's query string)
    store.hide(run_id)                # off the boards; its link still opens it
    store.clear_class("maths-7b")     # hide a class's whole board
    store.set_class_settings("maths-7b", {"lesson": "shapes"})
    store.class_settings("maths-7b")  # {} when none
    store.touch(run_id)               # someone opened it: not abandoned
    store.close()

What a run holds: its settings as the RunConfig's query string (the link's), results
and history as JSON (arrays as lists; the "csvm" result's history and filters are kept
in columns of their own), filters as float32 bytes with their shape, the owner as a hash
(:func:`owner_hash`, never the cookie), a display name, its class code, and times from
the database's clock.  Bad input (an unknown status, a class code with spaces, a config
that is not a RunConfig) and every database failure raise :class:`StoreError`, whose
message says what was wrong and what to do.

Guarantees
----------
* Every write is one transaction: a process killed at any moment leaves the store
  readable, each run whole (as of its last write) or absent.
* A checkpoint never overwrites a run that has ended.
* Interrupted, not lost: the servers record heartbeats; :meth:`RunStore.recover` marks
  "interrupted" only the running runs whose server has been silent for ``stale_after``
  seconds (or its own, left by a restart with a fixed ``server_id``), so two live servers
  never mark each other's runs.  Call :meth:`RunStore.heartbeat` more often than that.
* Bounded (:class:`StoreLimits`, ``CSVM_RUN_STORE_MAX_RUNS``, ``..._MAX_BYTES``,
  ``..._KEEP_SECONDS``): after each save, while over a bound, the owner holding the
  most runs (over the byte bound: the most bytes) loses a run, its oldest *abandoned*
  one first (hidden, or neither written nor opened for ``keep_seconds``), then its
  oldest other; a running run never.  So one owner flooding the store forgets its own
  runs before anyone else's, and an owner's newest run is never forgotten while another
  owner has more runs (:mod:`csvm.store.eviction`).  Runs with no owner count as one.

Thread safety: one store object may be shared by every session thread of a server (its
transactions are serialised by a lock); open one per process.
"""

from csvm.store.backends import ENV_VAR, default_url, redact
from csvm.store.limits import LIMIT_ENV_VARS, StoreLimits
from csvm.store.records import FINAL, RUNNING, RunSummary, StoredRun, StoreError, owner_hash
from csvm.store.schema import SCHEMA_VERSION
from csvm.store.store import RunStore, open_store

__all__ = [
    "ENV_VAR",
    "FINAL",
    "LIMIT_ENV_VARS",
    "RUNNING",
    "SCHEMA_VERSION",
    "RunStore",
    "RunSummary",
    "StoreError",
    "StoreLimits",
    "StoredRun",
    "default_url",
    "open_store",
    "owner_hash",
    "redact",
]
