"""Tier 2 opened as one unit: the database, its migrations, and the per-table stores, all bound to one
``ScopeView`` (reads filter by it, writes land in it; see ``hermes_memory.scoping``)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from hermes_memory.scoping import ScopeView
from hermes_memory.tier2 import verdicts
from hermes_memory.tier2.audit import AuditLog
from hermes_memory.tier2.chunks import ChunkStore, EmbedQueue
from hermes_memory.tier2.db import Database
from hermes_memory.tier2.engines import open_database
from hermes_memory.tier2.entities import EntityStore
from hermes_memory.tier2.episodes import EpisodeStore
from hermes_memory.tier2.fact_reads import AccessLog
from hermes_memory.tier2.facts import FactStore
from hermes_memory.tier2.ingest_queue import IngestQueue
from hermes_memory.tier2.relations import RelationStore
from hermes_memory.tier2.schema import current_version, migrate
from hermes_memory.tier2.timeline import TimelineStore
from hermes_memory.tier2.turn_inbox import TurnInbox, inbox_path


@dataclass
class Tier2:
    db: Database
    view: ScopeView
    audit: AuditLog
    facts: FactStore
    entities: EntityStore
    relations: RelationStore
    timeline: TimelineStore
    episodes: EpisodeStore
    chunks: ChunkStore
    embed_queue: EmbedQueue
    ingest_queue: IngestQueue
    _admin: Tier2 | None = field(default=None, repr=False, compare=False)
    inbox: TurnInbox | None = field(default=None, repr=False, compare=False)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        wal: bool = True,
        busy_timeout_ms: int = 30000,
        auto_dedupe: bool = True,
        view: ScopeView | None = None,
        max_entities: int | None = None,
        url: str | None = None,
        profile: str = "default",
    ) -> Tier2:
        """Open (creating and migrating as needed) the Tier 2 database at ``path``, bound to ``view``
        (default: the single scope "default"); ``max_entities`` caps the entities of a scope (config
        ``tier2.max_entities``, see ``EntityStore.ensure``; None: no cap). With ``url`` (a PostgreSQL
        server's, config ``tier2.url``) the store lives there and ``path`` only says where this host
        keeps its local files (the turn inbox), and the store is the profile's own schema there.

        Raises StorageError when the file is not SQLite, is read-only, or cannot be created, or when the
        server is unreachable, refuses the credentials or holds a newer schema.
        """
        db = open_database(path, url, wal=wal, busy_timeout_ms=busy_timeout_ms, profile=profile)
        try:
            migrate(db)
            verdicts.refresh(db)  # verdicts of an older threat detector: expired, re-scanned (bounded)
        except BaseException:
            db.close()
            raise
        inbox = TurnInbox(inbox_path(path), wal=wal, busy_timeout_ms=busy_timeout_ms)  # opens on first use
        bound = cls._bind(db, view if view is not None else ScopeView.default(), auto_dedupe, inbox)
        bound.entities.max_entities = max_entities
        return bound

    @classmethod
    def _bind(
        cls,
        db: Database,
        view: ScopeView,
        auto_dedupe: bool,
        inbox: TurnInbox | None = None,
        accesses: AccessLog | None = None,
    ) -> Tier2:
        audit = AuditLog(db, view)
        queue = EmbedQueue(db, view)
        return cls(
            db=db,
            view=view,
            audit=audit,
            facts=FactStore(db, audit, view, auto_dedupe=auto_dedupe, accesses=accesses or AccessLog()),
            entities=EntityStore(db, audit, view),
            relations=RelationStore(db, audit, view),
            timeline=TimelineStore(db, audit, view),
            episodes=EpisodeStore(db, audit, view),
            chunks=ChunkStore(db, queue, view),
            embed_queue=queue,
            ingest_queue=IngestQueue(db, view, inbox),
            inbox=inbox,
        )

    def scoped(self, view: ScopeView) -> Tier2:
        """The same database (same connection) seen through another view."""
        bound = self._bind(self.db, view, self.facts.auto_dedupe, self.inbox, self.facts.accesses)
        bound.entities.max_entities = self.entities.max_entities
        return bound

    def admin(self) -> Tier2:
        """Store-wide access (every scope) for maintenance jobs, doctor and backup; one per Tier 2. Never
        hand this to code that serves an agent: it reads every scope and cannot create records."""
        if self.view.admin:
            return self
        if self._admin is None:
            self._admin = self.scoped(ScopeView.all())
        return self._admin

    def stats(self) -> dict[str, Any]:
        """Row counts of the view (store-wide for admin), schema version and file size."""
        return {
            "facts": self.facts.count(),
            "facts_active": self.facts.count(active_only=True),
            "entities": self.entities.count(),
            "relations": self.relations.count(),
            "timeline_events": self.timeline.count(),
            "episodes": self.episodes.count(),
            "chunks": self.chunks.count(),
            "embed_pending": self.embed_queue.count(),
            "ingest_pending": self.ingest_queue.count(),
            "audit_entries": self.audit.count(),
            "schema_version": current_version(self.db),
            "db_engine": self.db.engine,
            "db_path": self.db.location,
            "db_bytes": self.db.size_bytes(),
        }

    def flush_accesses(self) -> int:
        """Write the fact uses recall recorded in memory (``FactStore.note_recalled``) in one
        transaction; no SQL when there are none. The writer side calls it: the background worker's step,
        ``flush``, close. Returns how many facts were updated; raises StorageError."""
        return self.facts.accesses.flush(self.db)

    def close(self) -> None:
        try:
            if not self.db.closed:
                self.flush_accesses()
        finally:
            if self.inbox is not None:
                self.inbox.close()
            self.db.close()

    def has_unfinished_erasures(self) -> bool:
        """Whether a recorded forget (any scope) still has steps left: one small indexed query, run
        at every open so a forget a crash interrupted is finished. Raises StorageError."""
        return self.db.query_one("SELECT 1 FROM erasures WHERE finished_at IS NULL LIMIT 1") is not None


__all__ = [
    "Tier2",
]
