"""The one object that owns a Tier 2 file's SQLite connections: WAL, busy timeout, nested transactions,
and a second, read-only connection that readers use so they never queue behind a write transaction."""

from __future__ import annotations

import abc
import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from hermes_memory.errors import StorageError, StorageFullError
from hermes_memory.security.permissions import private_dir, tighten
from hermes_memory.tier2 import leases
from hermes_memory.tier2._sqlite_errors import (
    LOCK_BACKOFF_S,
    LOCK_RETRIES,
    is_locked,
    open_error,
    storage_error,
)
from hermes_memory.tier2.leases import Holder


class Database(abc.ABC):
    """What the stores use of Tier 2's database, whatever engine holds it (``tier2.engines``): write
    transactions (``atomic``, nesting as savepoints), reads (``query``…; inside ``reading()`` through
    connections that never wait for a writer), a number that moves with every commit (``data_version``)
    and the engine's upkeep. ``path`` is where this host keeps the store's local files (the SQLite file
    itself, or beside it); ``location`` is what status lines and errors name."""

    engine: str
    path: Path
    location: str

    @abc.abstractmethod
    def atomic(self) -> contextlib.AbstractContextManager[Any]:
        """A write transaction; everything inside commits together or not at all."""

    @abc.abstractmethod
    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        """Run one statement (a read, or a single-statement write)."""

    _local: threading.local  # .reading: how deep this thread is in reading()
    # The read connections ``reading()`` hands out, kept for the next read (``_pooled``).
    _idle: list[Any]
    _reader_lock: threading.Lock
    _closed: bool

    @contextlib.contextmanager
    def _pooled(self) -> Iterator[Any]:
        """A read connection of this thread's own for one read: an idle one from the pool, else a new
        one (``_open_reader``); back to the pool after, closed instead when the store was closed
        meanwhile or the connection was lost (``_reader_lost``)."""
        conn = self._take_reader()
        try:
            yield conn
        finally:
            self._give_back(conn)

    def _take_reader(self) -> Any:
        """``_pooled``'s connection: an idle one, else a new one. Hand it back with ``_give_back``."""
        with self._reader_lock:
            self._ensure_open()
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = self._open_reader()
            self._opened_reader(conn)
        return conn

    def _give_back(self, conn: Any) -> None:
        """A connection from ``_take_reader`` back to the pool, or closed (see ``_pooled``)."""
        with self._reader_lock:
            if self._closed or self._reader_lost(conn):
                conn.close()
            else:
                self._idle.append(conn)

    @abc.abstractmethod
    def _ensure_open(self) -> None:
        """Raise StorageError when the store was closed."""

    @abc.abstractmethod
    def _open_reader(self) -> Any:
        """A new read connection."""

    def _opened_reader(self, conn: Any) -> None:
        """Told of each read connection ``_pooled`` opened (nothing to do unless an engine keeps them)."""
        del conn

    def _reader_lost(self, conn: Any) -> bool:
        """Whether a pooled read connection can no longer be used."""
        return False

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """Within it, this thread's ``query``/``query_one``/``query_keys`` use a read connection of
        its own: for a reader that must never wait for the writer (recall). Nests; affects only this
        thread."""
        depth = getattr(self._local, "reading", 0)
        self._local.reading = depth + 1
        try:
            yield
        finally:
            self._local.reading = depth

    @abc.abstractmethod
    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        """Every row of a read."""

    @abc.abstractmethod
    def query_one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        """The first row of a read, or None."""

    def query_keys(
        self, sql: str, keys: Sequence[Any], params: Sequence[Any] = (), *, batch: int = 500
    ) -> list[Any]:
        """Run a read whose ``{keys}`` placeholder is an ``IN`` list of ``keys``, in batches (engines cap
        the number of parameters); ``keys`` bind before ``params``. Rows of every batch, in order."""
        rows: list[Any] = []
        for start in range(0, len(keys), batch):
            part = list(keys[start : start + batch])
            rows.extend(self.query(sql.replace("{keys}", ",".join("?" * len(part))), [*part, *params]))
        return rows

    @abc.abstractmethod
    def data_version(self) -> int:
        """A number that stays the same while nothing is committed, by any connection of any process."""

    @abc.abstractmethod
    def size_bytes(self) -> int:
        """How much room the store takes."""

    @abc.abstractmethod
    def backup_to(self, dest: str | os.PathLike[str]) -> None:
        """A hot copy of the store into the SQLite file ``dest``."""

    @abc.abstractmethod
    def integrity_messages(self) -> list[str]:
        """The engine's own integrity check (``["ok"]`` when sound)."""

    @abc.abstractmethod
    def check_fts(self, table: str, *, with_content: bool = False) -> None:
        """Check ``table``'s full-text index (``with_content``: against the table too)."""

    @abc.abstractmethod
    def checkpoint(self) -> bool:
        """Bring the engine's log into its files; False when another process kept it from it."""

    @abc.abstractmethod
    def compact(self, fts_tables: Sequence[str]) -> bool:
        """Make removed text unrecoverable from the engine's files (``fts_tables``: the content tables
        with a full-text index); False when another process kept part of it from happening."""

    def lease(self, name: str) -> contextlib.AbstractContextManager[bool]:
        """Try to take the store-wide lease ``name`` (``leases.TURNS``, ``EMBEDDINGS``, ``JOBS``) without
        waiting: True while this process holds it, False while another process does (see ``leases``).
        Raises StorageError when the engine cannot be asked."""
        return leases.hold_lease(self, name)

    def bulk_load(self, conn: Any) -> contextlib.AbstractContextManager[None]:
        """Around many inserts in the transaction of ``conn`` into an empty store (``migrate``): what the
        engine keeps per row for readers' caches may be kept once for the whole load instead (nothing on
        SQLite: its triggers cost the same per row in any transaction)."""
        return contextlib.nullcontext()

    @abc.abstractmethod
    def after_bulk_load(self) -> None:
        """After a ``bulk_load`` committed: let the engine learn the new tables."""

    @abc.abstractmethod
    def lease_scope(self) -> str:
        """What names this store among the stores of one process (the leases are shared within it)."""

    @abc.abstractmethod
    def take_lease(self, name: str) -> Any | None:
        """Take the lease ``name`` for this process without waiting: a handle, or None when another
        process holds it (``lease`` calls this)."""

    @abc.abstractmethod
    def drop_lease(self, handle: Any) -> None:
        """Let go of a lease ``take_lease`` took."""

    @abc.abstractmethod
    def lease_holder(self, name: str) -> Holder | None:
        """Who holds the lease ``name`` now (None: nobody)."""

    @property
    @abc.abstractmethod
    def closed(self) -> bool: ...

    @property
    @abc.abstractmethod
    def in_transaction(self) -> bool: ...

    @abc.abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SqliteDatabase(Database):
    """Owns the connections to a Tier 2 file. Thread-safe; ``atomic()`` nests via savepoints.

    Writes (and reads outside ``reading()``) share one connection under one lock. Inside ``reading()``
    the reads of that thread use a read-only connection (``PRAGMA query_only``) from a small pool —
    one per concurrent reader, opened on first need and kept for the next — so readers neither wait
    for a write transaction in progress (WAL: a reader sees the last commit) nor for each other (a
    recall's vector thread and its main thread read side by side). A thread reading inside its own
    ``atomic()`` still reads through the writer, so it sees its own writes. Without WAL there is one
    connection.

    Raises StorageError when the file is not a SQLite database or cannot be opened/created.
    """

    engine = "sqlite"

    def __init__(self, path: str | os.PathLike[str], *, wal: bool = True, busy_timeout_ms: int = 30000):
        self.path = Path(path)
        self.location = str(self.path)  # what status lines and errors name
        self._lock = threading.RLock()
        self._depth = 0
        self._writer: int | None = None  # the thread inside atomic(), if any
        self._closed = False
        self._wal = wal
        self._busy_timeout_ms = busy_timeout_ms
        # Set when SQLite rolled the open transaction back itself (see atomic): the error that made it.
        self._aborted: BaseException | None = None
        self._readers: list[sqlite3.Connection] = []  # every read connection opened (closed with it)
        self._idle: list[sqlite3.Connection] = []  # those not in use now
        self._reader_lock = threading.Lock()
        self._local = threading.local()  # .reading: how deep this thread is in reading()
        self._watch: sqlite3.Connection | None = None  # asks only for data_version (see there)
        self._watch_lock = threading.Lock()
        try:
            private_dir(self.path.parent)
        except OSError as exc:
            raise StorageError(f"cannot create the memory directory {self.path.parent}: {exc}") from exc
        try:
            self._conn = sqlite3.connect(
                str(self.path),
                timeout=busy_timeout_ms / 1000.0,
                isolation_level=None,  # we issue BEGIN/COMMIT ourselves
                check_same_thread=False,
            )
            self._conn.row_factory = sqlite3.Row
            self._check_header()  # a file that is not SQLite is refused before it is touched at all
            # Owner-only before anything is written: SQLite gives the -wal and -shm files it creates
            # the database file's mode. By chmod, never by opening the file (see _check_header).
            self._tighten()
            self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            self._conn.execute("PRAGMA foreign_keys = ON")
            if wal:
                self._retry(lambda: self._conn.execute("PRAGMA journal_mode = WAL").fetchone())
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._tighten()  # a -wal/-shm left by an older release
        except StorageError:
            self._conn.close()
            raise
        except sqlite3.DatabaseError as exc:
            # connect() itself may have failed, leaving no connection to close.
            if hasattr(self, "_conn"):
                self._conn.close()
            raise open_error(self.path, exc) from exc

    def _tighten(self) -> None:
        if str(self.path) == ":memory:":
            return
        for path in (self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm")):
            try:
                tighten(path)
            except OSError as exc:
                raise StorageError(f"cannot make {path} private to its owner: {exc}") from exc

    def _check_header(self) -> None:
        # SQLite reads the header first and writes nothing to a file that is not a database. The file
        # must never be opened with open(): closing any descriptor of it drops every POSIX lock this
        # process holds on it, including those of its live SQLite connections. Another process can then
        # checkpoint and delete the WAL under them, losing their later commits (seen as lost writes).
        try:
            self._conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:
            if "not a database" in str(exc).lower():
                raise StorageError(f"{self.path} is not a SQLite database (refusing to touch it)") from exc
            raise

    # -- transactions ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def atomic(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (BEGIN IMMEDIATE); nested calls become savepoints.

        Everything inside commits together or not at all. SQLite failures inside surface as StorageError.
        """
        with self._lock:
            self._ensure_open()
            if self._depth == 0:
                self._retry(lambda: self._conn.execute("BEGIN IMMEDIATE"))
                self._depth = 1
                self._writer = threading.get_ident()
                try:
                    yield self._conn
                    if self._aborted is not None or not self._conn.in_transaction:
                        # An error inside was caught by the caller, but SQLite had already rolled the
                        # whole transaction back: a COMMIT now would claim writes that are gone.
                        raise self._rolled_back_error()
                    self._retry(lambda: self._conn.execute("COMMIT"))
                except BaseException as exc:
                    if self._conn.in_transaction:
                        self._conn.rollback()
                    if isinstance(exc, sqlite3.DatabaseError):
                        raise storage_error(self.path, exc) from exc
                    raise
                finally:
                    self._depth = 0
                    self._writer = None
                    self._aborted = None
            else:
                name = f"sp{self._depth}"
                self._conn.execute(f"SAVEPOINT {name}")
                self._depth += 1
                try:
                    yield self._conn
                except BaseException as exc:
                    self._undo_savepoint(name, exc)
                    if isinstance(exc, sqlite3.DatabaseError):
                        raise storage_error(self.path, exc) from exc
                    raise
                else:
                    if self._aborted is not None or not self._conn.in_transaction:
                        raise self._rolled_back_error()
                    self._conn.execute(f"RELEASE {name}")
                finally:
                    self._depth -= 1

    def _rolled_back_error(self) -> StorageError:
        """The error for a transaction SQLite rolled back itself (the cause, when known, is named; no
        room to write stays StorageFullError)."""
        cause = self._aborted
        if isinstance(cause, sqlite3.DatabaseError):
            cause = storage_error(self.path, cause)
        why = f": {cause}" if cause is not None else ""
        kind = StorageFullError if isinstance(cause, StorageFullError) else StorageError
        return kind(
            f"memory database {self.path}: the transaction was rolled back by SQLite after an error "
            f"inside it; nothing of it was written{why}"
        )

    def _undo_savepoint(self, name: str, exc: BaseException) -> None:
        """Roll back to savepoint ``name`` after ``exc``. Some errors (SQLITE_FULL, an I/O error such as a
        file past its size limit) make SQLite roll back the whole transaction itself: there is no
        savepoint left, and ``ROLLBACK TO`` would fail with "no such savepoint", hiding ``exc``. The
        outer transaction then ends with ``exc`` (see atomic)."""
        if not self._conn.in_transaction:
            self._aborted = self._aborted or exc
            return
        try:
            self._conn.execute(f"ROLLBACK TO {name}")
            self._conn.execute(f"RELEASE {name}")
        except sqlite3.DatabaseError as undo:
            self._aborted = self._aborted or exc
            raise StorageError(
                f"memory database {self.path}: {exc}; rolling back to the savepoint failed too: {undo}"
            ) from exc

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        """Run one statement (reads, or a single-statement write) under the connection lock."""
        with self._lock:
            self._ensure_open()
            cursor: sqlite3.Cursor = self._retry(lambda: self._conn.execute(sql, params))
            return cursor

    # -- reading -------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _read_connection(self) -> Iterator[sqlite3.Connection]:
        """The connection a read of this thread goes through, held for the read: the writer's (under
        its lock) outside ``reading()``, else a pooled read connection of its own."""
        if self._reads_on_writer():
            with self._lock:
                self._ensure_open()
                yield self._conn
            return
        with self._pooled() as conn:
            yield conn

    def _reads_on_writer(self) -> bool:
        """Whether this thread's reads go through the writer's connection: without WAL, outside
        ``reading()``, or on the thread that holds the write transaction (it must see its own writes)."""
        reading = getattr(self._local, "reading", 0)
        return not self._wal or not reading or self._writer == threading.get_ident()

    def _opened_reader(self, conn: Any) -> None:
        with self._reader_lock:
            self._readers.append(conn)

    def _open_reader(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                str(self.path),
                timeout=self._busy_timeout_ms / 1000.0,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.DatabaseError as exc:
            raise open_error(self.path, exc) from exc
        try:
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
            conn.execute("PRAGMA query_only = ON")  # a write through it is an error, never a write
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise storage_error(self.path, exc) from exc
        return conn

    def data_version(self) -> int:
        """A number that stays the same while nothing is committed to the file, by any connection of
        this process or another one: what was read while it held can be reused (recall's caches).

        SQLite's ``PRAGMA data_version`` changes when another connection commits, never for the
        connection's own writes, so it is asked on a connection of its own that only ever asks this:
        every commit is another connection's. It reads the WAL index, not the database (microseconds),
        and never waits for a writer. Raises StorageError when the file cannot be read.
        """
        with self._watch_lock:
            self._ensure_open()
            if self._watch is None:
                self._watch = self._open_reader()
            watch = self._watch
            version: int = self._retry(lambda: watch.execute("PRAGMA data_version").fetchone()[0])
            return version

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[sqlite3.Row]:
        """Run a read and return every row."""
        rows: list[sqlite3.Row] = self._read(lambda conn: conn.execute(sql, params).fetchall())
        return rows

    def query_one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self._read(lambda conn: conn.execute(sql, params).fetchone())
        return row

    def _read(self, fetch: Callable[[sqlite3.Connection], Any]) -> Any:
        """``fetch`` run on the connection ``_read_connection`` gives (``_reads_on_writer``), written out: a
        recall runs some twenty short reads, and its two context managers cost more than such a read."""
        if self._reads_on_writer():
            with self._lock:
                self._ensure_open()
                return self._retry(lambda: fetch(self._conn))
        pooled = self._take_reader()
        try:
            return self._retry(lambda: fetch(pooled))
        finally:
            self._give_back(pooled)

    def _retry(self, fn: Any) -> Any:
        for attempt in range(LOCK_RETRIES):
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                if not is_locked(exc) or attempt == LOCK_RETRIES - 1:
                    raise storage_error(self.path, exc) from exc
                time.sleep(LOCK_BACKOFF_S * (1 + attempt % 5))
            except sqlite3.DatabaseError as exc:
                raise storage_error(self.path, exc) from exc
        raise AssertionError("unreachable")

    def size_bytes(self) -> int:
        """The database file's size (0 before it exists)."""
        return self.path.stat().st_size if self.path.exists() else 0

    # -- upkeep (``tier2.files``) ---------------------------------------------------------------
    def integrity_messages(self) -> list[str]:
        """Every row of SQLite's ``integrity_check`` (``["ok"]`` for a sound file)."""
        return [str(r[0]) for r in self.query("PRAGMA integrity_check")]

    def check_fts(self, table: str, *, with_content: bool = False) -> None:
        """FTS5's integrity check of ``table``'s index; ``with_content`` also compares the index with
        its content table (in a transaction of its own)."""
        fts = f"{table}_fts"
        if with_content:
            with self.atomic() as conn:
                conn.execute(f"INSERT INTO {fts}({fts}, rank) VALUES ('integrity-check', 1)")
        else:
            self.execute(f"INSERT INTO {fts}({fts}) VALUES ('integrity-check')")

    def checkpoint(self) -> bool:
        """Checkpoint the WAL into the file and truncate it."""
        row = self.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return row is None or int(row[0]) == 0

    def compact(self, fts_tables: Sequence[str]) -> bool:
        """Merge the FTS segments, VACUUM (rewrites every page, so no free page keeps old text), truncate
        the WAL."""
        with self.atomic() as conn:
            for name in (f"{t}_fts" for t in fts_tables):
                if conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None:
                    conn.execute(f"INSERT INTO {name}({name}) VALUES ('optimize')")
        self.execute("VACUUM")
        return self.checkpoint()

    def _ensure_open(self) -> None:
        if self._closed:
            raise StorageError(f"memory database {self.path} is closed")

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    def after_bulk_load(self) -> None:
        """Nothing: SQLite's planner needs no statistics for the stores' queries."""
        return None

    def lease_scope(self) -> str:
        return str(self.path.resolve())

    def take_lease(self, name: str) -> Any | None:
        return leases.take_file(leases.lock_path(self.path, name))

    def drop_lease(self, handle: Any) -> None:
        leases.drop_file(handle)

    def lease_holder(self, name: str) -> Holder | None:
        return leases.holder(self.path, name)

    def backup_to(self, dest: str | os.PathLike[str]) -> None:
        """Hot copy through SQLite's online backup API (safe while writers run)."""
        with self._lock:
            self._ensure_open()
            target = sqlite3.connect(str(dest))
            try:
                tighten(dest)
                self._conn.backup(target)
            finally:
                target.close()
            tighten(dest)

    def close(self) -> None:
        with self._lock, self._reader_lock:
            if not self._closed:
                self._closed = True
                with self._watch_lock:
                    if self._watch is not None:
                        self._watch.close()
                for conn in self._idle:  # one still in use is closed when its read gives it back
                    conn.close()
                self._idle.clear()
                self._conn.close()

__all__ = [
    "Database",
    "SqliteDatabase",
]
