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
import re
import shutil
import sqlite3
import stat
import tempfile
import time
from pathlib import Path
from typing import Any

from hermes_memory.config import Config
from hermes_memory.errors import ConflictError, StorageError, ThreatDetectedError, ValidationError
from hermes_memory.ops import recovery
from hermes_memory.scoping import ScopeView
from hermes_memory.security.threats import first_threat
from hermes_memory.tier1.curated_store import STORE_FILES, CuratedStore, parse_entries
from hermes_memory.tier2 import Tier2, maintenance
from hermes_memory.tier2 import files as db_files
from hermes_memory.tier2.turn_inbox import inbox_path

MANIFEST = "manifest.json"
FORMAT = "hermes-memory/backup"
VERSION = 1
DB_NAME = "tier2.db"
_COUNTED = db_files.COUNTED


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
        with db_files.DatabaseFile(dest / DB_NAME) as copy:
            counts = copy.counts()
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
        manifest = json.loads(_read_regular(src / MANIFEST, _MAX_MANIFEST).decode("utf-8"))
    except (OSError, ValueError, ValidationError) as exc:
        raise ValidationError(f"{src} is not a hermes-memory backup (no readable {MANIFEST}): {exc}") from exc
    kind = (manifest.get("format"), manifest.get("version")) if isinstance(manifest, dict) else None
    if kind != (FORMAT, VERSION):
        raise ValidationError(f"{src} is not a hermes-memory backup of version {VERSION}")
    if not (src / DB_NAME).is_file():
        raise ValidationError(f"backup {src} has no {DB_NAME}")
    return dict(manifest)


_MAX_MANIFEST = 1 << 20
_MAX_CURATED = 8 << 20  # far above any curated limit: a bound on what is read, not a policy
_GRAPH_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$")


