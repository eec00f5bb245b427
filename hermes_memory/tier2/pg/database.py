"""Tier 2 on a PostgreSQL server: the same object the stores use on SQLite (``tier2.db.Database``), over
psycopg 3 connections, with the stores' SQL translated by ``pg.dialect``.

Writes keep SQLite's model, one writer at a time, now across every process and host of the store: a
write transaction takes a transaction-scoped advisory lock first, so whatever the stores do between
their reads and writes inside ``atomic()`` holds as on SQLite (a queue row is claimed once; a dedupe
check sees every commit before it). Readers never wait for it: inside ``reading()`` a thread reads
through a pooled autocommit connection of its own and sees the last commit. ``data_version`` is the
store's commit count (``hm_commits``), which every write transaction raises before it commits: it moves
with every commit to this store, from any host, and with nothing else the server does.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql as pg_sql
from psycopg.rows import RowMaker
from psycopg.types.numeric import FloatLoader

from hermes_memory.errors import StorageError
from hermes_memory.security.permissions import private_dir
from hermes_memory.tier2.db import Database
from hermes_memory.tier2.engines import safe_url, with_schema
from hermes_memory.tier2.leases import Holder
from hermes_memory.tier2.pg.dialect import translate

log = logging.getLogger(__name__)

# The triggers that log an inserted row for recall's caches (``pg.schema``; ``bulk_load`` turns them off).
_CHANGE_LOG_ON_INSERT = (
    ("episodes", "recall_generation_episodes"),
    ("facts", "recall_generation_facts_ai"),
)

# Every writer of one store serialises on this key (pg_advisory_xact_lock: released by COMMIT/ROLLBACK).
_WRITE_LOCK = 0x686D_7432  # "hmt2"
# The store-wide leases (``tier2.leases``): session advisory locks keyed by this and the schema and name.
# The store's write lock, taken first in a write transaction (the key is the store's schema).
_TAKE_WRITE_LOCK = f"SELECT pg_advisory_xact_lock({_WRITE_LOCK}, hashtext(current_schema()))"
_LEASE = 0x686D_744C  # "hmtL"
_LEASE_KEY = "hashtext(current_schema() || ':' || %s)"
_CONNECT_TIMEOUT_S = 10
# The store's commit count, raised by every write transaction under the write lock (``data_version``).
# Made when a store is first opened, beside (not among) the versioned schema: ``data_version`` is asked
# before any migration has run.
_COMMITS = "hm_commits"
_COUNT_COMMIT = f"UPDATE {_COMMITS} SET n = n + 1 WHERE id = 1"
_IDLE = psycopg.pq.TransactionStatus.IDLE


class Row(tuple[Any, ...]):
    """A result row read by position or by column name, like ``sqlite3.Row``."""

    _index: dict[str, int]

    def __new__(cls, values: Sequence[Any], index: dict[str, int]) -> Row:
        row = super().__new__(cls, values)
        row._index = index
        return row

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            try:
                return tuple.__getitem__(self, self._index[key])
            except KeyError:
                raise IndexError(f"No item with that key: {key}") from None
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._index)


def _row_factory(cursor: Any) -> RowMaker[Row]:
    names = [d.name for d in cursor.description or ()]
    index = {name: i for i, name in reversed(list(enumerate(names)))}  # the first of equal names wins
    return lambda values: Row(values, index)


def _error(where: str, exc: BaseException) -> StorageError:
    """What went wrong, as the StorageError a caller of the store sees (never the password)."""
    text = re.sub(r"password=\S+", "password=***", str(exc).strip())
    if isinstance(exc, pg_errors.LockNotAvailable):
        return StorageError(f"memory database {where} stayed locked by another writer: {text}")
    if isinstance(exc, psycopg.OperationalError) and not isinstance(exc, pg_errors.QueryCanceled):
        lowered = text.lower()
        if "password authentication failed" in lowered or "authentication" in lowered:
            return StorageError(f"memory database {where}: the server refused the credentials: {text}")
        if "does not exist" in lowered and "database" in lowered:
            return StorageError(f"memory database {where}: no such database on the server: {text}")
        return StorageError(f"memory database {where} is unreachable: {text}")
    return StorageError(f"memory database {where}: {text}")


class Cursor:
    """What ``execute`` returns: rows, ``rowcount`` and ``lastrowid`` (from a RETURNING id)."""

    def __init__(self, cursor: psycopg.Cursor[Row]):
        self._cursor = cursor

    def fetchone(self) -> Row | None:
        return self._cursor.fetchone() if self._cursor.description else None

    def fetchall(self) -> list[Row]:
        return self._cursor.fetchall() if self._cursor.description else []

    def __iter__(self) -> Iterator[Row]:
        return iter(self.fetchall())

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    @property
    def lastrowid(self) -> int | None:
        raise StorageError("lastrowid is SQLite's: add RETURNING id to the INSERT and read the row")


class Connection:
    """The connection handed out by ``atomic()`` (``execute``/``executemany`` as the stores call them)."""

    def __init__(self, conn: psycopg.Connection[Row], where: str):
        self._conn = conn
        self._where = where

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Cursor:
        statement = translate(sql)
        cursor = self._conn.cursor()
        try:
            cursor.execute(statement.sql, statement.bind(params))
        except pg_errors.IntegrityError as exc:
            raise IntegrityError(str(exc)) from exc
        except psycopg.Error as exc:
            raise _error(self._where, exc) from exc
        return Cursor(cursor)

    def executemany(self, sql: str, rows: Any) -> Cursor:
        statement = translate(sql)
        cursor = self._conn.cursor()
        try:
            cursor.executemany(statement.sql, [statement.bind(r) for r in rows])
        except pg_errors.IntegrityError as exc:
            raise IntegrityError(str(exc)) from exc
        except psycopg.Error as exc:
            raise _error(self._where, exc) from exc
        return Cursor(cursor)

    def script(self, sql: str) -> None:
        """Run PostgreSQL's own SQL as it is (the schema), no parameters."""
        try:
            self._conn.execute(sql.encode())
        except psycopg.Error as exc:
            raise _error(self._where, exc) from exc

    @property
    def in_transaction(self) -> bool:
        return self._conn.info.transaction_status != _IDLE


