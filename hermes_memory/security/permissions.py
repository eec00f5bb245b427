"""Owner-only files and directories for everything memory writes (0600 files, 0700 directories).

Memory holds everything the user ever said. The host process (Hermes) owns the umask, so it is never
changed: each file is created with an explicit mode (``os.open(..., 0o600)``: a umask can only remove
bits), each directory memory creates gets 0700, and files created by code we do not control (SQLite's
``-wal``/``-shm``, a vector engine's segments, ``shutil.copy2``) are tightened after the fact with
``chmod`` — never by opening them (closing a descriptor of a SQLite file drops the locks of every
connection this process has on it; see ``tier2.db``).

Directories that already exist are never changed (a database configured as ``~/memory.db`` must not
make the home directory private); files are tightened only when this process's user owns them, and
only by removing group/other bits (a read-only 0400 file stays read-only).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700


def private_dir(path: str | os.PathLike[str]) -> Path:
    """Create ``path`` and any missing parents, each with mode 0700; an existing one is left as it is.

    Raises OSError (callers translate it at their boundary).
    """
    target = Path(path)
    missing: list[Path] = []
    probe = target
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue  # created meanwhile by another thread or process: theirs to set
        os.chmod(directory, DIR_MODE)  # exact, whatever the umask took away
    if not target.is_dir():
        raise NotADirectoryError(f"{target} exists and is not a directory")
    return target


def private_opener(path: str, flags: int) -> int:
    """An ``open(..., opener=private_opener)`` opener: a new file is created with mode 0600."""
    return os.open(path, flags, FILE_MODE)


def write_private_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path``, a new file created 0600 (an existing one keeps its mode,
    minus group/other bits). Raises OSError."""
    with open(path, "w", encoding="utf-8", opener=private_opener) as fh:
        fh.write(text)
    tighten(path)


def tighten(path: str | os.PathLike[str]) -> None:
    """Remove group/other permission bits from ``path`` if it exists, is ours and has any; a symlink is
    never followed. Raises OSError when the chmod itself fails."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    owner = getattr(os, "geteuid", None)  # POSIX; elsewhere modes mean little and are left alone
    if owner is None or stat.S_ISLNK(info.st_mode) or info.st_uid != owner():
        return
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        os.chmod(path, mode & 0o700)


def tighten_tree(root: str | os.PathLike[str]) -> None:
    """``tighten`` ``root`` and everything under it (files written by code that takes no mode: a vector
    engine's segments, copies). Symlinks are neither followed nor changed. Raises OSError."""
    base = Path(root)
    if not base.exists() or base.is_symlink():
        return
    tighten(base)
    if not base.is_dir():
        return
    for dirpath, dirnames, filenames in os.walk(base):
        for name in (*dirnames, *filenames):
            tighten(os.path.join(dirpath, name))


__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "private_dir",
    "private_opener",
    "tighten",
    "tighten_tree",
    "write_private_text",
]
