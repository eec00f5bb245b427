"""Which entities matter most: degree, PageRank and (approximate) betweenness centrality.

All three run on one derived *analysis graph*: undirected, simple, no self-loops, nodes and edges in
sorted order (so results do not depend on write order), edge ``weight`` = the strongest relation between
the pair, floored at ``MIN_WEIGHT`` so a relation that exists always counts a little. Scores are cached
until the next structural change of the KnowledgeGraph.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Any

import networkx as nx
import numpy as np

from hermes_memory.errors import ValidationError
from hermes_memory.graph.builder import normalise_key

if TYPE_CHECKING:
    from hermes_memory.graph.nx_store import KnowledgeGraph

ALGORITHMS = ("pagerank", "degree", "betweenness")
# PageRank is the default: weighted, ~0.1 s at 10k entities; betweenness costs seconds even sampled.
DEFAULT_ALGORITHM = "pagerank"
MIN_WEIGHT = 0.01
# Exact betweenness is O(N*E); above this many entities it is estimated from BETWEENNESS_SAMPLES
# source nodes drawn with a fixed seed (deterministic, "approximate": True in the result).
BETWEENNESS_EXACT_MAX = 1000
BETWEENNESS_SAMPLES = 100
SEED = 42
PAGERANK_ALPHA = 0.85


def analysis_graph(kg: KnowledgeGraph) -> Any:
    """The undirected weighted simple graph used by centrality and communities (cached)."""

    def build() -> Any:
        weights: dict[tuple[str, str], float] = {}
        for source, target, strength in kg.nx_graph.edges(data="strength"):
            if source == target:
                continue
            pair = (source, target) if source < target else (target, source)
            weights[pair] = max(weights.get(pair, MIN_WEIGHT), float(strength))
        graph: Any = nx.Graph()
        graph.add_nodes_from(sorted(kg.nx_graph.nodes))
        graph.add_weighted_edges_from((a, b, w) for (a, b), w in sorted(weights.items()))
        return graph

    return kg.cached(("analysis_graph",), build)


def scores(kg: KnowledgeGraph, algorithm: str) -> dict[str, float]:
    """Score per entity uuid for one algorithm (cached); raises ValidationError for an unknown one."""
    name = normalise_key(algorithm)
    if name not in ALGORITHMS:
        raise ValidationError(f"unknown centrality algorithm {algorithm!r}; choose one of {list(ALGORITHMS)}")
    graph = analysis_graph(kg)
    if name == "degree":
        compute = lambda: {str(k): float(v) for k, v in nx.degree_centrality(graph).items()}  # noqa: E731
    elif name == "pagerank":
        compute = lambda: pagerank(graph)  # noqa: E731
    else:
        k = None if graph.number_of_nodes() <= BETWEENNESS_EXACT_MAX else BETWEENNESS_SAMPLES
        compute = lambda: {  # noqa: E731
            str(n): float(v) for n, v in nx.betweenness_centrality(graph, k=k, seed=SEED).items()
        }
    result: dict[str, float] = kg.cached(("centrality", name), compute)
    return result


def central_entities(
    kg: KnowledgeGraph, limit: int = 10, algorithm: str = DEFAULT_ALGORITHM
) -> list[dict[str, Any]]:
    """Top ``limit`` entities, each ``{"rank", "score", "algorithm", "approximate", "entity"}``.

    Ties break by name then uuid. Raises ValidationError (unknown algorithm, limit < 1).
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValidationError(f"limit must be a positive integer, got {limit!r}")
    by_uuid = scores(kg, algorithm)
    name = normalise_key(algorithm)
    approximate = name == "betweenness" and len(by_uuid) > BETWEENNESS_EXACT_MAX
    top = heapq.nsmallest(limit, by_uuid.items(), key=lambda kv: (-kv[1], kg.name_key(kv[0]), kv[0]))
    return [
        {
            "rank": rank,
            "score": score,
            "algorithm": name,
            "approximate": approximate,
            "entity": kg.entity_dict(uuid),
        }
        for rank, (uuid, score) in enumerate(top, start=1)
    ]


def pagerank(
    graph: Any, alpha: float = PAGERANK_ALPHA, tol: float = 1.0e-10, max_iter: int = 200
) -> dict[str, float]:
    """Weighted PageRank by power iteration in numpy (matches ``nx.pagerank``; no scipy needed).

    ``nx.pagerank`` requires scipy, which is only in the ``viz`` extra; numpy is a core dependency.
    Dangling nodes (no edges) spread their rank uniformly, as in NetworkX.
    """
    nodes = list(graph.nodes)
    count = len(nodes)
    if count == 0:
        return {}
    index = {node: i for i, node in enumerate(nodes)}
    edges = [(index[a], index[b], float(w)) for a, b, w in graph.edges(data="weight") if w > 0]
    src = np.array([e[0] for e in edges] + [e[1] for e in edges], dtype=np.int64)
    dst = np.array([e[1] for e in edges] + [e[0] for e in edges], dtype=np.int64)
    weight = np.array([e[2] for e in edges] * 2, dtype=np.float64)
    out_weight = np.bincount(src, weights=weight, minlength=count)
    dangling = out_weight == 0
    share = weight / out_weight[src] if len(src) else weight
    rank = np.full(count, 1.0 / count)
    for _ in range(max_iter):
        flow = np.bincount(dst, weights=rank[src] * share, minlength=count)
        updated = alpha * (flow + rank[dangling].sum() / count) + (1.0 - alpha) / count
        delta = float(np.abs(updated - rank).sum())
        rank = updated
        if delta < count * tol:
            break
    return {str(node): float(rank[i]) for i, node in enumerate(nodes)}


__all__ = [
    "ALGORITHMS",
    "BETWEENNESS_EXACT_MAX",
    "BETWEENNESS_SAMPLES",
    "DEFAULT_ALGORITHM",
    "analysis_graph",
    "central_entities",
    "pagerank",
    "scores",
]
