"""The profile's knowledge graph kept in step with Tier 2: loaded lazily, rebuilt when its file is
missing, corrupt or stale, updated incrementally on every entity/relation write, saved atomically.

NetworkX (``graph.nx_store``) is imported on the first graph use, not with this module: a process that
never touches the graph (a one-shot ``hermes -z``) does not pay ~0.2 s for it.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_memory.records import Entity, Relation
from hermes_memory.tier2.graph_marks import graph_state, newest_erasure

if TYPE_CHECKING:
    from hermes_memory.graph.nx_store import KnowledgeGraph
    from hermes_memory.tier2 import Tier2

# Another process sharing the profile writes entities this process's graph has not seen; a query that
# meets one rebuilds the graph from Tier 2, at most this often (a rebuild of 10k entities takes ~1 s).
REFRESH_S = 30.0
HOUR_S = 3600.0
_clock = time.monotonic  # the age of a loaded graph (``auto_rebuild_interval_hours``); tests set it


def view_directory(directory: Path, tier2: Tier2) -> Path:
    """Where the graph of ``tier2``'s view lives: each readable set of scopes has its own graph file, so
    a graph query never sees another scope's nodes; the default scope keeps the configured directory."""
    key = tier2.view.key
    return directory if not key else directory.with_name(f"{directory.name}-{key}")


class GraphService:
    """The graph of one ``ScopeView``: built from the view's entities and relations only.

    ``max_nodes`` (config ``graph.max_nodes``; None: no cap): past it the graph holds the entities seen
    most often (then most recently), a new entity joins only at a rebuild that ranks it in, and graph
    queries for a left-out entity answer as for an unknown one; the rebuild report says how many were left
    out. ``rebuild_interval_h`` (config ``graph.auto_rebuild_interval_hours``; 0: never): a graph this
    process has held (loaded, or kept up incrementally) for longer is rebuilt from Tier 2 at its next use,
    so drift in a long-lived process (a gateway) is repaired.
    """

    def __init__(
        self, tier2: Tier2, directory: Path, *, max_nodes: int | None = None, rebuild_interval_h: float = 0.0
    ):
        self._tier2 = tier2
        self._directory = view_directory(directory, tier2)
        self._max_nodes = max_nodes
        self._interval_s = rebuild_interval_h * HOUR_S
        self._built_at = 0.0
        self._full = False  # at max_nodes: a missing entity is left out, not a reason to rebuild
        self._kg: KnowledgeGraph | None = None
        self._dirty = False
        self._lock = threading.RLock()
        self._refresh_after = 0.0
        self._erasures = -1  # the newest erasure when the graph was loaded or built (see ``save``)
        self.last_load: dict[str, Any] | None = None

    @property
    def directory(self) -> Path:
        """The directory of this view's graph file."""
        return self._directory

    def tier2_counts(self) -> tuple[int, int]:
        """(entities, relations) in Tier 2 as this graph's view sees them."""
        return self._tier2.entities.count(), self._tier2.relations.count()

    def fingerprint(self) -> str:
        state = graph_state(self._tier2.db, self._tier2.view)
        from hermes_memory.graph.persistence import graph_fingerprint

        return graph_fingerprint(state.entities, state.relations, state.last_change)

    @property
    def graph(self) -> KnowledgeGraph:
        """The graph, loaded from its file or rebuilt from Tier 2 when the file is unusable or stale."""
        with self._lock:
            if self._kg is None:
                from hermes_memory.graph.nx_store import KnowledgeGraph

                kg = KnowledgeGraph(self._directory)
                self._erasures = self._newest_erasure()
                expected = self.fingerprint()
                result = kg.load(expected)
                self.last_load = result.to_dict()
                self._kg = kg
                self._built_at = _clock()
                self._full = self._max_nodes is not None and kg.entity_count >= self._max_nodes
                if not result.ok:
                    self.rebuild()
            elif self._newest_erasure() != self._erasures:
                self.rebuild()  # another process forgot something: its nodes must not answer here
            elif self._interval_s > 0 and _clock() - self._built_at >= self._interval_s:
                self.rebuild()  # held for auto_rebuild_interval_hours: rebuilt from the source of truth
            return self._kg

    def rebuild(self) -> dict[str, Any]:
        """Rebuild from Tier 2 (the source of truth) and save; returns the build report."""
        from hermes_memory.graph.nx_store import KnowledgeGraph

        with self._lock:
            kg = self._kg if self._kg is not None else KnowledgeGraph(self._directory)
            self._erasures = self._newest_erasure()
            entities, relations = self._tier2.entities.all(), self._tier2.relations.all()
            left_out = 0
            if self._max_nodes is not None and len(entities) > self._max_nodes:
                ranked = sorted(entities, key=lambda e: (e.occurrence_count, e.last_seen or 0.0))[::-1]
                entities = ranked[: self._max_nodes]
                left_out = len(ranked) - len(entities)
                kept = {e.uuid for e in entities}
                relations = [r for r in relations if r.from_entity_id in kept and r.to_entity_id in kept]
            report = kg.rebuild(entities, relations)
            report["left_out_entities"] = left_out
            report["max_nodes"] = self._max_nodes
            self._kg = kg
            self._built_at = _clock()
            self._full = self._max_nodes is not None and len(entities) >= self._max_nodes
            kg.save(self.fingerprint())
            self._dirty = False
            return report

    def present(self, uuids: list[str]) -> list[str]:
        """The given entity uuids the graph holds, after a rebuild if some are missing (written by
        another process; see REFRESH_S). Raises StorageError when Tier 2 cannot be read."""
        with self._lock:
            kg = self.graph
            missing = any(u not in kg for u in uuids)
            if missing and not self._full and time.monotonic() >= self._refresh_after:
                self._refresh_after = time.monotonic() + REFRESH_S
                self.rebuild()
                kg = self.graph
            return [u for u in uuids if u in kg]

    # -- incremental updates after Tier 2 writes ------------------------------------------------
    def entity_changed(self, entity: Entity) -> None:
        with self._lock:
            if self._kg is not None:
                capped = self._max_nodes is not None and self._kg.entity_count >= self._max_nodes
                if capped and entity.uuid not in self._kg:
                    self._full = True
                    return  # left out until a rebuild ranks it in (graph.max_nodes)
                self._kg.upsert_entity(entity)
                self._dirty = True

    def relation_changed(self, relation: Relation) -> None:
        with self._lock:
            if self._kg is not None:
                if relation.from_entity_id not in self._kg or relation.to_entity_id not in self._kg:
                    return  # an end left out by graph.max_nodes
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
                if self._newest_erasure() != self._erasures:
                    # Another process forgot something since this graph was loaded: its nodes may include
                    # what was forgotten, and the file must not bring it back.
                    self.rebuild()
                    return
                self._kg.save(self.fingerprint())
                self._dirty = False

    def _newest_erasure(self) -> int:
        return newest_erasure(self._tier2.db)

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


__all__ = [
    "REFRESH_S",
    "GraphService",
    "view_directory",
]
