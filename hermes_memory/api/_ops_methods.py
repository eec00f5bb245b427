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
from hermes_memory.errors import NotFoundError, StorageError, ValidationError, VectorStoreBusyError
from hermes_memory.tier1.snapshot import CuratedSnapshot

if TYPE_CHECKING:
    from hermes_memory.graph.service import GraphService
    from hermes_memory.ops import erasure as _erasure_t
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

    def _secret_free_document(self, doc: Any) -> Any:
        """An export document with credentials redacted (config ``security.redact_secrets``): what an
        export writes and what an import stores."""
        if not self.config.security.redact_secrets:
            return doc
        from hermes_memory.ops.redact import redact_document

        redacted, _ = redact_document(doc)
        return redacted

    # -- forget -----------------------------------------------------------------------------------
    def forget(self, id: str, *, confirm: bool = False, include_related: Any = False) -> Envelope:
        """Forget one fact, episode, timeline event, relation or entity (an entity: every mention).

        Without ``confirm=True`` returns the preview (counts per tier, curated entries affected, and for
        an entity the ``related`` names it is also mentioned under) and changes nothing;
        ``include_related`` (True, or a list of related names) adds those. Raises (in the envelope)
        ValidationError for an empty id or a bad ``include_related``, NotFoundError for an unknown id;
        VectorStoreBusyError (nothing deleted) while another process holds the vector store.
        """
        from hermes_memory.ops import forget as _forget

        curated = self._curated_store

        def plan(conn: Any, t2: Tier2) -> _forget.ForgetPlan:
            return _forget.plan_uuid(conn, t2, curated, id, include=_include(include_related))

        return self._forget_run(plan, confirm)

    def forget_entity(self, name: str, *, confirm: bool = False, include_related: Any = False) -> Envelope:
        """Forget an entity by name or alias: every row, entry, vector, graph node and queued turn that
        mentions it. Preview unless ``confirm=True``; the preview's ``related`` lists other names it is
        mentioned under (first name, title + surname, possessives, aliases given in the text, related
        entities) with their row counts, and ``include_related`` (True, or a list of those names) forgets
        them too. Raises ValidationError for an empty name or a bad ``include_related``, NotFoundError
        when nothing mentions it, VectorStoreBusyError (nothing deleted) while another process holds the
        vector store."""

        from hermes_memory.ops import forget as _forget

        def plan(conn: Any, t2: Tier2) -> _forget.ForgetPlan:
            clean = v.text("name", name, max_chars=200).strip()
            include = _include(include_related)
            return _forget.plan_entity(conn, t2, self._curated_store, clean, include=include)

        return self._forget_run(plan, confirm)

    def _forget_run(self, planner: Any, confirm: Any) -> Envelope:
        from hermes_memory.ops import erasure as _erasure
        from hermes_memory.ops import forget as _forget

        def call() -> dict[str, Any]:
            if not isinstance(confirm, bool):
                raise ValidationError("confirm must be a boolean")
            t2 = self._tier2()
            t2.ingest_queue.absorb()  # turns still in the inbox must be found (and forgotten) too
            if confirm:
                self._finish_erasures()  # one a crash interrupted is finished before a new one starts
                self._refuse_when_engine_busy()
            with t2.db.atomic() as conn:
                plan: _forget.ForgetPlan = planner(conn, t2)
                if plan.empty():
                    raise NotFoundError("nothing in memory matches; nothing to forget")
                if confirm:
                    # What is left to purge after this transaction is recorded in it: a crash after the
                    # commit leaves a record that the next open (or doctor --repair) finishes.
                    _erasure.record(conn, plan, actor=self.actor, scope=t2.view.own)
                    _forget.execute(conn, t2, plan, actor=self.actor)
            preview = {
                "confirmed": confirm,
                "target": plan.target,
                "counts": plan.counts(),
                "curated_entries": {s: list(e) for s, e in plan.curated.items()},
            }
            if plan.related:
                preview["related"] = plan.related
            if not confirm:
                return preview
            left = sorted({step for r in self._finish_erasures() for step in r["left"]})
            self._engine = None  # its participant cache may hold the name
            preview.pop("curated_entries")  # the result reports counts only
            if left:
                preview["unfinished"] = left
            return preview

        return run("multi", call, tiers=self.enabled_tiers())

    def _refuse_when_engine_busy(self) -> None:
        """A forget needs to rewrite the vector engine's files: refuse before deleting anything while
        another process holds them (that process can run the forget, or the next one after it closes)."""
        holder = None if self._sem is None else self._sem.engine_holder()
        if holder is not None:
            raise VectorStoreBusyError(
                f"the vector store is open in another process{f' (pid {holder})' if holder else ''}; nothing "
                "was deleted. Forget from that process (e.g. the memory tool's forget action) or close it "
                "and run forget again"
            )

    def _erasure_parts(self) -> _erasure_t.Parts:
        from hermes_memory.ops import erasure as _erasure

        def recapture() -> None:
            if self._curated_store is not None:
                self._snapshot = CuratedSnapshot.capture(self._curated_store)

        return _erasure.Parts(
            tier2=self._tier2(), curated=self._curated_store, semantic=self._sem, graph=self._graph_service,
            graph_path=self.config.graph_path, on_curated=recapture,
        )  # fmt: skip

    def _finish_erasures(self) -> list[dict[str, Any]]:
        """Finish every recorded erasure (cheap when none is unfinished); returns the steps still left."""
        from hermes_memory.ops import erasure as _erasure

        if not _erasure.unfinished(self._tier2()):
            return []
        return _erasure.finish(self._erasure_parts())

    def finish_erasures(self) -> Envelope:
        """Finish forgets a crash interrupted or another process's vector store held up (``doctor
        --repair`` calls this). data: [{id, target, left: [steps still to do]}]. Raises StorageError."""
        return run("multi", self._finish_erasures, tiers=self.enabled_tiers())

    # -- export / import ----------------------------------------------------------------------------
    def export_json(self, path: str | os.PathLike[str] | None = None) -> Envelope:
        """Export every tier as JSON; with ``path`` write it there (data: path and counts), else data is
        the document, with the chunks' stored vectors. Raises StorageError."""

        from hermes_memory.ops import export as _export

        def call() -> dict[str, Any]:
            doc: dict[str, Any] = self._secret_free_document(
                _export.export_data(self._tier2(), self._curated_store)
            )
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
        from hermes_memory.ops.redact import redact_import_item

        def call() -> dict[str, Any]:
            if not isinstance(merge, bool):
                raise ValidationError("merge must be a boolean")
            t2, curated = self._tier2(), self._curated_store
            redact = redact_import_item if self.config.security.redact_secrets else None
            if isinstance(data, (str, os.PathLike)):  # read piece by piece: any size in bounded memory
                result = importer.import_file(
                    t2, curated, data, merge=merge, transform=redact, actor=self.actor
                )
            else:
                result = importer.import_data(
                    t2, curated, data, merge=merge, transform=redact, actor=self.actor
                )
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
            result: dict[str, Any] = _backup.backup(
                self._tier2().admin(), self._curated_store, graph_dir, target, profile=self.config.profile
            )
            _owner_only(target)  # SQLite's backup file, copies and the manifest take the umask's mode
            return result

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
                overrides["profile"] = v.profile_name("profile", profile)
            cfg = config if config is not None else load_config(None, hermes_home=hermes_home, **overrides)
            result: dict[str, Any] = _backup.restore(Path(v.path("src", src)), cfg, force=force)
            # Copies keep the backup's modes (an old backup's 0644): the restored store is owner-only.
            for path in (cfg.db_path, Path(f"{cfg.db_path}-wal"), Path(f"{cfg.db_path}-shm"), cfg.graph_path):
                _owner_only(path)
            return result

        return run("multi", call)


def _include(value: Any) -> bool | list[str]:
    """Validate ``include_related``: a bool, or a list of names from the preview's ``related``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (list, tuple)) and value and len(value) <= 100:
        return [v.text("include_related item", item, max_chars=200).strip() for item in value]
    raise ValidationError(
        "include_related must be a boolean or a non-empty list of at most 100 related names"
    )


def _owner_only(path: Path) -> None:
    """Make ``path`` (and what is under it) 0600/0700. Raises StorageError."""
    from hermes_memory.security.permissions import tighten_tree

    try:
        tighten_tree(path)
    except OSError as exc:
        raise StorageError(f"cannot make {path} private to its owner: {exc}") from exc


__all__ = ["OpsMethods"]
