"""The run store: one class over both databases (see :mod:`csvm.store` for its use)."""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from csvm.runs.config import RunConfig
from csvm.store import records as rec
from csvm.store.backends import Backend, Tx, connect, default_url, redact
from csvm.store.eviction import EVICTION_ROWS, choose_victims
from csvm.store.limits import LIMIT_ENV_VARS, StoreLimits
from csvm.store.records import FINAL, RUNNING, RunSummary, StoredRun, StoreError
from csvm.store.schema import migrate

__all__ = ["RunStore", "open_store"]

T = TypeVar("T")

_COLUMNS = (
    "id", "owner", "name", "class_code", "status", "step", "config", "model", "dataset",
    "pair", "accuracy", "acc_low", "acc_high", "results", "history", "filters",
    "filters_shape", "thumb", "thumb_shape", "nbytes", "server",
)  # fmt: skip
# On a second write of a run every column is replaced but its birth and its hidden flag.
_UPSERT = (
    "INSERT INTO csvm_runs ({cols}, created, updated, touched, finished) "
    "VALUES ({vals}, :now, :now, :now, {finished}) "
    "ON CONFLICT (id) DO UPDATE SET {sets}, updated = :now, touched = :now, "
    "finished = excluded.finished"
).format(
    cols=", ".join(_COLUMNS),
    vals=", ".join(f":{c}" for c in _COLUMNS),
    sets=", ".join(f"{c} = excluded.{c}" for c in _COLUMNS[1:]),
    finished="{finished}",
)
_SAVE = _UPSERT.replace("{finished}", ":now")
# A checkpoint never overwrites a run that has ended; it revives one that a peer marked
# interrupted only when it comes from the server that runs it (the peer was wrong).
_CHECKPOINT = _UPSERT.replace("{finished}", "NULL") + (
    " WHERE csvm_runs.status = 'running' OR "
    "(csvm_runs.status = 'interrupted' AND csvm_runs.server = excluded.server)"
)
_BEAT = (
    "INSERT INTO csvm_servers (id, started, heartbeat) VALUES (:me, :now, :now) "
    "ON CONFLICT (id) DO UPDATE SET heartbeat = excluded.heartbeat"
)
_SUMMARY = (
    "id, name, owner, class_code, status, step, model, dataset, pair, accuracy, acc_low, "
    "acc_high, thumb, thumb_shape, config, created, updated, hidden"
)
_WHOLE = (
    "id, name, owner, class_code, status, step, config, results, history, filters, "
    "filters_shape, created, updated, finished, hidden, server, nbytes"
)


def _default_server_id() -> str:
    return f"{socket.gethostname()[:40]}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


