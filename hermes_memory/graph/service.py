"""The profile's knowledge graph kept in step with Tier 2: loaded lazily, rebuilt when its file is
missing, corrupt or stale, updated incrementally on every entity/relation write, saved atomically."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from hermes_memory.graph.nx_store import KnowledgeGraph, graph_fingerprint
from hermes_memory.records import Entity, Relation
from hermes_memory.tier2 import Tier2


class GraphService:
    def __init__(self, tier2: Tier2, directory: Path):
        self._tier2 = tier2
        self._directory = directory
        self._kg: KnowledgeGraph | None = None
        self._dirty = False
        self._lock = threading.RLock()
        self.last_load: dict[str, Any] | None = None

    def fingerprint(self) -> str:
        row = self._tier2.db.query_one(
            "SELECT (SELECT count(*) FROM entities) AS e, (SELECT count(*) FROM relations) AS r, "
            "max(coalesce((SELECT max(last_seen) FROM entities), 0), "
            "coalesce((SELECT max(updated_at) FROM relations), 0)) AS t"
        )
        assert row is not None
        return graph_fingerprint(int(row["e"]), int(row["r"]), float(row["t"]))

    @property
    def graph(self) -> KnowledgeGraph:
        """The graph, loaded from its file or rebuilt from Tier 2 when the file is unusable or stale."""
        with self._lock:
            if self._kg is None:
                kg = KnowledgeGraph(self._directory)
                expected = self.fingerprint()
                result = kg.load(expected)
                self.last_load = result.to_dict()
                self._kg = kg
                if not result.ok:
                    self.rebuild()
            return self._kg

    def rebuild(self) -> dict[str, Any]:
        """Rebuild from Tier 2 (the source of truth) and save; returns the build report."""
        with self._lock:
            kg = self._kg if self._kg is not None else KnowledgeGraph(self._directory)
            report = kg.rebuild(self._tier2.entities.all(), self._tier2.relations.all())
            self._kg = kg
            kg.save(self.fingerprint())
            self._dirty = False
            return report

    # -- incremental updates after Tier 2 writes ------------------------------------------------
    def entity_changed(self, entity: Entity) -> None:
        with self._lock:
            if self._kg is not None:
                self._kg.upsert_entity(entity)
                self._dirty = True

    def relation_changed(self, relation: Relation) -> None:
        with self._lock:
            if self._kg is not None:
                self._kg.upsert_relation(relation)
                self._dirty = True

    def entity_removed(self, uuid: str) -> None:
        with self._lock:
            if self._kg is not None:
                self._kg.remove_entity(uuid)
                self._dirty = True

    def save(self) -> None:
        """Persist pending incremental changes (on close; a crash before it only costs a rebuild)."""
        with self._lock:
            if self._kg is not None and self._dirty:
                self._kg.save(self.fingerprint())
                self._dirty = False

    def reinforce(self, entity_uuids: list[str]) -> list[tuple[str, float]]:
        """Hebbian: strengthen relations among co-recalled entities, in Tier 2 first, then the graph."""
        with self._lock:
            updates = self.graph.reinforce(entity_uuids, apply=False)
            if updates:
                self._tier2.relations.set_strengths(updates)
                for relation_uuid, strength in updates:
                    self.graph.set_strength(relation_uuid, strength)
                self._dirty = True
            return updates
