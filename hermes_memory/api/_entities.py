"""MemoryAPI's entities and relations (Tier 2) and the knowledge graph derived from them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hermes_memory import validation as v
from hermes_memory.api import _write_checks as c
from hermes_memory.api._edge import EnvelopeEdge
from hermes_memory.api.envelope import Envelope
from hermes_memory.errors import ValidationError

if TYPE_CHECKING:
    from hermes_memory.graph.nx_store import KnowledgeGraph


class EntitiesAPI(EnvelopeEdge):
    """Entities, relations (``Memory.knowledge``) and the graph (``Memory.graph``)."""

    # -- Tier 2: entities and relations (Memory.knowledge) ----------------------------------------
    def entity_ensure(
        self,
        name: str,
        entity_type: str,
        aliases: Sequence[str] | None = None,
        description: str | None = None,
    ) -> Envelope:
        """Create an entity or return the existing one with this name/alias and type."""

        def call() -> dict[str, Any]:
            ensured = self._core.knowledge.ensure_entity(
                v.text("name", name, max_chars=200).strip(),
                v.choice("entity_type", entity_type, v.ENTITY_TYPES),
                aliases=v.string_list("aliases", aliases, max_chars=200),
                description=v.optional_text("description", description, max_chars=self._core.tiers.max_chars),
            )
            return {**ensured.entity.to_dict(), "created": ensured.created}

        return self._run("tier2", call)

    def entity_link(
        self,
        from_name: str,
        to_name: str,
        relation: str,
        strength: float = 1.0,
        *,
        evidence_fact_id: str | None = None,
    ) -> Envelope:
        """Relate two existing entities (by name, alias or uuid) with a typed, weighted edge."""

        def call() -> dict[str, Any]:
            return self._core.knowledge.link(
                v.text("from_name", from_name, max_chars=200).strip(),
                v.text("to_name", to_name, max_chars=200).strip(),
                v.text("relation", relation, max_chars=100).strip().lower().replace(" ", "_"),
                strength=v.unit_interval("strength", strength),
                evidence_fact_id=v.optional_text("evidence_fact_id", evidence_fact_id, max_chars=100),
            ).to_dict()

        return self._run("tier2", call)

    def entity_query(
        self, name: str | None = None, entity_type: str | None = None, limit: int = 10
    ) -> Envelope:
        """Entities by name/alias (case-insensitive, then full-text) and/or type."""

        def call() -> list[dict[str, Any]]:
            text = None if name is None else v.text("name", name, max_chars=200, allow_empty=True).strip()
            found = self._core.knowledge.query_entities(
                text or None,
                entity_type=None
                if entity_type is None
                else v.choice("entity_type", entity_type, v.ENTITY_TYPES),
                limit=v.positive_int("limit", limit, maximum=c.MAX_LIMIT),
            )
            return [match.to_dict() for match in found]

        return self._run("tier2", call)

    # -- the knowledge graph (derived from Tier 2) --------------------------------------------------
    def knowledge_graph(self) -> KnowledgeGraph:
        """The loaded graph itself (for drawing and export). Raises ConfigError if the graph is off."""
        return self._core.graph.knowledge_graph()

    def graph_traverse(
        self, start_entity: str, depth: int = 2, relation_filter: str | None = None
    ) -> Envelope:
        """Entities reachable from an entity (name, alias or uuid) within ``depth`` hops, both directions."""

        def call() -> dict[str, Any]:
            start = v.text("start_entity", start_entity, max_chars=200).strip()
            if isinstance(depth, bool) or not isinstance(depth, int):
                raise ValidationError(f"depth must be an integer, got {type(depth).__name__}")
            rel = v.optional_text("relation_filter", relation_filter, max_chars=100)
            return self._core.graph.traverse(start, depth, rel)

        return self._run("graph", call)

    def graph_shortest_path(self, from_entity: str, to_entity: str) -> Envelope:
        """The fewest-hops path between two entities; an empty list when none exists."""

        def call() -> list[dict[str, Any]]:
            src = v.text("from_entity", from_entity, max_chars=200).strip()
            return self._core.graph.shortest_path(src, v.text("to_entity", to_entity, max_chars=200).strip())

        return self._run("graph", call)

    def graph_central_entities(self, limit: int = 10, algorithm: str | None = None) -> Envelope:
        """The most central entities (configured algorithm: betweenness, pagerank or degree)."""

        def call() -> list[dict[str, Any]]:
            from hermes_memory.core.graph import CENTRALITY_ALGORITHMS

            lim = v.positive_int("limit", limit, maximum=1000)
            algo = self.config.graph.centrality_algorithm if algorithm is None else algorithm
            return self._core.graph.central_entities(lim, v.choice("algorithm", algo, CENTRALITY_ALGORITHMS))

        return self._run("graph", call)

    def graph_communities(self) -> Envelope:
        """Communities of entities (Louvain, seeded: the same graph gives the same answer)."""
        return self._run("graph", self._core.graph.communities)

    def graph_rebuild(self) -> Envelope:
        """Rebuild the graph from Tier 2 and save it."""
        return self._run("graph", self._core.graph.rebuild)

    def graph_spread(self, seeds: list[str], max_hops: int = 3) -> Envelope:
        """Spreading activation from seed entities (names, aliases or uuids): related entities by score."""

        def call() -> list[dict[str, Any]]:
            refs = v.string_list("seeds", seeds, max_chars=200)
            if not refs:
                raise ValidationError("seeds must name at least one entity")
            hops = v.positive_int("max_hops", max_hops, maximum=6)
            return [a.to_dict() for a in self._core.graph.spread([ref.strip() for ref in refs], hops)]

        return self._run("graph", call)


__all__ = ["EntitiesAPI"]
