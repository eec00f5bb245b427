"""The one object that owns a Tier 2 SQLite connection: WAL, busy timeout, nested transactions."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from hermes_memory.errors import StorageError

# Retries on top of SQLite's own busy handler: a WAL checkpoint or schema change can still surface
# SQLITE_BUSY without waiting, and that must never reach a caller as "database is locked".
_LOCK_RETRIES = 50
_LOCK_BACKOFF_S = 0.05


def _is_locked(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _storage_error(path: Path, exc: sqlite3.DatabaseError) -> StorageError:
    text = str(exc)
    lowered = text.lower()
    if "readonly" in lowered or "read-only" in lowered:
        return StorageError(f"memory database {path} is read-only: {text}")
    if isinstance(exc, sqlite3.OperationalError) and _is_locked(exc):
        return StorageError(f"memory database {path} stayed locked by another writer: {text}")
    if "not a database" in lowered or "malformed" in lowered:
        return StorageError(f"memory database {path} is not a valid SQLite database: {text}")
    return StorageError(f"memory database {path}: {text}")


def _open_error(path: Path, exc: sqlite3.DatabaseError) -> StorageError:
    if "unable to open" in str(exc).lower() and not os.access(path.parent, os.W_OK):
        return StorageError(f"cannot open memory database {path}: its directory is not writable ({exc})")
    return StorageError(f"cannot open memory database {path}: {exc}")


class Database:
    """Owns one connection to a Tier 2 file. Thread-safe; ``atomic()`` nests via savepoints.

    Raises StorageError when the file is not a SQLite database or cannot be opened/created.
    """

    def __init__(self, path: str | os.PathLike[str], *, wal: bool = True, busy_timeout_ms: int = 30000):
        self.path = Path(path)
        self._lock = threading.RLock()
        self._depth = 0
        self._closed = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
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
            self._check_header()
            self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            self._conn.execute("PRAGMA foreign_keys = ON")
            if wal:
                self._retry(lambda: self._conn.execute("PRAGMA journal_mode = WAL").fetchone())
            self._conn.execute("PRAGMA synchronous = NORMAL")
        except StorageError:
            self._conn.close()
            raise
        except sqlite3.DatabaseError as exc:
            # connect() itself may have failed, leaving no connection to close.
            if hasattr(self, "_conn"):
                self._conn.close()
            raise _open_error(self.path, exc) from exc

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
                try:
                    yield self._conn
                    self._retry(lambda: self._conn.execute("COMMIT"))
                except BaseException as exc:
                    self._conn.rollback()
                    if isinstance(exc, sqlite3.DatabaseError):
                        raise _storage_error(self.path, exc) from exc
                    raise
                finally:
                    self._depth = 0
            else:
                name = f"sp{self._depth}"
                self._conn.execute(f"SAVEPOINT {name}")
                self._depth += 1
                try:
                    yield self._conn
                except BaseException as exc:
                    self._conn.execute(f"ROLLBACK TO {name}")
                    self._conn.execute(f"RELEASE {name}")
                    if isinstance(exc, sqlite3.DatabaseError):
                        raise _storage_error(self.path, exc) from exc
                    raise
                else:
                    self._conn.execute(f"RELEASE {name}")
                finally:
                    self._depth -= 1

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        """Run one statement (reads, or a single-statement write) under the connection lock."""
        with self._lock:
            self._ensure_open()
            cursor: sqlite3.Cursor = self._retry(lambda: self._conn.execute(sql, params))
            return cursor

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[sqlite3.Row]:
        """Run a read and return every row."""
        with self._lock:
            return list(self.execute(sql, params).fetchall())

    def query_keys(
        self, sql: str, keys: Sequence[Any], params: Sequence[Any] = (), *, batch: int = 500
    ) -> list[sqlite3.Row]:
        """Run a read whose ``{keys}`` placeholder is an ``IN`` list of ``keys``, in batches (SQLite caps
        the number of parameters); ``keys`` bind before ``params``. Rows of every batch, in order."""
        rows: list[sqlite3.Row] = []
        for start in range(0, len(keys), batch):
            part = list(keys[start : start + batch])
            rows.extend(self.query(sql.replace("{keys}", ",".join("?" * len(part))), [*part, *params]))
        return rows

    def query_one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Row | None:
        with self._lock:
            row: sqlite3.Row | None = self.execute(sql, params).fetchone()
            return row

    def _retry(self, fn: Any) -> Any:
        for attempt in range(_LOCK_RETRIES):
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                if not _is_locked(exc) or attempt == _LOCK_RETRIES - 1:
                    raise _storage_error(self.path, exc) from exc
                time.sleep(_LOCK_BACKOFF_S * (1 + attempt % 5))
            except sqlite3.DatabaseError as exc:
                raise _storage_error(self.path, exc) from exc
        raise AssertionError("unreachable")

    def _ensure_open(self) -> None:
        if self._closed:
            raise StorageError(f"memory database {self.path} is closed")

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    def backup_to(self, dest: str | os.PathLike[str]) -> None:
        """Hot copy through SQLite's online backup API (safe while writers run)."""
        with self._lock:
            self._ensure_open()
            target = sqlite3.connect(str(dest))
            try:
                self._conn.backup(target)
            finally:
                target.close()

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._conn.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