class IntegrityError(sqlite3.IntegrityError):
    """A constraint refused a row on PostgreSQL: the stores handle it as SQLite's."""


class PgDatabase(Database):
    """Owns the connections to a Tier 2 store on a PostgreSQL server; the interface of ``Database``.

    ``local`` is where this host keeps the store's local files (the turn inbox beside it); ``path`` is
    that path, so the code that puts files next to the store keeps working. Raises StorageError when
    the server is unreachable, refuses the credentials or has no such database.
    """

    engine = "postgresql"

    def __init__(
        self,
        url: str,
        local: str | os.PathLike[str],
        *,
        busy_timeout_ms: int = 30000,
        schema: str | None = None,
    ):
        self.url = url
        self._busy_timeout_ms = busy_timeout_ms
        self._schema = schema
        self.location = safe_url(url)
        self.path = Path(local)
        self._lock = threading.RLock()
        self._depth = 0
        self._writer: int | None = None
        self._closed = False
        self._idle: list[psycopg.Connection[Row]] = []
        self._reader_lock = threading.Lock()
        self._local = threading.local()
        self._watch: psycopg.Connection[Row] | None = None
        self._watch_lock = threading.Lock()
        try:
            private_dir(self.path.parent)  # this host's files of the store (turn inbox, job lock)
        except OSError as exc:
            raise StorageError(f"cannot create the memory directory {self.path.parent}: {exc}") from exc
        self._conn = self._connect(create=True)

    def _connect(self, *, create: bool = False) -> psycopg.Connection[Row]:
        """A connection with the store's settings; ``create``: make the store's schema when missing."""
        try:
            conn = psycopg.connect(
                self.url, autocommit=True, row_factory=_row_factory, connect_timeout=_CONNECT_TIMEOUT_S
            )
        except psycopg.Error as exc:
            raise _error(self.location, exc) from exc
        conn.adapters.register_loader("numeric", FloatLoader)
        # A writer waits for another host's write transaction as long as SQLite's busy timeout would.
        try:
            conn.execute(f"SET lock_timeout = {int(self._busy_timeout_ms)}".encode())
            # psycopg prepares a statement run often; PostgreSQL may then plan it once for any parameter
            # (a generic plan), and such a plan scans a whole table where the value at hand needs one
            # index probe (a source kind no chunk has: 47 ms instead of 0.05 at 100k turns). Every run
            # is planned for its own values instead; the parse is still saved.
            conn.execute("SET plan_cache_mode = force_custom_plan")
            if self._schema is not None:
                named = pg_sql.Identifier(self._schema)
                if create and conn.execute(
                    "SELECT 1 FROM pg_namespace WHERE nspname = %s", (self._schema,)
                ).fetchone() is None:
                    # CREATE SCHEMA IF NOT EXISTS is not safe against itself: two hosts opening a new
                    # store at once can both pass the check, and one fails on the catalog's unique
                    # index. The store's write lock (the same key, by the schema's name) orders them.
                    with conn.transaction():
                        lock = f"SELECT pg_advisory_xact_lock({_WRITE_LOCK}, hashtext(%s))"
                        conn.execute(lock.encode(), (self._schema,))
                        conn.execute(pg_sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(named))
                conn.execute(pg_sql.SQL("SET search_path TO {}").format(named))
            if create and conn.execute(f"SELECT to_regclass('{_COMMITS}')".encode()).fetchone() == (None,):
                with conn.transaction():  # under the write lock, for the same reason as the schema
                    conn.execute(_TAKE_WRITE_LOCK.encode())
                    conn.execute(
                        f"CREATE TABLE IF NOT EXISTS {_COMMITS} (id INTEGER PRIMARY KEY CHECK (id = 1),"
                        f" n BIGINT NOT NULL); INSERT INTO {_COMMITS} VALUES (1, 0)"
                        " ON CONFLICT DO NOTHING".encode()
                    )
        except psycopg.Error as exc:
            conn.close()
            raise _error(self.location, exc) from exc
        return conn

    # -- transactions ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def atomic(self) -> Iterator[Connection]:
        """A write transaction holding the store's write lock; nested calls become savepoints."""
        with self._lock:
            wrapped = Connection(self._writer_conn() if self._depth == 0 else self._conn, self.location)
            if self._depth == 0:
                self._run("BEGIN")
                self._depth = 1
                self._writer = threading.get_ident()
                try:
                    # One writer per store: the key is the store's schema (several stores can share a
                    # database, each in its own schema; see engines.with_schema).
                    self._run(_TAKE_WRITE_LOCK)
                    yield wrapped
                    self._run(_COUNT_COMMIT)
                    self._run("COMMIT")
                except BaseException:
                    if not self._conn.closed and self._conn.info.transaction_status != _IDLE:
                        self._conn.execute("ROLLBACK")
                    raise
                finally:
                    self._depth = 0
                    self._writer = None
            else:
                name = f"sp{self._depth}"
                self._run(f"SAVEPOINT {name}")
                self._depth += 1
                try:
                    yield wrapped
                except BaseException:
                    self._run(f"ROLLBACK TO SAVEPOINT {name}")
                    self._run(f"RELEASE SAVEPOINT {name}")
                    raise
                else:
                    self._run(f"RELEASE SAVEPOINT {name}")
                finally:
                    self._depth -= 1

    def _run(self, sql: str, params: Sequence[Any] = ()) -> None:
        try:
            self._conn.execute(sql, params)
        except psycopg.Error as exc:
            raise _error(self.location, exc) from exc

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Cursor:
        """Run one statement (reads, or a single-statement write) under the connection lock."""
        with self._lock:
            if self._depth == 0 and not sql.lstrip().upper().startswith(("SELECT", "WITH")):
                with self.atomic() as conn:
                    return conn.execute(sql, params)
            return Connection(self._writer_conn() if self._depth == 0 else self._conn, self.location).execute(
                sql, params
            )

    # -- reading -------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _read_connection(self) -> Iterator[psycopg.Connection[Row]]:
        if not getattr(self._local, "reading", 0) or self._writer == threading.get_ident():
            with self._lock:
                yield self._writer_conn() if self._depth == 0 else self._conn
            return
        with self._pooled() as conn:
            yield conn

    def _open_reader(self) -> psycopg.Connection[Row]:
        return self._connect()

    def _reader_lost(self, conn: Any) -> bool:
        return bool(conn.closed)

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Row]:
        rows: list[Row] = self._read(sql, params, lambda cursor: cursor.fetchall())
        return rows

    def query_one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Row | None:
        row: Row | None = self._read(sql, params, lambda cursor: cursor.fetchone())
        return row

    def _read(self, sql: str, params: Sequence[Any] | dict[str, Any], fetch: Callable[[Cursor], Any]) -> Any:
        """Run a read; a connection the server dropped while it sat idle (a restart) is replaced and the
        read runs once more (outside a transaction: nothing of it was lost)."""
        for attempt in (1, 2):
            with self._read_connection() as conn:
                try:
                    return fetch(Connection(conn, self.location).execute(sql, params))
                except StorageError:
                    if attempt == 2 or not conn.closed or (conn is self._conn and self._depth > 0):
                        raise
        raise AssertionError("unreachable")

    def data_version(self) -> int:
        """The store's commit count: it moves with every commit to the store, of any connection on any
        host, and with nothing else (a vacuum, a checkpoint, another database on the server)."""
        with self._watch_lock:
            self._ensure_open()
            for attempt in (1, 2):  # a connection the server dropped while idle is replaced once
                if self._watch is None or self._watch.closed:
                    self._watch = self._connect()
                try:
                    row = self._watch.execute(f"SELECT n FROM {_COMMITS} WHERE id = 1".encode()).fetchone()
                    break
                except psycopg.Error as exc:
                    if attempt == 2 or not self._watch.closed:
                        raise _error(self.location, exc) from exc
            if row is None:
                raise StorageError(f"memory database {self.location}: the commit count ({_COMMITS}) is gone")
            return int(row[0])

    def size_bytes(self) -> int:
        row = self.query_one("SELECT pg_database_size(current_database())")
        return int(row[0]) if row is not None else 0

    # -- the engine's upkeep (``tier2.files``) ---------------------------------------------------
    def integrity_messages(self) -> list[str]:
        """``["ok"]`` when the schema answers (the server keeps its own pages sound)."""
        self.query_one("SELECT max(version) FROM memory_schema_version")
        return ["ok"]

    def check_fts(self, table: str, *, with_content: bool = False) -> None:
        """Whether ``table``'s full-text index holds every row of it and no other (always against the
        table). Raises StorageError naming the difference."""
        from hermes_memory.tier2.pg.fulltext import index_mismatch

        problem = index_mismatch(self, table)
        if problem:
            raise StorageError(f"memory database {self.location}: full-text index of {table}: {problem}")

    def checkpoint(self) -> bool:
        """The server checkpoints its own log."""
        return True

    def compact(self, fts_tables: Sequence[str]) -> bool:
        """Rewrite every table of the store (VACUUM FULL), so no page of its files keeps removed text;
        each table is locked while it is rewritten."""
        with self._lock:
            self._ensure_open()
            self._run("VACUUM FULL")
        return True

    def _ensure_open(self) -> None:
        if self._closed:
            raise StorageError(f"memory database {self.location} is closed")

    def _writer_conn(self) -> psycopg.Connection[Row]:
        """The writer's connection (under ``_lock``, outside a transaction), connected again when the
        server dropped it (a restart, a network cut): the call that met the cut failed and said so, the
        next one works once the server answers. Raises StorageError while it does not."""
        self._ensure_open()
        if self._conn.closed:
            self._conn = self._connect()
        return self._conn

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    @contextlib.contextmanager
    def bulk_load(self, conn: Any) -> Iterator[None]:
        """The change log of recall's caches (``recall_generation``) is kept per row by triggers that
        update one counter row: in one long transaction every update walks all the row versions the
        transaction made before (quadratic). So its triggers are off for the load (for this transaction
        only: ALTER TABLE is transactional) and one change that starts every cache over is logged after."""
        for table, trigger in _CHANGE_LOG_ON_INSERT:
            conn.execute(f"ALTER TABLE {table} DISABLE TRIGGER {trigger}")
        yield
        for table, trigger in _CHANGE_LOG_ON_INSERT:
            conn.execute(f"ALTER TABLE {table} ENABLE TRIGGER {trigger}")
        conn.execute("SELECT hm_recall_log(ARRAY['all'], ARRAY['0'])")

    def after_bulk_load(self) -> None:
        """VACUUM ANALYZE every table of the store: the planner's statistics, and the visibility map the
        full-text index's index-only scans need (autovacuum would get there, later)."""
        with self._lock:
            conn = self._writer_conn()
            try:
                tables = conn.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename"
                ).fetchall()
                for row in tables:
                    conn.execute(pg_sql.SQL("VACUUM (ANALYZE) {}").format(pg_sql.Identifier(row[0])))
            except psycopg.Error as exc:
                raise _error(self.location, exc) from exc

    def lease_scope(self) -> str:
        return f"{self.url}#{self._schema}"

    def take_lease(self, name: str) -> Any | None:
        """A session advisory lock on a connection of its own (the handle): the server drops it with the
        connection, so a holder that dies loses it."""
        self._ensure_open()
        conn = self._connect()
        try:
            row = conn.execute(f"SELECT pg_try_advisory_lock({_LEASE}, {_LEASE_KEY})", (name,)).fetchone()
        except psycopg.Error as exc:
            conn.close()
            raise _error(self.location, exc) from exc
        if row is None or not row[0]:
            conn.close()
            return None
        return conn, name

    def drop_lease(self, handle: Any) -> None:
        """Unlock at once (a closed session's locks go only when the server has ended it), then close."""
        conn, name = handle
        try:
            if not conn.closed:
                conn.execute(f"SELECT pg_advisory_unlock({_LEASE}, {_LEASE_KEY})", (name,))
        except psycopg.OperationalError as exc:  # the session was cut meanwhile: its lock went with it
            log.info("hermes-memory: the %s lease's session ended before its unlock: %s", name, exc)
        finally:
            conn.close()

    def lease_holder(self, name: str) -> Holder | None:
        """The connection holding the lease: its client's address, program and server pid."""
        with self._read_connection() as conn:
            try:
                row = conn.execute(lease_holder_sql().encode(), (name,)).fetchone()
            except psycopg.Error as exc:
                raise _error(self.location, exc) from exc
        return None if row is None else lease_holder(row)

    def backup_to(self, dest: str | os.PathLike[str]) -> None:
        raise StorageError(
            f"memory database {self.location} is on PostgreSQL: back it up with the server's tools "
            "(pg_dump), or move it with export/import or migrate"
        )

    def close(self) -> None:
        with self._lock, self._reader_lock:
            if not self._closed:
                self._closed = True
                with self._watch_lock:
                    if self._watch is not None:
                        self._watch.close()
                for conn in self._idle:
                    conn.close()
                self._idle.clear()
                self._conn.close()


