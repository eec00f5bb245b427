"""Groups of entities that belong together: Louvain modularity communities, deterministic by seed.

Runs on the same sorted, undirected, weighted analysis graph as centrality (see centrality.py), so the
partition depends on the data and the seed only, never on the order records were written.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import networkx as nx

from hermes_memory.errors import ValidationError
from hermes_memory.graph.centrality import analysis_graph

if TYPE_CHECKING:
    from hermes_memory.graph.nx_store import KnowledgeGraph

DEFAULT_SEED = 42


def partition(
    kg: KnowledgeGraph, *, seed: int = DEFAULT_SEED, resolution: float = 1.0
) -> list[frozenset[str]]:
    """Louvain partition of all entities (singletons included), cached until the next structural change.

    Raises ValidationError for a non-positive or non-finite resolution.
    """
    if not math.isfinite(resolution) or resolution <= 0:
        raise ValidationError(f"resolution must be a positive number, got {resolution!r}")
    graph = analysis_graph(kg)

    def compute() -> list[frozenset[str]]:
        if graph.number_of_nodes() == 0:
            return []
        found = nx.community.louvain_communities(graph, weight="weight", resolution=resolution, seed=seed)
        return [frozenset(str(n) for n in group) for group in found]

    result: list[frozenset[str]] = kg.cached(("communities", seed, float(resolution)), compute)
    return result


def detect(
    kg: KnowledgeGraph, *, seed: int = DEFAULT_SEED, resolution: float = 1.0, min_size: int = 1
) -> list[list[dict[str, Any]]]:
    """Communities as lists of ``{"uuid", "name", "entity_type"}``, largest first, members by name.

    ``min_size`` drops smaller groups (isolated entities form singletons). Raises ValidationError.
    """
    if isinstance(min_size, bool) or not isinstance(min_size, int) or min_size < 1:
        raise ValidationError(f"min_size must be a positive integer, got {min_size!r}")
    groups: list[list[dict[str, Any]]] = []
    for group in partition(kg, seed=seed, resolution=resolution):
        if len(group) < min_size:
            continue
        ordered = sorted(group, key=lambda uuid: (kg.name_key(uuid), uuid))
        groups.append([kg.entity_summary(uuid) for uuid in ordered])
    groups.sort(key=lambda g: (-len(g), kg.name_key(g[0]["uuid"]), g[0]["uuid"]))
    return groups


__all__ = ["DEFAULT_SEED", "detect", "partition"]
