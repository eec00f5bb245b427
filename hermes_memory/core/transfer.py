"""Moving a memory in and out: JSON export and import (this scope), hot backup and restore (the whole
store). ``hermes_memory.ops`` does the work and is imported where used: a turn never needs it."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes_memory.config import Config
from hermes_memory.core.tiers import Tiers
from hermes_memory.errors import StorageError


class Transfer:
    """Export, import and backup of an open memory; ``restore`` works on files before any opens.
    ``forget_recall_caches`` drops what recall caches after an import changed the store."""

    def __init__(self, tiers: Tiers, forget_recall_caches: Callable[[], None]) -> None:
        self._tiers = tiers
        self._forget_recall_caches = forget_recall_caches

    def export_document(self) -> dict[str, Any]:
        """Every tier of this scope as one JSON-ready document (chunks with their stored vectors),
        credentials redacted when config ``security.redact_secrets`` is on. Raises StorageError."""
        from hermes_memory.ops import export as _export

        doc: dict[str, Any] = _export.export_data(self._tiers.tier2(), self._tiers.curated)
        if not self._tiers.config.security.redact_secrets:
            return doc
        from hermes_memory.ops.redact import redact_document

        redacted: dict[str, Any] = redact_document(doc)[0]
        return redacted

    def export_file(self, target: Path) -> dict[str, Any]:
        """Write the export document to ``target`` (owner-only); returns {path, counts per table}.
        Raises StorageError."""
        from hermes_memory.ops import export as _export

        doc = self.export_document()
        try:
            _export.write_private(target, json.dumps(doc, ensure_ascii=False, sort_keys=True))
        except OSError as exc:
            raise StorageError(f"cannot write export to {target}: {exc}") from exc
        return {"path": str(target), "counts": {t: len(rows) for t, rows in doc["tier2"].items()}}

    def import_(self, data: Any, *, merge: bool) -> dict[str, Any]:
        """Import an export (a dict, or a path to a file read piece by piece) all or nothing, into this
        scope; then rebuild the graph. Raises ValidationError, ThreatDetectedError, ConflictError."""
        from hermes_memory.ops import importer
        from hermes_memory.ops.redact import redact_import_item

        tiers = self._tiers
        t2, curated = tiers.tier2(), tiers.curated
        redact = redact_import_item if tiers.config.security.redact_secrets else None
        if isinstance(data, (str, os.PathLike)):  # read piece by piece: any size in bounded memory
            result = importer.import_file(t2, curated, data, merge=merge, transform=redact, actor=tiers.actor)
        else:
            result = importer.import_data(t2, curated, data, merge=merge, transform=redact, actor=tiers.actor)
        if tiers.graph is not None:
            tiers.graph.rebuild()
        self._forget_recall_caches()
        return result

    def backup(self, target: Path) -> dict[str, Any]:
        """Hot backup (safe while writers run) of the whole store (every scope: it restores the home
        as it was) into the new directory ``target``, made owner-only. Raises ConflictError if
        ``target`` is not empty, StorageError."""
        from hermes_memory.ops import backup as _backup

        tiers = self._tiers
        if tiers.graph is not None:
            tiers.graph.save()
        graph_dir = tiers.config.graph_path if tiers.graph is not None else None
        result: dict[str, Any] = _backup.backup(
            tiers.tier2().admin(), tiers.curated, graph_dir, target, profile=tiers.config.profile
        )
        owner_only(target)  # SQLite's backup file, copies and the manifest take the umask's mode
        return result

    @staticmethod
    def restore(src: Path, config: Config, *, force: bool) -> dict[str, Any]:
        """Restore a backup into ``config``'s home/profile, which nothing has open, all or nothing; the
        restored store is made owner-only. Raises ValidationError (ThreatDetectedError), ConflictError,
        StorageError."""
        from hermes_memory.ops import backup as _backup

        result: dict[str, Any] = _backup.restore(src, config, force=force)
        # Copies keep the backup's modes (an old backup's 0644): the restored store is owner-only.
        db = config.db_path
        for path in (db, Path(f"{db}-wal"), Path(f"{db}-shm"), config.graph_path):
            owner_only(path)
        return result


def owner_only(path: Path) -> None:
    """Make ``path`` (and what is under it) 0600/0700. Raises StorageError."""
    from hermes_memory.security.permissions import tighten_tree

    try:
        tighten_tree(path)
    except OSError as exc:
        raise StorageError(f"cannot make {path} private to its owner: {exc}") from exc


__all__ = ["Transfer", "owner_only"]