def lease_holder_sql() -> str:
    """The query of who holds a lease of the store (one parameter: the lease's name): (server pid,
    application name, client address, since when)."""
    return (
        "SELECT a.pid, a.application_name, a.client_addr::text,"
        " extract(epoch FROM a.backend_start)::float8"
        " FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        f" WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.classid = {_LEASE}"
        f" AND l.objid = ({_LEASE_KEY}::bigint & 4294967295)::oid"
        " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    )


def lease_holder(row: Sequence[Any]) -> Holder:
    """A row of ``lease_holder_sql`` as status names the holder: its program, its host's address and its
    server process, since when its session began."""
    pid, app, addr, since = row[0], row[1], row[2], row[3]
    return Holder(None, since, f"{app or 'a process'} at {addr or 'the server host'} (server pid {pid})")


@contextlib.contextmanager
def scratch_schema(url: str, schema: str) -> Iterator[str]:
    """A new, empty schema ``schema`` in the database of ``url`` for as long as the block runs (dropped
    with everything in it after): the URL of a store there. For benchmarks and tests."""
    named = pg_sql.Identifier(schema)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(pg_sql.SQL("CREATE SCHEMA {}").format(named))
    except psycopg.Error as exc:
        raise _error(safe_url(url), exc) from exc
    try:
        yield with_schema(url, schema)
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(pg_sql.SQL("DROP SCHEMA {} CASCADE").format(named))


__all__ = ["IntegrityError", "PgDatabase", "Row", "lease_holder", "lease_holder_sql", "scratch_schema"]
