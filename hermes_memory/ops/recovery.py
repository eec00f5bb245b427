"""Finishing a restore or an import that a crash cut short, before the memory is used again.

Restore stages every new file beside the one it replaces (``.<name>.restore-new``), then writes a plan
(``.tier2.db.restore-plan.json``): the plan is its commit point. Carrying the plan out moves each old file
aside (``.<name>.restore-old``), puts each staged file in its place, deletes the old ones and then the
plan; every step can be repeated, so ``roll_forward`` after a crash at any point ends in the restored
state. Without a plan nothing was changed and the staged files are only removed.

An import commits Tier 2 in one transaction together with an audit entry (``target_uuid``
``import:<id>``); the curated entries it adds are written to a journal first
(``.tier2.db.import-<id>.json``, locked while the import runs). A journal whose import committed is
applied (adding an entry twice is a no-op); one whose import never committed is deleted.

``MemoryAPI`` calls ``finish_restore`` before it opens Tier 2 and ``finish_imports`` after; both cost a
stat (a directory listing for imports) when there is nothing to finish. This module imports nothing
heavy: it runs on every open.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_memory._fsync import fsync_dir
from hermes_memory.errors import ConflictError, StorageError

if TYPE_CHECKING:
    from hermes_memory.config import Config
    from hermes_memory.tier1.curated_store import CuratedStore
    from hermes_memory.tier2 import Tier2

NEW = ".restore-new"
OLD = ".restore-old"
IMPORT_TARGET = "import:"  # audit target_uuid prefix of a committed import


def staged(path: Path) -> Path:
    """Where a restore stages the new version of ``path``."""
    return path.with_name(f".{path.name}{NEW}")


def old(path: Path) -> Path:
    """Where a restore moves the previous version of ``path`` while swapping."""
    return path.with_name(f".{path.name}{OLD}")


def plan_path(db_path: Path) -> Path:
    return db_path.with_name(f".{db_path.name}.restore-plan.json")


def journal_path(db_path: Path, import_id: str) -> Path:
    return db_path.with_name(f".{db_path.name}.import-{import_id}.json")


def _exists(path: Path) -> bool:
    return os.path.lexists(path)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif _exists(path):
        path.unlink()


def write_durably(path: Path, text: str) -> None:
    """Write ``path`` (0600) by temp file, fsync and rename, then fsync its directory. Raises OSError."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, text.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)


@contextlib.contextmanager
def exclusive(directory: Path, *, wait: bool) -> Iterator[bool]:
    """An advisory lock on ``directory`` (the store's folder: no lock file is left behind) for the block;
    yields False when ``wait`` is False and another holder has it. Restores and imports of one store take
    it; the open-time recovery skips (or refuses) what a holder is still doing.
    Raises StorageError when the folder cannot be opened."""
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(directory, os.O_RDONLY)
    except OSError as exc:
        raise StorageError(f"cannot lock {directory}: {exc}") from exc
    try:
        if sys.platform == "win32":  # pragma: no cover - advisory only; Windows runs unlocked
            yield True
            return
        import fcntl

        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


# -- restore ---------------------------------------------------------------------------------------


def write_plan(db_path: Path, replace: Sequence[Path], remove: Sequence[Path]) -> None:
    """Commit a restore: from here on it completes, now or after a crash. Raises OSError."""
    plan = {"replace": [str(p) for p in replace], "remove": [str(p) for p in remove]}
    write_durably(plan_path(db_path), json.dumps(plan))


