"""Store-wide leases: one process at a time drains the turn queue, drains the embedding queue or runs the
scheduled maintenance of a store, wherever the processes run.

``Database.lease(name)`` tries to take the lease ``name`` without waiting and says whether it holds it.
The engine keeps it where every process of the store sees it and where a dead holder loses it:

- SQLite (one host): an ``fcntl.flock`` on ``<db>.<name>.lock`` beside the file. The OS releases it when
  its holder exits or is killed. The holder writes its pid into the file for ``status``; the pid is only
  shown while the lock is actually held (a probe), never trusted on its own.
- PostgreSQL (many hosts): a session advisory lock on a connection of its own. The server releases it
  when that connection ends: at once when the holder exits or is killed, after the TCP keepalive timeout
  when its host vanishes.

Within one process a lease is shared: a second taker of the same store and name (another thread, another
open of the store) holds it too, and the process keeps it until the last one lets go. The threads of a
process coordinate through their own locks, as they did before there were leases.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_memory.errors import StorageError

if TYPE_CHECKING:
    from hermes_memory.tier2.db import Database

log = logging.getLogger(__name__)

TURNS = "turns"
EMBEDDINGS = "embeddings"
JOBS = "jobs"
NAMES = (TURNS, EMBEDDINGS, JOBS)


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds a lease: a pid and since when (Unix seconds), as the holder wrote them, or (on a server)
    where the holder connects from."""

    pid: int | None
    since: float | None
    where: str | None = None

    def words(self) -> str:
        if self.where is not None:
            return self.where
        if self.this_process:
            return "this process"
        return f"pid {self.pid}" if self.pid else "another process"

    @property
    def this_process(self) -> bool:
        return self.where is None and self.pid == os.getpid()


# -- one process's share of each lease ------------------------------------------------------------
@dataclass
class _Shared:
    handle: Any
    db: Database
    takers: int = 1


_SHARED: dict[tuple[str, str], _Shared] = {}
_SHARED_LOCK = threading.Lock()


@contextlib.contextmanager
def hold_lease(db: Database, name: str) -> Iterator[bool]:
    """``Database.lease``: True while this process holds the lease, False when another one does."""
    if name not in NAMES:
        raise ValueError(f"unknown lease {name!r}")
    key = (db.lease_scope(), name)
    with _SHARED_LOCK:
        shared = _SHARED.get(key)
        if shared is not None:
            shared.takers += 1
        else:
            handle = db.take_lease(name)
            if handle is not None:
                shared = _SHARED[key] = _Shared(handle, db)
    if shared is None:
        yield False
        return
    try:
        yield True
    finally:
        with _SHARED_LOCK:
            shared.takers -= 1
            if shared.takers == 0:
                del _SHARED[key]
                shared.db.drop_lease(shared.handle)


# -- SQLite: a file lock beside the database -------------------------------------------------------
def lock_path(db_path: str | os.PathLike[str], name: str = JOBS) -> Path:
    """Where the lease ``name`` of the Tier 2 database at ``db_path`` lives."""
    path = Path(db_path)
    return path.with_name(f"{path.name}.{name}.lock")


def _open(path: Path) -> int:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise StorageError(f"cannot open the lock {path}: {exc.strerror or exc}") from exc


def take_file(path: Path) -> int | None:
    """Take the file lock at ``path`` without waiting: its descriptor, or None when another process (or
    another open of it in this process) holds it. Raises StorageError when the file cannot be opened."""
    fd = _open(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    try:  # who holds it, for status (a full disk must not cost the lease: status then says less)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {time.time():.3f}\n".encode(), 0)
    except OSError as exc:
        log.debug("cannot record the holder's pid in %s: %s", path, exc)
    return fd


def drop_file(fd: int) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def holder(db_path: str | os.PathLike[str], name: str = JOBS) -> Holder | None:
    """Who holds the file lock of lease ``name`` now, or None when nobody does (a probe: takes and drops
    it at once). Never creates the lock file; a file that cannot be read reads as not held."""
    path = lock_path(db_path, name)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_holder(fd)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _read_holder(fd: int) -> Holder:
    parts = os.pread(fd, 64, 0).decode(errors="replace").split()
    try:
        return Holder(int(parts[0]), float(parts[1]))
    except (IndexError, ValueError):
        return Holder(None, None)  # held, but the holder has not written its pid yet


__all__ = [
    "EMBEDDINGS", "JOBS", "NAMES", "TURNS", "Holder", "drop_file", "hold_lease", "holder",
    "lock_path", "take_file",
]  # fmt: skip
