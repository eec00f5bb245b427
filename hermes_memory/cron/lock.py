"""One process at a time runs the scheduled maintenance of a store: an OS file lock beside the database.

The lock is an ``fcntl.flock`` on ``<db>.jobs.lock``, taken without waiting: a second process (a crontab
``hermes-memory maintain --due`` while a Hermes gateway ticks, or two gateways on one profile) finds it
held and skips its tick. The OS releases the lock when its holder exits or is killed, so a crashed
holder never blocks the next run. The holder writes its pid into the file for ``status``; the pid is
only shown while the lock is actually held (a probe), never trusted on its own.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hermes_memory.errors import StorageError


def lock_path(db_path: str | os.PathLike[str]) -> Path:
    """Where the maintenance lock of the Tier 2 database at ``db_path`` lives."""
    path = Path(db_path)
    return path.with_name(f"{path.name}.jobs.lock")


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds the lock: a pid and since when (Unix seconds), as the holder wrote them."""

    pid: int | None
    since: float | None

    def words(self) -> str:
        if self.this_process:
            return "this process"
        return f"pid {self.pid}" if self.pid else "another process"

    @property
    def this_process(self) -> bool:
        return self.pid == os.getpid()


def _open(path: Path) -> int:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise StorageError(f"cannot open the maintenance lock {path}: {exc.strerror or exc}") from exc


@contextmanager
def hold(db_path: str | os.PathLike[str]) -> Iterator[bool]:
    """Try to take the maintenance lock without waiting; yields True while held, False when another
    process (or another open of it in this process) holds it. Released on exit (and by the OS if the
    process dies). Raises StorageError when the lock file cannot be opened."""
    path = lock_path(db_path)
    fd = _open(path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()} {time.time():.3f}\n".encode(), 0)
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def holder(db_path: str | os.PathLike[str]) -> Holder | None:
    """Who holds the lock now, or None when nobody does (a probe: takes and drops it at once). Never
    creates the lock file; a file that cannot be read reads as not held."""
    path = lock_path(db_path)
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


__all__ = ["Holder", "hold", "holder", "lock_path"]
