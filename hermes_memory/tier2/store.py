"""Tier 2 opened as one unit: the database, its migrations, and the per-table stores."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from hermes_memory.tier2.audit import AuditLog
from hermes_memory.tier2.chunks import ChunkStore, EmbedQueue
from hermes_memory.tier2.db import Database
from hermes_memory.tier2.entities import EntityStore
from hermes_memory.tier2.episodes import EpisodeStore
from hermes_memory.tier2.facts import FactStore
from hermes_memory.tier2.ingest_queue import IngestQueue
from hermes_memory.tier2.relations import RelationStore
from hermes_memory.tier2.schema import current_version, migrate
from hermes_memory.tier2.timeline import TimelineStore


@dataclass
class Tier2:
    db: Database
    audit: AuditLog
    facts: FactStore
    entities: EntityStore
    relations: RelationStore
    timeline: TimelineStore
    episodes: EpisodeStore
    chunks: ChunkStore
    embed_queue: EmbedQueue
    ingest_queue: IngestQueue

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        wal: bool = True,
        busy_timeout_ms: int = 30000,
        auto_dedupe: bool = True,
    ) -> Tier2:
        """Open (creating and migrating as needed) the Tier 2 database at ``path``.

        Raises StorageError when the file is not SQLite, is read-only, or cannot be created.
        """
        db = Database(path, wal=wal, busy_timeout_ms=busy_timeout_ms)
        try:
            migrate(db)
        except BaseException:
            db.close()
            raise
        audit = AuditLog(db)
        queue = EmbedQueue(db)
        return cls(
            db=db,
            audit=audit,
            facts=FactStore(db, audit, auto_dedupe=auto_dedupe),
            entities=EntityStore(db, audit),
            relations=RelationStore(db, audit),
            timeline=TimelineStore(db, audit),
            episodes=EpisodeStore(db, audit),
            chunks=ChunkStore(db, queue),
            embed_queue=queue,
            ingest_queue=IngestQueue(db),
        )

    def stats(self) -> dict[str, Any]:
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
            "db_path": str(self.db.path),
            "db_bytes": self.db.path.stat().st_size if self.db.path.exists() else 0,
        }

    def close(self) -> None:
        self.db.close()
