"""Breadth-first walks over the knowledge graph: traverse (neighbourhood with paths), shortest path.

Edges are followed in both directions (a relation links two entities whatever its direction), and
neighbours are visited in a fixed order, so results do not depend on the order records were written.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from hermes_memory.errors import ValidationError
from hermes_memory.graph.builder import normalise_key

if TYPE_CHECKING:
    from hermes_memory.graph.nx_store import KnowledgeGraph, Link

# Beyond ~6 hops a knowledge graph of a few thousand entities is usually reached entirely, so a deeper
# request is clamped (and the result says so) instead of being refused.
MAX_DEPTH = 6
DEFAULT_LIMIT = 200


def relation_types(relation_filter: str | Iterable[str] | None) -> frozenset[str] | None:
    """Normalise a filter: None, one type, "a,b" or an iterable; raises ValidationError if empty."""
    if relation_filter is None:
        return None
    raw = relation_filter.split(",") if isinstance(relation_filter, str) else list(relation_filter)
    types = frozenset(normalise_key(str(t)) for t in raw) - {""}
    if not types:
        raise ValidationError("relation_filter must name at least one relation type")
    return types


def check_depth(depth: int) -> tuple[int, bool]:
    """(depth to use, whether it was capped); raises ValidationError for a negative or non-int depth."""
    if isinstance(depth, bool) or not isinstance(depth, int):
        raise ValidationError(f"depth must be an integer, got {depth!r}")
    if depth < 0:
        raise ValidationError(f"depth must be >= 0, got {depth}")
    return min(depth, MAX_DEPTH), depth > MAX_DEPTH


def traverse(
    kg: KnowledgeGraph,
    start: str,
    depth: int = 2,
    relation_filter: str | Iterable[str] | None = None,
    *,
    entity_type: str | None = None,
    limit: int = DEFAULT_LIMIT,
) -> dict[str, Any]:
    """Entities within ``depth`` hops of ``start``, nearest first, strongest relation first per hop.

    Returns ``{"start", "requested_depth", "depth", "max_depth", "depth_capped", "relation_filter",
    "limit", "truncated", "count", "results": [{"entity", "hops", "path", "path_names", "via"}]}``.
    Raises ValidationError (negative depth, limit < 1, empty filter), EntityNotFoundError,
    AmbiguousEntityError.
    """
    used, capped = check_depth(depth)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValidationError(f"limit must be a positive integer, got {limit!r}")
    types = relation_types(relation_filter)
    origin = kg.resolve(start, entity_type)
    parents: dict[str, tuple[str, Link] | None] = {origin: None}
    results: list[dict[str, Any]] = []
    truncated = False
    frontier = [origin]
    for hop in range(1, used + 1):
        best: dict[str, tuple[str, Link]] = {}
        for node in frontier:
            for link in kg.links(node):
                if link.other in parents or not _passes(link, types):
                    continue
                seen = best.get(link.other)
                if seen is None or link.strength > seen[1].strength:
                    best[link.other] = (node, link)
        if not best:
            break
        order = lambda item: (-item[1][1].strength, kg.name_key(item[0]), item[0])  # noqa: E731
        room = limit - len(results)
        # a level bigger than the room left is cut anyway: pick the best without sorting all of it
        level = (
            heapq.nsmallest(room + 1, best.items(), key=order)
            if len(best) > room
            else sorted(best.items(), key=order)
        )
        parents.update(best)
        frontier = [uuid for uuid, _ in level]
        for uuid, (parent, link) in level:
            if len(results) >= limit:
                truncated = True
                break
            path = _path_to(parents, uuid)
            results.append(
                {
                    "entity": kg.entity_dict(uuid),
                    "hops": hop,
                    "path": path,
                    "path_names": [kg.node_attrs(p)["name"] for p in path],
                    "via": relation_step(parent, link),
                }
            )
        if truncated:
            break
    return {
        "start": kg.entity_dict(origin),
        "requested_depth": depth,
        "depth": used,
        "max_depth": MAX_DEPTH,
        "depth_capped": capped,
        "relation_filter": sorted(types) if types is not None else None,
        "limit": limit,
        "truncated": truncated,
        "count": len(results),
        "results": results,
    }


def shortest_path(
    kg: KnowledgeGraph,
    source: str,
    target: str,
    relation_filter: str | Iterable[str] | None = None,
    *,
    source_type: str | None = None,
    target_type: str | None = None,
) -> list[dict[str, Any]]:
    """Fewest-hops path, each step ``{"entity", "hops", "via"}`` (``via`` = the relation that led there,
    None for the first step). No path -> []; same entity -> one step.

    Raises EntityNotFoundError, AmbiguousEntityError, ValidationError (empty filter).
    """
    types = relation_types(relation_filter)
    origin = kg.resolve(source, source_type)
    goal = kg.resolve(target, target_type)
    if origin == goal:
        return [{"entity": kg.entity_dict(origin), "hops": 0, "via": None}]
    hops = _meet_in_the_middle(kg, origin, goal, types)
    if hops is None:
        return []
    steps: list[dict[str, Any]] = [{"entity": kg.entity_dict(origin), "hops": 0, "via": None}]
    for count, (previous, link) in enumerate(hops, start=1):
        steps.append(
            {"entity": kg.entity_dict(link.other), "hops": count, "via": relation_step(previous, link)}
        )
    return steps


def _meet_in_the_middle(
    kg: KnowledgeGraph, origin: str, goal: str, types: frozenset[str] | None
) -> list[tuple[str, Link]] | None:
    """Bidirectional BFS, one whole level at a time from the smaller side (hubs make one-sided BFS
    reach most of the graph). Returns the steps ``(previous, link to next)`` or None."""
    # parents[side][node] = (neighbour one step closer to that side's root, link seen from that neighbour)
    parents: tuple[dict[str, tuple[str, Link] | None], ...] = ({origin: None}, {goal: None})
    dist: tuple[dict[str, int], ...] = ({origin: 0}, {goal: 0})
    fronts = [[origin], [goal]]
    while fronts[0] and fronts[1]:
        side = 0 if len(fronts[0]) <= len(fronts[1]) else 1
        mine, theirs = parents[side], parents[1 - side]
        following: list[str] = []
        for node in fronts[side]:
            for link in kg.links(node):
                if link.other in mine or not _passes(link, types):
                    continue
                mine[link.other] = (node, link)
                dist[side][link.other] = dist[side][node] + 1
                following.append(link.other)
        fronts[side] = following
        meetings = [n for n in following if n in theirs]
        if meetings:
            # every meeting node found in this level is a candidate; the shortest total wins, then scan order
            middle = min(meetings, key=lambda n: dist[0][n] + dist[1][n])
            return _join(parents[0], parents[1], middle)
    return None


def _join(
    forward: dict[str, tuple[str, Link] | None], backward: dict[str, tuple[str, Link] | None], middle: str
) -> list[tuple[str, Link]]:
    steps: list[tuple[str, Link]] = []
    node = middle
    entry = forward[node]
    while entry is not None:
        steps.append(entry)
        node = entry[0]
        entry = forward[node]
    steps.reverse()
    node = middle
    entry = backward[node]
    while entry is not None:
        closer, link = entry  # ``link`` is seen from ``closer``; walk it the other way
        steps.append((node, link._replace(other=closer, outgoing=not link.outgoing)))
        node = closer
        entry = backward[node]
    return steps


def neighbourhood(kg: KnowledgeGraph, origin: str, depth: int) -> set[str]:
    """uuids within ``depth`` hops of ``origin`` (itself included); raises ValidationError on bad depth."""
    used, _ = check_depth(depth)
    seen = {origin}
    frontier = [origin]
    for _ in range(used):
        following = []
        for node in frontier:
            for link in kg.links(node):
                if link.other not in seen:
                    seen.add(link.other)
                    following.append(link.other)
        if not following:
            break
        frontier = following
    return seen


def relation_step(parent: str, link: Link) -> dict[str, Any]:
    """The relation used to step from ``parent`` to ``link.other``, with its stored direction."""
    source, target = (parent, link.other) if link.outgoing else (link.other, parent)
    return {
        "relation_uuid": link.relation_uuid,
        "relation_type": link.relation_type,
        "strength": link.strength,
        "from": source,
        "to": target,
        "direction": "out" if link.outgoing else "in",
    }


def _passes(link: Link, types: frozenset[str] | None) -> bool:
    return types is None or normalise_key(link.relation_type) in types


def _path_to(parents: dict[str, tuple[str, Link] | None], uuid: str) -> list[str]:
    path = [uuid]
    entry = parents[uuid]
    while entry is not None:
        path.append(entry[0])
        entry = parents[entry[0]]
    path.reverse()
    return path


__all__ = [
    "DEFAULT_LIMIT",
    "MAX_DEPTH",
    "check_depth",
    "neighbourhood",
    "relation_step",
    "relation_types",
    "shortest_path",
    "traverse",
]
