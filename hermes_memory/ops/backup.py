"""Hot backup and one-command restore of a profile.

A backup holds Tier 2 (SQLite online backup: a consistent snapshot while writers run), the curated
files and the graph file. The vectors are Tier 2 rows, so they are in the snapshot; the engines' files
are NOT copied (they hold locks and buffer writes, so a file copy could be torn): restore re-enqueues
all chunks and entities, the next drain finds their stored vectors (embedding only texts without one)
and the engines are rebuilt from Tier 2. The graph file carries a
fingerprint of Tier 2; if it lags the snapshot it is rebuilt on first use.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

from hermes_memory.config import Config
from hermes_memory.errors import ConflictError, StorageError, ValidationError
from hermes_memory.scoping import ScopeView
from hermes_memory.tier1.curated_store import STORE_FILES, CuratedStore
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2.chunks import CHUNKS_COLLECTION, ENTITIES_COLLECTION
from hermes_memory.tier2.turn_inbox import inbox_path

MANIFEST = "manifest.json"
FORMAT = "hermes-memory/backup"
VERSION = 1
DB_NAME = "tier2.db"
_COUNTED = ("facts", "entities", "relations", "timeline", "episodes", "chunks")


def _counts(conn: sqlite3.Connection) -> dict[str, int]:
    return {t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in _COUNTED}


def backup(tier2: Tier2, curated: CuratedStore | None, graph_dir: Path | None, dest: Path, *,
           profile: str) -> dict[str, Any]:  # fmt: skip
    """Write a backup directory ``dest`` (must not exist or be empty); returns the manifest.

    Raises ConflictError when ``dest`` holds files, StorageError when it cannot be written.
    """
    try:
        occupied = dest.exists() and (not dest.is_dir() or any(dest.iterdir()))
    except OSError as exc:  # e.g. a name longer than the filesystem allows
        raise StorageError(f"cannot use {dest} as a backup destination: {exc}") from exc
    if occupied:
        raise ConflictError(f"backup destination {dest} exists and is not empty")
    try:
        dest.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(dest, 0o700)  # a backup holds everything the user ever said: owner only
        tier2.ingest_queue.absorb()  # queued turns still in the inbox belong in the backup
        tier2.db.backup_to(dest / DB_NAME)
        files = [DB_NAME]
        if curated is not None:
            (dest / "memories").mkdir(mode=0o700)
            for name in STORE_FILES.values():
                src = curated.memories_dir / name
                if src.exists():  # written by atomic replace, so a plain copy is never torn
                    shutil.copy2(src, dest / "memories" / name)
                    files.append(f"memories/{name}")
        if graph_dir is not None and graph_dir.is_dir():
            (dest / "graph").mkdir(mode=0o700)
            for src in graph_dir.iterdir():
                if src.is_file() and not src.name.startswith("."):
                    shutil.copy2(src, dest / "graph" / src.name)
                    files.append(f"graph/{src.name}")
        with sqlite3.connect(str(dest / DB_NAME)) as conn:
            counts = _counts(conn)
        conn.close()
        manifest = {
            "format": FORMAT, "version": VERSION, "created_at": time.time(), "profile": profile,
            "files": files, "counts": counts,
            "vectors": "in tier2.db; the engine files are not copied, restore rebuilds them from Tier 2",
        }  # fmt: skip
        (dest / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True), encoding="utf-8")
        _owner_only(dest)
    except (OSError, sqlite3.Error) as exc:
        raise StorageError(f"cannot write backup to {dest}: {exc}") from exc
    return dict(manifest)


def _owner_only(dest: Path) -> None:
    """Files 0600 and folders 0700 under ``dest`` (copies keep their source's mode otherwise)."""
    for path in [dest, *dest.rglob("*")]:
        os.chmod(path, 0o700 if path.is_dir() else 0o600)


def read_manifest(src: Path) -> dict[str, Any]:
    """The manifest of a backup directory. Raises ValidationError if ``src`` is not a backup."""
    try:
        manifest = json.loads((src / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValidationError(f"{src} is not a hermes-memory backup (no readable {MANIFEST}): {exc}") from exc
    kind = (manifest.get("format"), manifest.get("version")) if isinstance(manifest, dict) else None
    if kind != (FORMAT, VERSION):
        raise ValidationError(f"{src} is not a hermes-memory backup of version {VERSION}")
    if not (src / DB_NAME).is_file():
        raise ValidationError(f"backup {src} has no {DB_NAME}")
    return dict(manifest)


def _occupied(config: Config) -> list[Path]:
    paths = [config.db_path, config.graph_path, config.tier3_path]
    paths += [config.memories_dir / name for name in STORE_FILES.values()]
    return [p for p in paths if p.exists() and (p.is_file() or any(p.iterdir()))]


def _in_use(db_path: Path) -> bool:
    """Whether another process has the memory database open (a running agent, the MCP server).

    In WAL mode every open connection holds a shared lock on the file, so an exclusive lock is granted
    only when nobody else has it open. Never opens the file with ``open()`` (see ``tier2.db``).
    Raises StorageError for any SQLite failure but a lock.
    """
    if not db_path.exists():
        return False
    probe = sqlite3.connect(str(db_path), timeout=0.2, isolation_level=None)
    try:
        probe.execute("PRAGMA locking_mode = EXCLUSIVE")
        probe.execute("BEGIN EXCLUSIVE")
        probe.execute("SELECT count(*) FROM sqlite_master").fetchone()
        probe.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError as exc:
        text = str(exc).lower()
        if "locked" in text or "busy" in text:
            return True
        raise StorageError(f"cannot check whether {db_path} is in use: {exc}") from exc
    except sqlite3.DatabaseError:
        return False  # not a database at all (force replaces it): nobody can have it open as one
    finally:
        probe.close()


def restore(src: Path, config: Config, *, force: bool = False) -> dict[str, Any]:
    """Restore a backup into the home/profile of ``config`` (no MemoryAPI may have it open).

    Refuses (ConflictError) to overwrite existing memory unless ``force``, and always while another
    process has the store open. After copying, runs the consistency check and re-enqueues every vector.
    Raises ValidationError for a bad backup, StorageError when files cannot be written or the restored
    store fails the check.
    """
    manifest = read_manifest(src)
    occupied = _occupied(config)
    if occupied and not force:
        raise ConflictError(f"the target already holds memory ({occupied[0]}); pass force to overwrite")
    if _in_use(config.db_path):
        raise ConflictError(
            f"the memory at {config.db_path} is open in another process (a running agent or MCP server?); "
            "stop it before restoring"
        )
    try:
        for base in (config.db_path, inbox_path(config.db_path)):  # the old turn inbox goes too
            for suffix in ("", "-wal", "-shm"):
                Path(f"{base}{suffix}").unlink(missing_ok=True)
        for directory in (config.graph_path, config.tier3_path):
            if directory.exists():
                shutil.rmtree(directory)
        config.db_path.parent.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(str(src / DB_NAME)) as source, sqlite3.connect(str(config.db_path)) as target:
            source.backup(target)
        source.close()
        target.close()
        if (src / "memories").is_dir():
            config.memories_dir.mkdir(parents=True, exist_ok=True)
            for name in STORE_FILES.values():
                if (src / "memories" / name).exists():
                    shutil.copy2(src / "memories" / name, config.memories_dir / name)
        if (src / "graph").is_dir():
            config.graph_path.mkdir(parents=True, exist_ok=True)
            for item in (src / "graph").iterdir():
                shutil.copy2(item, config.graph_path / item.name)
    except (OSError, sqlite3.Error) as exc:
        raise StorageError(f"cannot restore {src} into {config.db_path.parent}: {exc}") from exc
    settings = config.tier2
    tier2 = Tier2.open(
        config.db_path, wal=settings.wal_mode, busy_timeout_ms=settings.busy_timeout_ms, view=ScopeView.all()
    )
    try:
        with tier2.db.atomic() as conn:
            conn.execute("DELETE FROM vector_sync")  # the engines' files are gone: they rebuild from Tier 2
            tier2.embed_queue.clear(conn)
            for (uuid,) in conn.execute("SELECT uuid FROM chunks ORDER BY id").fetchall():
                tier2.embed_queue.enqueue(conn, CHUNKS_COLLECTION, uuid, "upsert")
            for (uuid,) in conn.execute("SELECT uuid FROM entities ORDER BY id").fetchall():
                tier2.embed_queue.enqueue(conn, ENTITIES_COLLECTION, uuid, "upsert")
        check = consistency_check(tier2, manifest["counts"])
    finally:
        tier2.close()
    if not check["ok"]:
        raise StorageError(f"restored store failed the consistency check: {check['problems']}")
    return {"restored_from": str(src), "manifest": manifest, "check": check}


def consistency_check(tier2: Tier2, expected: dict[str, int] | None = None) -> dict[str, Any]:
    """SQLite integrity, FTS indexes vs their tables, every chunk/entity has a vector or a queued write,
    and (optionally) row counts equal ``expected``."""
    problems: list[str] = []
    db = tier2.db
    row = db.query_one("PRAGMA integrity_check")
    if row is None or row[0] != "ok":
        problems.append(f"integrity_check: {None if row is None else row[0]}")
    for table in ("facts", "entities", "timeline", "episodes", "chunks"):
        try:
            db.execute(f"INSERT INTO {table}_fts({table}_fts) VALUES ('integrity-check')")
        except StorageError as exc:
            problems.append(f"{table}_fts: {exc}")
    conn_counts = {t: int(db.query(f"SELECT count(*) FROM {t}")[0][0]) for t in _COUNTED}
    if expected is not None:
        for table, count in expected.items():
            if conn_counts.get(table) != count:
                problems.append(f"{table}: {conn_counts.get(table)} rows, backup had {count}")
    queued = int(db.query("SELECT count(*) FROM embed_queue WHERE op = 'upsert'")[0][0])
    return {"ok": not problems, "problems": problems, "counts": conn_counts, "vectors_queued": queued}


__all__ = ["backup", "consistency_check", "read_manifest", "restore"]
