"""MemoryAPI methods of the knowledge graph (derived from Tier 2)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_memory import validation as v
from hermes_memory.api.envelope import Envelope, run
from hermes_memory.errors import ValidationError

if TYPE_CHECKING:
    from hermes_memory.graph.nx_store import KnowledgeGraph
    from hermes_memory.graph.service import GraphService

_ALGORITHMS = {"betweenness", "pagerank", "degree"}


class GraphMethods:
    """Mixed into MemoryAPI; expects ``_graph()`` and ``config``."""

    config: Any

    def _graph(self) -> GraphService:
        raise NotImplementedError

    def knowledge_graph(self) -> KnowledgeGraph:
        """The loaded graph itself (for drawing and export). Raises ConfigError if the graph is off."""
        return self._graph().graph

    def graph_traverse(
        self, start_entity: str, depth: int = 2, relation_filter: str | None = None
    ) -> Envelope:
        """Entities reachable from an entity (name, alias or uuid) within ``depth`` hops, both directions."""

        def call() -> dict[str, Any]:
            start = v.text("start_entity", start_entity, max_chars=200).strip()
            if isinstance(depth, bool) or not isinstance(depth, int):
                raise ValidationError(f"depth must be an integer, got {type(depth).__name__}")
            rel = v.optional_text("relation_filter", relation_filter, max_chars=100)
            result: dict[str, Any] = self._graph().graph.traverse(start, depth, rel)
            return result

        return run("graph", call)

    def graph_shortest_path(self, from_entity: str, to_entity: str) -> Envelope:
        """The fewest-hops path between two entities; an empty list when none exists."""

        def call() -> list[dict[str, Any]]:
            src = v.text("from_entity", from_entity, max_chars=200).strip()
            dst = v.text("to_entity", to_entity, max_chars=200).strip()
            path: list[dict[str, Any]] = self._graph().graph.shortest_path(src, dst)
            return path

        return run("graph", call)

    def graph_central_entities(self, limit: int = 10, algorithm: str | None = None) -> Envelope:
        """The most central entities (configured algorithm: betweenness, pagerank or degree)."""

        def call() -> list[dict[str, Any]]:
            lim = v.positive_int("limit", limit, maximum=1000)
            algo = self.config.graph.centrality_algorithm if algorithm is None else algorithm
            v.choice("algorithm", algo, _ALGORITHMS)
            central: list[dict[str, Any]] = self._graph().graph.central_entities(lim, algo)
            return central

        return run("graph", call)

    def graph_communities(self) -> Envelope:
        """Communities of entities (Louvain, seeded: the same graph gives the same answer)."""
        return run("graph", lambda: self._graph().graph.communities())

    def graph_rebuild(self) -> Envelope:
        """Rebuild the graph from Tier 2 and save it."""
        return run("graph", lambda: self._graph().rebuild())

    def graph_spread(self, seeds: list[str], max_hops: int = 3) -> Envelope:
        """Spreading activation from seed entities (names, aliases or uuids): related entities by score."""

        def call() -> list[dict[str, Any]]:
            refs = v.string_list("seeds", seeds, max_chars=200)
            if not refs:
                raise ValidationError("seeds must name at least one entity")
            hops = v.positive_int("max_hops", max_hops, maximum=6)
            kg = self._graph().graph
            uuids = [kg.resolve(ref.strip()) for ref in refs]
            activation = kg.spread(uuids, max_hops=hops)
            ranked = sorted(activation.items(), key=lambda item: item[1], reverse=True)
            return [{**kg.entity_summary(uuid), "activation": round(score, 6)} for uuid, score in ranked]

        return run("graph", call)
