"""MemoryAPI methods of operations: forget (GDPR erasure), export/import, hot backup and restore.
The work is in ``hermes_memory.ops``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_memory import validation as v
from hermes_memory.api.envelope import Envelope, run
from hermes_memory.config import Config, load_config
from hermes_memory.errors import NotFoundError, StorageError, ValidationError
from hermes_memory.tier1.snapshot import CuratedSnapshot

if TYPE_CHECKING:
    from hermes_memory.graph.service import GraphService
    from hermes_memory.ops import forget as _forget
    from hermes_memory.recall.engine import RecallEngine
    from hermes_memory.tier1.curated_store import CuratedStore
    from hermes_memory.tier2 import Tier2
    from hermes_memory.tier3.semantic import SemanticMemory

# ``hermes_memory.ops`` is imported in the methods that use it: a turn never does.


class OpsMethods:
    """Mixed into MemoryAPI; expects ``_tier2()``, ``_curated_store``, ``_snapshot``, ``_sem``,
    ``_graph_service``, ``_engine``, ``config``, ``actor`` and ``enabled_tiers()``."""

    config: Config
    actor: str
    _curated_store: CuratedStore | None
    _snapshot: CuratedSnapshot | None
    _sem: SemanticMemory | None
    _graph_service: GraphService | None
    _engine: RecallEngine | None

    def _tier2(self) -> Tier2:
        raise NotImplementedError

    def enabled_tiers(self) -> list[str]:
        raise NotImplementedError

    # -- forget -----------------------------------------------------------------------------------
    def forget(self, id: str, *, confirm: bool = False) -> Envelope:
        """Forget one fact, episode, timeline event, relation or entity (an entity: every mention).

        Without ``confirm=True`` returns the preview (counts per tier, curated entries affected) and
        changes nothing. Raises (in the envelope) ValidationError for an empty id, NotFoundError for
        an unknown one.
        """
        from hermes_memory.ops import forget as _forget

        curated = self._curated_store
        return self._forget_run(lambda conn, t2: _forget.plan_uuid(conn, t2, curated, id), confirm)

    def forget_entity(self, name: str, *, confirm: bool = False) -> Envelope:
        """Forget an entity by name or alias: every row, entry, vector, graph node and queued turn that
        mentions it. Preview unless ``confirm=True``. Raises ValidationError for an empty name,
        NotFoundError when nothing mentions it."""

        from hermes_memory.ops import forget as _forget

        def plan(conn: Any, t2: Tier2) -> _forget.ForgetPlan:
            clean = v.text("name", name, max_chars=200).strip()
            return _forget.plan_entity(conn, t2, self._curated_store, clean)

        return self._forget_run(plan, confirm)

    def _forget_run(self, planner: Any, confirm: Any) -> Envelope:
        from hermes_memory.ops import forget as _forget

        def call() -> dict[str, Any]:
            if not isinstance(confirm, bool):
                raise ValidationError("confirm must be a boolean")
            t2 = self._tier2()
            t2.ingest_queue.absorb()  # turns still in the inbox must be found (and forgotten) too
            with t2.db.atomic() as conn:
                plan: _forget.ForgetPlan = planner(conn, t2)
                if plan.empty():
                    raise NotFoundError("nothing in memory matches; nothing to forget")
                if confirm:
                    _forget.execute(conn, t2, plan, actor=self.actor)
            preview = {
                "confirmed": confirm,
                "target": plan.target,
                "counts": plan.counts(),
                "curated_entries": {s: list(e) for s, e in plan.curated.items()},
            }
            if not confirm:
                return preview
            if self._curated_store is not None:
                _forget.remove_curated(self._curated_store, plan)
                self._snapshot = CuratedSnapshot.capture(self._curated_store)
            if self._sem is not None:
                self._sem.drain()  # vector deletes are applied before we return
                self._sem.prune_vectors()  # and no stored vector of a forgotten text stays
                if self._sem.backend_name != "memory":
                    # Engines with a WAL and segment files (qdrant, chroma) keep deleted payloads on disk
                    # until a compaction we cannot force; rebuilding the collections from Tier 2 (which
                    # no longer holds the data) is the one way to make sure no file keeps it.
                    self._sem.reindex()
            if self._graph_service is not None:
                self._graph_service.rebuild()
            self._engine = None  # its participant cache may hold the name
            _forget.compact(t2)
            preview.pop("curated_entries")  # the result reports counts only
            return preview

        return run("multi", call, tiers=self.enabled_tiers())

    # -- export / import ----------------------------------------------------------------------------
    def export_json(self, path: str | os.PathLike[str] | None = None) -> Envelope:
        """Export every tier as JSON; with ``path`` write it there (data: path and counts), else data is
        the document, with the chunks' stored vectors. Raises StorageError."""

        from hermes_memory.ops import export as _export

        def call() -> dict[str, Any]:
            doc = _export.export_data(self._tier2(), self._curated_store)
            if path is None:
                return doc
            target = Path(v.path("path", path))
            try:
                _export.write_private(target, json.dumps(doc, ensure_ascii=False, sort_keys=True))
            except OSError as exc:
                raise StorageError(f"cannot write export to {target}: {exc}") from exc
            return {"path": str(target), "counts": {t: len(rows) for t, rows in doc["tier2"].items()}}

        return run("multi", call, tiers=self.enabled_tiers())

    def import_json(self, data: Any, merge: bool = True) -> Envelope:
        """Import an export (a dict, or a path to a file) all or nothing, into this scope only. ``merge``
        skips duplicates (same uuid or content hash); without it the home must be empty. Texts without a
        stored vector (the export's or this home's) are queued for embedding and the graph is rebuilt.
        Raises ValidationError (malformed; a reference outside this scope), ThreatDetectedError (a
        flagged curated entry), ConflictError (not empty, no merge; curated limits)."""

        from hermes_memory.ops import importer

        def call() -> dict[str, Any]:
            if not isinstance(merge, bool):
                raise ValidationError("merge must be a boolean")
            t2, curated = self._tier2(), self._curated_store
            if isinstance(data, (str, os.PathLike)):  # read piece by piece: any size in bounded memory
                result = importer.import_file(t2, curated, data, merge=merge, actor=self.actor)
            else:
                result = importer.import_data(t2, curated, data, merge=merge, actor=self.actor)
            if self._graph_service is not None:
                self._graph_service.rebuild()
            self._engine = None
            return result

        return run("multi", call, tiers=self.enabled_tiers())

    # -- backup / restore ---------------------------------------------------------------------------
    def backup(self, dest: str | os.PathLike[str]) -> Envelope:
        """Hot backup (safe while writers run) of Tier 2, the curated files and the graph into the new
        directory ``dest``; vectors are re-derived on restore. Raises ConflictError if ``dest`` is not
        empty, StorageError."""

        from hermes_memory.ops import backup as _backup

        def call() -> dict[str, Any]:
            target = Path(v.path("dest", dest))
            if self._graph_service is not None:
                self._graph_service.save()
            graph_dir = self.config.graph_path if self._graph_service is not None else None
            # A backup is of the whole store (every scope): it restores the home as it was.
            return _backup.backup(
                self._tier2().admin(), self._curated_store, graph_dir, target, profile=self.config.profile
            )

        return run("multi", call, tiers=self.enabled_tiers())

    @staticmethod
    def restore(
        src: str | os.PathLike[str],
        *,
        force: bool = False,
        config: Config | None = None,
        hermes_home: str | os.PathLike[str] | None = None,
        profile: str | None = None,
        **overrides: Any,
    ) -> Envelope:
        """Restore a backup into a home/profile that no MemoryAPI has open, all or nothing (the backup is
        checked completely, staged, then swapped in); refuses to overwrite existing memory unless
        ``force``. data: manifest + consistency check. Raises ValidationError (ThreatDetectedError for a
        flagged curated entry), ConflictError, StorageError (in the envelope)."""

        from hermes_memory.ops import backup as _backup

        def call() -> dict[str, Any]:
            if profile is not None:
                overrides["profile"] = profile
            cfg = config if config is not None else load_config(None, hermes_home=hermes_home, **overrides)
            return _backup.restore(Path(v.path("src", src)), cfg, force=force)

        return run("multi", call)


__all__ = ["OpsMethods"]