def roll_forward(db_path: Path) -> None:
    """Carry out the committed restore plan of ``db_path`` (idempotent; see the module doc).
    Raises OSError, StorageError for an unreadable plan."""
    path = plan_path(db_path)
    try:
        plan = json.loads(path.read_text(encoding="utf-8"))
        replace = [Path(p) for p in plan["replace"]]
        remove = [Path(p) for p in plan["remove"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise StorageError(
            f"the restore plan {path} is unreadable ({exc}); restore the backup again"
        ) from exc
    # 1. Every old file aside (one already replaced has no staged file any more: it stays).
    for target in [*remove, *replace]:
        pending = target in remove or _exists(staged(target))
        if pending and _exists(target) and not _exists(old(target)):
            os.replace(target, old(target))
    # 2. Every staged file into place: nothing of the old memory is left to mix with it.
    for target in replace:
        if _exists(staged(target)):
            if _exists(target):  # only if something appeared after step 1: it is neither old nor new
                _remove(target)
            os.replace(staged(target), target)
    for directory in {t.parent for t in [*remove, *replace]}:
        if directory.is_dir():
            fsync_dir(directory)
    # 3. The old memory goes, then the plan.
    for target in [*remove, *replace]:
        _remove(old(target))
    path.unlink()
    fsync_dir(path.parent)


def _scratch(db_path: Path, targets: Sequence[Path]) -> list[Path]:
    """Every file a restore may leave beside the targets (``write_durably`` writes through ``.tmp``)."""
    out = [p for t in targets for p in (staged(t), old(t), staged(t).with_name(staged(t).name + ".tmp"))]
    plan = plan_path(db_path)
    return [*out, plan.with_name(plan.name + ".tmp")]


def discard_staged(db_path: Path, targets: Sequence[Path]) -> None:
    """Remove what an uncommitted restore staged or left aside (no plan: the old files are in place)."""
    for path in _scratch(db_path, targets):
        _remove(path)


def restore_targets(config: Config) -> list[Path]:
    """Everything of the current memory a restore replaces or removes (the SQLite side files first)."""
    from hermes_memory.tier1.curated_store import STORE_FILES
    from hermes_memory.tier2.turn_inbox import inbox_path

    db, inbox = config.db_path, inbox_path(config.db_path)
    side = [Path(f"{base}{suffix}") for base in (db, inbox) for suffix in ("-wal", "-shm", "-journal")]
    return [*side, inbox, db, config.tier3_path, config.graph_path,
            *(config.memories_dir / name for name in STORE_FILES.values())]  # fmt: skip


def finish_restore(config: Config) -> None:
    """Complete a restore cut short after it committed, or remove what one cut short before its commit
    staged; a few stats when there is nothing to do.

    Raises ConflictError while a restore into this store is running, StorageError when it cannot finish.
    """
    db_path = config.db_path
    targets = restore_targets(config)
    committed = _exists(plan_path(db_path))
    if not committed and not any(_exists(p) for p in _scratch(db_path, targets)):
        return
    with exclusive(db_path.parent, wait=False) as mine:
        if not mine:
            raise ConflictError(
                f"a restore into {db_path.parent} is in progress; open the memory when it ends"
            )
        try:
            if _exists(plan_path(db_path)):
                roll_forward(db_path)
            else:
                discard_staged(db_path, targets)
        except OSError as exc:
            raise StorageError(f"cannot finish the interrupted restore into {db_path.parent}: {exc}") from exc


# -- import ----------------------------------------------------------------------------------------


def write_journal(db_path: Path, import_id: str, entries: dict[str, list[str]]) -> Path:
    """The curated entries an import will add once its Tier 2 part commits. Raises OSError."""
    path = journal_path(db_path, import_id)
    write_durably(path, json.dumps({"id": import_id, "tier1": entries}, ensure_ascii=False))
    return path


def apply_entries(curated: CuratedStore, entries: dict[str, list[str]]) -> int:
    """Add the entries (a duplicate is a no-op); returns how many were new. Raises what ``add`` raises."""
    return sum(1 for store, items in entries.items() for entry in items if curated.add(store, entry).changed)


def finish_imports(tier2: Tier2, curated: CuratedStore | None) -> int:
    """Add the curated entries of imports that committed and were cut short; drop the journals of
    imports that never committed. Returns how many journals were finished. Raises StorageError."""
    db_path = tier2.db.path
    prefix = f".{db_path.name}.import-"
    try:
        listed = os.listdir(db_path.parent)
    except FileNotFoundError:
        return 0
    except OSError as exc:
        raise StorageError(f"cannot list {db_path.parent}: {exc}") from exc
    names = [n for n in listed if n.startswith(prefix) and n.endswith(".json")]
    staging = [n for n in listed if n.startswith(prefix) and (".staging.db" in n or n.endswith(".tmp"))]
    scratch = [*staging, *(n for n in listed if n.startswith(".restore-work-"))]
    if not names and not scratch:
        return 0
    done = 0
    with exclusive(db_path.parent, wait=False) as mine:
        if not mine:
            return 0  # an import (or restore) is running: its files are not ours to finish
        for name in scratch:  # what an import or restore killed while staging left
            _remove(db_path.parent / name)
        for name in names:
            done += _finish_journal(tier2, curated, db_path.parent / name)
    return done


def _finish_journal(tier2: Tier2, curated: CuratedStore | None, path: Path) -> int:
    if not path.exists():
        return 0
    try:
        journal: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        entries = {str(s): [str(e) for e in items] for s, items in journal["tier1"].items()}
        target = f"{IMPORT_TARGET}{journal['id']}"
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise StorageError(f"the import journal {path} is unreadable: {exc}") from exc
    # The import's audit entry commits with its rows (store-wide: it is looked up in every scope).
    committed = tier2.admin().audit.entries(target_uuid=target, limit=1)
    if committed and curated is not None:
        apply_entries(curated, entries)
    path.unlink()
    return 1


__all__ = [
    "apply_entries",
    "discard_staged",
    "exclusive",
    "finish_imports",
    "finish_restore",
    "journal_path",
    "old",
    "plan_path",
    "restore_targets",
    "roll_forward",
    "staged",
    "write_durably",
    "write_journal",
    "write_plan",
]