class RunStore:
    """Runs kept in SQLite or PostgreSQL (open one with :func:`open_store`).

    Parameters
    ----------
    url : str
        ``sqlite:///path`` or ``postgresql://...``.
    server_id : str, optional
        This server's id in the store (default: host, process id and a random suffix).
        A fixed id lets a restarted server mark its own left-over runs interrupted at
        once in :meth:`recover`, instead of after ``stale_after``.
    limits : StoreLimits, optional
        Default: :meth:`StoreLimits.from_env`.
    """

    def __init__(self, url: str, server_id: str | None = None, limits: StoreLimits | None = None):
        self.server_id = rec.check_name(server_id or _default_server_id())[:100]
        self.limits = limits if limits is not None else StoreLimits.from_env()
        self._backend: Backend = connect(url)
        self.url = redact(url)
        self._last_beat = -1e18
        try:
            self._do("opening", lambda tx: None, migrate_first=True)
            self._started = float(
                self._do("reading its clock", lambda tx: tx.one("SELECT :now")[0])
            )
        except BaseException:
            self._backend.close()
            raise

    @property
    def backend(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return self._backend.name

    # -- plumbing ---------------------------------------------------------------------
    def _do(
        self,
        doing: str,
        work: Callable[[Tx], T],
        write: bool = True,
        migrate_first: bool = False,
    ) -> T:
        """``work`` in one transaction; a lost PostgreSQL connection is retried once (every
        write here is an idempotent upsert, update or delete); database errors become
        StoreErrors that say what failed."""
        for attempt in (0, 1):
            try:
                if migrate_first:
                    migrate(self._backend)
                with self._backend.transaction(write) as tx:
                    return work(tx)
            except StoreError:
                raise
            except Exception as exc:
                if attempt == 0 and self._backend.is_lost_connection(exc):
                    self._backend.reconnect()
                    continue
                if self._backend.is_database_error(exc):
                    raise self._backend.error(exc, doing) from exc
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        """Close the connection."""
        self._backend.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing runs -----------------------------------------------------------------
    def _row(
        self,
        run_id: str,
        config: RunConfig,
        *,
        status: str,
        step: int | None,
        results: Mapping[str, Any] | None,
        history: Sequence[Mapping[str, Any]] | None,
        filters: Any,
        owner: str | None,
        name: str,
        class_code: str | None,
    ) -> dict[str, Any]:
        kept, own_history, own_filters = rec.split_results(results)
        history_rows = rec.history_list(history if history is not None else own_history)
        filters = filters if filters is not None else own_filters
        data, shape = rec.encode_array(filters)
        thumb, thumb_shape = rec.encode_array(rec.thumbnail(filters))
        row = {
            "id": rec.check_id(run_id),
            "owner": rec.owner_hash(owner),
            "name": rec.check_name(name),
            "class_code": rec.check_class_code(class_code),
            "status": status,
            "step": int(step if step is not None else len(history_rows)),
            "config": rec.config_text(config),
            **rec.board_fields(config, kept),
            "results": rec.dumps(kept),
            "history": rec.dumps(history_rows),
            "filters": data,
            "filters_shape": shape,
            "thumb": thumb,
            "thumb_shape": thumb_shape,
            "server": self.server_id,
        }
        row["nbytes"] = sum(
            len(v.encode() if isinstance(v, str) else v)
            for v in row.values()
            if isinstance(v, str | bytes)
        )
        if row["nbytes"] > self.limits.max_bytes:
            raise StoreError(
                f"Run {run_id} takes {row['nbytes']:,} bytes, more than the whole store may "
                f"hold ({self.limits.max_bytes:,}, {LIMIT_ENV_VARS['max_bytes']}); raise "
                "that bound or store fewer steps."
            )
        return row

    def checkpoint(
        self,
        run_id: str,
        config: RunConfig,
        *,
        step: int,
        history: Sequence[Mapping[str, Any]] = (),
        filters: Any = None,
        owner: str | None = None,
        name: str = "",
        class_code: str | None = None,
    ) -> bool:
        """Record a training run's progress (status "running"), and this server's heartbeat.

        One small transaction; call it as often as every step.  Returns False, writing
        nothing, when the run has already ended (a late checkpoint never undoes a save).

        Parameters
        ----------
        run_id : str
            1-64 letters, digits or ``. _ : -``.
        config : RunConfig
        step : int
            The last step done.
        history : sequence of dict
            Every recorded step so far.
        filters : array, optional
            The current filters.
        owner : str, optional
            The app's owner id (stored hashed).
        name : str
            Display name.
        class_code : str, optional
            The class whose board lists it.
        """
        row = self._row(
            run_id, config, status=RUNNING, step=step, results=None, history=history,
            filters=filters, owner=owner, name=name, class_code=class_code,
        )  # fmt: skip

        def work(tx: Tx) -> bool:
            tx.run(_BEAT, {"me": self.server_id})
            return tx.run(_CHECKPOINT, row) > 0

        written = self._do(f"checkpointing run {run_id}", work)
        self._last_beat = time.monotonic()
        return written

    def save(
        self,
        run_id: str,
        config: RunConfig,
        results: Mapping[str, Any] | None,
        *,
        status: str = "done",
        history: Sequence[Mapping[str, Any]] | None = None,
        filters: Any = None,
        step: int | None = None,
        owner: str | None = None,
        name: str = "",
        class_code: str | None = None,
    ) -> list[str]:
        """Store a run that has ended, whole, in one transaction; then keep the bounds.

        Parameters
        ----------
        run_id, config, owner, name, class_code
            As for :meth:`checkpoint`.
        results : mapping
            Model ("csvm", "svm", "cnn") -> its result dict (None for a model without
            one).  The "csvm" result's ``history`` and ``filters`` are stored as the
            run's own unless given below.
        status : {"done", "stopped", "diverged", "error", "interrupted"}
        history, filters : optional
            Override the CSVM result's.
        step : int, optional
            Default: the number of history records.

        Returns
        -------
        list of str
            The ids of older runs forgotten to keep the store within its bounds.
        """
        if status not in FINAL:
            raise StoreError(f"A saved run's status is one of {', '.join(FINAL)}, not {status!r}.")
        row = self._row(
            run_id, config, status=status, step=step, results=results, history=history,
            filters=filters, owner=owner, name=name, class_code=class_code,
        )  # fmt: skip
        self._do(f"saving run {run_id}", lambda tx: tx.run(_SAVE, row))
        return self.enforce_bounds()

    # -- reading runs -----------------------------------------------------------------
    def get(self, run_id: str) -> StoredRun | None:
        """The whole run, or None if the store has no run of that id."""
        rec.check_id(run_id)
        row = self._do(
            f"reading run {run_id}",
            lambda tx: tx.one(f"SELECT {_WHOLE} FROM csvm_runs WHERE id = :id", {"id": run_id}),
            write=False,
        )
        return None if row is None else _stored_run(row)

    def list_runs(
        self,
        class_code: str | None = None,
        *,
        owner: str | None = None,
        statuses: Sequence[str] | None = None,
        include_hidden: bool = False,
        limit: int = 200,
    ) -> list[RunSummary]:
        """Runs newest first, as a board lists them (no history or whole filters).

        Parameters
        ----------
        class_code : str, optional
            Only this class's runs (default: every run).
        owner : str, optional
            Only this owner's runs (the app's owner id, not its hash).
        statuses : sequence of str, optional
            Only runs with these statuses.
        include_hidden : bool
            Hidden runs too (default: not).
        limit : int
            At most this many (1 to 5000).
        """
        where, params = ["1 = 1"], {"limit": max(1, min(int(limit), 5000))}
        if class_code is not None:
            where.append("class_code = :code")
            params["code"] = rec.check_class_code(class_code)
        if owner is not None:
            where.append("owner = :owner")
            params["owner"] = rec.owner_hash(owner)
        if not include_hidden:
            where.append("hidden = 0")
        if statuses is not None:
            names = [f":s{i}" for i in range(len(statuses))] or ["''"]
            where.append(f"status IN ({', '.join(names)})")
            params.update({f"s{i}": str(s) for i, s in enumerate(statuses)})
        sql = (
            f"SELECT {_SUMMARY} FROM csvm_runs WHERE {' AND '.join(where)} "
            "ORDER BY created DESC, id DESC LIMIT :limit"
        )
        rows = self._do("listing runs", lambda tx: tx.all(sql, params), write=False)
        return [_summary(row) for row in rows]

    def touch(self, run_id: str) -> None:
        """Note that someone opened the run (it is not abandoned while opened)."""
        rec.check_id(run_id)
        self._do(
            f"touching run {run_id}",
            lambda tx: tx.run("UPDATE csvm_runs SET touched = :now WHERE id = :id", {"id": run_id}),
        )

    def usage(self) -> tuple[int, int]:
        """The number of runs stored and their stored bytes."""
        row = self._do(
            "measuring the store",
            lambda tx: tx.one("SELECT COUNT(*), COALESCE(SUM(nbytes), 0) FROM csvm_runs"),
            write=False,
        )
        return int(row[0]), int(row[1])

    # -- the class board --------------------------------------------------------------
    def hide(self, run_id: str, hidden: bool = True) -> bool:
        """Hide a run from boards (its link still opens it); False if there is no such run."""
        rec.check_id(run_id)
        sql = "UPDATE csvm_runs SET hidden = :h WHERE id = :id"
        params = {"h": int(bool(hidden)), "id": run_id}
        return self._do(f"hiding run {run_id}", lambda tx: tx.run(sql, params)) > 0

    def clear_class(self, class_code: str) -> int:
        """Hide every run of a class's board (links still open them); how many."""
        code = rec.check_class_code(class_code)
        sql = "UPDATE csvm_runs SET hidden = 1 WHERE class_code = :code AND hidden = 0"
        return self._do(f"clearing class {code}", lambda tx: tx.run(sql, {"code": code}))

    def delete(self, run_id: str) -> bool:
        """Forget a run now; False if there was none."""
        rec.check_id(run_id)
        sql = "DELETE FROM csvm_runs WHERE id = :id"
        return self._do(f"deleting run {run_id}", lambda tx: tx.run(sql, {"id": run_id})) > 0

    def set_class_settings(self, class_code: str, settings: Mapping[str, Any]) -> None:
        """Store a class's settings (a JSON-able mapping of at most 64 kB), replacing any."""
        code = rec.check_class_code(class_code)
        if code is None or not isinstance(settings, Mapping):
            raise StoreError("Class settings need a class code and a mapping of settings.")
        text = rec.dumps(dict(settings))
        if len(text) > 65536:
            raise StoreError(f"Class {code}'s settings take {len(text):,} bytes; at most 65,536.")
        sql = (
            "INSERT INTO csvm_classes (code, settings, updated) VALUES (:code, :s, :now) "
            "ON CONFLICT (code) DO UPDATE SET settings = excluded.settings, "
            "updated = excluded.updated"
        )
        self._do(
            f"saving class {code}'s settings", lambda tx: tx.run(sql, {"code": code, "s": text})
        )

    def class_settings(self, class_code: str) -> dict[str, Any]:
        """A class's settings ({} when it has none)."""
        code = rec.check_class_code(class_code)
        row = self._do(
            f"reading class {code}'s settings",
            lambda tx: tx.one("SELECT settings FROM csvm_classes WHERE code = :c", {"c": code}),
            write=False,
        )
        return {} if row is None else json.loads(row[0])

    # -- servers, restarts and bounds ---------------------------------------------------
    def heartbeat(self, force: bool = False) -> None:
        """Say this server is alive (at most every 5 s unless ``force``; cheap to call on
        every tick).  Call it more often than ``stale_after`` of peers' :meth:`recover`."""
        if not force and time.monotonic() - self._last_beat < 5.0:
            return
        self._do("writing the heartbeat", lambda tx: tx.run(_BEAT, {"me": self.server_id}))
        self._last_beat = time.monotonic()

    def recover(self, stale_after: float = 120.0) -> list[str]:
        """Mark "interrupted" the runs left "running" by dead servers; their ids.

        A run is left over when the server that checkpointed it has sent no heartbeat
        for ``stale_after`` seconds (by the database's clock), or when it is this
        server's id but was last written before this store was opened (a restart that
        kept its id).  A live peer's runs are left alone.  Call once at startup (and now
        and then: a peer may die later); it also heartbeats.
        """
        params = {"me": self.server_id, "started": self._started, "stale": float(stale_after)}

        def work(tx: Tx) -> list[str]:
            tx.run(_BEAT, {"me": self.server_id})
            ids = [
                r[0]
                for r in tx.all(
                    "SELECT r.id FROM csvm_runs r LEFT JOIN csvm_servers s ON s.id = r.server "
                    "WHERE r.status = 'running' AND ("
                    "(r.server = :me AND r.updated < :started) OR "
                    "((r.server IS NULL OR r.server <> :me) AND "
                    "(s.id IS NULL OR s.heartbeat < :now - :stale)))",
                    params,
                )
            ]
            for chunk in _chunks(ids):
                names = {f"i{k}": v for k, v in enumerate(chunk)}
                tx.run(
                    "UPDATE csvm_runs SET status = 'interrupted', finished = :now, "
                    f"updated = :now WHERE status = 'running' AND id IN ({_marks(names)})",
                    names,
                )
            # Servers silent for a day are forgotten (their runs are interrupted by now).
            tx.run(
                "DELETE FROM csvm_servers WHERE heartbeat < :now - 86400.0 AND id <> :me",
                {"me": self.server_id},
            )
            return ids

        ids = self._do("marking interrupted runs", work)
        self._last_beat = time.monotonic()
        return ids

    def enforce_bounds(self) -> list[str]:
        """Forget runs until within :attr:`limits`, fairly between owners; their ids.

        Over a bound, the owner holding the most runs (over ``max_runs``) or bytes (over
        ``max_bytes``) loses a run first: its abandoned ones (hidden, or not written or
        opened for ``keep_seconds``) oldest first, then its others oldest first.  So one
        owner flooding the store forgets its own runs before anyone else's, and an
        owner's newest run is never forgotten while another owner has more runs
        (:mod:`csvm.store.eviction`).  A running run is never forgotten.  One transaction.
        """
        limits = self.limits

        def work(tx: Tx) -> list[str]:
            count, total = tx.one("SELECT COUNT(*), COALESCE(SUM(nbytes), 0) FROM csvm_runs")
            if int(count) <= limits.max_runs and int(total) <= limits.max_bytes:
                return []
            rows = tx.all(EVICTION_ROWS, {"keep": float(limits.keep_seconds)})
            victims = choose_victims(rows, limits.max_runs, limits.max_bytes)
            for chunk in _chunks(victims):
                names = {f"i{k}": v for k, v in enumerate(chunk)}
                tx.run(f"DELETE FROM csvm_runs WHERE id IN ({_marks(names)})", names)
            return victims

        return self._do("keeping the store within its bounds", work)


def _chunks(items: list[str], size: int = 500) -> list[list[str]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _marks(names: Mapping[str, Any]) -> str:
    return ", ".join(f":{k}" for k in names)


def _summary(row: tuple) -> RunSummary:
    (run_id, name, owner, code, status, step, model, dataset, pair, accuracy, low, high,
     thumb, thumb_shape, query, created, updated, hidden) = row  # fmt: skip
    return RunSummary(
        id=run_id,
        name=name,
        owner=owner,
        class_code=code,
        status=status,
        step=int(step),
        model=model,
        dataset=dataset,
        pair=pair,
        accuracy=None if accuracy is None else float(accuracy),
        interval=None if low is None or high is None else (float(low), float(high)),
        thumbnail=rec.decode_array(thumb, thumb_shape),
        query=query,
        created=float(created),
        updated=float(updated),
        hidden=bool(hidden),
    )


def _stored_run(row: tuple) -> StoredRun:
    (run_id, name, owner, code, status, step, query, results, history, filters, shape,
     created, updated, finished, hidden, server, nbytes) = row  # fmt: skip
    config, problems = rec.config_from_text(query)
    return StoredRun(
        id=run_id,
        name=name,
        owner=owner,
        class_code=code,
        status=status,
        step=int(step),
        config=config,
        results=json.loads(results),
        history=json.loads(history),
        filters=rec.decode_array(filters, shape),
        created=float(created),
        updated=float(updated),
        finished=None if finished is None else float(finished),
        hidden=bool(hidden),
        server=server,
        nbytes=int(nbytes),
        config_problems=problems,
    )


def open_store(
    url: str | None = None,
    *,
    server_id: str | None = None,
    limits: StoreLimits | None = None,
) -> RunStore:
    """Open (and create or migrate) the run store.

    Parameters
    ----------
    url : str, optional
        Default: ``$CSVM_RUN_STORE``, else a SQLite file in the per-user data folder
        (:func:`csvm.store.backends.default_url`).
    server_id, limits
        See :class:`RunStore`.

    Raises
    ------
    StoreError
        The URL is not a store URL, the database cannot be reached or read, or it was
        written by a newer csvm; the message says which and what to do.
    """
    return RunStore(url or default_url(), server_id=server_id, limits=limits)
