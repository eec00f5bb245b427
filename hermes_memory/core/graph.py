"""Questions to the knowledge graph (derived from Tier 2): traversal, paths, centrality, communities,
spreading activation, rebuild. Every call raises ConfigError when the graph is off."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_memory.core.tiers import Tiers

if TYPE_CHECKING:
    from hermes_memory.graph.nx_store import KnowledgeGraph

CENTRALITY_ALGORITHMS = frozenset({"betweenness", "pagerank", "degree"})


@dataclass(frozen=True)
class Activated:
    """An entity reached by spreading activation: its summary and its activation score."""

    summary: dict[str, Any]
    activation: float

    def to_dict(self) -> dict[str, Any]:
        return {**self.summary, "activation": round(self.activation, 6)}


class GraphQueries:
    """The graph's read side and its rebuild, over this memory's graph service."""

    def __init__(self, tiers: Tiers) -> None:
        self._tiers = tiers

    def knowledge_graph(self) -> KnowledgeGraph:
        """The loaded graph itself (for drawing and export)."""
        return self._tiers.graph_service().graph

    def traverse(self, start: str, depth: int, relation_filter: str | None) -> dict[str, Any]:
        """Entities reachable from ``start`` (name, alias or uuid) within ``depth`` hops, both ways."""
        return self.knowledge_graph().traverse(start, depth, relation_filter)

    def shortest_path(self, source: str, target: str) -> list[dict[str, Any]]:
        """The fewest-hops path between two entities; [] when none exists."""
        return self.knowledge_graph().shortest_path(source, target)

    def central_entities(self, limit: int, algorithm: str | None) -> list[dict[str, Any]]:
        """The most central entities; ``algorithm`` None: config ``graph.centrality_algorithm``."""
        algo = self._tiers.config.graph.centrality_algorithm if algorithm is None else algorithm
        return self.knowledge_graph().central_entities(limit, algo)

    def communities(self) -> list[list[dict[str, Any]]]:
        """Communities of entities (Louvain, seeded: the same graph gives the same answer)."""
        return self.knowledge_graph().communities()

    def rebuild(self) -> dict[str, Any]:
        """Rebuild the graph from Tier 2 and save it."""
        return self._tiers.graph_service().rebuild()

    def spread(self, seeds: Sequence[str], max_hops: int) -> list[Activated]:
        """Spreading activation from seed entities (names, aliases or uuids), strongest first."""
        kg = self.knowledge_graph()
        uuids = [kg.resolve(ref) for ref in seeds]
        activation = kg.spread(uuids, max_hops=max_hops)
        ranked = sorted(activation.items(), key=lambda item: item[1], reverse=True)
        return [Activated(kg.entity_summary(uuid), score) for uuid, score in ranked]


__all__ = ["CENTRALITY_ALGORITHMS", "Activated", "GraphQueries"]
