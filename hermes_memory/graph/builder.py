"""Turn Tier 2 records into graph nodes/edges, and keep the name/alias index used to resolve references.

The same two attribute functions serve the full rebuild and every incremental upsert, so the two paths
cannot drift apart (the incremental == rebuild test checks it anyway).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from hermes_memory.errors import ValidationError
from hermes_memory.records import Entity, Relation

# Relation types that read the same in both directions. Relation records carry no direction flag, so the
# edge attribute ``bidirectional`` (seed 7.2) is derived from the type; traversal ignores direction anyway.
SYMMETRIC_RELATION_TYPES: frozenset[str] = frozenset(
    {
        "knows",
        "related_to",
        "connected_to",
        "similar_to",
        "same_as",
        "married_to",
        "sibling_of",
        "friend_of",
        "colleague_of",
        "partner_of",
        "works_with",
    }
)


def normalise_key(text: str) -> str:
    """Case- and whitespace-insensitive lookup key for names and aliases."""
    return " ".join(text.split()).casefold()


def entity_node_attrs(entity: Entity) -> dict[str, Any]:
    """Node attributes for an entity (seed 7.1); raises ValidationError on an empty uuid or name."""
    if not entity.uuid:
        raise ValidationError("entity uuid must not be empty")
    if not entity.name or not entity.name.strip():
        raise ValidationError(f"entity {entity.uuid}: name must not be empty")
    return {
        "node_type": "entity",
        "uuid": entity.uuid,
        "name": entity.name,
        "entity_type": entity.entity_type,
        # weight is the importance the record itself carries (how often the entity was seen), not a
        # centrality: a centrality stored on nodes would change on every write elsewhere in the graph.
        "weight": float(max(1, entity.occurrence_count)),
        "occurrence_count": int(entity.occurrence_count),
        "created_at": float(entity.first_seen),
        "last_seen": float(entity.last_seen),
        "aliases": [a for a in entity.aliases if a and a.strip()],
        "description": entity.description,
        "metadata": dict(entity.metadata),
    }


def relation_edge_attrs(relation: Relation) -> dict[str, Any]:
    """Edge attributes for a relation (seed 7.2); raises ValidationError on a bad uuid or strength."""
    if not relation.uuid:
        raise ValidationError("relation uuid must not be empty")
    if not relation.from_entity_id or not relation.to_entity_id:
        raise ValidationError(f"relation {relation.uuid}: both endpoints are required")
    return {
        "uuid": relation.uuid,
        "relation_type": relation.relation_type,
        "strength": clamp_strength(relation.strength, relation.uuid),
        "evidence": relation.evidence_fact_id,
        "first_seen": float(relation.created_at),
        "last_seen": float(relation.updated_at),
        "bidirectional": normalise_key(relation.relation_type) in SYMMETRIC_RELATION_TYPES,
    }


def clamp_strength(value: float, what: str) -> float:
    """Strengths live in [0, 1] (Tier 2 schema); raises ValidationError on NaN/inf."""
    strength = float(value)
    if not math.isfinite(strength):
        raise ValidationError(f"relation {what}: strength must be finite, got {value!r}")
    return min(1.0, max(0.0, strength))


class NameIndex:
    """Maps normalised names and aliases to entity uuids (several entities may share a name)."""

    def __init__(self) -> None:
        self._by_name: dict[str, set[str]] = {}
        self._by_alias: dict[str, set[str]] = {}
        self._keys_of: dict[str, tuple[str, tuple[str, ...]]] = {}

    def add(self, uuid: str, name: str, aliases: Iterable[str]) -> None:
        self.remove(uuid)
        name_key = normalise_key(name)
        alias_keys = tuple(sorted({normalise_key(a) for a in aliases} - {name_key, ""}))
        self._keys_of[uuid] = (name_key, alias_keys)
        self._by_name.setdefault(name_key, set()).add(uuid)
        for key in alias_keys:
            self._by_alias.setdefault(key, set()).add(uuid)

    def remove(self, uuid: str) -> None:
        keys = self._keys_of.pop(uuid, None)
        if keys is None:
            return
        name_key, alias_keys = keys
        _discard(self._by_name, name_key, uuid)
        for key in alias_keys:
            _discard(self._by_alias, key, uuid)

    def clear(self) -> None:
        self._by_name.clear()
        self._by_alias.clear()
        self._keys_of.clear()

    def name_key(self, uuid: str) -> str:
        return self._keys_of[uuid][0]

    def by_name(self, text: str) -> set[str]:
        return set(self._by_name.get(normalise_key(text), ()))

    def by_alias(self, text: str) -> set[str]:
        return set(self._by_alias.get(normalise_key(text), ()))

    def keys(self) -> list[str]:
        return list(self._by_name) + [k for k in self._by_alias if k not in self._by_name]

    def uuids_for_key(self, key: str) -> set[str]:
        return self._by_name.get(key, set()) | self._by_alias.get(key, set())


def _discard(table: dict[str, set[str]], key: str, uuid: str) -> None:
    bucket = table.get(key)
    if bucket is None:
        return
    bucket.discard(uuid)
    if not bucket:
        del table[key]


@dataclass(slots=True)
class BuildReport:
    """What a full rebuild did; relations whose endpoints are missing are skipped, not fatal."""

    entities: int = 0
    relations: int = 0
    skipped_relations: list[str] = field(default_factory=list)
    duration_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "entities": self.entities,
            "relations": self.relations,
            "skipped_relations": list(self.skipped_relations),
            "skipped_count": len(self.skipped_relations),
            "duration_ms": round(self.duration_ms, 3),
        }


@dataclass(slots=True)
class BuiltGraph:
    """The pieces a KnowledgeGraph is made of, produced in one pass over the records."""

    nodes: dict[str, dict[str, Any]]
    edges: dict[str, tuple[str, str, dict[str, Any]]]
    report: BuildReport


def build_from_records(entities: Iterable[Entity], relations: Iterable[Relation]) -> BuiltGraph:
    """Collect node and edge attributes from records; later duplicates of a uuid win (like an upsert).

    Raises ValidationError if a record is malformed (empty uuid/name, non-finite strength).
    """
    started = time.perf_counter()
    nodes: dict[str, dict[str, Any]] = {}
    for entity in entities:
        nodes[entity.uuid] = entity_node_attrs(entity)
    edges: dict[str, tuple[str, str, dict[str, Any]]] = {}
    skipped: list[str] = []
    for relation in relations:
        attrs = relation_edge_attrs(relation)
        if relation.from_entity_id not in nodes or relation.to_entity_id not in nodes:
            # A dangling relation (its entity was deleted without cascade) cannot be an edge; report it.
            skipped.append(relation.uuid)
            edges.pop(relation.uuid, None)
            continue
        edges[relation.uuid] = (relation.from_entity_id, relation.to_entity_id, attrs)
    report = BuildReport(
        entities=len(nodes),
        relations=len(edges),
        skipped_relations=sorted(set(skipped) - set(edges)),
        duration_ms=(time.perf_counter() - started) * 1000.0,
    )
    return BuiltGraph(nodes=nodes, edges=edges, report=report)


__all__ = [
    "SYMMETRIC_RELATION_TYPES",
    "BuildReport",
    "BuiltGraph",
    "NameIndex",
    "build_from_records",
    "clamp_strength",
    "entity_node_attrs",
    "normalise_key",
    "relation_edge_attrs",
]