def _open_regular(path: Path) -> int:
    """A read descriptor of ``path`` when it is a regular file with one link (no symlink, hardlink,
    device or FIFO). Raises ValidationError otherwise, OSError when it cannot be opened."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if path.is_symlink():
            raise ValidationError(
                f"backup file {path} is a symlink; a backup holds regular files only"
            ) from exc
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        os.close(fd)
        what = "has other hard links" if stat.S_ISREG(info.st_mode) else "is not a regular file"
        raise ValidationError(f"backup file {path} {what}; a backup holds regular files only")
    return fd


def _read_regular(path: Path, limit: int) -> bytes:
    fd = _open_regular(path)
    try:
        if os.fstat(fd).st_size > limit:
            raise ValidationError(f"backup file {path} is larger than {limit} bytes")
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            return fh.read(limit + 1)
    finally:
        if fd != -1:
            os.close(fd)


def _copy_regular(path: Path, dest: Path) -> None:
    """Copy a regular backup file to ``dest`` (new, 0600, fsynced). Raises ValidationError, OSError."""
    fd = _open_regular(path)
    with (
        os.fdopen(fd, "rb") as src,
        open(os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out,
    ):
        shutil.copyfileobj(src, out, 1 << 20)
        out.flush()
        os.fsync(out.fileno())


def _backup_files(src: Path, manifest: dict[str, Any]) -> list[str]:
    """The files of the backup, checked against its manifest: the names the format allows, each a
    regular file, folders real folders, nothing unlisted. Raises ValidationError."""
    files = manifest.get("files")
    counts = manifest.get("counts")
    if (
        not isinstance(files, list)
        or not all(isinstance(f, str) for f in files)
        or len(set(files)) != len(files)
    ):
        raise ValidationError(f"backup {src}: the manifest's files must be a list of distinct names")
    if (
        not isinstance(counts, dict)
        or set(counts) != set(_COUNTED)
        or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts.values())
    ):
        raise ValidationError(
            f"backup {src}: the manifest's counts must give a row count for {', '.join(_COUNTED)}"
        )
    allowed = {DB_NAME, *(f"memories/{n}" for n in STORE_FILES.values())}
    for name in files:
        folder, _, leaf = name.partition("/")
        if name not in allowed and not (folder == "graph" and _GRAPH_NAME.match(leaf)):
            raise ValidationError(f"backup {src}: the manifest names {name!r}, which no backup holds")
    if DB_NAME not in files:
        raise ValidationError(f"backup {src} has no {DB_NAME}")
    present: set[str] = set()
    with os.scandir(src) as entries:
        for entry in entries:
            if entry.name in ("memories", "graph"):
                if not entry.is_dir(follow_symlinks=False):
                    raise ValidationError(f"backup {src}: {entry.name} is not a folder (a symlink?)")
                with os.scandir(entry.path) as inner:
                    present.update(f"{entry.name}/{item.name}" for item in inner)
            elif entry.name != MANIFEST:
                present.add(entry.name)
    if present != set(files):
        extra, missing = sorted(present - set(files)), sorted(set(files) - present)
        raise ValidationError(
            f"backup {src} does not match its manifest (unlisted: {extra}, missing: {missing})"
        )
    return list(files)


def _occupied(config: Config) -> list[Path]:
    paths = [config.db_path, config.graph_path, config.tier3_path]
    paths += [config.memories_dir / name for name in STORE_FILES.values()]
    return [p for p in paths if p.exists() and (p.is_file() or any(p.iterdir()))]


def _refuse_if_in_use(config: Config) -> None:
    if db_files.in_use(config.db_path):
        raise ConflictError(
            f"the memory at {config.db_path} is open in another process (a running agent or MCP server?); "
            "stop it before restoring"
        )


def restore(src: Path, config: Config, *, force: bool = False) -> dict[str, Any]:
    """Restore a backup into the home/profile of ``config`` (no MemoryAPI may have it open), all or nothing.

    Everything is checked first — the files (regular files named by the manifest, no symlinks or
    hard links), the database (SQLite integrity, row counts against the manifest, the
    consistency check after migrating), the curated entries (the write-time threat scan) — and the
    restored memory is staged beside the current one, then swapped in (see ``recovery``: a crash during
    the swap is finished on the next open). Until the swap the current memory is untouched; Tier 2 threat
    verdicts are recomputed, never taken from the backup. Refuses (ConflictError) to overwrite existing
    memory unless ``force``, and always while another process has the store open. Raises
    ValidationError for a bad backup (ThreatDetectedError for a flagged curated entry), StorageError when
    files cannot be written.
    """
    manifest = read_manifest(src)
    files = _backup_files(src, manifest)
    occupied = _occupied(config)
    if occupied and not force:
        raise ConflictError(
            f"the target already holds memory ({occupied[0]}); restore with force=True (the CLI's --force) "
            "to overwrite"
        )
    _refuse_if_in_use(config)
    db_path = config.db_path
    targets = recovery.restore_targets(config)
    try:
        db_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with recovery.exclusive(db_path.parent, wait=True):
            if os.path.lexists(recovery.plan_path(db_path)):
                recovery.roll_forward(db_path)  # an earlier restore committed and was cut short
            recovery.discard_staged(db_path, targets)  # what an earlier, uncommitted one left
            try:
                replace, check = _stage(src, files, manifest, config)
                _refuse_if_in_use(config)
                # Curated files the backup lacks stay (they are the Hermes home's, shared by profiles).
                curated = {config.memories_dir / name for name in STORE_FILES.values()}
                remove = [t for t in targets if t not in replace and t not in curated]
                recovery.write_plan(db_path, replace, remove)
            except BaseException:
                recovery.discard_staged(db_path, targets)
                raise
            recovery.roll_forward(db_path)
    except (OSError, sqlite3.Error) as exc:
        raise StorageError(f"cannot restore {src} into {db_path.parent}: {exc}") from exc
    return {"restored_from": str(src), "manifest": manifest, "check": check}


def _stage(
    src: Path, files: list[str], manifest: dict[str, Any], config: Config
) -> tuple[list[Path], dict[str, Any]]:
    """Check the backup and write the restored memory beside the current one (``recovery.staged``);
    returns the paths it replaces and the consistency check. Raises ValidationError, OSError."""
    db_path = config.db_path
    replace = [db_path]
    work = Path(tempfile.mkdtemp(prefix=".restore-work-", dir=db_path.parent))
    try:
        _copy_regular(src / DB_NAME, work / DB_NAME)
        check = _prepare_database(work / DB_NAME, manifest["counts"], config)
        os.replace(work / DB_NAME, recovery.staged(db_path))
    finally:
        shutil.rmtree(work)
    for store_file in STORE_FILES.values():
        if f"memories/{store_file}" in files:
            text = _curated_text(src / "memories" / store_file)
            target = config.memories_dir / store_file
            if target.is_symlink():  # a dotfiles link stays a link: its file is what gets replaced
                target = Path(os.path.realpath(target))
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            recovery.write_durably(recovery.staged(target), text)
            replace.append(target)
    graph_files = sorted(f.partition("/")[2] for f in files if f.startswith("graph/"))
    if graph_files:
        staged_graph = recovery.staged(config.graph_path)
        config.graph_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        staged_graph.mkdir(mode=0o700)
        for name in graph_files:
            _copy_regular(src / "graph" / name, staged_graph / name)
        replace.append(config.graph_path)
    return replace, check


def _curated_text(path: Path) -> str:
    """A backed-up curated file's text after the write-time threat scan of every entry.
    Raises ValidationError (ThreatDetectedError for a flagged entry)."""
    try:
        text = _read_regular(path, _MAX_CURATED).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationError(f"backup file {path} is not UTF-8 text: {exc}") from exc
    for index, entry in enumerate(parse_entries(text)):
        finding = first_threat(entry, "strict")
        if finding is not None:
            raise ThreatDetectedError(f"backup file {path.name}, entry {index + 1}: {finding.message}")
    return text


def _prepare_database(path: Path, counts: dict[str, int], config: Config) -> dict[str, Any]:
    """Check the copied backup database and make it ready to be the store: migrated, threat verdicts
    recomputed, every vector queued to be rebuilt. Raises ValidationError when the backup is corrupt
    or does not match its manifest."""
    try:
        with db_files.DatabaseFile(path) as copy:
            row = copy.integrity()
            if row is None or row[0] != "ok":
                raise ValidationError(f"the backup's database fails the SQLite integrity check: {row}")
            found = copy.counts()
    except sqlite3.DatabaseError as exc:
        raise ValidationError(f"the backup's database is corrupt or not SQLite: {exc}") from exc
    if found != counts:
        raise ValidationError(
            f"the backup's database does not match its manifest: {found} rows, manifest {counts}"
        )
    settings = config.tier2
    try:
        tier2 = Tier2.open(
            path, wal=settings.wal_mode, busy_timeout_ms=settings.busy_timeout_ms, view=ScopeView.all()
        )
    except StorageError as exc:
        raise ValidationError(f"the backup's database cannot be opened as a memory store: {exc}") from exc
    try:
        with tier2.db.atomic() as conn:
            # A verdict says "shown without neutralising": never take it from a file we did not write;
            # the engines' files are not restored: they rebuild from every chunk and entity, queued.
            db_files.reset_derived(conn, tier2.embed_queue)
        check = consistency_check(tier2, counts)
        flagged = db_files.flagged_counts(tier2.db)
        db_files.checkpoint(tier2.db)
    finally:
        tier2.close()
    if not check["ok"]:
        raise ValidationError(f"the backup's database failed the consistency check: {check['problems']}")
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)  # checkpointed and closed: nothing in them
    inbox = inbox_path(path)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{inbox}{suffix}").unlink(missing_ok=True)
    return {**check, "flagged": flagged}


def consistency_check(tier2: Tier2, expected: dict[str, int] | None = None) -> dict[str, Any]:
    """SQLite integrity, FTS indexes vs their tables, every chunk/entity has a vector or a queued write,
    and (optionally) row counts equal ``expected``."""
    problems: list[str] = []
    db = tier2.db
    messages = db_files.integrity_messages(db)
    first = messages[0] if messages else None
    if first != "ok":
        problems.append(f"integrity_check: {first}")
    for table in db_files.FTS_TABLES:
        try:
            db_files.check_fts(db, table)
        except StorageError as exc:
            problems.append(f"{table}_fts: {exc}")
    conn_counts = db_files.row_counts(db)
    if expected is not None:
        for table, count in expected.items():
            if conn_counts.get(table) != count:
                problems.append(f"{table}: {conn_counts.get(table)} rows, backup had {count}")
    queued = maintenance.queued(db, op="upsert")
    stored = maintenance.stored_vectors(db)
    # ``vectors_queued`` index entries are rebuilt; a text with one of the ``vectors_stored`` vectors
    # (of the configured model) is not embedded again.
    return {
        "ok": not problems, "problems": problems, "counts": conn_counts, "vectors_queued": queued,
        "vectors_stored": stored,
    }  # fmt: skip


__all__ = ["backup", "consistency_check", "read_manifest", "restore"]
