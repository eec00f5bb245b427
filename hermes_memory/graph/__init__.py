"""The knowledge graph: entities and relations from Tier 2 as a NetworkX graph, with traversal, paths,
centrality, communities, spreading activation and pictures.

Names are resolved lazily so ``import hermes_memory.graph`` does not pay for NetworkX (~0.2 s) until a
graph is actually used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_memory._lazy import lazy_exports

if TYPE_CHECKING:
    from hermes_memory.graph.builder import BuildReport
    from hermes_memory.graph.nx_store import KnowledgeGraph, Link
    from hermes_memory.graph.persistence import LoadResult, LoadStatus, graph_fingerprint
    from hermes_memory.graph.render import render_html, render_png
    from hermes_memory.graph.resolution import AmbiguousEntityError, EntityNotFoundError

_EXPORTS = {
    "AmbiguousEntityError": "hermes_memory.graph.resolution",
    "BuildReport": "hermes_memory.graph.builder",
    "EntityNotFoundError": "hermes_memory.graph.resolution",
    "KnowledgeGraph": "hermes_memory.graph.nx_store",
    "Link": "hermes_memory.graph.nx_store",
    "LoadResult": "hermes_memory.graph.persistence",
    "LoadStatus": "hermes_memory.graph.persistence",
    "graph_fingerprint": "hermes_memory.graph.persistence",
    "render_html": "hermes_memory.graph.render",
    "render_png": "hermes_memory.graph.render",
}


__getattr__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "AmbiguousEntityError",
    "BuildReport",
    "EntityNotFoundError",
    "KnowledgeGraph",
    "Link",
    "LoadResult",
    "LoadStatus",
    "graph_fingerprint",
    "render_html",
    "render_png",
]
