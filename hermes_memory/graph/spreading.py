"""Associative recall (Engram): spreading activation over relation strengths, and Hebbian reinforcement.

Spreading: seed entities start with an activation (1.0 each, or the given values). Each hop, the entities
reached last fire once, breadth-first: each hands on ``activation * decay`` split over its relations in
proportion to their strength, and never more in total than that amount (``scale = 1 / max(1, sum of
strengths)``) — so a hub with hundreds of relations does not flood the graph, and a single weak relation
passes little. Only entities not reached yet receive; what arrives from several entities of the previous
hop adds up (two paths beat one). Both directions count; between two entities with several relations
the strongest is used. Seeds keep their activation; iteration is in sorted order: deterministic.

Reinforcement: relations among entities recalled together get stronger, ``s <- s + rate * (1 - s)``
(bounded by 1.0; strong relations saturate instead of all hitting the cap at once). Tier 2 is the
source of truth: the caller writes the returned strengths back to Tier 2.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from hermes_memory.errors import ValidationError
from hermes_memory.graph.builder import normalise_key
from hermes_memory.graph.traversal import MAX_DEPTH, relation_types

if TYPE_CHECKING:
    from hermes_memory.graph.nx_store import KnowledgeGraph

DEFAULT_DECAY = 0.5
DEFAULT_MAX_HOPS = 3
DEFAULT_THRESHOLD = 0.01
DEFAULT_RATE = 0.1
MAX_HOPS = MAX_DEPTH


def spread(
    kg: KnowledgeGraph,
    seeds: Mapping[str, float] | Iterable[str],
    decay: float = DEFAULT_DECAY,
    max_hops: int = DEFAULT_MAX_HOPS,
    threshold: float = DEFAULT_THRESHOLD,
    *,
    relation_filter: str | Iterable[str] | None = None,
) -> dict[str, float]:
    """Activation per entity uuid (seeds included), highest first, values >= ``threshold``.

    Seeds may be uuids, names or aliases. ``max_hops`` above MAX_HOPS is clamped. Raises ValidationError
    (decay outside (0, 1], negative threshold/hops/activation), EntityNotFoundError, AmbiguousEntityError.
    """
    _check_unit(decay, "decay")
    if not math.isfinite(threshold) or threshold < 0:
        raise ValidationError(f"threshold must be >= 0, got {threshold!r}")
    if isinstance(max_hops, bool) or not isinstance(max_hops, int) or max_hops < 0:
        raise ValidationError(f"max_hops must be a non-negative integer, got {max_hops!r}")
    types = relation_types(relation_filter)
    activation = _seed_activations(kg, seeds)
    frontier = sorted(activation)
    reached = set(frontier)
    for _ in range(min(max_hops, MAX_HOPS)):
        incoming: dict[str, float] = {}
        for node in frontier:
            outflow = activation[node] * decay
            if outflow <= 0 or outflow < threshold:
                continue
            strengths = _neighbour_strengths(kg, node, types)
            # normalise over all relations (so hubs are damped) but send only forward, BFS-style:
            # entities reached at an earlier or the same hop get no echo back
            scale = outflow / max(1.0, sum(strengths.values()))
            for other, strength in strengths.items():
                if strength > 0 and other not in reached:
                    incoming[other] = incoming.get(other, 0.0) + scale * strength
        if not incoming:
            break
        frontier = sorted(incoming)
        for other in frontier:
            activation[other] = incoming[other]
        reached.update(frontier)
    kept = [(uuid, value) for uuid, value in activation.items() if value >= threshold]
    kept.sort(key=lambda kv: (-kv[1], kv[0]))
    return dict(kept)


def reinforce(
    kg: KnowledgeGraph, uuids: Iterable[str], rate: float = DEFAULT_RATE, *, apply: bool = True
) -> list[tuple[str, float]]:
    """New strengths ``[(relation_uuid, strength)]`` for every relation between two of the given
    entities, sorted by relation uuid; applied to the graph when ``apply``. Creates no relations.

    Raises ValidationError (rate outside (0, 1]), EntityNotFoundError, AmbiguousEntityError.
    """
    _check_unit(rate, "rate")
    refs = [uuids] if isinstance(uuids, str) else list(uuids)
    members = {kg.resolve(ref) for ref in refs}
    if len(members) < 2:
        return []
    updates: dict[str, float] = {}
    for node in sorted(members):
        for link in kg.links(node):
            if link.other in members and link.relation_uuid not in updates:
                updates[link.relation_uuid] = min(1.0, link.strength + rate * (1.0 - link.strength))
    result = sorted(updates.items())
    if apply:
        for relation_uuid, strength in result:
            kg.set_strength(relation_uuid, strength)
    return result


def _seed_activations(kg: KnowledgeGraph, seeds: Mapping[str, float] | Iterable[str]) -> dict[str, float]:
    if isinstance(seeds, str):
        pairs: list[tuple[str, float]] = [(seeds, 1.0)]
    elif isinstance(seeds, Mapping):
        pairs = [(str(ref), float(value)) for ref, value in seeds.items()]
    else:
        pairs = [(str(ref), 1.0) for ref in seeds]
    activation: dict[str, float] = {}
    for ref, value in pairs:
        if not math.isfinite(value) or value < 0:
            raise ValidationError(f"seed activation for {ref!r} must be a finite number >= 0, got {value!r}")
        uuid = kg.resolve(ref)
        # the same entity named twice (uuid and name) keeps its larger activation
        activation[uuid] = max(activation.get(uuid, 0.0), value)
    return activation


def _neighbour_strengths(kg: KnowledgeGraph, node: str, types: frozenset[str] | None) -> dict[str, float]:
    strengths: dict[str, float] = {}
    for link in kg.links(node):
        if types is not None and normalise_key(link.relation_type) not in types:
            continue
        if link.strength > strengths.get(link.other, -1.0):
            strengths[link.other] = link.strength
    return strengths


def _check_unit(value: float, what: str) -> None:
    if not math.isfinite(value) or not 0 < value <= 1:
        raise ValidationError(f"{what} must be in (0, 1], got {value!r}")


__all__ = [
    "DEFAULT_DECAY",
    "DEFAULT_MAX_HOPS",
    "DEFAULT_RATE",
    "DEFAULT_THRESHOLD",
    "MAX_HOPS",
    "reinforce",
    "spread",
]
