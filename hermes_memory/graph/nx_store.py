"""KnowledgeGraph: the NetworkX graph derived from Tier 2 and its incremental updates; resolution of names
(``resolution``), its files (``persistence``) and the algorithms (``traversal``, ``centrality``, ...) live
in their own modules.

Why a ``MultiDiGraph``: Tier 2 may hold several relations between the same two entities (``A works_on B``
and ``A leads B``), each with its own uuid, strength and evidence. A ``DiGraph`` keeps one edge per ordered
pair and would silently merge them, so ``remove_relation(uuid)`` and Hebbian write-back could not address
a single relation. The edge key is the relation uuid. Direction is kept (``from`` -> ``to``) because it is
part of the relation's meaning; every query walks edges in both directions.

Tier 2 is the source of truth: this object is a cache that the API layer keeps in step (upsert/remove on
every entity/relation write) and that can always be rebuilt from the records.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple, cast

import networkx as nx

from hermes_memory.errors import NotFoundError, StorageError
from hermes_memory.graph import centrality as _centrality
from hermes_memory.graph import communities as _communities
from hermes_memory.graph import spreading as _spreading
from hermes_memory.graph import traversal as _traversal
from hermes_memory.graph.builder import (
    NameIndex,
    build_from_records,
    clamp_strength,
    entity_node_attrs,
    relation_edge_attrs,
)
from hermes_memory.graph.persistence import (
    CORRUPT_ERRORS,
    GRAPHML_NAME,
    PICKLE_NAME,
    LoadResult,
    LoadStatus,
    decode,
    encode,
    gc_paused,
    graphml_copy,
    read_file,
    write_atomically,
)
from hermes_memory.graph.resolution import EntityNotFoundError, resolve
from hermes_memory.records import Entity, Relation


class Link(NamedTuple):
    """One relation seen from one endpoint; ``outgoing`` is True when this endpoint is ``from``."""

    other: str
    relation_uuid: str
    relation_type: str
    strength: float
    outgoing: bool


class KnowledgeGraph:
    """Entities as nodes, relations as keyed edges; thread-safe (one re-entrant lock around every call).

    The constructor does no I/O; call ``load()`` (and on a non-LOADED status, ``rebuild(...)``).
    """

    def __init__(self, directory: Path | str | None = None) -> None:
        self.directory = Path(directory) if directory is not None else None
        self.fingerprint: str | None = None
        self._graph: Any = nx.MultiDiGraph()
        self._index = NameIndex()
        self._ends: dict[str, tuple[str, str]] = {}
        self._links: dict[str, tuple[Link, ...]] = {}
        self._cache: dict[Any, Any] = {}
        self._structure_version = 0
        self._lock = threading.RLock()

    # ── reading state ───────────────────────────────────────────────────────────────────────────
    def locked(self) -> threading.RLock:
        """The graph's re-entrant lock, for callers reading several things consistently (``with``)."""
        return self._lock

    @property
    def nx_graph(self) -> Any:
        """A read-only view of the underlying ``nx.MultiDiGraph`` (for export and drawing)."""
        return self._graph.copy(as_view=True)

    @property
    def structure_version(self) -> int:
        """Increases whenever nodes, edges or strengths change (caches key on it)."""
        return self._structure_version

    @property
    def entity_count(self) -> int:
        return int(self._graph.number_of_nodes())

    @property
    def relation_count(self) -> int:
        return len(self._ends)

    def __contains__(self, uuid: object) -> bool:
        return isinstance(uuid, str) and uuid in self._graph

    def node_attrs(self, uuid: str) -> dict[str, Any]:
        """The live attribute dict of a node (internal use; callers must not mutate it)."""
        # ``_node``/``_succ``/``_pred`` are the plain dicts behind NetworkX's views; the hot query paths
        # read them directly because the view layer costs more than the BFS itself at 10k entities.
        return cast(dict[str, Any], self._graph._node[uuid])

    def name_key(self, uuid: str) -> str:
        """The normalised name of an entity (for stable, case-insensitive ordering)."""
        return self._index.name_key(uuid)

    def entity_dict(self, uuid: str) -> dict[str, Any]:
        """A JSON-safe copy of a node's attributes; raises EntityNotFoundError for an unknown uuid."""
        attrs = self._graph._node.get(uuid)
        if attrs is None:
            raise EntityNotFoundError(uuid, [])
        return _plain_copy(attrs)

    def entity_summary(self, uuid: str) -> dict[str, Any]:
        attrs = self._graph._node[uuid]
        return {"uuid": uuid, "name": attrs["name"], "entity_type": attrs["entity_type"]}

    def relation_dict(self, relation_uuid: str) -> dict[str, Any]:
        """A JSON-safe view of one relation; raises NotFoundError if the graph does not hold it."""
        ends = self._ends.get(relation_uuid)
        if ends is None:
            raise NotFoundError(f"unknown relation {relation_uuid}")
        source, target = ends
        data = _plain_copy(self._graph.edges[source, target, relation_uuid])
        data["from"], data["to"] = source, target
        return data

    def links(self, uuid: str) -> tuple[Link, ...]:
        """Every relation touching ``uuid`` except self-loops, sorted by (other, -strength, uuid)."""
        cached = self._links.get(uuid)
        if cached is not None:
            return cached
        found: list[Link] = []
        for other, keyed in self._graph._succ[uuid].items():
            if other != uuid:
                found.extend(
                    Link(other, k, d["relation_type"], d["strength"], True) for k, d in keyed.items()
                )
        for other, keyed in self._graph._pred[uuid].items():
            if other != uuid:
                found.extend(
                    Link(other, k, d["relation_type"], d["strength"], False) for k, d in keyed.items()
                )
        found.sort(key=lambda link: (link.other, -link.strength, link.relation_uuid))
        result = tuple(found)
        self._links[uuid] = result
        return result

    def cached(self, key: Any, compute: Callable[[], Any]) -> Any:
        """Memoise a structure-derived result until the next structural change."""
        hit = self._cache.get(key)
        if hit is not None and hit[0] == self._structure_version:
            return hit[1]
        value = compute()
        self._cache[key] = (self._structure_version, value)
        return value

    def snapshot(self) -> dict[str, Any]:
        """Canonical, order-free, JSON-normalised form of nodes and edges (for equality checks)."""
        with self._lock:
            nodes = {uuid: dict(attrs) for uuid, attrs in self._graph.nodes(data=True)}
            edges = {
                key: {"from": u, "to": v, **attrs}
                for u, v, key, attrs in self._graph.edges(keys=True, data=True)
            }
        canonical: dict[str, Any] = json.loads(
            json.dumps({"nodes": nodes, "edges": edges}, sort_keys=True, default=str)
        )
        return canonical

    # ── resolution ──────────────────────────────────────────────────────────────────────────────
    def resolve(self, ref: str, entity_type: str | None = None) -> str:
        """uuid for a uuid, name or alias (case-insensitive). A canonical name beats an alias.

        Raises EntityNotFoundError (with close matches) or AmbiguousEntityError (listing candidates;
        narrow with ``entity_type`` or use the uuid).
        """
        with self._lock:
            return resolve(self._graph, self._index, ref, entity_type)

    # ── incremental updates (called by the API layer on every Tier 2 write) ─────────────────────
    def upsert_entity(self, entity: Entity) -> None:
        """Insert or replace a node from its record; raises ValidationError on a malformed record."""
        attrs = entity_node_attrs(entity)
        with self._lock:
            if entity.uuid in self._graph:
                node = self._graph.nodes[entity.uuid]
                node.clear()
                node.update(attrs)
            else:
                self._graph.add_node(entity.uuid, **attrs)
                self._changed()
            self._index.add(entity.uuid, attrs["name"], attrs["aliases"])

    def upsert_relation(self, relation: Relation) -> None:
        """Insert or replace an edge from its record.

        Raises EntityNotFoundError if an endpoint is not in the graph (upsert the entities first),
        ValidationError on a malformed record.
        """
        attrs = relation_edge_attrs(relation)
        source, target = relation.from_entity_id, relation.to_entity_id
        with self._lock:
            for end in (source, target):
                if end not in self._graph:
                    raise EntityNotFoundError(end, [])
            old = self._ends.get(relation.uuid)
            if old == (source, target):
                edge = self._graph.edges[source, target, relation.uuid]
                # relation_type and strength are cached in Link tuples and the analysis graph
                structural = (edge["strength"], edge["relation_type"]) != (
                    attrs["strength"],
                    attrs["relation_type"],
                )
                edge.clear()
                edge.update(attrs)
                if structural:
                    self._changed(source, target)
                return
            if old is not None:
                self._graph.remove_edge(old[0], old[1], key=relation.uuid)
                self._changed(*old)
            self._graph.add_edge(source, target, key=relation.uuid, **attrs)
            self._ends[relation.uuid] = (source, target)
            self._changed(source, target)

    def remove_entity(self, uuid: str) -> list[str]:
        """Drop a node and every relation touching it; returns those relation uuids ([] if absent)."""
        with self._lock:
            if uuid not in self._graph:
                return []
            neighbours = set(self._graph.succ[uuid]) | set(self._graph.pred[uuid])
            gone = sorted(
                {k for _, _, k in self._graph.out_edges(uuid, keys=True)}
                | {k for _, _, k in self._graph.in_edges(uuid, keys=True)}
            )
            self._graph.remove_node(uuid)
            self._index.remove(uuid)
            for key in gone:
                self._ends.pop(key, None)
            self._changed(uuid, *neighbours)
            return gone

    def remove_relation(self, relation_uuid: str) -> bool:
        """Drop one edge by relation uuid; returns False if the graph did not hold it."""
        with self._lock:
            ends = self._ends.pop(relation_uuid, None)
            if ends is None:
                return False
            self._graph.remove_edge(ends[0], ends[1], key=relation_uuid)
            self._changed(*ends)
            return True

    def rebuild(self, entities: Iterable[Entity], relations: Iterable[Relation]) -> dict[str, Any]:
        """Replace everything from the records; returns the build report (counts, skipped dangling
        relations, duration). Raises ValidationError on a malformed record (the graph is then unchanged).
        """
        with gc_paused():
            built = build_from_records(entities, relations)
            graph: Any = nx.MultiDiGraph()
            graph.add_nodes_from(built.nodes.items())
            graph.add_edges_from((u, v, key, attrs) for key, (u, v, attrs) in built.edges.items())
            with self._lock:
                self._install(graph)
        return built.report.to_dict()

    def set_strength(self, relation_uuid: str, strength: float) -> None:
        """Change one relation's strength in place; raises NotFoundError or ValidationError."""
        with self._lock:
            ends = self._ends.get(relation_uuid)
            if ends is None:
                raise NotFoundError(f"unknown relation {relation_uuid}")
            self._graph.edges[ends[0], ends[1], relation_uuid]["strength"] = clamp_strength(
                strength, relation_uuid
            )
            self._changed(*ends)

    def _install(self, graph: Any) -> None:
        index = NameIndex()
        for uuid, attrs in graph.nodes(data=True):
            index.add(uuid, attrs["name"], attrs["aliases"])
        self._ends = {key: (u, v) for u, v, key in graph.edges(keys=True)}
        self._graph = graph
        self._index = index
        self._changed()
        self._links.clear()

    def _changed(self, *touched: str) -> None:
        self._structure_version += 1
        for uuid in touched:
            self._links.pop(uuid, None)

    # ── queries (see the modules named for the algorithms) ──────────────────────────────────────
    def traverse(
        self,
        start: str,
        depth: int = 2,
        relation_filter: str | Iterable[str] | None = None,
        *,
        entity_type: str | None = None,
        limit: int = _traversal.DEFAULT_LIMIT,
    ) -> dict[str, Any]:
        """BFS both directions; see ``traversal.traverse`` for the result shape and errors."""
        with self._lock:
            return _traversal.traverse(
                self, start, depth, relation_filter, entity_type=entity_type, limit=limit
            )

    def shortest_path(
        self,
        source: str,
        target: str,
        relation_filter: str | Iterable[str] | None = None,
        *,
        source_type: str | None = None,
        target_type: str | None = None,
    ) -> list[dict[str, Any]]:
        """Fewest-hops path as entity steps with the relation used; [] if none. See traversal."""
        with self._lock:
            return _traversal.shortest_path(
                self, source, target, relation_filter, source_type=source_type, target_type=target_type
            )

    def around(self, ref: str, depth: int = 1, *, entity_type: str | None = None) -> KnowledgeGraph:
        """A new in-memory KnowledgeGraph with the entities within ``depth`` hops (for pictures)."""
        with self._lock:
            keep = _traversal.neighbourhood(self, self.resolve(ref, entity_type), depth)
            sub = KnowledgeGraph()
            sub._install(self._graph.subgraph(keep).copy())
            return sub

    def central_entities(
        self, limit: int = 10, algorithm: str = _centrality.DEFAULT_ALGORITHM
    ) -> list[dict[str, Any]]:
        """Top entities by degree, pagerank or betweenness; see ``centrality.central_entities``."""
        with self._lock:
            return _centrality.central_entities(self, limit, algorithm)

    def communities(
        self, *, seed: int = _communities.DEFAULT_SEED, resolution: float = 1.0, min_size: int = 1
    ) -> list[list[dict[str, Any]]]:
        """Louvain communities, largest first; see ``communities.detect``."""
        with self._lock:
            return _communities.detect(self, seed=seed, resolution=resolution, min_size=min_size)

    def spread(
        self,
        seeds: Mapping[str, float] | Iterable[str],
        decay: float = _spreading.DEFAULT_DECAY,
        max_hops: int = _spreading.DEFAULT_MAX_HOPS,
        threshold: float = _spreading.DEFAULT_THRESHOLD,
        *,
        relation_filter: str | Iterable[str] | None = None,
    ) -> dict[str, float]:
        """Spreading activation from seed entities; see ``spreading.spread``."""
        with self._lock:
            return _spreading.spread(self, seeds, decay, max_hops, threshold, relation_filter=relation_filter)

    def reinforce(
        self, uuids: Iterable[str], rate: float = _spreading.DEFAULT_RATE, *, apply: bool = True
    ) -> list[tuple[str, float]]:
        """Hebbian strengthening of relations among co-recalled entities; see ``spreading.reinforce``."""
        with self._lock:
            return _spreading.reinforce(self, uuids, rate, apply=apply)

    # ── persistence ─────────────────────────────────────────────────────────────────────────────
    @property
    def pickle_path(self) -> Path:
        return self._require_directory() / PICKLE_NAME

    @property
    def graphml_path(self) -> Path:
        return self._require_directory() / GRAPHML_NAME

    def _require_directory(self) -> Path:
        if self.directory is None:
            raise StorageError("this KnowledgeGraph has no directory; pass one to save or load")
        return self.directory

    def save(self, fingerprint: str | None = None, *, graphml: bool = False) -> Path:
        """Write the fast-load file atomically (and GraphML if asked); raises StorageError.

        Format: plain containers, never the graph object, so ``load`` can refuse every global (see
        ``persistence.encode``).
        """
        path = self.pickle_path
        with self._lock:
            if fingerprint is not None:
                self.fingerprint = fingerprint
            data = encode(self._graph, self.fingerprint)
            if graphml:
                self.export_graphml()
        write_atomically(path, lambda handle: handle.write(data))
        return path

    def load(self, expected_fingerprint: str | None = None) -> LoadResult:
        """Replace the graph from the fast-load file. Never raises for a bad file: MISSING, CORRUPT,
        INCOMPATIBLE or STALE (fingerprint differs) leave the graph as it was and mean "rebuild".

        Raises StorageError only when no directory was configured.
        """
        path = self.pickle_path
        raw = read_file(path)
        if isinstance(raw, LoadResult):
            return raw
        try:
            with gc_paused():
                found = decode(raw, path, expected_fingerprint)
                if isinstance(found, LoadResult):
                    return found
                with self._lock:
                    self._install(found.graph)
                    self.fingerprint = found.fingerprint
        except CORRUPT_ERRORS as exc:
            return LoadResult(LoadStatus.CORRUPT, str(path), f"{type(exc).__name__}: {exc}")
        return LoadResult(
            LoadStatus.LOADED,
            str(path),
            entities=self.entity_count,
            relations=self.relation_count,
            fingerprint=found.fingerprint,
        )

    def export_graphml(self, path: Path | str | None = None) -> Path:
        """Write GraphML for people and tools (aliases/metadata as JSON strings, None omitted).

        Raises StorageError.
        """
        target = Path(path) if path is not None else self.graphml_path
        with self._lock:
            graph = graphml_copy(self._graph, self.fingerprint)
        write_atomically(target, lambda handle: nx.write_graphml(graph, handle))
        return target


def _plain_copy(attrs: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in attrs.items():
        if isinstance(value, list):
            out[key] = list(value)
        elif isinstance(value, dict):
            out[key] = copy.deepcopy(value) if value else {}
        else:
            out[key] = value
    return out


__all__ = ["KnowledgeGraph", "Link"]
