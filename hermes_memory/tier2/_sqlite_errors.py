"""SQLite's errors as the store's: a locked file retried, no room to write told apart (disk full, file size
limit), the rest as StorageError naming the file (``tier2.db``)."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

from hermes_memory.errors import StorageError, StorageFullError

# Retries on top of SQLite's own busy handler: a WAL checkpoint or schema change can still surface
# SQLITE_BUSY without waiting, and that must never reach a caller as "database is locked".
LOCK_RETRIES = 50
LOCK_BACKOFF_S = 0.05


def is_locked(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


_SQLITE_FULL = 13
_SQLITE_IOERR = 10
# A write that fails this close to a size limit (or with this little free space) is taken as "no room".
_ROOM_MARGIN = 1 << 20


def _no_room(path: Path, exc: sqlite3.DatabaseError) -> str | None:
    """Why a failed write found no room (disk full, file size limit), or None when it was not that.

    SQLite reports ENOSPC as SQLITE_FULL ("database or disk is full", also a ``max_page_count`` reached)
    but EFBIG (a file past ``RLIMIT_FSIZE``) only as SQLITE_IOERR ("disk I/O error"): for an I/O error
    the files' sizes are compared with the limit and the free space is looked at.
    """
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    text = str(exc).lower()
    if primary == _SQLITE_FULL or "disk is full" in text:
        return "the disk is full (or the database reached its page limit)"
    if primary != _SQLITE_IOERR and "disk i/o error" not in text:
        return None
    try:
        import resource  # POSIX only
    except ImportError:
        resource = None  # type: ignore[assignment]
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0] if resource is not None else -1
    if resource is not None and limit != resource.RLIM_INFINITY:
        sizes = [p.stat().st_size for p in (path, Path(f"{path}-wal"), Path(f"{path}-journal")) if p.exists()]
        if sizes and max(sizes) + _ROOM_MARGIN >= limit:
            return f"a file reached the process's file size limit (RLIMIT_FSIZE, {limit} bytes)"
    try:
        free = shutil.disk_usage(path.parent).free
    except OSError:
        return None
    return "the disk is full" if free < _ROOM_MARGIN else None


def storage_error(path: Path, exc: sqlite3.DatabaseError) -> StorageError:
    text = str(exc)
    lowered = text.lower()
    room = _no_room(path, exc)
    if room is not None:
        return StorageFullError(
            f"memory database {path}: no room to write: {room} ({text}). The write was rolled back whole "
            "and queued turns stay queued; free space (or raise the limit) and they are written"
        )
    if "readonly" in lowered or "read-only" in lowered:
        return StorageError(f"memory database {path} is read-only: {text}")
    if isinstance(exc, sqlite3.OperationalError) and is_locked(exc):
        return StorageError(f"memory database {path} stayed locked by another writer: {text}")
    if "not a database" in lowered or "malformed" in lowered:
        return StorageError(f"memory database {path} is not a valid SQLite database: {text}")
    return StorageError(f"memory database {path}: {text}")


def open_error(path: Path, exc: sqlite3.DatabaseError) -> StorageError:
    if "unable to open" in str(exc).lower() and not os.access(path.parent, os.W_OK):
        return StorageError(f"cannot open memory database {path}: its directory is not writable ({exc})")
    return StorageError(f"cannot open memory database {path}: {exc}")


__all__ = ["LOCK_BACKOFF_S", "LOCK_RETRIES", "is_locked", "open_error", "storage_error"]
